package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A stream keeps its entries, consumer groups, consumers and pending
// entries as field records of a collection (fieldKey) named by its ID
// (Metadata.Version), so that DEL, RENAME, COPY and expiry treat it as
// they treat a hash. The first byte of a field says what it holds:
//
//	0x00 | ms (8, big endian) | seq (8)             an entry: its field-value pairs
//	0x01 | group                                    a group: last-delivered ID, entries-read
//	0x02 | len(group) (4) | group | consumer        a consumer: seen time
//	0x03 | len(group) (4) | group | ms (8) | seq (8) a pending entry: delivery time, count, consumer
//	0x04                                            the tail node's master fields
//
// Byte order is ID order within each kind, so ranges of entries and of a
// group's pending entries are range scans. Metadata.Size counts entries
// alone; Metadata.Stream holds the rest of the stream's state.

// Kinds of a stream's field records (their first byte).
const (
	streamEntry    byte = 0
	streamGroup    byte = 1
	streamConsumer byte = 2
	streamPending  byte = 3
	streamMaster   byte = 4
)

// StreamID is a stream entry ID: milliseconds and a sequence number.
type StreamID struct {
	Ms, Seq uint64
}

// Less reports whether id comes before o.
func (id StreamID) Less(o StreamID) bool {
	return id.Ms < o.Ms || id.Ms == o.Ms && id.Seq < o.Seq
}

// IsZero reports whether id is 0-0.
func (id StreamID) IsZero() bool { return id.Ms == 0 && id.Seq == 0 }

// String formats id as Redis does: ms-seq.
func (id StreamID) String() string { return fmt.Sprintf("%d-%d", id.Ms, id.Seq) }

// appendStreamID appends id's 16 big-endian bytes to dst.
func appendStreamID(dst []byte, id StreamID) []byte {
	dst = binary.BigEndian.AppendUint64(dst, id.Ms)
	return binary.BigEndian.AppendUint64(dst, id.Seq)
}

// decodeStreamID reads the 16 bytes of an ID from b.
func decodeStreamID(b []byte) StreamID {
	return StreamID{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])}
}

// StreamMeta is the state of a stream beyond its entry count.
type StreamMeta struct {
	// LastID is the greatest ID the stream generated or was set to.
	LastID StreamID
	// FirstID is the ID of the first entry (0-0 for an empty stream).
	FirstID StreamID
	// MaxDeleted is the greatest ID of an entry deleted from the stream.
	MaxDeleted StreamID
	// EntriesAdded counts the entries ever added.
	EntriesAdded uint64
	// Groups counts the consumer groups.
	Groups uint64
	// The tail node is the node (of Redis's radix tree of listpacks) new
	// entries go to, as Redis would have it. TailMaster is its master
	// entry's ID, which names it (an entry records its node's); TailLive
	// and TailDeleted count its live and deleted entries; TailBytes is
	// its listpack's length without its two counters, 0 when there is
	// no tail node (all its entries deleted). Approximate trimming
	// removes whole nodes only, as Redis's does.
	TailLive, TailDeleted, TailBytes uint64
	TailMaster                       StreamID
	// The head node is the node of the first entry. HeadLive counts its
	// live entries, 0 when that is not known (a trim then reads the node
	// and learns it); HeadMaster names it. They let a trim that would
	// keep the head node decide so without reading it.
	HeadLive   uint64
	HeadMaster StreamID
}

// streamMetaLen is the encoded length of a StreamMeta. A value of
// streamMetaLenV1 bytes, without the head node's fields, decodes with
// HeadLive 0.
const (
	streamMetaLen   = 136
	streamMetaLenV1 = 112
)

func (s *StreamMeta) encode(dst []byte) []byte {
	dst = appendStreamID(dst, s.LastID)
	dst = appendStreamID(dst, s.FirstID)
	dst = appendStreamID(dst, s.MaxDeleted)
	dst = binary.BigEndian.AppendUint64(dst, s.EntriesAdded)
	dst = binary.BigEndian.AppendUint64(dst, s.Groups)
	for _, n := range []uint64{0, s.TailLive, s.TailDeleted, s.TailBytes} {
		dst = binary.BigEndian.AppendUint64(dst, n)
	}
	dst = appendStreamID(dst, s.TailMaster)
	dst = binary.BigEndian.AppendUint64(dst, s.HeadLive)
	return appendStreamID(dst, s.HeadMaster)
}

