package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// A hash keeps one record per field under prefixSubkey (fieldKey), and
// its metadata record counts them (Metadata.Size) and names them by the
// hash's ID (Metadata.Version): a random number, new for each hash a
// write creates, so the records of a deleted hash are never read again
// and RENAME moves the metadata record alone. Deleting a hash deletes
// its field records in the same batch (dropFields). A set keeps its
// members the same way, as fields with empty values, and a list its
// elements, as fields named by their index (lists.go); what this file
// says of hashes holds for sets and lists (Metadata.HasMembers).

// fieldKey appends to dst the key of field f of the hash whose ID is id
// in ns: prefixSubkey | ns | id (8 bytes, big endian) | f. One hash's
// fields are contiguous and in byte order.
func fieldKey(dst []byte, ns string, id uint64, f []byte) []byte {
	dst = append(dst, prefixSubkey)
	dst = appendNS(dst, ns)
	dst = binary.BigEndian.AppendUint64(dst, id)
	return append(dst, f...)
}

// NewHashID returns the ID of a new hash (Metadata.Version), random and
// nonzero like a chunked value's.
func NewHashID() uint64 { return newValueID() }

// PutField writes field f of the hash whose ID is id in ns as v, or
// deletes it when v is nil. The caller keeps the hash's metadata (its
// field count) right with PutMeta in the same batch.
func (b *Batch) PutField(ns string, id uint64, f, v []byte) {
	b.putSubkey(fieldKey(make([]byte, 0, 11+len(ns)+len(f)), ns, id, f), v)
}

// FieldSize returns the bytes a field record of f and v takes in ns
// before Pebble compresses it, for MEMORY USAGE.
func FieldSize(ns string, f, v []byte) int64 {
	return int64(len(fieldKey(nil, ns, 0, f)) + len(v))
}

// rangeDropFields is the field count from which dropFields deletes a
// hash's records with one range deletion rather than one deletion each:
// below it, point deletions keep Pebble's range deletions, which its
// reads of a memtable re-fragment after each new one, few.
const rangeDropFields = 64

// dropFields deletes the field records of the hash old describes (in ns).
// A small hash's fields are listed and deleted one by one; a large one's,
// or any whose listing fails, with a range deletion, which is always
// right.
func (b *Batch) dropFields(ns string, old *Metadata) {
	if old.Size < rangeDropFields && b.e != nil {
		var fields [][]byte
		err := b.e.ScanFields(b, ns, old, nil, func(f, _ []byte) bool {
			fields = append(fields, fieldKey(nil, ns, old.Version, f))
			return true
		})
		if err == nil {
			for _, k := range fields {
				b.putSubkey(k, nil)
			}
			return
		}
	}
	from := fieldKey(make([]byte, 0, 11+len(ns)), ns, old.Version, nil)
	_ = b.b.DeleteRange(from, prefixEnd(from), nil)
	// The batch's later commands never read this hash's fields again: a
	// hash made in its place gets a new ID.
}

// errFieldsCorrupt is wrapped by the errors of field records that do not
// fit their hash's metadata: the database is inconsistent.
var errFieldsCorrupt = errors.New("hash fields do not fit their metadata")

// GetField returns a copy of field f of the hash m of ns, and whether it
// exists, reading what batch b (nil: none) wrote before the database.
func (e *Engine) GetField(b *Batch, ns string, m *Metadata, f []byte) ([]byte, bool, error) {
	return e.getField(b, ns, m, f, true)
}

// TakeField is GetField for a field the caller is about to delete (a
// popped list element): it takes the field from those ReadListAhead read
// into b when it is there, and what it reads from Pebble stays out of the
// member cache, which would only have to forget it again.
func (e *Engine) TakeField(b *Batch, ns string, m *Metadata, f []byte) ([]byte, bool, error) {
	return e.getField(b, ns, m, f, false)
}

