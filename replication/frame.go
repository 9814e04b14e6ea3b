package replication

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// After the handshake (PSYNC and its +FULLRESYNC or +CONTINUE line) the
// primary sends frames, each checksummed, so a corrupted byte anywhere in
// the stream is caught before anything is applied:
//
//	type    1 byte
//	length  4 bytes, big endian: the payload's length
//	crc     4 bytes, big endian: CRC-32C of type, length and payload
//	payload length bytes
//
// docs/replication.md describes the frame types.
const (
	frameBatch     byte = 'B' // offset (8 bytes) + batch bytes
	frameHeartbeat byte = 'H' // the primary's last offset (8 bytes)
	frameFile      byte = 'F' // full sync: name length (2) + name + size (8)
	frameChunk     byte = 'C' // full sync: the next bytes of the current file
	frameDone      byte = 'D' // full sync: file count (4) + checkpoint offset (8)
)

// maxFrame bounds a frame's payload; a larger length is a corrupt stream.
const maxFrame = 1 << 30

// chunkSize is how much of a checkpoint file one chunk frame carries.
const chunkSize = 1 << 20

// ErrCorruptStream reports a frame that fails its checksum or is
// malformed; the replica drops the connection and never applies it.
var ErrCorruptStream = errors.New("replication: corrupt stream")

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// appendFrame appends one frame to dst.
func appendFrame(dst []byte, typ byte, payload ...[]byte) []byte {
	dst = appendFrameHeader(dst, typ, payload...)
	for _, p := range payload {
		dst = append(dst, p...)
	}
	return dst
}

// appendFrameHeader appends the header of the frame appendFrame would
// append, without the payload, which the caller sends after it (a large
// batch is then not copied into a frame buffer).
func appendFrameHeader(dst []byte, typ byte, payload ...[]byte) []byte {
	n := 0
	for _, p := range payload {
		n += len(p)
	}
	start := len(dst)
	dst = append(dst, typ, 0, 0, 0, 0, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(dst[start+1:], uint32(n))
	crc := crc32.Update(0, crcTable, dst[start:start+5])
	for _, p := range payload {
		crc = crc32.Update(crc, crcTable, p)
	}
	binary.BigEndian.PutUint32(dst[start+5:], crc)
	return dst
}

// readFrame reads one frame. The payload is freshly allocated: a
// replica's commit hook may keep a batch's bytes.
func readFrame(r *bufio.Reader) (typ byte, payload []byte, err error) {
	// The header is used where it lies in r's buffer: read into an array
	// through io.Reader, the array would move to the heap. Errors are
	// io.ReadFull's: io.EOF before the first byte, io.ErrUnexpectedEOF
	// after it.
	h, err := r.Peek(9)
	if err != nil {
		if err == io.EOF && len(h) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	typ, n, want := h[0], binary.BigEndian.Uint32(h[1:5]), binary.BigEndian.Uint32(h[5:9])
	crc := crc32.Update(0, crcTable, h[:5])
	r.Discard(len(h)) // h is not valid after this
	if n > maxFrame {
		return 0, nil, fmt.Errorf("%w: frame of %d bytes", ErrCorruptStream, n)
	}
	switch typ {
	case frameBatch, frameHeartbeat, frameFile, frameChunk, frameDone:
	default:
		return 0, nil, fmt.Errorf("%w: unknown frame type %q", ErrCorruptStream, typ)
	}
	// Grow the payload as bytes arrive, doubling it until an eighth of it
	// has arrived and then taking the rest at once: a corrupt length must
	// not make the replica allocate more than eight times what the stream
	// sends, nor a large batch cost its size again in copies.
	payload = make([]byte, 0, min(int(n), 64<<10))
	for len(payload) < int(n) {
		if len(payload) == cap(payload) {
			grow := len(payload)
			if len(payload) >= int(n)/8 {
				grow = int(n) - len(payload)
			}
			grown := make([]byte, len(payload), len(payload)+min(grow, int(n)-len(payload)))
			payload = grown[:copy(grown, payload)]
		}
		start := len(payload)
		payload = payload[:min(cap(payload), int(n))]
		if _, err := io.ReadFull(r, payload[start:]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, nil, err
		}
	}
	crc = crc32.Update(crc, crcTable, payload)
	if crc != want {
		return 0, nil, fmt.Errorf("%w: checksum mismatch in a %q frame of %d bytes", ErrCorruptStream, typ, n)
	}
	return typ, payload, nil
}
