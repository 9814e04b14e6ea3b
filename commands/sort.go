package commands

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/storage"
)

// SORT and SORT_RO sort the elements of a list or a set, numerically or
// (ALPHA) as byte strings, by themselves or by the values of other keys
// (BY pattern, where '*' stands for the element and "->field" names a
// hash field), and reply with them, or with other keys' values (GET), or
// store them as a list (STORE). A SORT that reads other keys or writes
// one holds every key lock, as a Redis command runs alone: it is
// keyspace-wide (keyspaceWide), so a transaction or a script running it
// holds them all too, and it never joins a pipelined group.

func init() {
	byGet := KeySpec{Notes: "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort",
		Flags: KeyRO | KeyAccess}
	store := KeySpec{Notes: "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array",
		Flags: KeyOW | KeyUpdate}
	acl := []string{"set", "sortedset", "list", "dangerous"}
	register(
		&Spec{Name: "sort", Arity: -2, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Step: 1,
			KeySpecs: []KeySpec{Key(1, KeyRO|KeyAccess), byGet, store}, Group: "generic", ACL: acl, Since: "1.0.0",
			Summary: "Sorts the elements in a list, a set, or a sorted set, optionally storing the result.", Handler: func(c *Ctx) { sortCommand(c, false) }},
		&Spec{Name: "sort_ro", Arity: -2, Flags: FlagReadOnly, FirstKey: 1, LastKey: 1, Step: 1,
			KeySpecs: []KeySpec{Key(1, KeyRO|KeyAccess), byGet}, Group: "generic", ACL: acl, Since: "7.0.0",
			Summary: "Returns the sorted elements of a list, a set, or a sorted set.", Handler: func(c *Ctx) { sortCommand(c, true) }},
	)
}

// sortReadsKeys reports whether a SORT or SORT_RO command line (args) reads
// keys other than the one it sorts (BY with a '*' pattern, GET other than
// "#") or writes one (STORE): then it needs every key lock.
func sortReadsKeys(args [][]byte) bool {
	for j := 2; j+1 < len(args); j++ {
		switch keyword(args[j]) {
		case "by":
			if bytes.IndexByte(cString(args[j+1]), '*') >= 0 {
				return true
			}
			j++
		case "get":
			if string(args[j+1]) != "#" {
				return true
			}
			j++
		case "store":
			return true
		case "limit":
			j += 2
		}
	}
	return false
}

// sortItem is one element being sorted and its weight.
type sortItem struct {
	elem  []byte
	score float64 // numeric sorting
	by    []byte  // ALPHA with BY: the weight, nil when its key is missing
}

func sortCommand(c *Ctx, readOnly bool) {
	var desc, alpha, dontSort bool
	start, count := int64(0), int64(-1)
	var by, store []byte
	var gets [][]byte
	for j := 2; j < len(c.Args); j++ {
		left := len(c.Args) - j - 1
		switch kw := keyword(c.Args[j]); {
		case kw == "asc":
			desc = false
		case kw == "desc":
			desc = true
		case kw == "alpha":
			alpha = true
		case kw == "limit" && left >= 2:
			var ok bool
			if start, ok = c.intArg(j + 1); !ok {
				return
			}
			if count, ok = c.intArg(j + 2); !ok {
				return
			}
			j += 2
		case kw == "store" && left >= 1 && !readOnly:
			store = c.Args[j+1]
			j++
		case kw == "by" && left >= 1:
			by = c.Args[j+1]
			// A pattern without '*' weighs nothing: the elements keep
			// their order.
			dontSort = bytes.IndexByte(cString(by), '*') < 0
			j++
		case kw == "get" && left >= 1:
			gets = append(gets, c.Args[j+1])
			j++
		default:
			c.W.Error(errSyntax)
			return
		}
	}
	key := c.Args[1]
	if sortReadsKeys(c.Args) {
		// In EXEC or a script every lock is held already (keyspaceWide);
		// such a SORT never joins a pipelined group.
		defer c.lockAll()()
	} else {
		defer c.lock(key)()
	}
	k, ok := c.read(key)
	if !ok {
		return
	}
	c.lookedUp(key, k.live) // with STORE too, as in Redis 7.0
	if k.live && k.m.Type != storage.TypeList && k.m.Type != storage.TypeSet && k.m.Type != storage.TypeZSet {
		c.W.Error(errWrongType)
		return
	}
	// Redis converts a sorted set it sorts to a skiplist for good.
	if k.live && k.m.Type == storage.TypeZSet && k.m.Flags&storage.FlagHashTable == 0 && !c.replica() {
		m := k.m
		m.Flags |= storage.FlagHashTable
		b := c.batchFor(storage.LogData{Type: m.Type, Cmd: storage.CmdSort, Flags: storage.LogFlagQuiet})
		k.m = c.put(b, key, &k, m)
		if !c.commit(b) {
			return
		}
	}
	var elems [][]byte
	switch {
	case !k.live:
	case k.m.Type == storage.TypeList:
		elems, ok = c.elements(&k.m, 0, k.m.Size)
	case k.m.Type == storage.TypeZSet:
		var es []zentry
		if es, ok = c.zends(&k.m, false, -1); ok {
			elems = make([][]byte, len(es))
			for i, e := range es {
				elems[i] = e.member
			}
		}
	default:
		elems, ok = c.members(&k.m)
		if dontSort && (store != nil || c.scripted) {
			// A set's own order is not one a replica or a script
			// rerun must see: Redis sorts it then.
			dontSort, alpha, by = false, true, nil
		}
	}
	if !ok {
		return
	}
	n := int64(len(elems))
	start = max(start, 0)
	end := n - 1
	if count >= 0 {
		end = start + min(count, math.MaxInt64-start) - 1
	}
	if start >= n {
		start, end = n-1, n-2
	}
	end = min(end, n-1)

	items := make([]sortItem, len(elems))
	convErr := false
	for i, e := range elems {
		items[i].elem = e
		if dontSort {
			continue
		}
		weight := e
		if by != nil {
			v, found, ok := c.sortLookup(by, e)
			if !ok {
				return
			}
			if !found {
				continue
			}
			weight = v
		}
		switch {
		case alpha && by != nil:
			items[i].by = weight
		case !alpha:
			if items[i].score, ok = sortScore(weight); !ok {
				convErr = true
			}
		}
	}
	if dontSort && desc && k.m.Type != storage.TypeSet {
		slices.Reverse(items) // a list's or sorted set's own order, from its end
	}
	if !dontSort {
		slices.SortStableFunc(items, func(a, b sortItem) int {
			var order int
			switch {
			case !alpha:
				order = cmp.Or(cmp.Compare(a.score, b.score), bytes.Compare(a.elem, b.elem))
			case by != nil && (a.by == nil || b.by == nil):
				order = boolCompare(a.by != nil, b.by != nil) // a missing weight first
			case by != nil:
				order = bytes.Compare(a.by, b.by)
			default:
				order = bytes.Compare(a.elem, b.elem)
			}
			if desc {
				return -order
			}
			return order
		})
	}
	if convErr {
		c.W.Error("ERR One or more scores can't be converted into double")
		return
	}
	var out [][]byte // nil entries: a GET of a missing key
	if start > end {
		items = nil
	} else {
		items = items[start : end+1]
	}
	for _, it := range items {
		if len(gets) == 0 {
			out = append(out, it.elem)
		}
		for _, g := range gets {
			v, found, ok := c.sortLookup(g, it.elem)
			if !ok {
				return
			}
			if !found {
				v = nil
			}
			out = append(out, v)
		}
	}
	if store != nil {
		c.sortStore(store, out)
		return
	}
	c.W.Array(len(out))
	for _, v := range out {
		if v == nil {
			c.W.NullBulk()
		} else {
			c.W.Bulk(v)
		}
	}
}