// getField is GetField, which fills the member cache from Pebble with
// fill, and TakeField.
func (e *Engine) getField(b *Batch, ns string, m *Metadata, f []byte, fill bool) ([]byte, bool, error) {
	k := fieldKey(make([]byte, 0, 11+len(ns)+len(f)), ns, m.Version, f)
	if b != nil && b.subkeys != nil {
		if v, ok := b.subkeys[string(k)]; ok {
			return bytes.Clone(v), v != nil, nil
		}
	}
	if b != nil && slices.Contains(b.flush, ns) {
		return nil, false, nil
	}
	if !fill {
		if v, ok := b.takeAhead(k); ok {
			return v, true, nil
		}
	}
	if v, hit := e.members.getSettled(k); hit {
		if v == nil {
			return nil, false, nil
		}
		return append([]byte{}, v...), true, nil
	}
	epoch := e.members.epochOf(k)
	e.dbMu.RLock()
	defer e.dbMu.RUnlock()
	v, closer, err := e.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		if fill {
			e.members.fill(k, nil, epoch)
		}
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("storage: read hash field: %w", err)
	}
	out := append([]byte{}, v...)
	closer.Close()
	if memberReadHook != nil {
		memberReadHook()
	}
	if fill {
		e.members.fill(k, out, epoch)
	}
	return out, true, nil
}

// takeAhead returns, and forgets, element record k when ReadListAhead
// read it into b (nil: none).
func (b *Batch) takeAhead(k []byte) ([]byte, bool) {
	if b == nil || b.ahead == nil {
		return nil, false
	}
	v, ok := b.ahead[string(k)]
	if ok {
		delete(b.ahead, string(k))
	}
	return v, ok
}

// memberReadHook, when set (by tests only, before any read), runs in
// GetField between its read from Pebble and its fill of the member cache,
// to widen the window in which a commit can overtake the reader.
var memberReadHook func()

// The member cache holds member records GetField read: hash fields, set
// and sorted-set members, list elements. GetField reads without the key's
// lock (a replica's batches do not even take the locks of the keys whose
// members alone they change), so commits and readers keep it right this
// way:
//   - before a batch goes to Pebble, beginMembers marks the cache shards
//     of the member records it writes; after, cacheMembers replaces the
//     records the cache holds with the batch's (it adds none) and ends
//     the marks;
//   - a reader fills the cache with what it read from Pebble only if the
//     shard was not marked or changed since it looked (rowCache.fill),
//     so a record a commit overtook never enters the cache;
//   - a reader takes no record from a marked shard (rowCache.getSettled):
//     scans (HGETALL, SMEMBERS) read Pebble, which may have the commit's
//     records before the cache does.
//
// A reader that saw a commit's record therefore never sees an older one
// afterwards.
//
// A batch's range deletions of member records never cover a record the
// cache may serve: they delete a whole collection, whose ID no later key
// takes again (dropFields), or list positions outside the list's range,
// which a read reaches again only after a push wrote them (and that write
// replaces the cached record). A flush clears the cache (applied).

// beginMembers marks the cache shards of the member records of repr, a
// batch about to be applied, and returns them (a bit per shard) for
// cacheMembers; the caller holds commitMu.
func (e *Engine) beginMembers(repr []byte) uint64 {
	if e.members == nil {
		return 0
	}
	var mask uint64
	_ = ReadBatch(repr, func(r Record) {
		if (r.Kind == RecordSet || r.Kind == RecordDelete) && len(r.Key) > 0 && r.Key[0] == prefixSubkey {
			mask |= 1 << e.members.shardOf(r.Key)
		}
	})
	e.members.beginWrites(mask)
	return mask
}

// cacheMembers brings the member cache up to the batch repr, applied,
// and ends the marks of beginMembers (mask); the caller holds commitMu.
func (e *Engine) cacheMembers(repr []byte, mask uint64) {
	if mask == 0 { // no member record (a string's commit): nothing to do
		return
	}
	defer e.members.endWrites(mask)
	_ = ReadBatch(repr, func(r Record) {
		if len(r.Key) == 0 || r.Key[0] != prefixSubkey {
			return
		}
		switch r.Kind {
		case RecordSet:
			v := r.Value // the cache copies it
			if v == nil {
				v = []byte{} // present, empty (a set's member)
			}
			e.members.update(r.Key, v)
		case RecordDelete:
			e.members.update(r.Key, nil)
		}
	})
}

// ScanFields calls fn with each field of the hash m of ns at or after
// start, in byte order, and its value, until fn returns false; what
// batch b (nil: none) wrote replaces what the database holds. The slices
// fn gets are valid during the call only.
func (e *Engine) ScanFields(b *Batch, ns string, m *Metadata, start []byte, fn func(f, v []byte) bool) error {
	return e.ScanFieldRange(b, ns, m, start, nil, false, fn)
}

