package commands

import (
	"bytes"
	"math"
	"slices"

	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/storage"
)

// Lists keep each element in a record of its own, named by its index
// (storage/lists.go): a push or a pop writes one record and the metadata,
// LINDEX and LSET touch one element, and LINSERT and LREM rewrite the
// elements between the change and the nearer end. Every list command
// holds the key's lock, since an element's index depends on the metadata
// read with it. The blocking commands are in listwait.go.

func init() {
	l := oneKeyCommand("list")
	// move is a command popping from argument 1 and pushing onto 2.
	move := func(name string, arity int, flags Flag, since, summary string, handler Handler) *Spec {
		return &Spec{Name: name, Arity: arity, Flags: flags, FirstKey: 1, LastKey: 2, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRW|KeyAccess|KeyDelete), Key(2, KeyRW|KeyInsert)}, Group: "list", Since: since, Summary: summary, Handler: handler}
	}
	register(
		l("lpush", -3, FlagWrite|FlagDenyOOM|FlagFast, KeyRW|KeyInsert, "1.0.0", "Prepends one or more elements to a list. Creates the key if it doesn't exist.", func(c *Ctx) { pushCommand(c, true, false, storage.CmdLPush) }),
		l("rpush", -3, FlagWrite|FlagDenyOOM|FlagFast, KeyRW|KeyInsert, "1.0.0", "Appends one or more elements to a list. Creates the key if it doesn't exist.", func(c *Ctx) { pushCommand(c, false, false, storage.CmdRPush) }),
		l("lpushx", -3, FlagWrite|FlagDenyOOM|FlagFast, KeyRW|KeyInsert, "2.2.0", "Prepends one or more elements to a list only when the list exists.", func(c *Ctx) { pushCommand(c, true, true, storage.CmdLPushX) }),
		l("rpushx", -3, FlagWrite|FlagDenyOOM|FlagFast, KeyRW|KeyInsert, "2.2.0", "Appends an element to a list only when the list exists.", func(c *Ctx) { pushCommand(c, false, true, storage.CmdRPushX) }),
		l("lpop", -2, FlagWrite|FlagFast, KeyRW|KeyAccess|KeyDelete, "1.0.0", "Returns the first elements in a list after removing it. Deletes the list if the last element was popped.", func(c *Ctx) { popCommand(c, true) }),
		l("rpop", -2, FlagWrite|FlagFast, KeyRW|KeyAccess|KeyDelete, "1.0.0", "Returns and removes the last elements of a list. Deletes the list if the last element was popped.", func(c *Ctx) { popCommand(c, false) }),
		l("llen", 2, FlagReadOnly|FlagFast, KeyRO, "1.0.0", "Returns the length of a list.", func(c *Ctx) { cardinality(c, storage.TypeList) }),
		l("lindex", 3, FlagReadOnly, KeyRO|KeyAccess, "1.0.0", "Returns an element from a list by its index.", cmdLIndex),
		l("lrange", 4, FlagReadOnly, KeyRO|KeyAccess, "1.0.0", "Returns a range of elements from a list.", cmdLRange),
		l("lset", 4, FlagWrite|FlagDenyOOM, KeyRW|KeyUpdate, "1.0.0", "Sets the value of an element in a list by its index.", cmdLSet),
		l("linsert", 5, FlagWrite|FlagDenyOOM, KeyRW|KeyInsert, "2.2.0", "Inserts an element before or after another element in a list.", cmdLInsert),
		l("lrem", 4, FlagWrite, KeyRW|KeyDelete, "1.0.0", "Removes elements from a list. Deletes the list if the last element was removed.", cmdLRem),
		l("ltrim", 4, FlagWrite, KeyRW|KeyDelete, "1.0.0", "Removes elements from both ends a list. Deletes the list if all elements were trimmed.", cmdLTrim),
		l("lpos", -3, FlagReadOnly, KeyRO|KeyAccess, "6.0.6", "Returns the index of matching elements in a list.", cmdLPos),
		move("rpoplpush", 3, FlagWrite|FlagDenyOOM, "1.2.0", "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped.", cmdRPopLPush),
		move("lmove", 5, FlagWrite|FlagDenyOOM, "6.2.0", "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved.", cmdLMove),
		&Spec{Name: "lmpop", Arity: -4, Flags: FlagWrite, KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Begin: AtIndex(1), Find: KeyNum(0, 1, 1)}}, Group: "list", Since: "7.0.0", Summary: "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.", Handler: cmdLMPop},
	)
}

