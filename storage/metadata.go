package storage

import (
	"encoding/binary"
	"fmt"
)

// Type is the Redis type of a stored key, as recorded in its metadata and
// in LogData records.
type Type byte

// The Redis types. The numbering is part of the on-disk format: append new
// types, never renumber.
const (
	TypeNone Type = iota
	TypeString
	TypeHash
	TypeList
	TypeSet
	TypeZSet
	TypeStream
)

// String returns the name TYPE replies with.
func (t Type) String() string {
	switch t {
	case TypeString:
		return "string"
	case TypeHash:
		return "hash"
	case TypeList:
		return "list"
	case TypeSet:
		return "set"
	case TypeZSet:
		return "zset"
	case TypeStream:
		return "stream"
	}
	return "none"
}

// metaHeaderLen is the fixed part of every metadata value: type, flags and
// the expire time.
const metaHeaderLen = 10

// Metadata is the decoded metadata record of one user key. A string keeps
// its value inline (so GET is one read) up to Options.InlineValueMax bytes;
// a longer one is kept in a value record of its own (FlagExternalValue),
// so that reading or changing the key's TTL does not read or rewrite a
// large value. Other types keep a version (which prefixes their subkeys,
// so deleting the metadata orphans the old members) and an element count.
type Metadata struct {
	Type Type
	// Flags are per-key flags (FlagExternalValue).
	Flags byte
	// ExpireAt is the absolute expiry in Unix milliseconds, 0 for none.
	ExpireAt int64
	// Version is the collection types' version, and the ID of a chunked
	// string value (which its chunk records carry). Size is the
	// collections' element count, and the length of an external string
	// value.
	Version uint64
	Size    uint64
	// Head is a list's index of its first element: element i is the
	// field record named ListIndex(Head+i) (lists.go).
	Head uint64
	// ZLow and ZHigh bound a sorted set's scores, as ScoreKey's bytes
	// read as a big-endian number: every member's lies within [ZLow,
	// ZHigh], 0 standing for no bound. Walks of the score records start
	// there, so that the deletions that pops and range removals leave
	// at an end are never read again (zsets.go).
	ZLow, ZHigh uint64
	// Stream is a stream's state beyond its entry count (Size).
	Stream StreamMeta
	// Value is the string value for TypeString. For an external value,
	// reading the metadata leaves it nil (Engine.LoadValue reads it).
	Value []byte
}

// FlagExternalValue marks a string whose value is out of line rather
// than inline; Size is its length. With FlagChunkedValue it is in chunk
// records (chunkKey), without it (format 1) in one value record
// (valueKey).
const FlagExternalValue byte = 1

// FlagChunkedValue marks an external string value kept in chunks.
const FlagChunkedValue byte = 16

// FlagRawEncoding, FlagPlainEncoding and FlagUnsharedInt record how Redis
// would hold a string value in memory, which depends on the command that
// wrote it and which OBJECT ENCODING and OBJECT REFCOUNT report. Without
// them the value's content decides, as it does for SET: an integer, else
// embstr up to 44 bytes, else raw. FlagRawEncoding marks a value that is
// raw whatever its content (changed in place by APPEND, SETRANGE or a
// bit write), FlagPlainEncoding one that is never an integer (INCRBYFLOAT's
// result), and FlagUnsharedInt an integer that is not one of Redis's
// shared integers (a COPY of one).
const (
	FlagRawEncoding   byte = 2
	FlagPlainEncoding byte = 4
	FlagUnsharedInt   byte = 8

	// FlagsEncoding are the three encoding flags together.
	FlagsEncoding = FlagRawEncoding | FlagPlainEncoding | FlagUnsharedInt
)

// FlagHashTable marks a hash or a set that Redis would hold as a hash
// table rather than a listpack or an intset (too many members, or one too
// long or not an integer, at some point): OBJECT ENCODING reports it and
// it decides how HSCAN and SSCAN page. Like Redis's conversion, it stays
// until the key is deleted.
const FlagHashTable byte = 32

// HasMembers reports whether m is a collection whose members are field
// records named by its Version (fieldKey): a hash, a set, a list or a
// sorted set or a stream.
func (m *Metadata) HasMembers() bool {
	return m.Type == TypeHash || m.Type == TypeSet || m.Type == TypeList || m.Type == TypeZSet || m.Type == TypeStream
}

// records returns how many field records the collection m has: one per
// member, two for a sorted set's (zsets.go); a stream's entries alone,
// its groups' records being uncounted (streams.go).
func (m *Metadata) records() uint64 {
	if m.Type == TypeZSet {
		return 2 * m.Size
	}
	return m.Size
}

// External reports whether m is a string whose value is out of line.
func (m *Metadata) External() bool {
	return m.Type == TypeString && m.Flags&FlagExternalValue != 0
}

// Chunked reports whether m is a string whose value is in chunk records.
func (m *Metadata) Chunked() bool {
	return m.External() && m.Flags&FlagChunkedValue != 0
}

