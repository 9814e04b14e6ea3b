// Package rdb encodes and decodes the payloads of DUMP and RESTORE: one
// value in Redis's RDB serialization, followed by the RDB version and a
// CRC-64 of everything before it. Six types are supported: strings,
// hashes, sets, lists, sorted sets and streams. Strings are produced with
// EncodeString and read with DecodeString or Decode; within them, every
// encoding Redis writes is read (plain, the 8-, 16- and 32-bit integer
// forms and LZF compression).
// Hashes are produced with EncodeHash as a plain RDB hash and read with
// Decode in each form Redis 7.0 accepts: the plain hash (what Redis writes
// for a large hash), the listpack (what it writes for a small one) and the
// older zipmap and ziplist. Sets are produced with EncodeSet as a plain
// RDB set and read with Decode as a plain set (what Redis writes for a
// large set or one of strings), an intset (what it writes for a small set
// of integers) or a listpack (what Redis 7.2 writes for a small set of
// strings). Lists are produced with EncodeList as a plain RDB list and
// read with Decode as a plain list, a ziplist, a quicklist of ziplists or
// a quicklist 2 of listpacks and plain elements (what Redis 7.0 writes).
// Sorted sets are produced with EncodeZSet as an RDB sorted set 2 (what
// Redis 7.0 writes for a large sorted set: binary scores) and read with
// Decode in each form Redis 7.0 accepts: that one, the listpack (what it
// writes for a small sorted set) and the older sorted set with scores as
// text and the ziplist. Streams are produced with EncodeStream and read
// with Decode in Redis 7.0's form, listpacks in a radix tree
// (RDB_TYPE_STREAM_LISTPACKS_2, stream.go).
// So a payload from Redis's DUMP restores in Cairn and Cairn's restores
// in Redis. Other types (older or newer stream forms, modules) are
// reported as unsupported.
//
// Decoding never trusts a length in the payload: it checks it against
// the bytes present before allocating, so a corrupt payload costs no more
// memory than its own size allows (LZF output is bounded by the caller).
package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc64"
	"math"
	"strconv"
)

// Version is the RDB version Cairn writes into its payloads and the
// newest it accepts: Redis 7.0's.
const Version = 10

// typeString is the RDB object type of a string.
const typeString = 0

// Errors of Decode and DecodeString. Callers test them with errors.Is.
var (
	// ErrChecksum means the payload's footer is wrong: too short, a
	// version newer than Version, or a CRC that does not match.
	ErrChecksum = errors.New("rdb: DUMP payload version or checksum are wrong")
	// ErrFormat means the value inside a well-formed footer cannot be
	// decoded.
	ErrFormat = errors.New("rdb: bad data format")
	// ErrUnsupportedType means the value is of a type the decoder does
	// not read: a stream, a module's value, or for DecodeString a hash,
	// a set, a list or a sorted set.
	ErrUnsupportedType = errors.New("rdb: value type not supported")
)

// crcTable is Jones's CRC-64 polynomial, bit-reversed, which Redis uses.
var crcTable = crc64.MakeTable(0x95ac9329ac4bc9b5)

// checksum is Redis's crc64(0, b): no initial or final inversion, which
// hash/crc64's Update applies on both sides.
func checksum(b []byte) uint64 { return ^crc64.Update(math.MaxUint64, crcTable, b) }

// EncodeString returns the DUMP payload of the string value s. Integers in
// canonical form that fit 32 bits use the integer encodings, as Redis's
// do; other strings are written plain (Redis compresses those over 20
// bytes with LZF when that saves space; both restore the same value).
func EncodeString(s []byte) []byte {
	out := make([]byte, 0, len(s)+20)
	out = append(out, typeString)
	out = appendString(out, s)
	return appendFooter(out)
}

// appendFooter appends the RDB version and the checksum of everything
// before it, which ends every payload.
func appendFooter(out []byte) []byte {
	out = binary.LittleEndian.AppendUint16(out, Version)
	return binary.LittleEndian.AppendUint64(out, checksum(out))
}

func appendString(out, s []byte) []byte {
	if len(s) <= 11 {
		if v, err := strconv.ParseInt(string(s), 10, 64); err == nil && strconv.FormatInt(v, 10) == string(s) {
			switch {
			case v >= math.MinInt8 && v <= math.MaxInt8:
				return append(out, 0xc0, byte(v))
			case v >= math.MinInt16 && v <= math.MaxInt16:
				return binary.LittleEndian.AppendUint16(append(out, 0xc1), uint16(v))
			case v >= math.MinInt32 && v <= math.MaxInt32:
				return binary.LittleEndian.AppendUint32(append(out, 0xc2), uint32(v))
			}
		}
	}
	out = appendLen(out, uint64(len(s)))
	return append(out, s...)
}

func appendLen(out []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(out, byte(n))
	case n < 1<<14:
		return append(out, 0x40|byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(out, 0x80), uint32(n))
	default:
		return binary.BigEndian.AppendUint64(append(out, 0x81), n)
	}
}

// DecodeString returns the string value of a DUMP payload. maxLen bounds
// the length of the value (proto-max-bulk-len), which an LZF-compressed
// value could otherwise claim beyond its payload. Bytes between the value
// and the footer are ignored, as Redis ignores them. A value of another
// type, a hash, set, list or sorted set included, is ErrUnsupportedType:
// Decode reads hashes, sets, lists and sorted sets.
func DecodeString(payload []byte, maxLen int64) ([]byte, error) {
	typ, body, err := openPayload(payload)
	if err != nil {
		return nil, err
	}
	if typ != typeString {
		return nil, typeError(typ)
	}
	r := reader{b: body}
	s, err := r.str(maxLen)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return s, nil
}

