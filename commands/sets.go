package commands

import (
	"bytes"
	"math"
	"slices"

	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/storage"
)

// Sets keep each member in a record of its own, a field with an empty
// value (collections.go).

func init() {
	s := oneKeyCommand("set")
	// multi is a command reading every key from argument 1 on.
	multi := func(name, summary string, handler Handler) *Spec {
		return &Spec{Name: name, Arity: -2, Flags: FlagReadOnly, FirstKey: 1, LastKey: -1, Step: 1, KeySpecs: []KeySpec{KeyRange(1, -1, 1, KeyRO|KeyAccess)}, Tips: []string{"nondeterministic_output_order"}, Group: "set", Since: "1.0.0", Summary: summary, Handler: handler}
	}
	// store is a command writing argument 1 (dst: its key flags) from the
	// keys after it.
	store := func(name string, dst KeyFlag, summary string, handler Handler) *Spec {
		return &Spec{Name: name, Arity: -3, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: -1, Step: 1, KeySpecs: []KeySpec{Key(1, dst), KeyRange(2, -1, 1, KeyRO|KeyAccess)}, Group: "set", Since: "1.0.0", Summary: summary, Handler: handler}
	}
	register(
		s("sadd", -3, FlagWrite|FlagDenyOOM|FlagFast, KeyRW|KeyInsert, "1.0.0", "Adds one or more members to a set. Creates the key if it doesn't exist.", cmdSAdd),
		s("srem", -3, FlagWrite|FlagFast, KeyRW|KeyDelete, "1.0.0", "Removes one or more members from a set. Deletes the set if the last member was removed.", cmdSRem),
		s("sismember", 3, FlagReadOnly|FlagFast, KeyRO, "1.0.0", "Determines whether a member belongs to a set.", cmdSIsMember),
		s("smismember", -3, FlagReadOnly|FlagFast, KeyRO|KeyAccess, "6.2.0", "Determines whether multiple members belong to a set.", cmdSMIsMember),
		s("scard", 2, FlagReadOnly|FlagFast, KeyRO, "1.0.0", "Returns the number of members in a set.", cmdSCard),
		withTips(s("smembers", 2, FlagReadOnly, KeyRO|KeyAccess, "1.0.0", "Returns all members of a set.", cmdSMembers), "nondeterministic_output_order"),
		withTips(s("srandmember", -2, FlagReadOnly, KeyRO|KeyAccess, "1.0.0", "Get one or multiple random members from a set", cmdSRandMember), "nondeterministic_output"),
		withTips(s("spop", -2, FlagWrite|FlagFast, KeyRW|KeyAccess|KeyDelete, "1.0.0", "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped.", cmdSPop), "nondeterministic_output"),
		withTips(s("sscan", -3, FlagReadOnly, KeyRO|KeyAccess, "2.8.0", "Iterates over members of a set.", func(c *Ctx) { scanMembers(c, storage.TypeSet, false) }), "nondeterministic_output"),
		&Spec{Name: "smove", Arity: 4, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 2, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRW|KeyAccess|KeyDelete), Key(2, KeyRW|KeyInsert)}, Group: "set", Since: "1.0.0", Summary: "Moves a member from one set to another.", Handler: cmdSMove},
		multi("sinter", "Returns the intersect of multiple sets.", func(c *Ctx) { setOperation(c, opInter, nil) }),
		multi("sunion", "Returns the union of multiple sets.", func(c *Ctx) { setOperation(c, opUnion, nil) }),
		multi("sdiff", "Returns the difference of multiple sets.", func(c *Ctx) { setOperation(c, opDiff, nil) }),
		store("sinterstore", KeyRW|KeyUpdate, "Stores the intersect of multiple sets in a key.", func(c *Ctx) { setOperation(c, opInter, c.Args[1]) }),
		store("sunionstore", KeyOW|KeyUpdate, "Stores the union of multiple sets in a key.", func(c *Ctx) { setOperation(c, opUnion, c.Args[1]) }),
		store("sdiffstore", KeyOW|KeyUpdate, "Stores the difference of multiple sets in a key.", func(c *Ctx) { setOperation(c, opDiff, c.Args[1]) }),
		&Spec{Name: "sintercard", Arity: -3, Flags: FlagReadOnly, KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, Begin: AtIndex(1), Find: KeyNum(0, 1, 1)}}, Group: "set", Since: "7.0.0", Summary: "Returns the number of members of the intersect of multiple sets.", Handler: cmdSInterCard},
	)
}

