package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// A list keeps each element in a field record (fields.go) named by its
// index: 8 bytes, big endian, so that the records are in list order.
// Element i of the list m is at index m.Head+i. A new list starts at
// ListStart, in the middle of the index space, so that pushes at either
// end never run out of indices; LPUSH moves Head down, RPUSH writes past
// the last element, and commands that insert or remove in the middle
// rewrite the records between that point and the nearer end.

// ListStart is the index of a new list's first element (Metadata.Head).
const ListStart uint64 = 1 << 63

// ListIndex returns the field name of the element at index i.
func ListIndex(i uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 0, 8), i) }

// errListCorrupt is wrapped by the errors of list records that do not fit
// their list's metadata.
var errListCorrupt = errors.New("list elements do not fit their metadata")

// ScanList calls fn with the elements of the list m of ns from its
// element from on, in order, with their positions (0 is the first), until
// fn returns false or the list ends; what batch b (nil: none) wrote
// replaces what the database holds. Records outside the list's range
// (those a range deletion in b removes) are never read. The slices fn
// gets are valid during the call only. A missing element is an error: the
// database is inconsistent.
func (e *Engine) ScanList(b *Batch, ns string, m *Metadata, from uint64, fn func(pos uint64, v []byte) bool) error {
	if from >= m.Size {
		return nil
	}
	pos, stopped := from, false
	var gap error
	err := e.ScanFields(b, ns, m, ListIndex(m.Head+from), func(f, v []byte) bool {
		if len(f) != 8 || binary.BigEndian.Uint64(f)-m.Head != pos {
			gap = fmt.Errorf("storage: list element %d: %w", pos, errListCorrupt)
			return false
		}
		stopped = !fn(pos, v)
		pos++
		return !stopped && pos < m.Size
	})
	switch {
	case err != nil:
		return err
	case gap != nil:
		return gap
	case !stopped && pos < m.Size:
		return fmt.Errorf("storage: list element %d: %w", pos, errListCorrupt)
	}
	return nil
}

// listAheadMax and listAheadBytes bound what ReadListAhead reads: the
// elements of this many pops, and about this many bytes of them.
const (
	listAheadMax   = 32
	listAheadBytes = 64 << 10
)

// ReadListAhead reads the elements of the list m of ns that the next pops
// at its head (left) or tail, from position pos on, will take, unless the
// one at pos is read already: up to listAheadMax of them, as ScanList
// reads them, into b, a transaction's batch (NewTxnBatch), where those
// pops find them (TakeField) instead of reading each from Pebble. The key
// locks the transaction holds keep them as read; its own writes of them
// come first, as its later reads always take those.
func (e *Engine) ReadListAhead(b *Batch, ns string, m *Metadata, left bool, pos uint64) error {
	if !b.txn {
		return nil
	}
	if _, ok := b.ahead[string(fieldKey(nil, ns, m.Version, ListIndex(m.Head+pos)))]; ok {
		return nil
	}
	from, to := pos, min(pos+listAheadMax, m.Size)
	if !left {
		from, to = pos+1-min(pos+1, listAheadMax), pos+1
	}
	if b.ahead == nil {
		b.ahead = make(map[string][]byte)
	}
	size := 0
	return e.ScanList(b, ns, m, from, func(at uint64, v []byte) bool {
		b.ahead[string(fieldKey(nil, ns, m.Version, ListIndex(m.Head+at)))] = bytes.Clone(v)
		size += len(v)
		return at+1 < to && size < listAheadBytes
	})
}

// DeleteListRange deletes the element records of the list m of ns at
// positions [from, to): one deletion each for a few, one range deletion
// for many. Like any range deletion in a batch, the latter is not seen by
// the batch's later reads, which ScanList's bounds make harmless: the
// caller moves the list's range off the deleted positions.
func (b *Batch) DeleteListRange(ns string, m *Metadata, from, to uint64) {
	if to <= from {
		return
	}
	if to-from < rangeDropFields || b.txn {
		for i := from; i < to; i++ {
			b.PutField(ns, m.Version, ListIndex(m.Head+i), nil)
		}
		return
	}
	start := fieldKey(nil, ns, m.Version, ListIndex(m.Head+from))
	end := fieldKey(nil, ns, m.Version, ListIndex(m.Head+to))
	_ = b.b.DeleteRange(start, end, nil)
}
