package commands

import (
	"bytes"
	"math"
	"strconv"

	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/server/resp"
	"github.com/cairnkv/cairn/storage"
)

// Sorted sets keep a member record and a score record per member
// (storage/zsets.go): ZADD, ZSCORE and ZREM touch the members they name,
// ranges walk the score records in order, and a rank is found by
// counting from the nearer end. Range commands are in zsetranges.go, the
// set operations in zsetops.go.

func init() {
	z := oneKeyCommand("sorted-set")
	register(
		z("zadd", -4, FlagWrite|FlagDenyOOM|FlagFast, KeyRW|KeyUpdate, "1.2.0", "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.", cmdZAdd),
		z("zincrby", 4, FlagWrite|FlagDenyOOM|FlagFast, KeyRW|KeyAccess|KeyUpdate, "1.2.0", "Increments the score of a member in a sorted set.", cmdZIncrBy),
		z("zrem", -3, FlagWrite|FlagFast, KeyRW|KeyDelete, "1.2.0", "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.", cmdZRem),
		z("zcard", 2, FlagReadOnly|FlagFast, KeyRO, "1.2.0", "Returns the number of members in a sorted set.", func(c *Ctx) { cardinality(c, storage.TypeZSet) }),
		z("zscore", 3, FlagReadOnly|FlagFast, KeyRO|KeyAccess, "1.2.0", "Returns the score of a member in a sorted set.", cmdZScore),
		z("zmscore", -3, FlagReadOnly|FlagFast, KeyRO|KeyAccess, "6.2.0", "Returns the score of one or more members in a sorted set.", cmdZMScore),
		z("zrank", 3, FlagReadOnly|FlagFast, KeyRO|KeyAccess, "2.0.0", "Returns the index of a member in a sorted set ordered by ascending scores.", func(c *Ctx) { rankCommand(c, false) }),
		z("zrevrank", 3, FlagReadOnly|FlagFast, KeyRO|KeyAccess, "2.0.0", "Returns the index of a member in a sorted set ordered by descending scores.", func(c *Ctx) { rankCommand(c, true) }),
		withTips(z("zrandmember", -2, FlagReadOnly, KeyRO|KeyAccess, "6.2.0", "Returns one or more random members from a sorted set.", cmdZRandMember), "nondeterministic_output"),
		withTips(z("zscan", -3, FlagReadOnly, KeyRO|KeyAccess, "2.8.0", "Iterates over members and scores of a sorted set.", func(c *Ctx) { scanMembers(c, storage.TypeZSet, true) }), "nondeterministic_output"),
		z("zpopmin", -2, FlagWrite|FlagFast, KeyRW|KeyAccess|KeyDelete, "5.0.0", "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", func(c *Ctx) { zpopCommand(c, false) }),
		z("zpopmax", -2, FlagWrite|FlagFast, KeyRW|KeyAccess|KeyDelete, "5.0.0", "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", func(c *Ctx) { zpopCommand(c, true) }),
		&Spec{Name: "zmpop", Arity: -4, Flags: FlagWrite, KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Begin: AtIndex(1), Find: KeyNum(0, 1, 1)}}, Group: "sorted-set", Since: "7.0.0", Summary: "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.", Handler: cmdZMPop},
	)
}

// zsetListpack reports whether Redis would hold a sorted set of size
// members, none longer than longest, as a listpack
// (zset-max-listpack-entries and -value).
func (c *Ctx) zsetListpack(size uint64, longest int) bool {
	s := c.Env.settings()
	return int64(size) <= s.zsetMaxListpackEntries.Int() && int64(longest) <= s.zsetMaxListpackValue.Int()
}

// zsetEncoding is the OBJECT ENCODING of the sorted set m.
func zsetEncoding(m *storage.Metadata) string {
	if m.Flags&storage.FlagHashTable != 0 {
		return "skiplist"
	}
	return "listpack"
}

// zentry is a member of a sorted set with its score.
type zentry struct {
	member []byte
	score  float64
}

// zedit is a write to one sorted set that changes members one at a time,
// as Redis's does, each change seeing the ones before it: it reads a
// member's score from the database once and keeps what the command made
// of it, and writes the net changes at the end.
type zedit struct {
	c       *Ctx
	k       *keyState
	m       storage.Metadata // as the edit leaves it; Size counts members
	members map[string]*zchange
	order   []string // members in the order first touched
}

// zchange is one member's state in a zedit.
type zchange struct {
	had, has   bool // before the edit, and now
	old, score float64
}