// setIntset reports whether Redis would hold a set of the members ms
// (and size members in all) as an intset: integers only, at most
// set-max-intset-entries of them.
func (c *Ctx) setIntset(size uint64, ms ...[]byte) bool {
	if int64(size) > c.Env.settings().setMaxIntsetEntries.Int() {
		return false
	}
	for _, x := range ms {
		if _, ok := parseInt(x); !ok {
			return false
		}
	}
	return true
}

// grownSet returns m's flags after members ms were added to it (m.Size
// counting them): a hash table once an intset would not do.
func (c *Ctx) grownSet(m *storage.Metadata, ms ...[]byte) byte {
	if !c.setIntset(m.Size, ms...) {
		return m.Flags | storage.FlagHashTable
	}
	return m.Flags
}

// intsetOrder sorts members numerically when the set is an intset, whose
// members Redis lists in that order (a hash table's in its own; Cairn's
// in byte order).
func intsetOrder(m *storage.Metadata, members [][]byte) {
	if m.Flags&storage.FlagHashTable != 0 {
		return
	}
	slices.SortFunc(members, func(a, b []byte) int {
		x, _ := parseInt(a)
		y, _ := parseInt(b)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
}

// members returns the members of the set m, listed as Redis lists them
// (intsetOrder); on a storage error it replies and returns ok=false.
func (c *Ctx) members(m *storage.Metadata) (out [][]byte, ok bool) {
	out = make([][]byte, 0, m.Size)
	if !c.fields(m, func(f, _ []byte) bool {
		out = append(out, bytes.Clone(f))
		return true
	}) {
		return nil, false
	}
	intsetOrder(m, out)
	return out, true
}

// replySet replies with members as a set (an array in RESP2).
func (c *Ctx) replySet(members [][]byte) {
	c.W.Set(len(members))
	for _, x := range members {
		c.W.Bulk(x)
	}
}

// empty is the value of a set member's record.
var empty = []byte{}

func cmdSAdd(c *Ctx) {
	key := c.Args[1]
	k, m, unlock, ok := c.lockedOf(key, storage.TypeSet)
	defer unlock()
	if !ok {
		return
	}
	added, ok := c.membersWhere(&k, &m, c.Args[2:], false)
	if !ok {
		return
	}
	if len(added) == 0 {
		c.W.Int(0)
		return
	}
	m.Size += uint64(len(added))
	m.Flags = c.grownSet(&m, added...)
	b := c.newBatch(storage.TypeSet, storage.CmdSAdd)
	for _, x := range added {
		b.PutField(c.ns(), m.Version, x, empty)
	}
	c.put(b, key, &k, m, notify.CodeSAdd)
	if c.commit(b) {
		c.W.Int(int64(len(added)))
	}
}

func cmdSRem(c *Ctx) { removeCommand(c, storage.TypeSet, storage.CmdSRem, notify.CodeSRem) }

func cmdSIsMember(c *Ctx) { memberExists(c, storage.TypeSet) }

func cmdSMIsMember(c *Ctx) {
	k, unlock, ok := c.lookupOf(c.Args[1], storage.TypeSet, true)
	defer unlock()
	if !ok {
		return
	}
	found := make([]bool, len(c.Args)-2)
	for i, x := range c.Args[2:] {
		if _, found[i], ok = c.liveField(&k, &k.m, x); !ok {
			return
		}
	}
	c.W.Array(len(found))
	for _, f := range found {
		if f {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
	}
}

func cmdSCard(c *Ctx) { cardinality(c, storage.TypeSet) }

func cmdSMembers(c *Ctx) {
	k, unlock, ok := c.lookupOf(c.Args[1], storage.TypeSet, true)
	defer unlock()
	if !ok {
		return
	}
	if !k.live {
		c.replySet(nil)
		return
	}
	if ms, ok := c.members(&k.m); ok {
		c.replySet(ms)
	}
}

// cmdSRandMember follows Redis 7.0, as HRANDFIELD does (randomMembers).
func cmdSRandMember(c *Ctx) {
	hasCount := len(c.Args) >= 3
	var count int64
	if hasCount {
		n, ok := parseInt(c.Args[2])
		if !ok {
			c.W.Error(errNotInt)
			return
		}
		if n == math.MinInt64 {
			c.errorf("ERR value is out of range, value must between %d and %d", -math.MaxInt64, int64(math.MaxInt64))
			return
		}
		if len(c.Args) > 3 {
			c.W.Error(errSyntax)
			return
		}
		count = n
	}
	k, unlock, ok := c.lookupOf(c.Args[1], storage.TypeSet, true)
	defer unlock()
	if !ok {
		return
	}
	switch {
	case !k.live && hasCount:
		c.W.Array(0)
		return
	case !k.live:
		c.W.NullBulk()
		return
	case hasCount && count == 0:
		c.W.Array(0)
		return
	}
	picked, ok := c.randomMembers(&k, count, hasCount)
	if !ok {
		return
	}
	if !hasCount {
		c.W.Bulk(picked[0][0])
		return
	}
	c.W.Array(len(picked))
	for _, p := range picked {
		c.W.Bulk(p[0])
	}
}

// cmdSPop removes and returns one random member, or count of them.
func cmdSPop(c *Ctx) {
	key := c.Args[1]
	hasCount := len(c.Args) >= 3
	var count int64
	if len(c.Args) > 3 {
		c.W.Error(errSyntax)
		return
	}
	if hasCount {
		n, ok := parseInt(c.Args[2])
		if !ok || n < 0 {
			c.W.Error("ERR value is out of range, must be positive")
			return
		}
		count = n
	}
	unlock := c.lock(key)
	defer unlock()
	k, ok := c.readOf(key, storage.TypeSet)
	if !ok {
		return
	}
	if !k.live || (hasCount && count == 0) {
		if hasCount {
			c.replySet(nil)
		} else {
			c.W.NullBulk()
		}
		return
	}
	n := int64(1)
	if hasCount {
		n = count
	}
	var gone [][]byte
	if n >= int64(k.m.Size) {
		if hasCount {
			c.lookedUp(key, true) // Redis reads the whole set as SUNION would
		}
		if gone, ok = c.members(&k.m); !ok {
			return
		}
	} else {
		picked, ok := c.randomMembers(&k, n, true)
		if !ok {
			return
		}
		for _, p := range picked {
			gone = append(gone, p[0])
		}
	}
	b := c.newBatch(storage.TypeSet, storage.CmdSPop)
	c.removeMembers(b, key, &k, gone, notify.CodeSPop)
	if !c.commit(b) {
		return
	}
	if !hasCount {
		c.W.Bulk(gone[0])
		return
	}
	c.replySet(gone)
}

func cmdSMove(c *Ctx) {
	src, dst, x := c.Args[1], c.Args[2], c.Args[3]
	unlock := c.lock(src, dst)
	defer unlock()
	s, ok := c.read(src)
	if !ok {
		return
	}
	d, ok := c.read(dst)
	if !ok {
		return
	}
	if !s.live {
		c.W.Int(0)
		return
	}
	if s.m.Type != storage.TypeSet || (d.live && d.m.Type != storage.TypeSet) {
		c.W.Error(errWrongType)
		return
	}
	_, found, ok := c.field(&s.m, x)
	if !ok {
		return
	}
	if !found || string(src) == string(dst) {
		if found {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
		return
	}
	dm := storage.Metadata{Type: storage.TypeSet, Version: storage.NewHashID()}
	if d.live {
		dm = d.m
	}
	_, there, ok := c.liveField(&d, &dm, x)
	if !ok {
		return
	}
	b := c.newBatch(storage.TypeSet, storage.CmdSMove)
	c.removeMembers(b, src, &s, [][]byte{x}, notify.CodeSRem)
	if !there {
		dm.Size++
		dm.Flags = c.grownSet(&dm, x)
		b.PutField(c.ns(), dm.Version, x, empty)
		c.put(b, dst, &d, dm, notify.CodeSAdd)
	}
	if c.commit(b) {
		c.W.Int(1)
	}
}

// A setOp is SINTER, SUNION or SDIFF.
type setOp int

const (
	opInter setOp = iota
	opUnion
	opDiff
)

// storeEvents are the events of the STORE form of each operation.
var storeEvents = [...]notify.Code{opInter: notify.CodeSInterStore, opUnion: notify.CodeSUnionStore, opDiff: notify.CodeSDiffStore}

// storeCommands are the LogData command codes of the STORE forms.
var storeCommands = [...]storage.Command{opInter: storage.CmdSInterStore, opUnion: storage.CmdSUnionStore, opDiff: storage.CmdSDiffStore}

// setOperation runs op over the sets named from argument 1 on (2 on with
// a destination), under their locks, as Redis 7.0 does: every key is
// looked up and type-checked first, a missing one being empty. It
// replies with the result, or, with dst, stores it there (replacing
// whatever dst held; an empty result deletes dst) and replies its size.
func setOperation(c *Ctx, op setOp, dst []byte) {
	keys := c.Args[1:]
	if dst != nil {
		keys = c.Args[2:]
	}
	unlock := c.lock(c.Args[1:]...)
	defer unlock()
	result, ok := c.combineSets(op, keys, 0)
	if !ok {
		return
	}
	if dst == nil {
		c.replySet(result)
		return
	}
	if len(result) == 0 {
		c.storeNothing(storeCommands[op], dst)
		return
	}
	d, ok := c.read(dst)
	if !ok {
		return
	}
	m := storage.Metadata{Type: storage.TypeSet, Version: storage.NewHashID(), Size: uint64(len(result))}
	if !c.setIntset(m.Size, result...) {
		m.Flags |= storage.FlagHashTable
	}
	b := c.newBatch(storage.TypeSet, storeCommands[op])
	for _, x := range result {
		b.PutField(c.ns(), m.Version, x, empty)
	}
	// A replaced destination publishes no "new", as Redis 7.0's setKey
	// overwrites it.
	c.put(b, dst, &d, m, storeEvents[op])
	if c.commit(b) {
		c.W.Int(int64(len(result)))
	}
}

// combineSets looks up keys (under the caller's locks), checks that each
// holds a set or nothing, and returns op over them (an intersection cut
// at limit members when limit > 0), listed as Redis lists a set of them.
// It replies an error and returns ok=false on WRONGTYPE or a storage
// error.
func (c *Ctx) combineSets(op setOp, keys [][]byte, limit int) (result [][]byte, ok bool) {
	states := make([]keyState, len(keys))
	for i, key := range keys {
		if states[i], ok = c.read(key); !ok {
			return nil, false
		}
		c.lookedUp(key, states[i].live)
		if states[i].live && states[i].m.Type != storage.TypeSet {
			c.W.Error(errWrongType)
			return nil, false
		}
	}
	if op == opInter {
		for _, k := range states {
			if !k.live {
				return nil, true
			}
		}
		// Walk the smallest set, looking its members up in the others.
		slices.SortStableFunc(states, func(a, b keyState) int { return int(a.m.Size) - int(b.m.Size) })
		base, ok := c.members(&states[0].m)
		if !ok {
			return nil, false
		}
		for _, x := range base {
			in := true
			for i := 1; i < len(states) && in; i++ {
				if _, in, ok = c.field(&states[i].m, x); !ok {
					return nil, false
				}
			}
			if in {
				result = append(result, x)
				if limit > 0 && len(result) == limit {
					break
				}
			}
		}
		return c.setOrder(result), true
	}
	seen := map[string]bool{}
	for i, k := range states {
		if !k.live {
			if op == opDiff && i == 0 {
				return nil, true
			}
			continue
		}
		if !c.fields(&k.m, func(f, _ []byte) bool {
			switch {
			case op == opUnion || i == 0:
				seen[string(f)] = true
			default:
				delete(seen, string(f))
			}
			return true
		}) {
			return nil, false
		}
	}
	for x := range seen {
		result = append(result, []byte(x))
	}
	slices.SortFunc(result, bytes.Compare)
	return c.setOrder(result), true
}

// setOrder lists the members of a set computed by an operation as Redis
// lists a set of them: numerically when it would be an intset.
func (c *Ctx) setOrder(members [][]byte) [][]byte {
	m := storage.Metadata{Type: storage.TypeSet}
	if !c.setIntset(uint64(len(members)), members...) {
		m.Flags |= storage.FlagHashTable
	}
	intsetOrder(&m, members)
	return members
}

func cmdSInterCard(c *Ctx) {
	numkeys, ok := parseInt(c.Args[1])
	if !ok || numkeys < 1 {
		c.W.Error("ERR numkeys should be greater than 0")
		return
	}
	if numkeys > int64(len(c.Args)-2) {
		c.W.Error("ERR Number of keys can't be greater than number of args")
		return
	}
	limit := int64(0)
	for j := 2 + int(numkeys); j < len(c.Args); j++ {
		if keyword(c.Args[j]) != "limit" || j+1 >= len(c.Args) {
			c.W.Error(errSyntax)
			return
		}
		j++
		n, ok := parseInt(c.Args[j])
		if !ok || n < 0 {
			c.W.Error("ERR LIMIT can't be negative")
			return
		}
		limit = n
	}
	keys := c.Args[2 : 2+numkeys]
	defer c.lock(keys...)()
	result, ok := c.combineSets(opInter, keys, int(min(limit, math.MaxInt32)))
	if ok {
		c.W.Int(int64(len(result)))
	}
}