// listEncoding is the OBJECT ENCODING of every list: Redis 7.0 holds all
// of them as quicklists.
const listEncoding = "quicklist"

// newList returns the metadata of a new, empty list.
func newList() storage.Metadata {
	return storage.Metadata{Type: storage.TypeList, Version: storage.NewHashID(), Head: storage.ListStart}
}

// elementAt returns element pos of the live list m (pos < m.Size); on a
// storage error, or a missing record, it replies and returns ok=false.
// With take the caller deletes the element, which is then read without
// filling the member cache (Engine.TakeField).
func (c *Ctx) elementAt(m *storage.Metadata, pos uint64, take bool) (v []byte, ok bool) {
	read := c.Env.Store.GetField
	if take {
		read = c.Env.Store.TakeField
	}
	v, found, err := read(c.batch(), c.ns(), m, storage.ListIndex(m.Head+pos))
	switch {
	case err != nil:
		c.storageError(err)
		return nil, false
	case !found:
		c.W.Error(errInconsistent)
		return nil, false
	}
	return v, true
}

// elements returns n elements of the live list m from position from on
// (fewer past its end); on a storage error it replies and returns
// ok=false.
func (c *Ctx) elements(m *storage.Metadata, from, n uint64) ([][]byte, bool) {
	out := make([][]byte, 0, min(n, 1024))
	if n == 0 {
		return out, true
	}
	err := c.Env.Store.ScanList(c.batch(), c.ns(), m, from, func(_ uint64, v []byte) bool {
		out = append(out, bytes.Clone(v))
		return uint64(len(out)) < n
	})
	if err != nil {
		c.storageError(err)
		return nil, false
	}
	return out, true
}

// listWindow is how many elements eachElement reads at a time backwards.
const listWindow = 256

// eachElement calls fn with the position and value of each element of the
// live list m, from the first or, with reverse, from the last, until fn
// returns false; on a storage error it replies and returns false.
func (c *Ctx) eachElement(m *storage.Metadata, reverse bool, fn func(pos uint64, v []byte) bool) bool {
	if !reverse {
		err := c.Env.Store.ScanList(c.batch(), c.ns(), m, 0, fn)
		if err != nil {
			c.storageError(err)
			return false
		}
		return true
	}
	for end := m.Size; end > 0; {
		from := end - min(end, listWindow)
		window, ok := c.elements(m, from, end-from)
		if !ok {
			return false
		}
		for i := len(window) - 1; i >= 0; i-- {
			if !fn(from+uint64(i), window[i]) {
				return true
			}
		}
		end = from
	}
	return true
}

// pushElements adds the writes of elems pushed onto the list m (at the
// head with left, one after the other as LPUSH does) to b.
func (c *Ctx) pushElements(b *storage.Batch, m *storage.Metadata, left bool, elems ...[]byte) {
	for _, e := range elems {
		if e == nil {
			e = []byte{} // an empty element, not a deletion
		}
		if left {
			m.Head--
			b.PutField(c.ns(), m.Version, storage.ListIndex(m.Head), e)
		} else {
			b.PutField(c.ns(), m.Version, storage.ListIndex(m.Head+m.Size), e)
		}
		m.Size++
	}
}

// pushCode is the event of a push at the head (left) or the tail.
func pushCode(left bool) notify.Code {
	if left {
		return notify.CodeLPush
	}
	return notify.CodeRPush
}