// newZEdit starts an edit of the sorted set k (m: its metadata, a new
// set's when k is not live).
func (c *Ctx) newZEdit(k *keyState, m storage.Metadata) *zedit {
	return &zedit{c: c, k: k, m: m, members: map[string]*zchange{}}
}

// get returns the member's state; on a storage error it replies and
// returns ok=false.
func (e *zedit) get(member []byte) (ch *zchange, ok bool) {
	if ch = e.members[string(member)]; ch != nil {
		return ch, true
	}
	ch = &zchange{}
	if e.k.live {
		s, found, err := e.c.Env.Store.ZScore(e.c.batch(), e.c.ns(), &e.k.m, member)
		if err != nil {
			e.c.storageError(err)
			return nil, false
		}
		ch.had, ch.has, ch.old, ch.score = found, found, s, s
	}
	e.members[string(member)] = ch
	e.order = append(e.order, string(member))
	return ch, true
}

// known registers member as a member scoring s, as a walk of the set just
// read it, sparing get's read.
func (e *zedit) known(member []byte, s float64) *zchange {
	ch := &zchange{had: true, has: true, old: s, score: s}
	e.members[string(member)] = ch
	e.order = append(e.order, string(member))
	return ch
}

// set gives member (whose state is ch) score s, adding it if it is not
// in the set.
func (e *zedit) set(member []byte, ch *zchange, s float64) {
	if !ch.has {
		e.m.Size++
		if e.m.Flags&storage.FlagHashTable == 0 && !e.c.zsetListpack(e.m.Size, len(member)) {
			e.m.Flags |= storage.FlagHashTable
		}
	}
	ch.has, ch.score = true, listpackScore(&e.m, s)
	// Widen the score bounds to hold s.
	k := storage.ScoreBound(s)
	if e.m.ZLow != 0 && k < e.m.ZLow {
		e.m.ZLow = k
	}
	if e.m.ZHigh != 0 && k > e.m.ZHigh {
		e.m.ZHigh = k
	}
}

// raiseLow and lowerHigh narrow the score bounds after removals that
// leave no member below s (above s).
func (e *zedit) raiseLow(s float64) { e.m.ZLow = max(e.m.ZLow, storage.ScoreBound(s)) }

func (e *zedit) lowerHigh(s float64) {
	if k := storage.ScoreBound(s); e.m.ZHigh == 0 || k < e.m.ZHigh {
		e.m.ZHigh = k
	}
}

// listpackScore is s as the sorted set m keeps it: a listpack keeps -0
// as 0, as Redis's does.
func listpackScore(m *storage.Metadata, s float64) float64 {
	if s == 0 && m.Flags&storage.FlagHashTable == 0 {
		return 0
	}
	return s
}

// remove takes member (whose state is ch) out of the set.
func (e *zedit) remove(ch *zchange) {
	if ch.has {
		e.m.Size--
		ch.has = false
	}
}

// write adds the edit's records to b: the caller writes or deletes the
// metadata.
func (e *zedit) write(b *storage.Batch) {
	ns := e.c.ns()
	for _, member := range e.order {
		ch := e.members[member]
		switch {
		case ch.has:
			b.PutZMember(ns, e.m.Version, []byte(member), ch.old, ch.had, ch.score)
		case ch.had:
			b.DeleteZMember(ns, e.m.Version, []byte(member), ch.old)
		}
	}
}

// commit writes the edit with b and the events codes, deleting the key
// ("del" after codes) when no member is left; it reports whether the
// commit succeeded (and replied nothing) or failed (and replied).
func (e *zedit) commit(b *storage.Batch, key []byte, codes ...notify.Code) bool {
	c := e.c
	if e.m.Size == 0 {
		c.del(b, key, e.k, append(codes, notify.CodeDel)...)
	} else {
		e.write(b)
		c.put(b, key, e.k, e.m, codes...)
	}
	return c.commit(b)
}

const errNaNScore = "ERR resulting score is not a number (NaN)"

// ZADD flags.
const (
	zaddNX = 1 << iota
	zaddXX
	zaddGT
	zaddLT
	zaddCH
	zaddIncr
)

func cmdZAdd(c *Ctx) {
	at, flags := 2, 0
options:
	for ; at < len(c.Args); at++ {
		switch keyword(c.Args[at]) {
		case "nx":
			flags |= zaddNX
		case "xx":
			flags |= zaddXX
		case "gt":
			flags |= zaddGT
		case "lt":
			flags |= zaddLT
		case "ch":
			flags |= zaddCH
		case "incr":
			flags |= zaddIncr
		default:
			break options
		}
	}
	zaddCommand(c, flags, at, storage.CmdZAdd)
}