// decodeStreamMeta decodes a StreamMeta of streamMetaLenV1 bytes or more.
func decodeStreamMeta(b []byte) StreamMeta {
	s := StreamMeta{
		LastID:       decodeStreamID(b),
		FirstID:      decodeStreamID(b[16:]),
		MaxDeleted:   decodeStreamID(b[32:]),
		EntriesAdded: binary.BigEndian.Uint64(b[48:]),
		Groups:       binary.BigEndian.Uint64(b[56:]),
		TailLive:     binary.BigEndian.Uint64(b[72:]),
		TailDeleted:  binary.BigEndian.Uint64(b[80:]),
		TailBytes:    binary.BigEndian.Uint64(b[88:]),
		TailMaster:   decodeStreamID(b[96:]),
	}
	if len(b) >= streamMetaLen {
		s.HeadLive = binary.BigEndian.Uint64(b[112:])
		s.HeadMaster = decodeStreamID(b[120:])
	}
	return s
}

// StreamEntryField returns the field name of the entry id.
func StreamEntryField(id StreamID) []byte {
	return appendStreamID(append(make([]byte, 0, 17), streamEntry), id)
}

// StreamEntryPrefix returns the prefix every entry field shares.
func StreamEntryPrefix() []byte { return []byte{streamEntry} }

// StreamMasterField returns the field name of the tail node's master
// fields record.
func StreamMasterField() []byte { return []byte{streamMaster} }

// StreamGroupField returns the field name of group.
func StreamGroupField(group []byte) []byte {
	return append([]byte{streamGroup}, group...)
}

// StreamGroupPrefix returns the prefix every group field shares.
func StreamGroupPrefix() []byte { return []byte{streamGroup} }

// appendGroupScope appends kind | len(group) | group to dst.
func appendGroupScope(dst []byte, kind byte, group []byte) []byte {
	dst = append(dst, kind)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(group)))
	return append(dst, group...)
}

// StreamConsumerPrefix returns the prefix of the consumer fields of group.
func StreamConsumerPrefix(group []byte) []byte {
	return appendGroupScope(nil, streamConsumer, group)
}

// StreamConsumerField returns the field name of consumer in group.
func StreamConsumerField(group, consumer []byte) []byte {
	return append(StreamConsumerPrefix(group), consumer...)
}

// StreamPendingPrefix returns the prefix of the pending-entry fields of
// group.
func StreamPendingPrefix(group []byte) []byte {
	return appendGroupScope(nil, streamPending, group)
}

// StreamPendingField returns the field name of entry id pending in group.
func StreamPendingField(group []byte, id StreamID) []byte {
	return appendStreamID(StreamPendingPrefix(group), id)
}

// StreamFieldID returns the ID at the end of an entry or pending-entry
// field name f.
func StreamFieldID(f []byte) StreamID { return decodeStreamID(f[len(f)-16:]) }

// errStreamRecord is wrapped by the errors of stream records that cannot
// be decoded.
var errStreamRecord = errors.New("storage: malformed stream record")

// EncodeStreamEntry encodes an entry: the node it went to (its master
// ID) and its field-value pairs (or any list of strings: a node's master
// fields).
func EncodeStreamEntry(node StreamID, pairs [][]byte) []byte {
	n := 16 + binary.MaxVarintLen64
	for _, p := range pairs {
		n += len(p) + binary.MaxVarintLen32
	}
	dst := appendStreamID(make([]byte, 0, n), node)
	dst = binary.AppendUvarint(dst, uint64(len(pairs)))
	for _, p := range pairs {
		dst = binary.AppendUvarint(dst, uint64(len(p)))
		dst = append(dst, p...)
	}
	return dst
}

// DecodeStreamEntry decodes an entry's node and its field-value pairs,
// copied.
func DecodeStreamEntry(v []byte) (StreamID, [][]byte, error) {
	if len(v) < 16 {
		return StreamID{}, nil, fmt.Errorf("%w: entry node", errStreamRecord)
	}
	node := decodeStreamID(v)
	v = v[16:]
	n, k := binary.Uvarint(v)
	if k <= 0 || n > uint64(len(v)) {
		return StreamID{}, nil, fmt.Errorf("%w: entry header", errStreamRecord)
	}
	v = v[k:]
	out := make([][]byte, 0, n)
	for range n {
		l, k := binary.Uvarint(v)
		if k <= 0 || l > uint64(len(v)-k) {
			return StreamID{}, nil, fmt.Errorf("%w: entry value", errStreamRecord)
		}
		out = append(out, append([]byte{}, v[k:k+int(l)]...))
		v = v[k+int(l):]
	}
	return node, out, nil
}

