package storage

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/batchrepr"
)

// RecordKind is the kind of one record of a batch.
type RecordKind uint8

// Record kinds readers care about; others are reported as RecordOther.
const (
	RecordOther RecordKind = iota
	RecordLogData
	RecordSet
	RecordDelete
	RecordDeleteRange
)

// Record is one record of a committed batch. For RecordLogData, Key holds
// the LogData; for RecordDeleteRange, Key and Value are the start and end.
// The slices alias the batch bytes.
type Record struct {
	Kind       RecordKind
	Key, Value []byte
}

// ReadBatch calls fn for each record of a committed batch's bytes, in
// order. An error means the bytes are not a well-formed batch of the kinds
// Cairn writes (LogData, Set, Delete, DeleteRange), or their record count
// is not the header's; records before the problem have been passed to fn.
// It never panics, whatever the bytes (Pebble's own reader indexes past
// the end of a truncated record), so callers check replicated bytes with
// it before Pebble sees them.
func ReadBatch(repr []byte, fn func(Record)) error {
	if len(repr) < batchrepr.HeaderLen {
		return fmt.Errorf("storage: batch of %d bytes is shorter than its header", len(repr))
	}
	want := binary.LittleEndian.Uint32(repr[8:batchrepr.HeaderLen])
	data := repr[batchrepr.HeaderLen:]
	var counted uint32 // records Pebble counts (not LogData)
	for i := 0; len(data) > 0; i++ {
		var rec Record
		kind := pebble.InternalKeyKind(data[0])
		switch kind {
		case pebble.InternalKeyKindLogData:
			rec.Kind = RecordLogData
		case pebble.InternalKeyKindSet:
			rec.Kind = RecordSet
		case pebble.InternalKeyKindDelete:
			rec.Kind = RecordDelete
		case pebble.InternalKeyKindRangeDelete:
			rec.Kind = RecordDeleteRange
		default:
			return fmt.Errorf("storage: batch record %d: unknown kind %d", i, data[0])
		}
		var ok bool
		if rec.Key, data, ok = batchString(data[1:]); !ok {
			return fmt.Errorf("storage: batch record %d: truncated key", i)
		}
		if kind == pebble.InternalKeyKindSet || kind == pebble.InternalKeyKindRangeDelete {
			if rec.Value, data, ok = batchString(data); !ok {
				return fmt.Errorf("storage: batch record %d: truncated value", i)
			}
		}
		if kind != pebble.InternalKeyKindLogData {
			counted++
		}
		fn(rec)
	}
	if counted != want {
		return fmt.Errorf("storage: batch of %d records says it has %d", counted, want)
	}
	return nil
}

// batchString reads a varint-prefixed string of a batch record from the
// start of data and returns it and the rest; ok is false when data ends
// first.
func batchString(data []byte) (s, rest []byte, ok bool) {
	n, w := binary.Uvarint(data)
	if w <= 0 || n > uint64(len(data)-w) {
		return nil, nil, false
	}
	end := w + int(n)
	return data[w:end:end], data[end:], true
}