// ScanFieldRange calls fn with each field of the collection m of ns in
// [from, to), to nil standing for the end of the collection, in byte
// order or reversed, and its value, until fn returns false; what batch b
// (nil: none) wrote replaces what the database holds. The slices fn gets
// are valid during the call only.
func (e *Engine) ScanFieldRange(b *Batch, ns string, m *Metadata, from, to []byte, reverse bool, fn func(f, v []byte) bool) error {
	prefix := fieldKey(make([]byte, 0, 11+len(ns)), ns, m.Version, nil)
	prefix = prefix[:len(prefix):len(prefix)] // appends below copy it
	upper := prefixEnd(prefix)
	if to != nil {
		upper = append(prefix, to...)
	}
	return e.scanRange(b, ns, append(prefix, from...), upper, reverse, func(k, v []byte) bool {
		return fn(k[len(prefix):], v)
	})
}

// scanRange calls fn with each record of [lower, upper) in ns's subkeys
// and its value, in key order or reversed, until fn returns false; what
// batch b (nil: none) wrote replaces what the database holds, and what it
// deleted is skipped. The slices fn gets are valid during the call only.
func (e *Engine) scanRange(b *Batch, ns string, lower, upper []byte, reverse bool, fn func(k, v []byte) bool) error {
	// The batch's own records in the range, in the walk's order.
	var own []string
	if b != nil {
		for k := range b.subkeys {
			if k >= string(lower) && k < string(upper) {
				own = append(own, k)
			}
		}
		slices.Sort(own)
		if reverse {
			slices.Reverse(own)
		}
	}
	// before reports whether batch key o comes before database key k in
	// the walk.
	before := func(o string, k []byte) bool {
		if reverse {
			return o > string(k)
		}
		return o < string(k)
	}
	// emit passes fn the batch's records that come before k (all of them
	// when k is nil), and reports whether fn wants more.
	emit := func(k []byte) bool {
		for len(own) > 0 && (k == nil || before(own[0], k)) {
			o, v := own[0], b.subkeys[own[0]]
			own = own[1:]
			if v != nil && !fn([]byte(o), v) {
				return false
			}
		}
		return true
	}
	if b != nil && slices.Contains(b.flush, ns) {
		emit(nil)
		return nil
	}
	e.dbMu.RLock()
	defer e.dbMu.RUnlock()
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return fmt.Errorf("storage: scan collection records: %w", err)
	}
	first, next := it.First, it.Next
	if reverse {
		first, next = it.Last, it.Prev
	}
	for ok := first(); ok; ok = next() {
		k := it.Key()
		if !emit(k) {
			return closeIter(it)
		}
		if len(own) > 0 && own[0] == string(k) {
			continue // the batch's record replaces it, emitted next
		}
		if !fn(k, it.Value()) {
			return closeIter(it)
		}
	}
	if err := closeIter(it); err != nil {
		return err
	}
	emit(nil)
	return nil
}

// closeIter closes a subkey iterator, wrapping its error.
func closeIter(it *pebble.Iterator) error {
	if err := it.Close(); err != nil {
		return fmt.Errorf("storage: scan collection records: %w", err)
	}
	return nil
}

// CopyFields writes into b the field records of the collection from (in
// ns) as those of the collection whose ID is id, for COPY, reading what b
// wrote before the database. It returns how many records it copied.
func (e *Engine) CopyFields(b *Batch, ns string, from *Metadata, id uint64) (uint64, error) {
	type pair struct{ f, v []byte }
	var pairs []pair
	err := e.ScanFields(b, ns, from, nil, func(f, v []byte) bool {
		pairs = append(pairs, pair{bytes.Clone(f), bytes.Clone(v)})
		return true
	})
	if err != nil {
		return 0, err
	}
	if from.Type != TypeStream && uint64(len(pairs)) != from.records() {
		return 0, fmt.Errorf("storage: collection of %d members has %d records: %w", from.Size, len(pairs), errFieldsCorrupt)
	}
	for _, p := range pairs {
		if p.v == nil {
			p.v = []byte{}
		}
		b.PutField(ns, id, p.f, p.v)
	}
	return uint64(len(pairs)), nil
}