// sortStore writes SORT's result as the list dst (replacing any value,
// without a TTL; a GET of a missing key stores an empty string), or
// deletes dst for an empty result, and replies the result's length.
func (c *Ctx) sortStore(dst []byte, out [][]byte) {
	if len(out) == 0 {
		c.storeNothing(storage.CmdSort, dst)
		return
	}
	d, ok := c.read(dst)
	if !ok {
		return
	}
	m := newList()
	b := c.newBatch(storage.TypeList, storage.CmdSort)
	c.pushElements(b, &m, false, out...)
	c.put(b, dst, &d, m, notify.CodeSortStore)
	if c.commit(b) {
		c.W.Int(int64(len(out)))
	}
}

// sortLookup returns the value SORT's pattern names for elem: elem itself
// for "#"; else the string at the key the pattern names with its first
// '*' replaced by elem, or the field of the hash there after "->". Like
// Redis, it reads the pattern as a C string (up to a NUL) to find '*' and
// "->". found is false when the key or field is missing or of another
// type; ok is false after a storage error, which it replies.
func (c *Ctx) sortLookup(pattern, elem []byte) (v []byte, found, ok bool) {
	if string(pattern) == "#" {
		return elem, true, true
	}
	star := bytes.IndexByte(cString(pattern), '*')
	if star < 0 {
		return nil, false, true
	}
	rest := pattern[star+1:]
	var field []byte
	if f := strings.Index(string(cString(rest)), "->"); f >= 0 && f+2 < len(cString(rest)) {
		field, rest = rest[f+2:], rest[:f]
	}
	key := append(append(append(make([]byte, 0, len(pattern)+len(elem)), pattern[:star]...), elem...), rest...)
	k, ok := c.read(key)
	if !ok {
		return nil, false, false
	}
	c.lookedUp(key, k.live)
	switch {
	case !k.live:
		return nil, false, true
	case field != nil:
		if k.m.Type != storage.TypeHash {
			return nil, false, true
		}
		return c.field(&k.m, field)
	case k.m.Type != storage.TypeString:
		return nil, false, true
	}
	if !c.loadValue(key, &k) {
		return nil, false, false
	}
	return k.m.Value, true, true
}

// sortScore parses a weight as SORT does, with C's strtod: leading white
// space skipped, read up to a NUL, an empty weight 0; NaN and a value out
// of double's range (over- or underflow) are errors.
func sortScore(b []byte) (float64, bool) {
	s := strings.TrimLeft(string(cString(b)), " \t\n\v\f\r")
	if s == "" {
		return 0, len(cString(b)) == 0
	}
	f, erange, ok := strtod(s)
	return f, ok && !erange && !math.IsNaN(f)
}

// boolCompare orders false before true.
func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}