// popCommandCode is the LogData command of LPOP (left) or RPOP.
func popCommandCode(left bool) storage.Command {
	if left {
		return storage.CmdLPop
	}
	return storage.CmdRPop
}

// popCode is the event of a pop from the head (left) or the tail.
func popCode(left bool) notify.Code {
	if left {
		return notify.CodeLPop
	}
	return notify.CodeRPop
}

// pushCommand is LPUSH, RPUSH, LPUSHX and RPUSHX: it pushes the elements
// onto the list (at the head with left), which onlyExisting requires to
// exist, with cmd's LogData, and replies the list's length.
func pushCommand(c *Ctx, left, onlyExisting bool, cmd storage.Command) {
	key := c.Args[1]
	defer c.lock(key)()
	k, ok := c.readOf(key, storage.TypeList)
	switch {
	case !ok:
		return
	case !k.live && onlyExisting:
		c.W.Int(0)
		return
	}
	m := k.m
	if !k.live {
		m = newList()
	}
	b := c.newBatch(storage.TypeList, cmd)
	c.pushElements(b, &m, left, c.Args[2:]...)
	c.put(b, key, &k, m, pushCode(left))
	if c.commit(b) {
		c.W.Int(int64(m.Size))
	}
}

// popElements adds to b the removal of up to n elements from the head
// (left) or the tail of the live list key (k: its state), with the pop's
// event and "del" when it empties the list, and returns them in the
// order they were popped. On a storage error it replies and returns
// ok=false.
func (c *Ctx) popElements(b *storage.Batch, key []byte, k *keyState, left bool, n uint64) (popped [][]byte, ok bool) {
	n = min(n, k.m.Size)
	if popped, ok = c.endElements(key, &k.m, left, n); ok {
		c.dropEnd(b, key, k, left, n)
	}
	return popped, ok
}

// endElements returns the n elements (at most as many as the list has) at
// the head (left) or the tail of the live list key m, in the order a pop
// takes them. On a storage error, or records missing, it replies and
// returns ok=false.
func (c *Ctx) endElements(key []byte, m *storage.Metadata, left bool, n uint64) (out [][]byte, ok bool) {
	from := uint64(0)
	if !left {
		from = m.Size - n
	}
	if n == 1 { // one point read, no iterator
		c.readAhead(key, m, left, from)
		v, ok := c.elementAt(m, from, true)
		return [][]byte{v}, ok
	}
	if out, ok = c.elements(m, from, n); !ok {
		return nil, false
	}
	if uint64(len(out)) != n {
		c.W.Error(errInconsistent)
		return nil, false
	}
	if !left {
		slices.Reverse(out)
	}
	return out, true
}

// readAhead reads the elements the next pops of the list key m will take,
// from position pos on, into the transaction's batch, when the last pop in
// it was of the same key: a pipelined group of pops reads its elements
// with one iterator instead of one Pebble read each. It reads nothing
// outside a transaction or for a key's first pop, which may be its only
// one. An error leaves the pops to read their elements themselves.
func (c *Ctx) readAhead(key []byte, m *storage.Metadata, left bool, pos uint64) {
	t := c.txn
	if t == nil {
		return
	}
	k := t.keyOf(c.ns(), key)
	if string(k) != string(t.popped) {
		t.popped = append(t.popped[:0], k...)
		return
	}
	_ = c.Env.Store.ReadListAhead(t.b, c.ns(), m, left, pos)
}

// dropEnd adds to b the removal of n elements (at most as many as it has)
// from the head (left) or the tail of the live list key (k: its state),
// with the pop's event, deleting the key with "del" after it when none
// remain.
func (c *Ctx) dropEnd(b *storage.Batch, key []byte, k *keyState, left bool, n uint64) {
	if n == k.m.Size {
		c.del(b, key, k, popCode(left), notify.CodeDel)
		return
	}
	m := k.m
	c.removeEnd(b, &m, left, n)
	c.put(b, key, k, m, popCode(left))
}