// openPayload checks a payload's footer and returns the object type of
// the value it holds and the bytes after that type, up to the footer.
func openPayload(payload []byte) (typ byte, body []byte, err error) {
	if len(payload) < 10 {
		return 0, nil, ErrChecksum
	}
	body, footer := payload[:len(payload)-10], payload[len(payload)-10:]
	if binary.LittleEndian.Uint16(footer) > Version {
		return 0, nil, ErrChecksum
	}
	if checksum(payload[:len(payload)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return 0, nil, ErrChecksum
	}
	if len(body) == 0 {
		return 0, nil, fmt.Errorf("%w: no value", ErrFormat)
	}
	return body[0], body[1:], nil
}

// typeError is the error for an object type the caller does not decode:
// ErrUnsupportedType for a type Redis defines, ErrFormat for others.
func typeError(typ byte) error {
	if typ <= 21 { // the last type Redis 7.2 defines (stream listpacks 3)
		return fmt.Errorf("%w: RDB type %d", ErrUnsupportedType, typ)
	}
	return fmt.Errorf("%w: unknown RDB type %d", ErrFormat, typ)
}

// reader consumes a payload's body.
type reader struct{ b []byte }

func (r *reader) take(n uint64) ([]byte, error) {
	if n > uint64(len(r.b)) {
		return nil, fmt.Errorf("%d bytes wanted, %d left", n, len(r.b))
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out, nil
}

// length reads a length; encoded reports the special forms (integers,
// LZF), whose kind it then returns.
func (r *reader) length() (n uint64, encoded bool, err error) {
	b, err := r.take(1)
	if err != nil {
		return 0, false, err
	}
	switch first := b[0]; {
	case first>>6 == 0:
		return uint64(first & 0x3f), false, nil
	case first>>6 == 1:
		next, err := r.take(1)
		if err != nil {
			return 0, false, err
		}
		return uint64(first&0x3f)<<8 | uint64(next[0]), false, nil
	case first>>6 == 3:
		return uint64(first & 0x3f), true, nil
	case first == 0x80:
		v, err := r.take(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(v)), false, nil
	case first == 0x81:
		v, err := r.take(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(v), false, nil
	default:
		return 0, false, fmt.Errorf("unknown length encoding 0x%02x", first)
	}
}

// plainLength reads a length that must not be a special form.
func (r *reader) plainLength() (uint64, error) {
	n, encoded, err := r.length()
	if err == nil && encoded {
		err = fmt.Errorf("special encoding %d where a length belongs", n)
	}
	return n, err
}

func (r *reader) str(maxLen int64) ([]byte, error) {
	n, encoded, err := r.length()
	if err != nil {
		return nil, err
	}
	if !encoded {
		s, err := r.take(n)
		return append([]byte(nil), s...), err
	}
	switch n {
	case 0, 1, 2:
		size := uint64(1) << n
		b, err := r.take(size)
		if err != nil {
			return nil, err
		}
		var v int64
		switch size {
		case 1:
			v = int64(int8(b[0]))
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(b)))
		case 4:
			v = int64(int32(binary.LittleEndian.Uint32(b)))
		}
		return strconv.AppendInt(nil, v, 10), nil
	case 3:
		clen, err := r.plainLength()
		if err != nil {
			return nil, err
		}
		ulen, err := r.plainLength()
		if err != nil {
			return nil, err
		}
		in, err := r.take(clen)
		if err != nil {
			return nil, err
		}
		if ulen > uint64(maxLen) {
			return nil, fmt.Errorf("LZF value of %d bytes exceeds %d", ulen, maxLen)
		}
		return lzfDecompress(in, int(ulen))
	}
	return nil, fmt.Errorf("unknown string encoding %d", n)
}

// lzfMaxRatio bounds how much LZF expands its input: at best, three bytes
// (a back reference with a length byte) repeat 264 bytes.
const lzfMaxRatio = 88

// lzfDecompress expands LZF data into exactly n bytes.
func lzfDecompress(in []byte, n int) ([]byte, error) {
	if n > lzfMaxRatio*len(in) {
		// Checked before allocating: a few bytes cannot claim more.
		return nil, errors.New("invalid LZF compressed string")
	}
	out := make([]byte, 0, n)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 1<<5 { // a run of ctrl+1 literal bytes
			run := ctrl + 1
			if len(out)+run > n || i+run > len(in) {
				return nil, errors.New("invalid LZF compressed string")
			}
			out = append(out, in[i:i+run]...)
			i += run
			continue
		}
		// A back reference: length-2 in the top 3 bits (7: more in the
		// next byte), distance-1 in the low 5 bits and the next byte.
		length := ctrl >> 5
		if i >= len(in) {
			return nil, errors.New("invalid LZF compressed string")
		}
		if length == 7 {
			length += int(in[i])
			i++
			if i >= len(in) {
				return nil, errors.New("invalid LZF compressed string")
			}
		}
		ref := len(out) - (ctrl&0x1f)<<8 - 1 - int(in[i])
		i++
		length += 2
		if ref < 0 || len(out)+length > n {
			return nil, errors.New("invalid LZF compressed string")
		}
		for k := 0; k < length; k++ { // may overlap what it appends
			out = append(out, out[ref+k])
		}
	}
	if len(out) != n {
		return nil, errors.New("invalid LZF compressed string")
	}
	return out, nil
}
