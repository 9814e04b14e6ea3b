package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// RDB object types of a hash. Redis 7.0 writes typeHash for a hash it
// holds as a hash table and typeHashListpack for a small one; the zipmap
// (before Redis 2.6) and the ziplist (before 7.0) are still read.
const (
	typeHash         = 4
	typeHashZipmap   = 9
	typeHashZiplist  = 13
	typeHashListpack = 16
)

// Type is the type of a decoded value.
type Type uint8

// The types Decode returns.
const (
	// TypeString is a string, held in Value.String.
	TypeString Type = iota + 1
	// TypeHash is a hash, held in Value.Hash.
	TypeHash
	// TypeSet is a set, held in Value.Set.
	TypeSet
	// TypeList is a list, held in Value.List.
	TypeList
	// TypeZSet is a sorted set, held in Value.ZSet.
	TypeZSet
	// TypeStream is a stream, held in Value.Stream.
	TypeStream
)

// String returns the name Redis's TYPE command gives the type.
func (t Type) String() string {
	switch t {
	case TypeString:
		return "string"
	case TypeHash:
		return "hash"
	case TypeSet:
		return "set"
	case TypeList:
		return "list"
	case TypeZSet:
		return "zset"
	case TypeStream:
		return "stream"
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// Value is the value of a DUMP payload, as Decode returns it.
type Value struct {
	// Type says which of the other fields holds the value.
	Type Type
	// String is the value of a string.
	String []byte
	// Hash is the fields of a hash and their values, in the order of the
	// payload: at least one, and no field twice. Integers that Redis
	// stores in binary come out as their decimal text.
	Hash [][2][]byte
	// Set is the members of a set, in the order of the payload (for an
	// intset, ascending): at least one, and no member twice. Integers
	// that Redis stores in binary come out as their decimal text.
	Set [][]byte
	// List is the elements of a list, in order: at least one. Integers
	// that Redis stores in binary come out as their decimal text.
	List [][]byte
	// ZSet is the members of a sorted set and their scores, in Redis's
	// order (ZRANGE's): ascending by score, and members of equal scores
	// (-0 equals 0) ascending by their bytes, whatever the order of the
	// payload. At least one, no member twice, no NaN score. Members that
	// Redis stores in binary come out as their decimal text.
	ZSet []ZMember
	// Stream is the value of a stream.
	Stream *Stream
}

// EncodeHash returns the DUMP payload of the hash whose fields and values
// are pairs, in that order, as a plain RDB hash (the form Redis writes
// for a hash table; Redis re-encodes a small one as it restores it). Each
// field and value is written as EncodeString writes a string. A hash has
// at least one field and no field twice: a payload without fields or with
// a field twice is one that Decode and Redis reject.
func EncodeHash(pairs [][2][]byte) []byte {
	size := 20
	for _, p := range pairs {
		size += len(p[0]) + len(p[1]) + 10
	}
	out := make([]byte, 0, size)
	out = append(out, typeHash)
	out = appendLen(out, uint64(len(pairs)))
	for _, p := range pairs {
		out = appendString(out, p[0])
		out = appendString(out, p[1])
	}
	return appendFooter(out)
}

// Decode returns the value of a DUMP payload: a string, a hash in any of
// the forms Redis 7.0 accepts (plain, zipmap, ziplist or listpack), a set
// in any of the forms Redis 7.0 or 7.2 writes (plain, intset or
// listpack), a list in any of the forms Redis 7.0 accepts (plain,
// ziplist, quicklist of ziplists or quicklist 2), or a sorted set in any
// of the forms Redis 7.0 accepts (plain with scores as text, plain with
// binary scores, ziplist or listpack). A value of another type is
// ErrUnsupportedType. maxLen bounds the length of every string read from
// the payload (proto-max-bulk-len), compressed or not: a string value, a
// field or value of a plain hash, a member of a plain set or sorted set,
// an element of a plain list or a plain quicklist node, and the blob that
// holds a zipmap, ziplist, listpack or intset, and so each of its
// entries.
//
// Decode is stricter than DecodeString and Redis: bytes between the value
// and the footer, or after a zipmap's, ziplist's or listpack's terminator,
// are ErrFormat, as are a hash without fields, a field twice, a set
// without members, a member twice, an intset whose entry size is not 2,
// 4 or 8 bytes or whose entries are not in strictly ascending order, a
// list without elements, a quicklist node without elements, of an empty
// element or of a kind other than plain or packed, a sorted set without
// members, a member twice, a NaN score, a score written as text that is
// not all a number or overflows, a ziplist or listpack whose members are
// not in Redis's order, and any header, count, length or back-length that
// does not match the bytes.
func Decode(payload []byte, maxLen int64) (Value, error) {
	typ, body, err := openPayload(payload)
	if err != nil {
		return Value{}, err
	}
	r := reader{b: body}
	var v Value
	switch typ {
	case typeString:
		v.Type = TypeString
		v.String, err = r.boundedStr(maxLen)
	case typeHash:
		v.Type = TypeHash
		v.Hash, err = r.hash(maxLen)
	case typeHashZipmap, typeHashZiplist, typeHashListpack:
		v.Type = TypeHash
		var blob []byte
		if blob, err = r.boundedStr(maxLen); err == nil {
			switch typ {
			case typeHashZipmap:
				v.Hash, err = zipmapPairs(blob)
			case typeHashZiplist:
				v.Hash, err = entryPairs(ziplistEntries(blob))
			default:
				v.Hash, err = entryPairs(listpackEntries(blob))
			}
		}
	case typeSet:
		v.Type = TypeSet
		v.Set, err = r.set(maxLen)
	case typeSetIntset, typeSetListpack:
		v.Type = TypeSet
		var blob []byte
		if blob, err = r.boundedStr(maxLen); err == nil {
			if typ == typeSetIntset {
				v.Set, err = intsetMembers(blob)
			} else {
				v.Set, err = listpackMembers(blob)
			}
		}
	case typeList:
		v.Type = TypeList
		v.List, err = r.list(maxLen)
	case typeListZiplist:
		v.Type = TypeList
		var blob []byte
		if blob, err = r.boundedStr(maxLen); err == nil {
			v.List, err = listElements(ziplistEntries(blob))
		}
	case typeListQuicklist, typeListQuicklist2:
		v.Type = TypeList
		v.List, err = r.quicklist(typ == typeListQuicklist2, maxLen)
	case typeZSet, typeZSet2:
		v.Type = TypeZSet
		v.ZSet, err = r.zset(typ == typeZSet2, maxLen)
	case typeZSetZiplist, typeZSetListpack:
		v.Type = TypeZSet
		var blob []byte
		if blob, err = r.boundedStr(maxLen); err == nil {
			if typ == typeZSetZiplist {
				v.ZSet, err = zsetMembers(ziplistEntries(blob))
			} else {
				v.ZSet, err = zsetMembers(listpackEntries(blob))
			}
		}
	case typeStream2:
		v.Type = TypeStream
		v.Stream, err = r.stream(maxLen)
	default:
		return Value{}, typeError(typ)
	}
	if err == nil && len(r.b) != 0 {
		err = fmt.Errorf("%d bytes after the value", len(r.b))
	}
	if err != nil {
		return Value{}, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return v, nil
}

// boundedStr reads a string no longer than maxLen.
func (r *reader) boundedStr(maxLen int64) ([]byte, error) {
	s, err := r.str(maxLen)
	if err == nil && int64(len(s)) > maxLen {
		err = fmt.Errorf("string of %d bytes exceeds %d", len(s), maxLen)
	}
	return s, err
}

// hash reads the pairs of a plain RDB hash: their count, then each field
// and its value as strings.
func (r *reader) hash(maxLen int64) ([][2][]byte, error) {
	n, err := r.plainLength()
	if err != nil {
		return nil, err
	}
	// Each string takes at least a byte, so a count the bytes left cannot
	// hold fails before anything is allocated for it.
	if n > uint64(len(r.b))/2 {
		return nil, fmt.Errorf("hash of %d fields in %d bytes", n, len(r.b))
	}
	pairs := make([][2][]byte, 0, n)
	for i := uint64(0); i < n; i++ {
		field, err := r.boundedStr(maxLen)
		if err != nil {
			return nil, err
		}
		value, err := r.boundedStr(maxLen)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, [2][]byte{field, value})
	}
	return pairs, checkPairs(pairs)
}

// checkPairs reports a hash without fields or with a field twice.
func checkPairs(pairs [][2][]byte) error {
	if len(pairs) == 0 {
		return errors.New("empty hash")
	}
	seen := make(map[string]struct{}, len(pairs))
	for _, p := range pairs {
		if _, dup := seen[string(p[0])]; dup {
			return fmt.Errorf("field %s twice", quote(p[0]))
		}
		seen[string(p[0])] = struct{}{}
	}
	return nil
}

// quote quotes the start of s for an error message.
func quote(s []byte) string {
	if len(s) > 40 {
		return strconv.Quote(string(s[:40])) + "..."
	}
	return strconv.Quote(string(s))
}

// entryPairs pairs the entries of a ziplist or listpack: field, value,
// field, value...
func entryPairs(entries [][]byte, err error) ([][2][]byte, error) {
	if err != nil {
		return nil, err
	}
	if len(entries)%2 != 0 {
		return nil, fmt.Errorf("hash of %d entries, an odd number", len(entries))
	}
	pairs := make([][2][]byte, 0, len(entries)/2)
	for i := 0; i < len(entries); i += 2 {
		pairs = append(pairs, [2][]byte{entries[i], entries[i+1]})
	}
	return pairs, checkPairs(pairs)
}

// sub returns b[i:j] with no capacity beyond it, so that appending to one
// entry of a blob never overwrites the next.
func sub(b []byte, i, j int) []byte { return b[i:j:j] }

// The layout of a listpack: a header (total bytes, 32 bits, and entry
// count, 16 bits, both little-endian), entries, a terminator. An entry
// starts with an encoding byte, or its top bits, and ends with its length
// written backwards (see backlen).
const (
	lpHeader  = 6
	lpNoCount = 0xffff // a count too large for the header
	lpUint7   = 0x00   // 0xxxxxxx: an integer 0 to 127
	lpStr6    = 0x80   // 10xxxxxx: a string of up to 63 bytes
	lpInt13   = 0xc0   // 110xxxxx xxxxxxxx: a signed 13-bit integer
	lpStr12   = 0xe0   // 1110xxxx xxxxxxxx: a string of up to 4095 bytes
	lpStr32   = 0xf0   // then a 32-bit little-endian length
	lpInt16   = 0xf1   // then the integer, little-endian
	lpInt24   = 0xf2
	lpInt32   = 0xf3
	lpInt64   = 0xf4
	lpEnd     = 0xff
)

// The layout of a ziplist: a header (total bytes and offset of the last
// entry, 32 bits each, entry count, 16 bits, all little-endian), entries,
// a terminator. An entry starts with the previous entry's length, then an
// encoding byte, or its top bits.
const (
	zlHeader    = 10
	zlNoCount   = 0xffff // a count too large for the header
	zlBigPrev   = 0xfe   // a previous entry's length in the next 4 bytes
	zlStr6      = 0x00   // 00xxxxxx: a string of up to 63 bytes
	zlStr14     = 0x40   // 01xxxxxx xxxxxxxx: up to 16383 bytes (big-endian)
	zlStr32     = 0x80   // then a 32-bit big-endian length
	zlInt16     = 0xc0   // then the integer, little-endian
	zlInt32     = 0xd0
	zlInt64     = 0xe0
	zlInt24     = 0xf0
	zlInt8      = 0xfe
	zlImmediate = 0xf1 // 0xf1 to 0xfd: the integers 0 to 12
	zlEnd       = 0xff
)

// The layout of a zipmap: a count byte, pairs, a terminator. A length
// is a byte, or zmBigLen then 32 bits little-endian.
const (
	zmNoCount = 0xfe // a count too large for its byte
	zmBigLen  = 0xfe
	zmEnd     = 0xff
)

// listpackEntries returns the entries of a listpack: its header (total
// bytes and entry count), entries each followed by its length written
// backwards, and a terminator.
func listpackEntries(lp []byte) ([][]byte, error) {
	if len(lp) < lpHeader+1 {
		return nil, fmt.Errorf("listpack of %d bytes", len(lp))
	}
	if total := binary.LittleEndian.Uint32(lp); uint64(total) != uint64(len(lp)) {
		return nil, fmt.Errorf("listpack of %d bytes says %d", len(lp), total)
	}
	if lp[len(lp)-1] != lpEnd {
		return nil, errors.New("listpack without its terminator")
	}
	count := int(binary.LittleEndian.Uint16(lp[4:]))
	end := len(lp) - 1
	// Each entry takes at least 2 bytes.
	entries := make([][]byte, 0, min(count, (end-lpHeader)/2))
	for p := lpHeader; p < end; {
		// An entry is an encoding byte, maybe more length bytes, the
		// data, then the back-length; n counts all but the last.
		first := lp[p]
		var head, n uint64 // head: the bytes before a string's data
		intSize := 0       // bytes of a little-endian integer after first
		switch {
		case first&0x80 == lpUint7:
			n = 1
		case first&0xc0 == lpStr6:
			head, n = 1, 1+uint64(first&0x3f)
		case first&0xe0 == lpInt13:
			n = 2
		case first&0xf0 == lpStr12:
			if end-p < 2 {
				return nil, errors.New("listpack entry past the end")
			}
			head = 2
			n = 2 + (uint64(first&0x0f)<<8 | uint64(lp[p+1]))
		case first == lpStr32:
			if end-p < 5 {
				return nil, errors.New("listpack entry past the end")
			}
			head = 5
			n = 5 + uint64(binary.LittleEndian.Uint32(lp[p+1:]))
		case first == lpInt16:
			intSize = 2
		case first == lpInt24:
			intSize = 3
		case first == lpInt32:
			intSize = 4
		case first == lpInt64:
			intSize = 8
		case first == lpEnd:
			return nil, errors.New("listpack terminator before its end")
		default:
			return nil, fmt.Errorf("unknown listpack encoding 0x%02x", first)
		}
		if intSize > 0 {
			n = 1 + uint64(intSize)
		}
		back := backlen(n)
		if n+uint64(len(back)) > uint64(end-p) {
			return nil, errors.New("listpack entry past the end")
		}
		data := lp[p : p+int(n)]
		if !bytes.Equal(lp[p+int(n):p+int(n)+len(back)], back) {
			return nil, errors.New("listpack entry with a wrong back-length")
		}
		var entry []byte
		switch {
		case head > 0:
			entry = sub(lp, p+int(head), p+int(n))
		case first&0x80 == lpUint7:
			entry = strconv.AppendInt(nil, int64(first), 10)
		case first&0xe0 == lpInt13:
			v := int64(first&0x1f)<<8 | int64(data[1])
			entry = strconv.AppendInt(nil, v<<51>>51, 10) // sign-extended
		default:
			entry = strconv.AppendInt(nil, littleEndianInt(data[1:]), 10)
		}
		entries = append(entries, entry)
		p += int(n) + len(back)
	}
	if count != lpNoCount && count != len(entries) {
		return nil, fmt.Errorf("listpack of %d entries says %d", len(entries), count)
	}
	return entries, nil
}

// backlen returns how a listpack writes the length n of an entry after
// it, to be read backwards: 7 bits a byte, the least significant last,
// every byte but the first with its top bit set. The number of bytes
// follows Redis's thresholds, which are not quite the smallest.
func backlen(n uint64) []byte {
	var size int
	switch {
	case n <= 127:
		return []byte{byte(n)}
	case n < 16383:
		size = 2
	case n < 2097151:
		size = 3
	case n < 268435455:
		size = 4
	default:
		size = 5
	}
	b := make([]byte, size)
	for i := size - 1; i >= 0; i-- {
		b[i] = byte(n&127) | 128
		n >>= 7
	}
	b[0] &= 127
	return b
}

// littleEndianInt returns the signed little-endian integer of 1 to 8
// bytes b.
func littleEndianInt(b []byte) int64 {
	var u uint64
	for i := len(b) - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	shift := 64 - 8*len(b)
	return int64(u<<shift) >> shift
}

// ziplistEntries returns the entries of a ziplist: its header (total
// bytes, offset of the last entry, entry count), entries each made of the
// previous entry's length, an encoding and data, and a terminator.
func ziplistEntries(zl []byte) ([][]byte, error) {
	if len(zl) < zlHeader+1 {
		return nil, fmt.Errorf("ziplist of %d bytes", len(zl))
	}
	if total := binary.LittleEndian.Uint32(zl); uint64(total) != uint64(len(zl)) {
		return nil, fmt.Errorf("ziplist of %d bytes says %d", len(zl), total)
	}
	if zl[len(zl)-1] != zlEnd {
		return nil, errors.New("ziplist without its terminator")
	}
	tail := binary.LittleEndian.Uint32(zl[4:])
	count := int(binary.LittleEndian.Uint16(zl[8:]))
	end := len(zl) - 1
	// Each entry takes at least 2 bytes.
	entries := make([][]byte, 0, min(count, (end-zlHeader)/2))
	last, prevSize := zlHeader, uint64(0)
	for p := zlHeader; p < end; {
		start := p
		var prev uint64
		switch zl[p] {
		case zlBigPrev:
			if end-p < 5 {
				return nil, errors.New("ziplist entry past the end")
			}
			prev = uint64(binary.LittleEndian.Uint32(zl[p+1:]))
			p += 5
		case zlEnd:
			return nil, errors.New("ziplist terminator before its end")
		default:
			prev = uint64(zl[p])
			p++
		}
		if prev != prevSize {
			return nil, fmt.Errorf("ziplist entry says the previous has %d bytes, not %d", prev, prevSize)
		}
		if p >= end {
			return nil, errors.New("ziplist entry past the end")
		}
		enc := zl[p]
		p++
		var strLen uint64
		intSize := -1 // bytes of a little-endian integer, if one
		switch {
		case enc&0xc0 == zlStr6:
			strLen = uint64(enc & 0x3f)
		case enc&0xc0 == zlStr14:
			if end-p < 1 {
				return nil, errors.New("ziplist entry past the end")
			}
			strLen = uint64(enc&0x3f)<<8 | uint64(zl[p])
			p++
		case enc == zlStr32:
			if end-p < 4 {
				return nil, errors.New("ziplist entry past the end")
			}
			strLen = uint64(binary.BigEndian.Uint32(zl[p:]))
			p += 4
		case enc == zlInt8:
			intSize = 1
		case enc == zlInt16:
			intSize = 2
		case enc == zlInt24:
			intSize = 3
		case enc == zlInt32:
			intSize = 4
		case enc == zlInt64:
			intSize = 8
		case enc >= zlImmediate && enc <= zlImmediate+12:
			intSize = 0
		default:
			return nil, fmt.Errorf("unknown ziplist encoding 0x%02x", enc)
		}
		var entry []byte
		switch {
		case intSize < 0:
			if strLen > uint64(end-p) {
				return nil, errors.New("ziplist entry past the end")
			}
			entry = sub(zl, p, p+int(strLen))
			p += int(strLen)
		case intSize == 0:
			entry = strconv.AppendInt(nil, int64(enc-zlImmediate), 10)
		default:
			if intSize > end-p {
				return nil, errors.New("ziplist entry past the end")
			}
			entry = strconv.AppendInt(nil, littleEndianInt(zl[p:p+intSize]), 10)
			p += intSize
		}
		entries = append(entries, entry)
		last, prevSize = start, uint64(p-start)
	}
	if uint64(tail) != uint64(last) {
		return nil, fmt.Errorf("ziplist's last entry at %d says %d", last, tail)
	}
	if count != zlNoCount && count != len(entries) {
		return nil, fmt.Errorf("ziplist of %d entries says %d", len(entries), count)
	}
	return entries, nil
}

// zipmapPairs returns the pairs of a zipmap: a count byte, then for each
// pair the field's length and bytes, the value's length, a count of free
// bytes, the value's bytes and the free bytes; then a terminator.
func zipmapPairs(zm []byte) ([][2][]byte, error) {
	if len(zm) < 2 {
		return nil, fmt.Errorf("zipmap of %d bytes", len(zm))
	}
	if zm[len(zm)-1] != zmEnd {
		return nil, errors.New("zipmap without its terminator")
	}
	end := len(zm) - 1
	// Each pair takes at least 3 bytes.
	pairs := make([][2][]byte, 0, min(int(zm[0]), (end-1)/3))
	// str reads a length, then free bytes' count if it is a value's, then
	// the bytes it counts.
	p := 1
	str := func(value bool) ([]byte, error) {
		var n uint64
		switch zm[p] {
		case zmBigLen:
			if end-p < 5 {
				return nil, errors.New("zipmap entry past the end")
			}
			n = uint64(binary.LittleEndian.Uint32(zm[p+1:]))
			p += 5
		case zmEnd:
			return nil, errors.New("zipmap terminator before its end")
		default:
			n = uint64(zm[p])
			p++
		}
		var free uint64
		if value {
			if p >= end {
				return nil, errors.New("zipmap entry past the end")
			}
			free = uint64(zm[p])
			p++
		}
		if n+free > uint64(end-p) {
			return nil, errors.New("zipmap entry past the end")
		}
		s := sub(zm, p, p+int(n))
		p += int(n + free)
		return s, nil
	}
	for p < end {
		field, err := str(false)
		if err != nil {
			return nil, err
		}
		if p >= end {
			return nil, errors.New("zipmap field without a value")
		}
		value, err := str(true)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, [2][]byte{field, value})
	}
	if zm[0] != zmNoCount && int(zm[0]) != len(pairs) {
		return nil, fmt.Errorf("zipmap of %d pairs says %d", len(pairs), zm[0])
	}
	return pairs, checkPairs(pairs)
}