// removeEnd adds to b the deletion of the records of n elements (at most
// as many as it has) at the head (left) or the tail of the list m, and
// moves m past them.
func (c *Ctx) removeEnd(b *storage.Batch, m *storage.Metadata, left bool, n uint64) {
	from := uint64(0)
	if !left {
		from = m.Size - n
	}
	b.DeleteListRange(c.ns(), m, from, from+n)
	if left {
		m.Head += n
	}
	m.Size -= n
}

// popCommand is LPOP and RPOP (from the head with left), with or without
// a count.
func popCommand(c *Ctx, left bool) {
	if len(c.Args) > 3 {
		c.wrongArity()
		return
	}
	hasCount := len(c.Args) == 3
	count := int64(1)
	if hasCount {
		n, ok := parseInt(c.Args[2])
		if !ok || n < 0 {
			c.W.Error("ERR value is out of range, must be positive")
			return
		}
		count = n
	}
	key := c.Args[1]
	defer c.lock(key)()
	k, ok := c.readOf(key, storage.TypeList)
	switch {
	case !ok:
		return
	case !k.live && hasCount:
		c.W.NullArray()
		return
	case !k.live:
		c.W.NullBulk()
		return
	case count == 0:
		c.W.Array(0)
		return
	}
	b := c.newBatch(storage.TypeList, popCommandCode(left))
	popped, ok := c.popElements(b, key, &k, left, uint64(count))
	if !ok {
		c.discard(b)
		return
	}
	if !c.commit(b) {
		return
	}
	if !hasCount {
		c.W.Bulk(popped[0])
		return
	}
	c.W.Array(len(popped))
	for _, v := range popped {
		c.W.Bulk(v)
	}
}

// liveList reads the list key under the lock the caller holds: on
// WRONGTYPE or a storage error it replies, and when key holds no list it
// replies with missing; either way it returns ok=false.
func (c *Ctx) liveList(key []byte, missing func()) (k keyState, ok bool) {
	if k, ok = c.readOf(key, storage.TypeList); ok && !k.live {
		missing()
		return k, false
	}
	return k, ok
}

// listPosition returns the position in the list m of index i (negative:
// from the end), and whether it is within the list.
func listPosition(m *storage.Metadata, i int64) (uint64, bool) {
	if i < 0 {
		i += int64(m.Size)
	}
	if i < 0 || uint64(i) >= m.Size {
		return 0, false
	}
	return uint64(i), true
}

// indexArg parses LINDEX's and LSET's index (Args[2]) into a position in
// the list m, replying with outside when it lies outside the list; on
// any reply it returns ok=false.
func (c *Ctx) indexArg(m *storage.Metadata, outside func()) (pos uint64, ok bool) {
	i, ok := c.intArg(2)
	if !ok {
		return 0, false
	}
	if pos, ok = listPosition(m, i); !ok {
		outside()
	}
	return pos, ok
}

func cmdLIndex(c *Ctx) {
	k, unlock, ok := c.lookupOf(c.Args[1], storage.TypeList, true)
	defer unlock()
	if !ok {
		return
	}
	if !k.live {
		c.W.NullBulk()
		return
	}
	pos, ok := c.indexArg(&k.m, func() { c.W.NullBulk() })
	if !ok {
		return
	}
	if v, ok := c.elementAt(&k.m, pos, false); ok {
		c.W.Bulk(v)
	}
}

// listRange turns LRANGE's and LTRIM's start and end (negative: from the
// end) into the positions [from, to) of a list of size elements.
func listRange(start, end int64, size uint64) (from, to uint64) {
	n := int64(size)
	if start < 0 {
		start = max(start+n, 0)
	}
	if end < 0 {
		end += n
	}
	if start > end || start >= n {
		return 0, 0
	}
	return uint64(start), uint64(min(end, n-1)) + 1
}

