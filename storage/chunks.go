package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// chunkSize is the span of one chunk record of an out-of-line string
// value: chunk i holds bytes [i*chunkSize, (i+1)*chunkSize). A write
// inside a large value (APPEND, SETRANGE, SETBIT) rewrites only the
// chunks it falls in, and a read of a range (GETRANGE, GETBIT) reads only
// those, so their cost follows what they touch, not the value's length,
// as in Redis.
const chunkSize = 4 << 10

// A chunk record may be shorter than its span, or missing: the bytes it
// does not hold, up to the value's length, are zeros (so SETRANGE far
// beyond a value's end writes one chunk, not the gap). A chunk never
// holds bytes at or beyond the value's length; Batch.PutMeta,
// Batch.DeleteKey and Engine.WriteRange delete the chunks a write leaves
// beyond it.

// chunkKey appends to dst the key of chunk idx of the value whose ID is
// id in ns: prefixChunk | ns | id (8 bytes) | idx (4 bytes), both big
// endian, so one value's chunks are contiguous and in order. The chunks
// belong to the value, not to its key's name: RENAME moves the metadata
// record alone.
func chunkKey(dst []byte, ns string, id uint64, idx uint32) []byte {
	dst = append(dst, prefixChunk)
	dst = appendNS(dst, ns)
	dst = binary.BigEndian.AppendUint64(dst, id)
	return binary.BigEndian.AppendUint32(dst, idx)
}

// newValueID returns the ID of a new chunked value (Metadata.Version): a
// random nonzero 64-bit number, so that the primary needs no counter and
// a value's ID is unique among the namespace's values in all but
// astronomically unlikely cases.
func newValueID() uint64 {
	for {
		if id := rand.Uint64(); id != 0 {
			return id
		}
	}
}

// chunkPrefix returns the prefix shared by every chunk record of ns.
func chunkPrefix(ns string) []byte {
	return appendNS([]byte{prefixChunk}, ns)
}

// chunkCount returns how many chunk spans a value of size bytes covers.
func chunkCount(size uint64) uint32 {
	return uint32((size + chunkSize - 1) / chunkSize)
}

// errChunkCorrupt is wrapped by the errors of chunk records that do not
// fit their value's metadata: the database is inconsistent.
var errChunkCorrupt = errors.New("chunk does not fit its value")

// InlineValueMax returns the longest string value kept inline
// (Options.InlineValueMax); a longer one is kept in chunks.
func (e *Engine) InlineValueMax() int {
	if e.opts.InlineValueMax <= 0 {
		return DefaultInlineValueMax
	}
	return e.opts.InlineValueMax
}

// EditedInlineMax returns the longest string value kept inline after an
// edit (a write of part of it: APPEND, SETRANGE, SETBIT, BITFIELD): the
// smaller of InlineValueMax and one chunk. A longer edited value goes to
// chunks (Engine.WriteRange), so that each later edit rewrites the chunks
// it touches rather than the whole value: inline, a random SETBIT in a
// 60 KB bitmap cost six times one in a chunked bitmap. Whole writes (SET)
// keep values up to InlineValueMax inline, where a read needs no second
// lookup.
func (e *Engine) EditedInlineMax() int { return min(e.InlineValueMax(), chunkSize) }

// NewTxnBatch is NewMultiBatch for a batch whose commands read what the
// earlier ones wrote (EXEC, a pipelined group): it remembers the chunk
// records it writes, which Engine.LoadValueRange reads when given the
// batch (the metadata the caller keeps itself), and holds each key's
// metadata record back until it commits (see Batch.held).
func (e *Engine) NewTxnBatch() *Batch {
	b := e.NewMultiBatch()
	b.txn = true
	return b
}

// putChunk writes chunk idx of value id; v == nil deletes it.
func (b *Batch) putChunk(ns string, id uint64, idx uint32, v []byte) {
	b.putSubkey(chunkKey(make([]byte, 0, 14+len(ns)), ns, id, idx), v)
}