func cmdZIncrBy(c *Ctx) {
	// ZINCRBY key increment member is ZADD key INCR increment member.
	zaddCommand(c, zaddIncr, 2, storage.CmdZIncrBy)
}

// zaddCommand is ZADD and ZINCRBY (cmd) with flags, whose score and
// member pairs start at Args[at].
func zaddCommand(c *Ctx, flags, at int, cmd storage.Command) {
	rest := len(c.Args) - at
	if rest == 0 || rest%2 != 0 {
		c.W.Error(errSyntax)
		return
	}
	has := func(f int) bool { return flags&f != 0 }
	switch {
	case has(zaddNX) && has(zaddXX):
		c.W.Error("ERR XX and NX options at the same time are not compatible")
		return
	case has(zaddGT) && has(zaddNX), has(zaddLT) && has(zaddNX), has(zaddGT) && has(zaddLT):
		c.W.Error("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	case has(zaddIncr) && rest > 2:
		c.W.Error("ERR INCR option supports a single increment-element pair")
		return
	}
	scores := make([]float64, rest/2)
	for i := range scores {
		var ok bool
		if scores[i], ok = parseScore(c.Args[at+2*i]); !ok {
			c.W.Error(errNotFloat)
			return
		}
	}
	key := c.Args[1]
	k, m, unlock, ok := c.lockedOf(key, storage.TypeZSet)
	defer unlock()
	if !ok {
		return
	}
	if !k.live && has(zaddXX) {
		if has(zaddIncr) {
			c.W.NullBulk()
		} else {
			c.W.Int(0)
		}
		return
	}
	// Redis 7.0 makes a new set a listpack unless that can hold no member
	// or the first pair's member is too long for one, and converts a
	// listpack only as a member joins that it cannot hold (zedit.set). A
	// score of -0 that joins a listpack is 0 for good.
	if !k.live && !c.zsetListpack(1, len(c.Args[at+1])) {
		m.Flags |= storage.FlagHashTable
	}
	e := c.newZEdit(&k, m)
	var added, updated, processed int
	var score float64
	for i, s := range scores {
		member := c.Args[at+2*i+1]
		ch, ok := e.get(member)
		if !ok {
			return
		}
		switch {
		case !ch.has && has(zaddXX), ch.has && has(zaddNX):
			continue
		case !ch.has:
			e.set(member, ch, s)
			added++
		default:
			if has(zaddIncr) {
				if s += ch.score; math.IsNaN(s) {
					c.W.Error(errNaNScore)
					return
				}
			}
			if has(zaddLT) && s >= ch.score || has(zaddGT) && s <= ch.score {
				continue
			}
			if s != ch.score {
				e.set(member, ch, s)
				updated++
			}
		}
		processed++
		score = s
	}
	if added+updated > 0 {
		code := notify.CodeZAdd
		if has(zaddIncr) {
			code = notify.CodeZIncr
		}
		b := c.newBatch(storage.TypeZSet, cmd)
		if !e.commit(b, key, code) {
			return
		}
	}
	switch {
	case has(zaddIncr) && processed > 0:
		c.W.Double(score)
	case has(zaddIncr):
		c.W.NullBulk()
	case has(zaddCH):
		c.W.Int(int64(added + updated))
	default:
		c.W.Int(int64(added))
	}
}

func cmdZRem(c *Ctx) {
	key := c.Args[1]
	unlock := c.lock(key)
	defer unlock()
	k, ok := c.readOf(key, storage.TypeZSet)
	if !ok {
		return
	}
	if !k.live {
		c.W.Int(0)
		return
	}
	e := c.newZEdit(&k, k.m)
	removed := 0
	for _, member := range c.Args[2:] {
		ch, ok := e.get(member)
		if !ok {
			return
		}
		if ch.has {
			e.remove(ch)
			removed++
		}
	}
	if removed > 0 && !e.commit(c.newBatch(storage.TypeZSet, storage.CmdZRem), key, notify.CodeZRem) {
		return
	}
	c.W.Int(int64(removed))
}

func cmdZScore(c *Ctx) {
	k, unlock, ok := c.lookupOf(c.Args[1], storage.TypeZSet, false)
	defer unlock()
	if !ok {
		return
	}
	if s, found, ok := c.zscore(&k, c.Args[2]); ok && found {
		c.W.Double(s)
	} else if ok {
		c.W.NullBulk()
	}
}

// zscore returns the score of member in the sorted set k (none when k is
// not live); on a storage error it replies and returns ok=false.
func (c *Ctx) zscore(k *keyState, member []byte) (s float64, found, ok bool) {
	if !k.live {
		return 0, false, true
	}
	s, found, err := c.Env.Store.ZScore(c.batch(), c.ns(), &k.m, member)
	if err != nil {
		c.storageError(err)
		return 0, false, false
	}
	return s, found, true
}

// memberScore is a member's score, if the sorted set has the member.
type memberScore struct {
	score float64
	found bool
}

// zscores looks up the scores of the members named by Args[2:] in the
// sorted set Args[1] (ZMSCORE, GEOPOS, GEOHASH); on a storage error or a
// key of another type it replies and returns ok=false.
func (c *Ctx) zscores() (out []memberScore, ok bool) {
	k, unlock, ok := c.lookupOf(c.Args[1], storage.TypeZSet, true)
	defer unlock()
	if !ok {
		return nil, false
	}
	out = make([]memberScore, len(c.Args)-2)
	for i, member := range c.Args[2:] {
		if out[i].score, out[i].found, ok = c.zscore(&k, member); !ok {
			return nil, false
		}
	}
	return out, true
}

func cmdZMScore(c *Ctx) {
	out, ok := c.zscores()
	if !ok {
		return
	}
	c.W.Array(len(out))
	for _, r := range out {
		if r.found {
			c.W.Double(r.score)
		} else {
			c.W.NullBulk()
		}
	}
}

// rankCommand is ZRANK and ZREVRANK: the member's position counted from
// the lowest score, or the highest with rev, found by walking from that
// end.
func rankCommand(c *Ctx, rev bool) {
	k, unlock, ok := c.lookupOf(c.Args[1], storage.TypeZSet, true)
	defer unlock()
	if !ok {
		return
	}
	member := c.Args[2]
	s, found, ok := c.zscore(&k, member)
	if !ok {
		return
	}
	if !found {
		c.W.NullBulk()
		return
	}
	rank, hit := int64(0), false
	err := c.Env.Store.ScanZSet(c.batch(), c.ns(), &k.m, nil, rev, func(x []byte, xs float64) bool {
		if xs == s && bytes.Equal(x, member) {
			hit = true
			return false
		}
		rank++
		return true
	})
	switch {
	case err != nil:
		c.storageError(err)
	case !hit:
		c.W.Error(errInconsistent)
	default:
		c.W.Int(rank)
	}
}

func cmdZRandMember(c *Ctx) { randomFieldsCommand(c, storage.TypeZSet, "withscores") }

// zpopCommand is ZPOPMIN and ZPOPMAX (max): key [count].
func zpopCommand(c *Ctx, max bool) {
	if len(c.Args) > 3 {
		c.W.Error(errSyntax)
		return
	}
	count := int64(-1)
	if len(c.Args) == 3 {
		n, ok := parseInt(c.Args[2])
		if !ok || n < 0 {
			c.W.Error("ERR value is out of range, must be positive")
			return
		}
		count = n
	}
	key := c.Args[1]
	defer c.lock(key)()
	k, ok := c.readOf(key, storage.TypeZSet)
	switch {
	case !ok:
		return
	case !k.live || count == 0:
		c.W.Array(0)
		return
	}
	popped, ok := c.zpop(&k, key, max, max1(count), zpopCmd(max, false))
	if !ok {
		return
	}
	nested := count != -1 && c.Client.Proto() >= 3
	c.replyEntries(popped, true, nested)
}

// max1 is count, or 1 for -1 (no count given).
func max1(count int64) int64 {
	if count == -1 {
		return 1
	}
	return count
}

// zpopCmd is the LogData command of a pop: ZPOPMIN, ZPOPMAX or ZMPOP.
func zpopCmd(max, mpop bool) storage.Command {
	switch {
	case mpop:
		return storage.CmdZMPop
	case max:
		return storage.CmdZPopMax
	}
	return storage.CmdZPopMin
}

// zpop removes up to count members with the lowest scores (the highest
// with max) from the live sorted set k at key under its lock, publishing
// zpopmin or zpopmax, and returns them in the order popped. On an error
// it replies and returns ok=false.
func (c *Ctx) zpop(k *keyState, key []byte, max bool, count int64, cmd storage.Command) (popped []zentry, ok bool) {
	popped, ok = c.zends(&k.m, max, count)
	if !ok {
		return nil, false
	}
	code := notify.CodeZPopMin
	if max {
		code = notify.CodeZPopMax
	}
	e := c.newZEdit(k, k.m)
	for _, p := range popped {
		e.remove(e.known(p.member, p.score))
	}
	// What is left scores no less (no more) than the last member popped.
	if last := popped[len(popped)-1].score; max {
		e.lowerHigh(last)
	} else {
		e.raiseLow(last)
	}
	if !e.commit(c.newBatch(storage.TypeZSet, cmd), key, code) {
		return nil, false
	}
	return popped, true
}

// zscan walks the sorted set m from position from (nil: an end) in
// order, or reversed with rev, passing each member to fn, which says
// whether to take it and whether to go on; it returns up to limit (-1:
// no limit) members taken. On a storage error it replies and returns
// ok=false.
func (c *Ctx) zscan(m *storage.Metadata, from *storage.ZPos, rev bool, fn func(zentry) (take, more bool), limit int64) (out []zentry, ok bool) {
	if limit == 0 {
		return nil, true
	}
	err := c.Env.Store.ScanZSet(c.batch(), c.ns(), m, from, rev, func(member []byte, s float64) bool {
		take, more := fn(zentry{member, s})
		if take {
			out = append(out, zentry{bytes.Clone(member), s})
		}
		return more && (limit < 0 || int64(len(out)) < limit)
	})
	if err != nil {
		c.storageError(err)
		return nil, false
	}
	return out, true
}

// zends returns up to limit (-1: all) members of the sorted set m from
// its lowest score on, or from its highest with rev; on a storage error
// it replies and returns ok=false.
func (c *Ctx) zends(m *storage.Metadata, rev bool, limit int64) ([]zentry, bool) {
	return c.zscan(m, nil, rev, func(zentry) (bool, bool) { return true, true }, limit)
}

// replyEntries replies with members and, withScores, their scores: as
// pairs with nested (RESP3's ZRANGE WITHSCORES, ZMPOP), flat otherwise.
func (c *Ctx) replyEntries(es []zentry, withScores, nested bool) {
	switch {
	case !withScores || nested:
		c.W.Array(len(es))
	default:
		c.W.Array(2 * len(es))
	}
	for _, e := range es {
		if withScores && nested {
			c.W.Array(2)
		}
		c.W.Bulk(e.member)
		if withScores {
			c.W.Double(e.score)
		}
	}
}

func cmdZMPop(c *Ctx) {
	keys, max, count, ok := c.parseZMPop(1)
	if !ok {
		return
	}
	defer c.lock(keys...)()
	if !c.zpopFirst(keys, max, count, true) {
		c.W.NullArray()
	}
}

// parseZMPop parses the arguments of ZMPOP and BZMPOP from numkeys (at
// Args[at]) on: the keys, MIN or MAX, and the count (1 without COUNT).
func (c *Ctx) parseZMPop(at int) (keys [][]byte, max bool, count int64, ok bool) {
	keys, max, count, ok = c.parseMPopArgs(at, func(arg []byte) (bool, bool) {
		switch keyword(arg) {
		case "min":
			return false, true
		case "max":
			return true, true
		}
		return false, false
	})
	return keys, max, count, ok
}

// zpopFirst pops up to count members from the first of keys that holds
// a sorted set, under their locks, and replies with the key and them:
// nested pairs (ZMPOP, BZMPOP) or, with nested unset, the one member and
// its score beside the key (BZPOPMIN). It reports whether it replied:
// false, without a reply, when no key holds a sorted set.
func (c *Ctx) zpopFirst(keys [][]byte, max bool, count int64, nested bool) bool {
	for _, key := range keys {
		k, ok := c.readOf(key, storage.TypeZSet)
		if !ok {
			return true // replied
		}
		if !k.live {
			continue
		}
		cmd := zpopCmd(max, nested)
		popped, ok := c.zpop(&k, key, max, count, cmd)
		if !ok {
			return true
		}
		if nested {
			c.W.Array(2)
			c.W.Bulk(key)
			c.replyEntries(popped, true, true)
		} else {
			c.W.Array(3)
			c.W.Bulk(key)
			c.W.Bulk(popped[0].member)
			c.W.Double(popped[0].score)
		}
		return true
	}
	return false
}

// formatScore is a score as ZSCAN and ZRANDMEMBER's RESP2 replies print
// it.
func formatScore(s float64) []byte { return resp.AppendDouble(nil, s) }

// parseFormattedScore reads back a score formatScore printed.
func parseFormattedScore(b []byte) float64 {
	f, _ := strconv.ParseFloat(string(b), 64)
	return f
}