func cmdLRange(c *Ctx) {
	start, ok := c.intArg(2)
	if !ok {
		return
	}
	end, ok := c.intArg(3)
	if !ok {
		return
	}
	k, unlock, ok := c.lookupOf(c.Args[1], storage.TypeList, true)
	defer unlock()
	if !ok {
		return
	}
	if !k.live {
		c.W.Array(0)
		return
	}
	// The elements go straight from the scan into the reply; a storage
	// error or a missing element replaces it with the error.
	from, to := listRange(start, end, k.m.Size)
	mark := c.W.Len()
	c.W.Array(int(to - from))
	if to == from {
		return
	}
	err := c.Env.Store.ScanList(c.batch(), c.ns(), &k.m, from, func(pos uint64, v []byte) bool {
		c.W.Bulk(v)
		return pos+1 < to
	})
	if err != nil {
		c.W.Truncate(mark)
		c.storageError(err)
	}
}

func cmdLSet(c *Ctx) {
	key := c.Args[1]
	defer c.lock(key)()
	k, ok := c.liveList(key, func() { c.W.Error("ERR no such key") })
	if !ok {
		return
	}
	pos, ok := c.indexArg(&k.m, func() { c.W.Error("ERR index out of range") })
	if !ok {
		return
	}
	b := c.newBatch(storage.TypeList, storage.CmdLSet)
	b.PutField(c.ns(), k.m.Version, storage.ListIndex(k.m.Head+pos), c.Args[3])
	c.put(b, key, &k, k.m, notify.CodeLSet)
	if c.commit(b) {
		c.W.OK()
	}
}

func cmdLInsert(c *Ctx) {
	var after bool
	switch keyword(c.Args[2]) {
	case "before":
	case "after":
		after = true
	default:
		c.W.Error(errSyntax)
		return
	}
	key, pivot, elem := c.Args[1], c.Args[3], c.Args[4]
	defer c.lock(key)()
	k, ok := c.liveList(key, func() { c.W.Int(0) })
	if !ok {
		return
	}
	// The elements up to the pivot, which the insertion shifts towards
	// the head if they are the fewer.
	var head [][]byte
	at := int64(-1)
	if !c.eachElement(&k.m, false, func(pos uint64, v []byte) bool {
		head = append(head, bytes.Clone(v))
		if bytes.Equal(v, pivot) {
			at = int64(pos)
			return false
		}
		return true
	}) {
		return
	}
	if at < 0 {
		c.W.Int(-1)
		return
	}
	pos := uint64(at) // the new element's position
	if after {
		pos++
	}
	m := k.m
	b := c.newBatch(storage.TypeList, storage.CmdLInsert)
	if pos <= m.Size/2 {
		// Shift the elements before pos one index down.
		m.Head--
		for i, v := range head[:pos] {
			b.PutField(c.ns(), m.Version, storage.ListIndex(m.Head+uint64(i)), v)
		}
	} else {
		tail, ok := c.elements(&k.m, pos, m.Size-pos)
		if !ok {
			c.discard(b)
			return
		}
		for i, v := range tail {
			b.PutField(c.ns(), m.Version, storage.ListIndex(m.Head+pos+1+uint64(i)), v)
		}
	}
	b.PutField(c.ns(), m.Version, storage.ListIndex(m.Head+pos), elem)
	m.Size++
	c.put(b, key, &k, m, notify.CodeLInsert)
	if c.commit(b) {
		c.W.Int(int64(m.Size))
	}
}

