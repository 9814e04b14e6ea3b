package storage

import (
	"encoding/binary"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// pacedFilterPolicy is the engine's bloom filter policy: Pebble's
// bloom.FilterPolicy, whose name, format and reader it keeps, with a
// writer that paces the goroutine building a table (pacing.go).
//
// Pebble builds an sstable's filter in the flush's or compaction's own
// goroutine: every key of the table is hashed as it is added, and the
// whole filter is built from the hashes when the table is finished, ~18
// ns a key. Short keys with shared prefixes compress so well that a
// 2.5 MB table can hold ~250,000 of them, and Pebble's writer then held
// the only P for 4-5 ms at the end of the table (docs/performance.md). This writer
// builds the same bytes with a pacing point every paceKeys keys added
// and every paceFilterKeys keys set in the filter.
type pacedFilterPolicy struct {
	bloom.FilterPolicy // bits per key
	e                  *Engine
}

// paceKeys is how many keys a flush or compaction adds to an sstable
// between two pacing points (a few µs to tens of µs of its work), and
// paceFilterKeys how many keys' bits a filter sets between two (~20 µs).
const (
	paceKeys       = 64
	paceFilterKeys = 1024
)

// NewWriter returns a paced writer of table filters, and Pebble's own
// writer of any other kind.
func (p pacedFilterPolicy) NewWriter(ftype pebble.FilterType) pebble.FilterWriter {
	if ftype != pebble.TableFilter {
		return p.FilterPolicy.NewWriter(ftype)
	}
	return &pacedFilterWriter{e: p.e, bitsPerKey: int(p.FilterPolicy)}
}

// filterHashes recycles the hash slices of finished filters.
var filterHashes = sync.Pool{New: func() any { return new([]uint32) }}

// maxPooledHashes bounds the slices filterHashes keeps (4 MB of hashes).
const maxPooledHashes = 1 << 20

// pacedFilterWriter builds one table's filter in the format of Pebble's
// bloom table filter (RocksDB's full filter): the filter is an odd number
// of 64-byte lines; a key's hash h picks line h mod lines, and its probes
// set the bits h, h+d, h+2d... (mod 512) of that line, d being h rotated
// right by 17 bits; five bytes follow: the number of probes, then the
// number of lines, little-endian. A key whose hash equals the previous
// key's is not counted again.
type pacedFilterWriter struct {
	e          *Engine
	bitsPerKey int
	hashes     *[]uint32 // from filterHashes, nil until the first key
	added      int       // keys since the last pacing point
}

// AddKey records key's hash, pacing the caller every paceKeys keys.
func (w *pacedFilterWriter) AddKey(key []byte) {
	if w.hashes == nil {
		w.hashes = filterHashes.Get().(*[]uint32)
	}
	hs := *w.hashes
	if h := filterHash(key); len(hs) == 0 || h != hs[len(hs)-1] {
		*w.hashes = append(hs, h)
	}
	if w.added++; w.added >= paceKeys {
		w.added = 0
		w.e.pace()
	}
}

// Finish appends the filter of the keys added to buf and returns the
// result; the writer is then empty.
func (w *pacedFilterWriter) Finish(buf []byte) []byte {
	const lineBits = 512
	var hashes []uint32
	if w.hashes != nil {
		hashes = *w.hashes
	}
	lines := 0
	if len(hashes) > 0 {
		lines = (len(hashes)*w.bitsPerKey + lineBits - 1) / lineBits
		lines |= 1 // odd, so that more bits of the hash choose the line
	}
	size := lines*lineBits/8 + 5
	start := len(buf)
	buf = append(buf, make([]byte, size)...)
	filter := buf[start:]
	probes := max(1, min(30, uint32(float64(w.bitsPerKey)*0.69))) // ~ln 2 per bit, rounded down
	if lines > 0 {
		for i, h := range hashes {
			if i > 0 && i%paceFilterKeys == 0 {
				w.e.pace()
			}
			d := h>>17 | h<<15
			line := (h % uint32(lines)) * lineBits
			for range probes {
				bit := line + h%lineBits
				filter[bit/8] |= 1 << (bit % 8)
				h += d
			}
		}
		filter[size-5] = byte(probes)
		binary.LittleEndian.PutUint32(filter[size-4:], uint32(lines))
	}
	if w.hashes != nil {
		if cap(hashes) <= maxPooledHashes {
			*w.hashes = hashes[:0]
			filterHashes.Put(w.hashes)
		}
		w.hashes = nil
	}
	return buf
}

// filterHash is the 32-bit hash of Pebble's bloom filters (LevelDB's,
// with trailing bytes sign-extended as RocksDB does): four bytes at a
// time, little-endian, then the remaining one to three.
func filterHash(k []byte) uint32 {
	const seed, mul = 0xbc9f1d34, 0xc6a4a793
	h := seed ^ uint32(len(k))*mul
	for ; len(k) >= 4; k = k[4:] {
		h = (h + binary.LittleEndian.Uint32(k)) * mul
		h ^= h >> 16
	}
	if len(k) == 0 {
		return h
	}
	for i := len(k) - 1; i >= 0; i-- {
		h += uint32(int32(int8(k[i]))) << (8 * i)
	}
	h *= mul
	return h ^ h>>24
}