// Expired reports whether the key is logically gone at nowMs.
func (m *Metadata) Expired(nowMs int64) bool {
	return m.ExpireAt != 0 && m.ExpireAt <= nowMs
}

// encode appends the metadata value encoding to dst.
func (m *Metadata) encode(dst []byte) []byte {
	dst = append(dst, byte(m.Type), m.Flags)
	dst = binary.BigEndian.AppendUint64(dst, uint64(m.ExpireAt))
	if m.External() {
		dst = binary.BigEndian.AppendUint64(dst, m.Size)
		if m.Chunked() {
			dst = binary.BigEndian.AppendUint64(dst, m.Version)
		}
		return dst
	}
	if m.Type == TypeString {
		return append(dst, m.Value...)
	}
	dst = binary.BigEndian.AppendUint64(dst, m.Version)
	dst = binary.BigEndian.AppendUint64(dst, m.Size)
	switch m.Type {
	case TypeList:
		dst = binary.BigEndian.AppendUint64(dst, m.Head)
	case TypeZSet:
		dst = binary.BigEndian.AppendUint64(dst, m.ZLow)
		dst = binary.BigEndian.AppendUint64(dst, m.ZHigh)
	case TypeStream:
		dst = m.Stream.encode(dst)
	}
	return dst
}

// encodedLen returns the length of m's encoding.
func (m *Metadata) encodedLen() int {
	if m.Chunked() {
		return metaHeaderLen + 16
	}
	if m.External() {
		return metaHeaderLen + 8
	}
	if m.Type == TypeString {
		return metaHeaderLen + len(m.Value)
	}
	switch m.Type {
	case TypeList:
		return metaHeaderLen + 24
	case TypeZSet:
		return metaHeaderLen + 32
	case TypeStream:
		return metaHeaderLen + 16 + streamMetaLen
	}
	return metaHeaderLen + 16
}

// decodeMetadata decodes a metadata value. The returned Value aliases v.
func decodeMetadata(v []byte) (Metadata, error) {
	if len(v) < metaHeaderLen {
		return Metadata{}, fmt.Errorf("storage: metadata value too short (%d bytes)", len(v))
	}
	m := Metadata{Type: Type(v[0]), Flags: v[1], ExpireAt: int64(binary.BigEndian.Uint64(v[2:10]))}
	rest := v[metaHeaderLen:]
	if m.External() {
		want := 8
		if m.Chunked() {
			want = 16
		}
		if len(rest) != want {
			return Metadata{}, fmt.Errorf("storage: external string metadata of %d bytes", len(v))
		}
		m.Size = binary.BigEndian.Uint64(rest)
		if m.Chunked() {
			m.Version = binary.BigEndian.Uint64(rest[8:])
		}
		return m, nil
	}
	if m.Type == TypeString {
		m.Value = rest
		return m, nil
	}
	want := 16
	switch m.Type {
	case TypeList:
		want = 24
	case TypeZSet:
		want = 32
	case TypeStream:
		want = 16 + streamMetaLenV1
	}
	if len(rest) < want {
		return Metadata{}, fmt.Errorf("storage: %s metadata too short (%d bytes)", m.Type, len(v))
	}
	m.Version = binary.BigEndian.Uint64(rest)
	m.Size = binary.BigEndian.Uint64(rest[8:])
	switch m.Type {
	case TypeList:
		m.Head = binary.BigEndian.Uint64(rest[16:])
	case TypeZSet:
		m.ZLow = binary.BigEndian.Uint64(rest[16:])
		m.ZHigh = binary.BigEndian.Uint64(rest[24:])
	case TypeStream:
		m.Stream = decodeStreamMeta(rest[16:])
	}
	return m, nil
}

// DecodeMetadata decodes a metadata record value as found in a batch. The
// returned Value aliases v; an error means the value is not a metadata
// record Cairn can read.
func DecodeMetadata(v []byte) (Metadata, error) { return decodeMetadata(v) }

// StoredSize returns about how many bytes key's record m (in ns) takes in
// storage before Pebble compresses it: its metadata record (key and
// value, an inline string included), its expiry-index record if it has a
// TTL, and an out-of-line value's records, chunks counted as if none
// were left out for holding only zeros. It reads nothing; MEMORY USAGE
// reports it.
func StoredSize(ns string, key []byte, m *Metadata) int64 {
	n := int64(len(appendMetaKey(nil, ns, key)) + m.encodedLen())
	if m.ExpireAt != 0 {
		n += int64(len(expireKey(ns, m.ExpireAt, key)))
	}
	switch {
	case m.Chunked():
		n += int64(m.Size) + int64(chunkCount(m.Size))*int64(len(chunkKey(nil, ns, m.Version, 0)))
	case m.External(): // format 1: one value record
		n += int64(m.Size) + int64(len(valueKey(ns, key)))
	}
	return n
}