func cmdLRem(c *Ctx) {
	count, ok := c.intArg(2)
	if !ok {
		return
	}
	key, elem := c.Args[1], c.Args[3]
	defer c.lock(key)()
	k, ok := c.liveList(key, func() { c.W.Int(0) })
	if !ok {
		return
	}
	limit := uint64(0) // 0: every match
	if count != 0 {
		limit = uint64(count)
		if count < 0 {
			limit = uint64(-(count + 1)) + 1 // math.MinInt64 too
		}
	}
	var matches []uint64
	if !c.eachElement(&k.m, count < 0, func(pos uint64, v []byte) bool {
		if bytes.Equal(v, elem) {
			matches = append(matches, pos)
		}
		return limit == 0 || uint64(len(matches)) < limit
	}) {
		return
	}
	if len(matches) == 0 {
		c.W.Int(0)
		return
	}
	b := c.newBatch(storage.TypeList, storage.CmdLRem)
	if uint64(len(matches)) == k.m.Size {
		c.del(b, key, &k, notify.CodeLRem, notify.CodeDel)
	} else {
		m, ok := c.removePositions(b, &k.m, matches)
		if !ok {
			c.discard(b)
			return
		}
		c.put(b, key, &k, m, notify.CodeLRem)
	}
	if c.commit(b) {
		c.W.Int(int64(len(matches)))
	}
}

// removePositions adds to b the removal of the elements at positions
// gone (distinct, fewer than the list has, in any order) from the live
// list m, closing the gaps from the nearer end, and returns the list's
// new metadata. On a storage error it replies and returns ok=false.
func (c *Ctx) removePositions(b *storage.Batch, old *storage.Metadata, gone []uint64) (storage.Metadata, bool) {
	m := *old
	first, last := gone[0], gone[0]
	drop := make(map[uint64]bool, len(gone))
	for _, p := range gone {
		drop[p] = true
		first, last = min(first, p), max(last, p)
	}
	n := uint64(len(gone))
	if m.Size-first <= last+1 {
		// Move the elements after first towards the head.
		rest, ok := c.elements(&m, first, m.Size-first)
		if !ok {
			return m, false
		}
		to := first
		for i, v := range rest {
			if !drop[first+uint64(i)] {
				if to != first+uint64(i) {
					b.PutField(c.ns(), m.Version, storage.ListIndex(m.Head+to), v)
				}
				to++
			}
		}
		b.DeleteListRange(c.ns(), &m, m.Size-n, m.Size)
	} else {
		// Move the elements before last towards the tail.
		front, ok := c.elements(&m, 0, last+1)
		if !ok {
			return m, false
		}
		to := last
		for i := int(last); i >= 0; i-- {
			if !drop[uint64(i)] {
				if to != uint64(i) {
					b.PutField(c.ns(), m.Version, storage.ListIndex(m.Head+to), front[i])
				}
				to--
			}
		}
		b.DeleteListRange(c.ns(), &m, 0, n)
		m.Head += n
	}
	m.Size -= n
	return m, true
}

func cmdLTrim(c *Ctx) {
	start, ok := c.intArg(2)
	if !ok {
		return
	}
	end, ok := c.intArg(3)
	if !ok {
		return
	}
	key := c.Args[1]
	defer c.lock(key)()
	k, ok := c.liveList(key, func() { c.W.OK() })
	if !ok {
		return
	}
	from, to := listRange(start, end, k.m.Size)
	b := c.newBatch(storage.TypeList, storage.CmdLTrim)
	if from == to {
		c.del(b, key, &k, notify.CodeLTrim, notify.CodeDel)
	} else {
		m := k.m
		b.DeleteListRange(c.ns(), &m, 0, from)
		b.DeleteListRange(c.ns(), &m, to, m.Size)
		m.Head += from
		m.Size = to - from
		c.put(b, key, &k, m, notify.CodeLTrim)
	}
	if c.commit(b) {
		c.W.OK()
	}
}

