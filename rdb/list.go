package rdb

import (
	"errors"
	"fmt"
)

// RDB object types of a list. Redis 7.0 writes typeListQuicklist2 for
// every list; the plain list (before Redis 3.2), the ziplist (before 3.2,
// for a small list) and the quicklist of ziplists (3.2 to 6.2) are still
// read.
const (
	typeList           = 1
	typeListZiplist    = 10
	typeListQuicklist  = 14
	typeListQuicklist2 = 18
)

// The kinds of a node of a quicklist 2, written as a length before the
// node's string: a plain node is one element, a packed node a listpack of
// elements. Redis 7.0 makes a plain node of an element too large for a
// listpack (1 GiB by default).
const (
	qlPlain  = 1
	qlPacked = 2
)

// EncodeList returns the DUMP payload of the list whose elements are
// given, in that order, as a plain RDB list (the oldest form, which Redis
// 7.0 still reads and re-encodes as a quicklist as it restores it). Each
// element is written as EncodeString writes a string. A list has at
// least one element: a payload without elements is one that Decode and
// Redis reject.
func EncodeList(elems [][]byte) []byte {
	size := 20
	for _, e := range elems {
		size += len(e) + 5
	}
	out := make([]byte, 0, size)
	out = append(out, typeList)
	out = appendLen(out, uint64(len(elems)))
	for _, e := range elems {
		out = appendString(out, e)
	}
	return appendFooter(out)
}

// list reads the elements of a plain RDB list: their count, then each
// element as a string.
func (r *reader) list(maxLen int64) ([][]byte, error) {
	n, err := r.plainLength()
	if err != nil {
		return nil, err
	}
	// Each string takes at least a byte, so a count the bytes left cannot
	// hold fails before anything is allocated for it.
	if n > uint64(len(r.b)) {
		return nil, fmt.Errorf("list of %d elements in %d bytes", n, len(r.b))
	}
	elems := make([][]byte, 0, n)
	for i := uint64(0); i < n; i++ {
		e, err := r.boundedStr(maxLen)
		if err != nil {
			return nil, err
		}
		elems = append(elems, e)
	}
	return elems, checkElements(elems)
}

// quicklist reads the elements of a quicklist: the count of its nodes,
// then each node as a string, a ziplist; or for a quicklist 2 (v2), each
// node's kind then its string, one element (not empty) or a listpack.
// Every node holds at least one element.
func (r *reader) quicklist(v2 bool, maxLen int64) ([][]byte, error) {
	n, err := r.plainLength()
	if err != nil {
		return nil, err
	}
	// Each node takes at least a byte (two for a quicklist 2), so a
	// count the bytes left cannot hold fails before the loop starts.
	if n > uint64(len(r.b)) {
		return nil, fmt.Errorf("quicklist of %d nodes in %d bytes", n, len(r.b))
	}
	var elems [][]byte
	for i := uint64(0); i < n; i++ {
		kind := uint64(qlPacked)
		if v2 {
			if kind, err = r.plainLength(); err != nil {
				return nil, err
			}
			if kind != qlPlain && kind != qlPacked {
				return nil, fmt.Errorf("quicklist node of unknown kind %d", kind)
			}
		}
		blob, err := r.boundedStr(maxLen)
		if err != nil {
			return nil, err
		}
		var entries [][]byte
		switch {
		case kind == qlPlain:
			// Redis makes plain nodes of large elements only, and
			// rejects an empty one.
			if len(blob) == 0 {
				return nil, fmt.Errorf("quicklist node %d: an empty plain element", i)
			}
			entries = [][]byte{blob}
		case v2:
			entries, err = listpackEntries(blob)
		default:
			entries, err = ziplistEntries(blob)
		}
		if err != nil {
			return nil, err
		}
		if len(entries) == 0 {
			return nil, fmt.Errorf("quicklist node %d without elements", i)
		}
		elems = append(elems, entries...)
	}
	return elems, checkElements(elems)
}

// listElements returns the elements of a list held in one ziplist: its
// entries, each an element.
func listElements(entries [][]byte, err error) ([][]byte, error) {
	if err != nil {
		return nil, err
	}
	return entries, checkElements(entries)
}

// checkElements reports a list without elements.
func checkElements(elems [][]byte) error {
	if len(elems) == 0 {
		return errors.New("empty list")
	}
	return nil
}
