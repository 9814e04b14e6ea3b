package storage

import (
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
// order. An error means the bytes are not a well-formed batch; records
// before the problem have been passed to fn.
func ReadBatch(repr []byte, fn func(Record)) error {
	if len(repr) < batchrepr.HeaderLen {
		return fmt.Errorf("storage: batch of %d bytes is shorter than its header", len(repr))
	}
	r := batchrepr.Read(repr)
	for {
		kind, k, v, ok, err := r.Next()
		if err != nil {
			return fmt.Errorf("storage: batch record: %w", err)
		}
		if !ok {
			return nil
		}
		rec := Record{Key: k, Value: v}
		switch kind {
		case pebble.InternalKeyKindLogData:
			rec.Kind = RecordLogData
		case pebble.InternalKeyKindSet:
			rec.Kind = RecordSet
		case pebble.InternalKeyKindDelete, pebble.InternalKeyKindSingleDelete:
			rec.Kind = RecordDelete
		case pebble.InternalKeyKindRangeDelete:
			rec.Kind = RecordDeleteRange
		}
		fn(rec)
	}
}
