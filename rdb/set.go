package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// RDB object types of a set. Redis 7.0 writes typeSet for a set it holds
// as a hash table and typeSetIntset for a small set of integers; Redis
// 7.2 also writes typeSetListpack for a small set of other strings.
const (
	typeSet         = 2
	typeSetIntset   = 11
	typeSetListpack = 20
)

// The layout of an intset: a header (the size in bytes of each entry,
// then the entry count, both 32 bits little-endian), then the entries,
// signed little-endian integers of that size in strictly ascending order.
const (
	isHeader = 8
	isInt16  = 2
	isInt32  = 4
	isInt64  = 8
)

// EncodeSet returns the DUMP payload of the set whose members are given,
// in that order, as a plain RDB set (the form Redis writes for a set it
// holds as a hash table; Redis re-encodes a small one as it restores it).
// Each member is written as EncodeString writes a string. A set has at
// least one member and no member twice: a payload without members or
// with a member twice is one that Decode and Redis reject.
func EncodeSet(members [][]byte) []byte {
	size := 20
	for _, m := range members {
		size += len(m) + 5
	}
	out := make([]byte, 0, size)
	out = append(out, typeSet)
	out = appendLen(out, uint64(len(members)))
	for _, m := range members {
		out = appendString(out, m)
	}
	return appendFooter(out)
}

// set reads the members of a plain RDB set: their count, then each member
// as a string.
func (r *reader) set(maxLen int64) ([][]byte, error) {
	n, err := r.plainLength()
	if err != nil {
		return nil, err
	}
	// Each string takes at least a byte, so a count the bytes left cannot
	// hold fails before anything is allocated for it.
	if n > uint64(len(r.b)) {
		return nil, fmt.Errorf("set of %d members in %d bytes", n, len(r.b))
	}
	members := make([][]byte, 0, n)
	for i := uint64(0); i < n; i++ {
		m, err := r.boundedStr(maxLen)
		if err != nil {
			return nil, err
		}
		members = append(members, m)
	}
	return members, checkMembers(members)
}

// checkMembers reports a set without members or with a member twice.
func checkMembers(members [][]byte) error {
	if len(members) == 0 {
		return errors.New("empty set")
	}
	seen := make(map[string]struct{}, len(members))
	for _, m := range members {
		if _, dup := seen[string(m)]; dup {
			return fmt.Errorf("member %s twice", quote(m))
		}
		seen[string(m)] = struct{}{}
	}
	return nil
}

// listpackMembers returns the members of a set held in a listpack: its
// entries, each a member.
func listpackMembers(lp []byte) ([][]byte, error) {
	members, err := listpackEntries(lp)
	if err != nil {
		return nil, err
	}
	return members, checkMembers(members)
}

// intsetMembers returns the members of a set held in an intset, as
// decimal text, in the intset's (ascending) order. The header must give a
// valid entry size and a count that fills the rest of the blob exactly,
// and each entry must be greater than the one before.
func intsetMembers(is []byte) ([][]byte, error) {
	if len(is) < isHeader {
		return nil, fmt.Errorf("intset of %d bytes", len(is))
	}
	size := binary.LittleEndian.Uint32(is)
	count := binary.LittleEndian.Uint32(is[4:])
	var width int // the most bytes an entry's decimal text takes
	switch size {
	case isInt16:
		width = len("-32768")
	case isInt32:
		width = len("-2147483648")
	case isInt64:
		width = len("-9223372036854775808")
	default:
		return nil, fmt.Errorf("intset of %d-byte entries", size)
	}
	if uint64(count)*uint64(size) != uint64(len(is)-isHeader) {
		return nil, fmt.Errorf("intset of %d bytes says %d entries of %d", len(is), count, size)
	}
	if count == 0 {
		return nil, errors.New("empty set")
	}
	// The count matches the blob, so both allocations are proportional
	// to it. Every member is a slice of one buffer, big enough that
	// appending to it never moves it, with no capacity beyond its end.
	members := make([][]byte, 0, count)
	text := make([]byte, 0, int(count)*width)
	var prev int64
	for i := 0; i < int(count); i++ {
		p := isHeader + i*int(size)
		v := littleEndianInt(is[p : p+int(size)])
		if i > 0 && v <= prev {
			return nil, fmt.Errorf("intset entry %d after %d", v, prev)
		}
		prev = v
		start := len(text)
		text = strconv.AppendInt(text, v, 10)
		members = append(members, sub(text, start, len(text)))
	}
	return members, nil
}