// putSubkey writes record k, a chunk or a member (field), as v; v == nil
// deletes it. A transaction's batch keeps its own copy of v.
func (b *Batch) putSubkey(k, v []byte) {
	if v == nil {
		_ = b.b.Delete(k, nil)
	} else {
		_ = b.b.Set(k, v, nil)
	}
	if b.txn {
		if v != nil {
			v = append(make([]byte, 0, len(v)), v...)
		}
		b.trackSubkey(k, v)
	}
}

// trackSubkey records in a tracking batch that it wrote record k as v
// (nil: deleted); v is the batch's own.
func (b *Batch) trackSubkey(k, v []byte) {
	if b.subkeys == nil {
		b.subkeys = map[string][]byte{}
	}
	b.subkeys[string(k)] = v
}

// putChunks writes v as the chunks of value id from chunk 0 on. A chunk
// of zeros is deleted rather than written (a sparse value stays sparse
// through GET and SET, COPY or RESTORE).
func (b *Batch) putChunks(ns string, id uint64, v []byte) {
	// Each record: its kind, the key's and the value's lengths (varints
	// of at most 5 bytes), the key and the value.
	b.reserve(len(v) + int(chunkCount(uint64(len(v))))*(11+len(chunkKey(nil, ns, id, 0))))
	for i := uint32(0); i < chunkCount(uint64(len(v))); i++ {
		c := v[int(i)*chunkSize : min(len(v), int(i+1)*chunkSize)]
		if bytes.Equal(c, zeroChunk[:len(c)]) {
			c = nil
		}
		b.putChunk(ns, id, i, c)
	}
}

// zeroChunk is a chunk of zeros, to compare chunks with.
var zeroChunk [chunkSize]byte

// rangeDropChunks is the number of chunks from which dropValue deletes a
// value's chunks with one range deletion rather than one deletion each:
// deleting a 100 MB value wrote 25,600 records and held the commit
// pipeline for ~100 ms. Below it, point deletions stay cheap and keep
// range deletions, which Pebble's reads of a memtable re-fragment after
// each new one, few. Tests lower it.
var rangeDropChunks uint32 = 64

// dropValue deletes the out-of-line value or the members old
// describes (key's), except its chunks below keep (those the caller
// rewrites).
func (b *Batch) dropValue(ns string, key []byte, old *Metadata, keep uint32) {
	switch {
	case old != nil && old.HasMembers():
		b.dropFields(ns, old)
	case old == nil || !old.External():
	case old.Chunked() && chunkCount(old.Size)-min(keep, chunkCount(old.Size)) >= rangeDropChunks:
		// Every chunk of the value from keep on: there are none past its
		// length. Chunks the batch writes later (PutMeta rewrites a
		// value's first chunks after dropping the rest) come after the
		// deletion, so it does not cover them.
		from := chunkKey(make([]byte, 0, 14+len(ns)), ns, old.Version, keep)
		_ = b.b.DeleteRange(from, prefixEnd(from[:len(from)-4]), nil)
		if b.txn {
			// Commands later in the batch read what it deleted as gone.
			for i := keep; i < chunkCount(old.Size); i++ {
				b.trackSubkey(chunkKey(nil, ns, old.Version, i), nil)
			}
		}
	case old.Chunked():
		for i := keep; i < chunkCount(old.Size); i++ {
			b.putChunk(ns, old.Version, i, nil)
		}
	default:
		_ = b.b.Delete(valueKey(ns, key), nil)
	}
}

// chunkIndex returns the chunk number at the end of chunk record key k.
func chunkIndex(k []byte) uint32 { return binary.BigEndian.Uint32(k[len(k)-4:]) }