// StreamGroup is a consumer group's record.
type StreamGroup struct {
	LastID StreamID
	// EntriesRead is the group's entries-read counter, -1 when unknown.
	EntriesRead int64
}

// Encode returns the record's value.
func (g StreamGroup) Encode() []byte {
	return binary.BigEndian.AppendUint64(appendStreamID(make([]byte, 0, 24), g.LastID), uint64(g.EntriesRead))
}

// DecodeStreamGroup decodes a group record.
func DecodeStreamGroup(v []byte) (StreamGroup, error) {
	if len(v) != 24 {
		return StreamGroup{}, fmt.Errorf("%w: group of %d bytes", errStreamRecord, len(v))
	}
	return StreamGroup{decodeStreamID(v), int64(binary.BigEndian.Uint64(v[16:]))}, nil
}

// StreamPending is a pending entry's record.
type StreamPending struct {
	// DeliveryTime is the last delivery's time in Unix milliseconds.
	DeliveryTime int64
	// Deliveries counts the deliveries.
	Deliveries uint64
	// Consumer owns the entry.
	Consumer []byte
}

// Encode returns the record's value.
func (p StreamPending) Encode() []byte {
	dst := binary.BigEndian.AppendUint64(make([]byte, 0, 16+len(p.Consumer)), uint64(p.DeliveryTime))
	dst = binary.BigEndian.AppendUint64(dst, p.Deliveries)
	return append(dst, p.Consumer...)
}

// DecodeStreamPending decodes a pending entry's record, copying the
// consumer's name.
func DecodeStreamPending(v []byte) (StreamPending, error) {
	if len(v) < 16 {
		return StreamPending{}, fmt.Errorf("%w: pending entry of %d bytes", errStreamRecord, len(v))
	}
	return StreamPending{int64(binary.BigEndian.Uint64(v)), binary.BigEndian.Uint64(v[8:]), append([]byte{}, v[16:]...)}, nil
}

// EncodeStreamConsumer returns a consumer record's value: its seen time
// in Unix milliseconds.
func EncodeStreamConsumer(seen int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(seen)) }

// DecodeStreamConsumer decodes a consumer record's seen time.
func DecodeStreamConsumer(v []byte) (int64, error) {
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: consumer of %d bytes", errStreamRecord, len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// PrefixEnd returns the first byte string after every one that begins
// with p (nil when there is none), as an exclusive upper bound.
func PrefixEnd(p []byte) []byte { return prefixEnd(p) }

// streamSummary checks a stream's metadata against its entry records,
// which add is given in key (ID) order (DEBUG CHECK-VALUES).
type streamSummary struct {
	meta           StreamMeta
	entries        uint64
	first          StreamID
	headLive, tail uint64 // entries in the head and the tail node
	inHead         bool   // no entry of another node seen yet
}

// add counts the entry record f (its field name) with value v.
func (s *streamSummary) add(f, v []byte) error {
	if len(f) != 17 || len(v) < 16 {
		return fmt.Errorf("%w: stream entry record %x", ErrValueCheck, f)
	}
	id, node := decodeStreamID(f[1:]), decodeStreamID(v)
	if s.entries == 0 {
		s.first, s.inHead = id, true
	}
	s.entries++
	if s.inHead && node == s.meta.HeadMaster {
		s.headLive++
	} else {
		s.inHead = false
	}
	if node == s.meta.TailMaster {
		s.tail++
	}
	return nil
}

// check compares the counts with the metadata.
func (s *streamSummary) check() error {
	m := &s.meta
	switch {
	case s.entries > 0 && s.first != m.FirstID:
		return fmt.Errorf("%w: first entry %s, metadata says %s", ErrValueCheck, s.first, m.FirstID)
	case m.HeadLive != 0 && m.HeadLive != s.headLive:
		return fmt.Errorf("%w: head node %s has %d entries, metadata says %d", ErrValueCheck, m.HeadMaster, s.headLive, m.HeadLive)
	case m.TailBytes != 0 && m.TailLive != s.tail:
		return fmt.Errorf("%w: tail node %s has %d entries, metadata says %d", ErrValueCheck, m.TailMaster, s.tail, m.TailLive)
	}
	return nil
}