func cmdLPos(c *Ctx) {
	rank, count, maxLen := int64(1), int64(-1), int64(0) // count -1: no COUNT
	for i := 3; i < len(c.Args); i += 2 {
		opt := keyword(c.Args[i])
		if i+1 >= len(c.Args) || (opt != "rank" && opt != "count" && opt != "maxlen") {
			c.W.Error(errSyntax)
			return
		}
		n, isInt := parseInt(c.Args[i+1])
		switch {
		case opt == "rank" && !isInt:
			c.W.Error(errNotInt)
			return
		case opt == "rank" && n == 0:
			c.W.Error("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
			return
		case opt == "rank" && n == math.MinInt64:
			rank = -1 // Redis negates it, which leaves it negative and matching at once
		case opt == "rank":
			rank = n
		case (n < 0 || !isInt) && opt == "count":
			c.W.Error("ERR COUNT can't be negative")
			return
		case n < 0 || !isInt:
			c.W.Error("ERR MAXLEN can't be negative")
			return
		case opt == "count":
			count = n
		default:
			maxLen = n
		}
	}
	k, unlock, ok := c.lookupOf(c.Args[1], storage.TypeList, true)
	defer unlock()
	switch {
	case !ok:
		return
	case !k.live && count >= 0:
		c.W.Array(0)
		return
	case !k.live:
		c.W.NullBulk()
		return
	}
	skip := rank - 1 // matches to pass over
	if rank < 0 {
		skip = -rank - 1
	}
	var found []int64
	seen := int64(0)
	if !c.eachElement(&k.m, rank < 0, func(pos uint64, v []byte) bool {
		if maxLen > 0 && seen == maxLen {
			return false
		}
		seen++
		if !bytes.Equal(v, c.Args[2]) {
			return true
		}
		if skip > 0 {
			skip--
			return true
		}
		found = append(found, int64(pos))
		switch count {
		case -1:
			return false // the first match only
		case 0:
			return true // every match
		}
		return int64(len(found)) < count
	}) {
		return
	}
	switch {
	case count >= 0:
		c.W.Array(len(found))
		for _, p := range found {
			c.W.Int(p)
		}
	case len(found) > 0:
		c.W.Int(found[0])
	default:
		c.W.NullBulk()
	}
}

// parseSide parses LEFT or RIGHT (any case), replying a syntax error for
// anything else.
func (c *Ctx) parseSide(arg []byte) (left, ok bool) {
	switch keyword(arg) {
	case "left":
		return true, true
	case "right":
		return false, true
	}
	c.W.Error(errSyntax)
	return false, false
}

// parseSides parses LMOVE's and BLMOVE's sides, Args[i] and Args[i+1].
func (c *Ctx) parseSides(i int) (from, to, ok bool) {
	if from, ok = c.parseSide(c.Args[i]); ok {
		to, ok = c.parseSide(c.Args[i+1])
	}
	return from, to, ok
}

func cmdRPopLPush(c *Ctx) { moveCommand(c, false, true, storage.CmdRPopLPush) }

func cmdLMove(c *Ctx) {
	if from, to, ok := c.parseSides(3); ok {
		moveCommand(c, from, to, storage.CmdLMove)
	}
}

// moveCommand is RPOPLPUSH and LMOVE: it pops an element of the list
// Args[1] (from its head with fromLeft) and pushes it onto the list
// Args[2] (at its head with toLeft), replying with it.
func moveCommand(c *Ctx, fromLeft, toLeft bool, cmd storage.Command) {
	src, dst := c.Args[1], c.Args[2]
	defer c.lock(src, dst)()
	s, ok := c.liveList(src, func() { c.W.NullBulk() })
	if !ok {
		return
	}
	if v, ok := c.moveElement(src, dst, &s, fromLeft, toLeft, cmd); ok {
		c.W.Bulk(v)
	}
}

// moveElement moves an element of the live list src (s: its state, read
// under the locks of src and dst, which the caller holds) onto dst as
// LMOVE does, commits, and returns the element. On WRONGTYPE for dst or
// a storage error it replies and returns ok=false.
func (c *Ctx) moveElement(src, dst []byte, s *keyState, fromLeft, toLeft bool, cmd storage.Command) (v []byte, ok bool) {
	d, ok := c.readOf(dst, storage.TypeList)
	if !ok {
		return nil, false
	}
	popped, ok := c.endElements(src, &s.m, fromLeft, 1)
	if !ok {
		return nil, false
	}
	v = popped[0]
	b := c.newBatch(storage.TypeList, cmd)
	if bytes.Equal(src, dst) {
		m := s.m
		c.removeEnd(b, &m, fromLeft, 1)
		c.pushElements(b, &m, toLeft, v)
		c.put(b, dst, s, m, pushCode(toLeft))
		c.put(b, src, s, m, popCode(fromLeft))
	} else {
		dm := d.m
		if !d.live {
			dm = newList()
		}
		c.pushElements(b, &dm, toLeft, v)
		c.put(b, dst, &d, dm, pushCode(toLeft))
		c.dropEnd(b, src, s, fromLeft, 1)
	}
	return v, c.commit(b)
}

func cmdLMPop(c *Ctx) {
	keys, left, count, ok := c.parseMPop(1)
	if !ok {
		return
	}
	defer c.lock(keys...)()
	if !c.popFirst(keys, left, count, true, storage.CmdLMPop) {
		c.W.NullArray()
	}
}

// parseMPop parses the arguments of LMPOP and BLMPOP from numkeys (at
// Args[at]) on: the keys, the side and the count (1 without COUNT).
func (c *Ctx) parseMPop(at int) (keys [][]byte, left bool, count int64, ok bool) {
	return c.parseMPopArgs(at, func(arg []byte) (bool, bool) {
		switch keyword(arg) {
		case "left":
			return true, true
		case "right":
			return false, true
		}
		return false, false
	})
}

// parseMPopArgs parses the arguments of LMPOP, ZMPOP and their blocking
// forms from numkeys (at Args[at]) on: the keys, the end to pop from as
// side reads it, and the count (1 without COUNT).
func (c *Ctx) parseMPopArgs(at int, side func([]byte) (end, ok bool)) (keys [][]byte, end bool, count int64, ok bool) {
	n, isInt := parseInt(c.Args[at])
	if !isInt || n <= 0 {
		c.W.Error("ERR numkeys should be greater than 0")
		return nil, false, 0, false
	}
	where := int64(at) + n + 1
	if where >= int64(len(c.Args)) {
		c.W.Error(errSyntax)
		return nil, false, 0, false
	}
	if end, ok = side(c.Args[where]); !ok {
		c.W.Error(errSyntax)
		return nil, false, 0, false
	}
	count = -1
	for i := int(where) + 1; i < len(c.Args); i++ {
		if count != -1 || keyword(c.Args[i]) != "count" || i+1 >= len(c.Args) {
			c.W.Error(errSyntax)
			return nil, false, 0, false
		}
		i++
		if count, isInt = parseInt(c.Args[i]); !isInt || count <= 0 {
			c.W.Error("ERR count should be greater than 0")
			return nil, false, 0, false
		}
	}
	if count == -1 {
		count = 1
	}
	return c.Args[at+1 : where], end, count, true
}

// popFirst pops up to count elements from the first of keys that holds
// a list, under their locks, with cmd's LogData, and replies with the
// key and them: the elements nested in an array (LMPOP) or, with nested
// unset, the one element beside the key (BLPOP). It reports whether it
// replied: false, without a reply, when no key holds a list.
func (c *Ctx) popFirst(keys [][]byte, left bool, count int64, nested bool, cmd storage.Command) bool {
	for _, key := range keys {
		k, ok := c.readOf(key, storage.TypeList)
		if !ok {
			return true // replied
		}
		if !k.live {
			continue
		}
		b := c.newBatch(storage.TypeList, cmd)
		popped, ok := c.popElements(b, key, &k, left, uint64(count))
		if !ok {
			c.discard(b)
			return true
		}
		if c.commit(b) {
			c.W.Array(2)
			c.W.Bulk(key)
			if nested {
				c.W.Array(len(popped))
			}
			for _, v := range popped {
				c.W.Bulk(v)
			}
		}
		return true
	}
	return false
}