// readChunks copies the bytes [from, to) of key's chunked value m into
// out (len(out) == to-from, zeroed by the caller), reading what batch b
// (nil: none) wrote before the database. The caller holds dbMu.
func (e *Engine) readChunks(b *Batch, ns string, key []byte, m *Metadata, from, to int64, out []byte) error {
	first, last := uint32(from/chunkSize), uint32((to-1)/chunkSize)
	// put copies the part of chunk idx's record v that [from, to) covers.
	put := func(idx uint32, v []byte) error {
		start := int64(idx) * chunkSize
		if len(v) > chunkSize || uint64(start)+uint64(len(v)) > m.Size {
			return fmt.Errorf("storage: key %q: chunk %d of %d bytes, value of %d: %w", key, idx, len(v), m.Size, errChunkCorrupt)
		}
		if end := start + int64(len(v)); end > from && start < to {
			lo := max(from, start)
			copy(out[lo-from:], v[lo-start:min(to, end)-start])
		}
		return nil
	}
	var buf [96]byte
	inBatch := func(idx uint32) ([]byte, bool) {
		if b == nil || len(b.subkeys) == 0 {
			return nil, false
		}
		v, ok := b.subkeys[string(chunkKey(buf[:0], ns, m.Version, idx))]
		return v, ok
	}
	switch {
	case b != nil && slices.Contains(b.flush, ns): // the batch removes every key of ns
	case first == last: // one chunk (a point edit's): a Get, which bloom filters serve
		if _, ok := inBatch(first); ok {
			break
		}
		v, closer, err := e.db.Get(chunkKey(buf[:0], ns, m.Version, first))
		if errors.Is(err, pebble.ErrNotFound) {
			break
		}
		if err != nil {
			return fmt.Errorf("storage: key %q: read value: %w", key, err)
		}
		err = put(first, v)
		closer.Close()
		if err != nil {
			return err
		}
	default:
		lower, upper := chunkKey(nil, ns, m.Version, first), chunkKey(nil, ns, m.Version, last+1)
		it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
		if err != nil {
			return fmt.Errorf("storage: key %q: read value: %w", key, err)
		}
		for ok := it.First(); ok; ok = it.Next() {
			idx := chunkIndex(it.Key())
			if _, ok := inBatch(idx); ok {
				continue
			}
			if err := put(idx, it.Value()); err != nil {
				it.Close()
				return err
			}
		}
		if err := it.Close(); err != nil {
			return fmt.Errorf("storage: key %q: read value: %w", key, err)
		}
	}
	if b == nil || len(b.subkeys) == 0 {
		return nil
	}
	for idx := first; idx <= last; idx++ {
		if v, ok := inBatch(idx); ok {
			if err := put(idx, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteRange writes data at offset off of key's string value into b,
// as chunk records, and returns m, the key's new metadata, made a chunked
// string's: its length is what it was, or off+len(data) when that is
// longer (bytes between the old end and off are zeros), and its Value is
// nil. The caller writes it with PutMeta, which also drops old's value
// records when the write gave the value a new ID. old is the key's record
// as read under its lock (nil: none), as PutMeta takes it, and live
// reports whether the key exists for clients (otherwise the write starts
// from an empty string).
//
// Only the chunks the new bytes fall in are written (read first when the
// new bytes cover them in part), and, when the value was not chunked
// before, the chunks of its old bytes. WriteRange reads everything it
// needs before it adds a record to b, so on an error b is unchanged.
func (e *Engine) WriteRange(b *Batch, ns string, key []byte, old *Metadata, live bool, off int64, data []byte, m Metadata) (Metadata, error) {
	var base []byte // the old value, when it is not in chunks
	size := uint64(0)
	if live {
		switch {
		case !old.External():
			base = old.Value
			size = uint64(len(base))
		case old.Chunked():
			size = old.Size
		default: // a value record of an earlier format
			v, err := e.LoadValueRange(b, ns, key, old, 0, int64(old.Size))
			if err != nil {
				return m, err
			}
			base, size = v, old.Size
		}
	}
	size0 := uint64(0) // the length of the chunks there are
	id := newValueID()
	if live && old.Chunked() {
		size0, id = size, old.Version
	}
	end := uint64(off) + uint64(len(data))
	size = max(size, end)
	// The chunks to write: those of base (chunk i at index i), then
	// those past it that data falls in.
	type chunk struct {
		idx uint32
		v   []byte
	}
	chunks := make([]chunk, chunkCount(uint64(len(base))))
	for i := range chunks {
		v := base[i*chunkSize : min(len(base), (i+1)*chunkSize)]
		chunks[i] = chunk{uint32(i), append(make([]byte, 0, chunkSize), v...)}
	}
	nbase := uint32(len(chunks))
	if len(data) > 0 {
		e.dbMu.RLock()
		defer e.dbMu.RUnlock()
		for i := uint32(off / chunkSize); i <= uint32((end-1)/chunkSize); i++ {
			start := int64(i) * chunkSize
			lo, hi := max(off, start)-start, min(int64(end), start+chunkSize)-start
			var v []byte
			if i < nbase {
				v = chunks[i].v
			} else if n := min(chunkSize, int64(size0)-start); n > 0 && (lo > 0 || hi < n) {
				// The chunk keeps old bytes the write does not cover.
				v = make([]byte, n, chunkSize)
				if err := e.readChunks(b, ns, key, old, start, start+n, v); err != nil {
					return m, err
				}
			}
			if int64(len(v)) < hi {
				v = append(v, make([]byte, hi-int64(len(v)))...)
			}
			copy(v[lo:hi], data[start+lo-off:start+hi-off])
			if i < nbase {
				chunks[i].v = v
			} else {
				chunks = append(chunks, chunk{i, v})
			}
		}
	}
	// A new ID leaves old's records (an expired value's chunks, a format-1
	// record) to PutMeta, which drops the records of a value it replaces.
	for _, c := range chunks {
		b.putChunk(ns, id, c.idx, c.v)
	}
	m.Type, m.Value, m.Size, m.Version = TypeString, nil, size, id
	m.Flags |= FlagExternalValue | FlagChunkedValue
	return m, nil
}

// ErrValueCheck is wrapped by CheckValues's report of a chunk record that
// belongs to no value or lies past its value's end.
var ErrValueCheck = errors.New("storage: value records inconsistent")

// CheckValues checks, on one snapshot of the database, that every chunk
// record belongs to a chunked value some key's metadata names and lies
// within its length, and that every hash, set, list or sorted set has as
// many member records as its metadata counts (a list's within its range,
// a sorted set's score records matching its member records) and none
// belongs to no key; it reports
// how many chunk records there are. Tests call it (DEBUG CHECK-VALUES)
// to prove that no write leaves records behind; it reads every metadata,
// chunk and field record.
func (e *Engine) CheckValues() (chunks int, err error) {
	e.dbMu.RLock()
	defer e.dbMu.RUnlock()
	snap := e.db.NewSnapshot()
	defer snap.Close()
	type value struct {
		ns string
		id uint64
	}
	sizes := map[value]uint64{}  // chunked values' lengths
	hashes := map[value]uint64{} // collections' member counts
	heads := map[value]uint64{}  // lists' first indices
	zsets := map[value]*zsetSummary{}
	streams := map[value]*streamSummary{} // only their entries are counted
	scan := func(prefix byte, fn func(k, v []byte) error) error {
		it, err := snap.NewIter(&pebble.IterOptions{LowerBound: []byte{prefix}, UpperBound: []byte{prefix + 1}})
		if err != nil {
			return err
		}
		for ok := it.First(); ok; ok = it.Next() {
			if err := fn(it.Key(), it.Value()); err != nil {
				it.Close()
				return err
			}
		}
		return it.Close()
	}
	err = scan(prefixMeta, func(k, v []byte) error {
		ns, key, err := DecodeMetaKey(k)
		if err != nil {
			return err
		}
		m, err := decodeMetadata(v)
		if err != nil {
			return fmt.Errorf("storage: key %q: %w", key, err)
		}
		switch {
		case m.Chunked():
			sizes[value{string(ns), m.Version}] = m.Size
		case m.HasMembers():
			if _, dup := hashes[value{string(ns), m.Version}]; dup {
				return fmt.Errorf("%w: two collections in namespace %q have ID %x", ErrValueCheck, ns, m.Version)
			}
			hashes[value{string(ns), m.Version}] = m.records()
			switch m.Type {
			case TypeList:
				heads[value{string(ns), m.Version}] = m.Head
			case TypeZSet:
				zsets[value{string(ns), m.Version}] = &zsetSummary{low: m.ZLow, high: m.ZHigh}
			case TypeStream:
				streams[value{string(ns), m.Version}] = &streamSummary{meta: m.Stream}
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	fields := map[value]uint64{}
	err = scan(prefixSubkey, func(k, v []byte) error {
		if len(k) < 2 || len(k) < 2+int(k[1])+8 {
			return fmt.Errorf("%w: field key %q", ErrValueCheck, k)
		}
		h := value{string(k[2 : 2+k[1]]), binary.BigEndian.Uint64(k[2+k[1]:])}
		size, ok := hashes[h]
		if !ok {
			return fmt.Errorf("%w: field %q of collection %x in namespace %q belongs to no key", ErrValueCheck, k[2+int(k[1])+8:], h.id, h.ns)
		}
		if head, list := heads[h]; list {
			f := k[2+int(k[1])+8:]
			if len(f) != 8 || binary.BigEndian.Uint64(f)-head >= size {
				return fmt.Errorf("%w: element %x of list %x in namespace %q lies outside it", ErrValueCheck, f, h.id, h.ns)
			}
		}
		if z := zsets[h]; z != nil {
			if err := z.add(k[2+int(k[1])+8:], v); err != nil {
				return fmt.Errorf("%w (sorted set %x in namespace %q)", err, h.id, h.ns)
			}
		}
		if st := streams[h]; st != nil {
			f := k[2+int(k[1])+8:]
			if len(f) == 0 || f[0] != streamEntry {
				return nil // a group's record
			}
			if err := st.add(f, v); err != nil {
				return fmt.Errorf("%w (stream %x in namespace %q)", err, h.id, h.ns)
			}
		}
		fields[h]++
		return nil
	})
	if err != nil {
		return 0, err
	}
	for h, n := range hashes {
		if fields[h] != n {
			return 0, fmt.Errorf("%w: collection %x in namespace %q counts %d fields and has %d", ErrValueCheck, h.id, h.ns, n, fields[h])
		}
	}
	for h, st := range streams {
		if err := st.check(); err != nil {
			return 0, fmt.Errorf("%w (stream %x in namespace %q)", err, h.id, h.ns)
		}
	}
	for h, z := range zsets {
		if z.members != z.scores || z.memberSum != z.scoresSum {
			return 0, fmt.Errorf("%w: sorted set %x in namespace %q has %d member records and %d score records that do not match", ErrValueCheck, h.id, h.ns, z.members, z.scores)
		}
	}
	err = scan(prefixChunk, func(k, v []byte) error {
		chunks++
		if len(k) < 2 || len(k) != 2+int(k[1])+12 {
			return fmt.Errorf("%w: chunk key %q", ErrValueCheck, k)
		}
		ns := string(k[2 : 2+k[1]])
		id, idx := binary.BigEndian.Uint64(k[2+k[1]:]), chunkIndex(k)
		size, ok := sizes[value{ns, id}]
		switch {
		case !ok:
			return fmt.Errorf("%w: chunk %d of value %x in namespace %q belongs to no key", ErrValueCheck, idx, id, ns)
		case len(v) > chunkSize || uint64(idx)*chunkSize+uint64(len(v)) > size:
			return fmt.Errorf("%w: chunk %d of value %x (%d bytes) lies past its end (%d)", ErrValueCheck, idx, id, len(v), size)
		}
		return nil
	})
	return chunks, err
}
