package commands

import (
	"bytes"
	"math"
	"slices"

	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/storage"
)

// Ranges of sorted sets: by rank, by score and by member (lex), read by
// the ZRANGE family and ZCOUNT, ZLEXCOUNT, removed by ZREMRANGEBY*. A
// rank range walks from the nearer end of its direction; score and lex
// ranges seek their first member.

func init() {
	z := oneKeyCommand("sorted-set")
	read := func(name string, arity int, since, summary string, kind zrangeKind, rev bool) *Spec {
		return z(name, arity, FlagReadOnly, KeyRO|KeyAccess, since, summary, func(c *Ctx) { zrangeCommand(c, 1, kind, rev, nil) })
	}
	remove := func(name, since, summary string, kind zrangeKind) *Spec {
		return z(name, 4, FlagWrite, KeyRW|KeyDelete, since, summary, func(c *Ctx) { zremRangeCommand(c, kind) })
	}
	register(
		read("zrange", -4, "1.2.0", "Returns members in a sorted set within a range of indexes.", zrangeAuto, false),
		read("zrevrange", -4, "1.2.0", "Returns members in a sorted set within a range of indexes in reverse order.", zrangeRank, true),
		read("zrangebyscore", -4, "1.0.5", "Returns members in a sorted set within a range of scores.", zrangeScore, false),
		read("zrevrangebyscore", -4, "2.2.0", "Returns members in a sorted set within a range of scores in reverse order.", zrangeScore, true),
		read("zrangebylex", -4, "2.8.9", "Returns members in a sorted set within a lexicographical range.", zrangeLex, false),
		read("zrevrangebylex", -4, "2.8.9", "Returns members in a sorted set within a lexicographical range in reverse order.", zrangeLex, true),
		&Spec{Name: "zrangestore", Arity: -5, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 2, Step: 1, KeySpecs: []KeySpec{Key(1, KeyOW|KeyUpdate), Key(2, KeyRO|KeyAccess)}, Group: "sorted-set", Since: "6.2.0", Summary: "Stores a range of members from sorted set in a key.", Handler: func(c *Ctx) { zrangeCommand(c, 2, zrangeAuto, false, c.Args[1]) }},
		z("zcount", 4, FlagReadOnly|FlagFast, KeyRO|KeyAccess, "2.0.0", "Returns the count of members in a sorted set that have scores within a range.", func(c *Ctx) { zcountCommand(c, zrangeScore) }),
		z("zlexcount", 4, FlagReadOnly|FlagFast, KeyRO|KeyAccess, "2.8.9", "Returns the number of members in a sorted set within a lexicographical range.", func(c *Ctx) { zcountCommand(c, zrangeLex) }),
		remove("zremrangebyscore", "1.2.0", "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed.", zrangeScore),
		remove("zremrangebyrank", "2.0.0", "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed.", zrangeRank),
		remove("zremrangebylex", "2.8.9", "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed.", zrangeLex),
	)
}

// zrangeKind is what a range's bounds are.
type zrangeKind int

const (
	zrangeAuto zrangeKind = iota // ZRANGE: ranks unless BYSCORE or BYLEX
	zrangeRank
	zrangeScore
	zrangeLex
)

// zrange is a parsed range of one of the three kinds, with the direction
// and LIMIT of the command that reads it.
type zrange struct {
	kind       zrangeKind
	rev        bool
	start, end int64 // ranks
	score      scoreRange
	lex        lexRange
	offset     int64
	limit      int64 // -1: none
	removing   bool  // ZREMRANGEBYLEX: every member is checked against both bounds
	// counted, when set, counts the members of a score or lex range
	// (ZCOUNT, ZLEXCOUNT), which are then not returned.
	counted *int64
}

// scoreRange is a range of scores; min and max exclude their bound with
// minEx and maxEx.
type scoreRange struct {
	min, max     float64
	minEx, maxEx bool
}

// parseScoreRange parses min and max as Redis's zslParseRange does; on a
// bad bound it replies Redis's error and returns ok=false.
func (c *Ctx) parseScoreRange(min, max []byte) (r scoreRange, ok bool) {
	bound := func(b []byte) (f float64, ex, ok bool) {
		if len(b) > 0 && b[0] == '(' {
			f, ok = parseRangeScore(b[1:])
			return f, true, ok
		}
		f, ok = parseRangeScore(b)
		return f, false, ok
	}
	var okMin, okMax bool
	r.min, r.minEx, okMin = bound(min)
	r.max, r.maxEx, okMax = bound(max)
	if !okMin || !okMax {
		c.W.Error("ERR min or max is not a float")
		return r, false
	}
	return r, true
}

// aboveMin and belowMax report whether s is within the range's lower and
// upper bounds.
func (r *scoreRange) aboveMin(s float64) bool { return s > r.min || !r.minEx && s == r.min }
func (r *scoreRange) belowMax(s float64) bool { return s < r.max || !r.maxEx && s == r.max }

// lexBound is one end of a lex range: -1 for "-", 1 for "+", else v,
// excluded with ex.
type lexBound struct {
	inf int
	v   []byte
	ex  bool
}

// lexRange is a range of members.
type lexRange struct{ min, max lexBound }

// parseLexRange parses min and max as Redis's zslParseLexRange does; on a
// bad bound it replies Redis's error and returns ok=false.
func (c *Ctx) parseLexRange(min, max []byte) (r lexRange, ok bool) {
	bound := func(b []byte) (lexBound, bool) {
		if len(b) == 0 {
			return lexBound{}, false
		}
		switch b[0] {
		case '+', '-':
			if len(b) > 1 && b[1] != 0 {
				return lexBound{}, false
			}
			if b[0] == '+' {
				return lexBound{inf: 1}, true
			}
			return lexBound{inf: -1}, true
		case '(':
			return lexBound{v: b[1:], ex: true}, true
		case '[':
			return lexBound{v: b[1:]}, true
		}
		return lexBound{}, false
	}
	var okMin, okMax bool
	r.min, okMin = bound(min)
	r.max, okMax = bound(max)
	if !okMin || !okMax {
		c.W.Error("ERR min or max not valid string range item")
		return r, false
	}
	return r, true
}

// aboveMin and belowMax report whether member m is within the range's
// lower and upper bounds.
func (r *lexRange) aboveMin(m []byte) bool {
	switch r.min.inf {
	case -1:
		return true
	case 1:
		return false
	}
	c := bytes.Compare(m, r.min.v)
	return c > 0 || !r.min.ex && c == 0
}

func (r *lexRange) belowMax(m []byte) bool {
	switch r.max.inf {
	case 1:
		return true
	case -1:
		return false
	}
	c := bytes.Compare(m, r.max.v)
	return c < 0 || !r.max.ex && c == 0
}

// parseZRange parses the range at Args[at] and Args[at+1] and the options
// after them for a command of kind (zrangeAuto: ZRANGE and ZRANGESTORE,
// which take BYSCORE, BYLEX and REV; WITHSCORES is not for store), as
// Redis's zrangeGenericCommand does: options first, then the bounds. On an error it replies and
// returns ok=false.
func (c *Ctx) parseZRange(at int, kind zrangeKind, rev, store bool) (r zrange, withScores, ok bool) {
	r.kind, r.rev, r.limit = kind, rev, -1
	auto := kind == zrangeAuto
	for i := at + 2; i < len(c.Args); i++ {
		left := len(c.Args) - i - 1
		switch opt := keyword(c.Args[i]); {
		case !store && opt == "withscores":
			withScores = true
		case opt == "limit" && left >= 2:
			var okOff, okLim bool
			r.offset, okOff = parseInt(c.Args[i+1])
			if okOff {
				r.limit, okLim = parseInt(c.Args[i+2])
			}
			if !okOff || !okLim {
				c.W.Error(errNotInt)
				return r, false, false
			}
			i += 2
		case auto && !r.rev && opt == "rev":
			r.rev = true
		case auto && r.kind == zrangeAuto && opt == "bylex":
			r.kind = zrangeLex
		case auto && r.kind == zrangeAuto && opt == "byscore":
			r.kind = zrangeScore
		default:
			c.W.Error(errSyntax)
			return r, false, false
		}
	}
	if r.kind == zrangeAuto {
		r.kind = zrangeRank
	}
	switch {
	case r.limit != -1 && r.kind == zrangeRank:
		c.W.Error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return r, false, false
	case withScores && r.kind == zrangeLex:
		c.W.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return r, false, false
	}
	lo, hi := c.Args[at], c.Args[at+1]
	if r.rev && r.kind != zrangeRank {
		lo, hi = hi, lo // given as max, min
	}
	switch r.kind {
	case zrangeRank:
		var okStart, okEnd bool
		r.start, okStart = parseInt(lo)
		if okStart {
			r.end, okEnd = parseInt(hi)
		}
		if !okStart || !okEnd {
			c.W.Error(errNotInt)
			return r, false, false
		}
	case zrangeScore:
		if r.score, ok = c.parseScoreRange(lo, hi); !ok {
			return r, false, false
		}
	case zrangeLex:
		if r.lex, ok = c.parseLexRange(lo, hi); !ok {
			return r, false, false
		}
	}
	return r, withScores, true
}

// entries returns the members of the live sorted set m that r selects, in
// r's direction; on a storage error it replies and returns ok=false.
func (c *Ctx) zrangeEntries(m *storage.Metadata, r *zrange) ([]zentry, bool) {
	size := int64(m.Size)
	switch r.kind {
	case zrangeRank:
		start, end := r.start, r.end
		if start < 0 {
			start += size
		}
		if end < 0 {
			end += size
		}
		start = max(start, 0)
		if start > end || start >= size {
			return nil, true
		}
		end = min(end, size-1)
		// Walk from the nearer end: from the other one, the range is
		// taken backwards and turned round.
		skip, rev := start, r.rev
		if back := size - 1 - end; back < start {
			skip, rev = back, !rev
		}
		out, ok := c.zscan(m, nil, rev, func(zentry) (bool, bool) {
			if skip > 0 {
				skip--
				return false, true
			}
			return true, true
		}, end-start+1)
		if rev != r.rev {
			slices.Reverse(out)
		}
		return out, ok
	}
	if r.offset < 0 || r.offset > 0 && r.offset >= size {
		// A negative offset skips every member, as in Redis.
		return nil, true
	}
	skip := r.offset
	var from *storage.ZPos
	var in, past func(e zentry) bool // in the range; past its far end
	if r.kind == zrangeScore {
		s := r.score
		if r.rev {
			from = &storage.ZPos{Score: s.max, After: !s.maxEx}
			in, past = func(e zentry) bool { return s.belowMax(e.score) }, func(e zentry) bool { return !s.aboveMin(e.score) }
		} else {
			from = &storage.ZPos{Score: s.min, After: s.minEx}
			in, past = func(e zentry) bool { return s.aboveMin(e.score) }, func(e zentry) bool { return !s.belowMax(e.score) }
		}
	} else {
		l := r.lex
		if m.Flags&storage.FlagHashTable != 0 {
			var ok bool
			if from, ok = c.lexStart(m, &l, r.rev); !ok {
				return nil, false
			}
		}
		if r.rev {
			in, past = func(e zentry) bool { return l.belowMax(e.member) }, func(e zentry) bool { return !l.aboveMin(e.member) }
		} else {
			in, past = func(e zentry) bool { return l.aboveMin(e.member) }, func(e zentry) bool { return !l.belowMax(e.member) }
		}
	}
	// Past the first member in the range, a read checks only the far
	// bound, and a removal both (lex ranges differ there when scores
	// differ, as Redis's listpack walks do).
	started := false
	return c.zscan(m, from, r.rev, func(e zentry) (bool, bool) {
		switch {
		case (!started || r.removing) && !in(e):
			return false, true
		case past(e):
			return false, false
		}
		started = true
		switch {
		case skip > 0:
			skip--
			return false, true
		case r.counted != nil:
			*r.counted++
			return false, true
		}
		return true, true
	}, r.limit)
}

// lexStart returns where a walk of the lex range l of the sorted set m
// starts (nil: at an end). A lex range assumes that every member has the
// same score, as Redis's does; the walk seeks its bound among the members
// of the first score (the last one, with rev). (A listpack's walk starts
// at its end instead and compares every member on its way, as Redis's
// does, so that ranges over members of different scores give Redis's
// answers too; a skiplist's answers depend on its random levels then.) On
// a storage error it replies and returns ok=false.
func (c *Ctx) lexStart(m *storage.Metadata, l *lexRange, rev bool) (*storage.ZPos, bool) {
	b := l.min
	if rev {
		b = l.max
	}
	if b.inf != 0 {
		return nil, true
	}
	end, ok := c.zends(m, rev, 1)
	if !ok || len(end) == 0 {
		return nil, ok
	}
	if rev {
		return &storage.ZPos{Score: end[0].score, Member: b.v, After: !b.ex}, true
	}
	return &storage.ZPos{Score: end[0].score, Member: b.v, After: b.ex}, true
}

// zrangeCommand is the ZRANGE family and ZRANGESTORE (dst set): the key
// at Args[at], its range after it.
func zrangeCommand(c *Ctx, at int, kind zrangeKind, rev bool, dst []byte) {
	r, withScores, ok := c.parseZRange(at+1, kind, rev, dst != nil)
	if !ok {
		return
	}
	key := c.Args[at]
	var unlock func()
	if dst != nil {
		unlock = c.lock(dst, key)
	} else {
		unlock = c.lock(key)
	}
	defer unlock()
	k, ok := c.read(key)
	if !ok {
		return
	}
	c.lookedUp(key, k.live)
	if k.live && k.m.Type != storage.TypeZSet {
		c.W.Error(errWrongType)
		return
	}
	var out []zentry
	if k.live {
		if out, ok = c.zrangeEntries(&k.m, &r); !ok {
			return
		}
	}
	if dst != nil {
		c.zeroListpackPrefix(out)
		c.zstore(dst, out, storage.CmdZRangeStore, notify.CodeZRangeStore)
		return
	}
	c.replyEntries(out, withScores, c.Client.Proto() >= 3)
}

// zeroListpackPrefix makes 0 the scores of -0 that Redis's ZRANGESTORE
// would put into a listpack: it starts the new set as one when the range
// fits one by count, and adds the members in order, converting it at the
// first member too long for it; a -0 added before that is 0 for good.
func (c *Ctx) zeroListpackPrefix(es []zentry) {
	if !c.zsetListpack(uint64(len(es)), 0) {
		return
	}
	for i := range es {
		if !c.zsetListpack(1, len(es[i].member)) {
			return
		}
		if es[i].score == 0 {
			es[i].score = 0 // -0 as well
		}
	}
}

// zstore replaces dst (locked) with a sorted set of es, publishing code,
// or deletes it when es is empty, and replies with the member count.
func (c *Ctx) zstore(dst []byte, es []zentry, cmd storage.Command, code notify.Code) {
	if len(es) == 0 {
		c.storeNothing(cmd, dst)
		return
	}
	d, ok := c.read(dst)
	if !ok {
		return
	}
	b := c.newBatch(storage.TypeZSet, cmd)
	c.put(b, dst, &d, c.newZSet(b, es, 0), code)
	if c.commit(b) {
		c.W.Int(int64(len(es)))
	}
}

// newZSet adds to b the records of a new sorted set of es (distinct
// members), expiring at ttl (0: never), and returns its metadata. Its
// encoding follows its contents, as Redis's does for a set it builds
// whole (a store, a restore).
func (c *Ctx) newZSet(b *storage.Batch, es []zentry, ttl int64) storage.Metadata {
	m := storage.Metadata{Type: storage.TypeZSet, Version: storage.NewHashID(), Size: uint64(len(es)), ExpireAt: ttl}
	longest := 0
	for _, e := range es {
		longest = max(longest, len(e.member))
	}
	if !c.zsetListpack(m.Size, longest) {
		m.Flags |= storage.FlagHashTable
	}
	for _, e := range es {
		b.PutZMember(c.ns(), m.Version, e.member, 0, false, listpackScore(&m, e.score))
	}
	return m
}

// zrankFromStart and zrankToEnd report whether the rank range r of a
// sorted set of size members starts at its first member or ends at its
// last.
func zrankFromStart(r *zrange, size uint64) bool { return r.start == 0 || r.start <= -int64(size) }

func zrankToEnd(r *zrange, size uint64) bool { return r.end == -1 || r.end >= int64(size)-1 }

// zcountCommand is ZCOUNT and ZLEXCOUNT: a walk of the range that counts
// its members without copying them.
func zcountCommand(c *Ctx, kind zrangeKind) {
	r := zrange{kind: kind, limit: -1}
	var ok bool
	if kind == zrangeScore {
		r.score, ok = c.parseScoreRange(c.Args[2], c.Args[3])
	} else {
		r.lex, ok = c.parseLexRange(c.Args[2], c.Args[3])
	}
	if !ok {
		return
	}
	k, unlock, ok := c.lookupOf(c.Args[1], storage.TypeZSet, true)
	defer unlock()
	if !ok {
		return
	}
	if !k.live {
		c.W.Int(0)
		return
	}
	var n int64
	r.counted = &n
	if _, ok := c.zrangeEntries(&k.m, &r); ok {
		c.W.Int(n)
	}
}

// zremRangeCommand is ZREMRANGEBYSCORE, ZREMRANGEBYRANK and
// ZREMRANGEBYLEX: key min max.
func zremRangeCommand(c *Ctx, kind zrangeKind) {
	r := zrange{kind: kind, limit: -1}
	var ok bool
	var cmd storage.Command
	var code notify.Code
	switch kind {
	case zrangeRank:
		var okStart, okEnd bool
		r.start, okStart = parseInt(c.Args[2])
		if okStart {
			r.end, okEnd = parseInt(c.Args[3])
		}
		if !okStart || !okEnd {
			c.W.Error(errNotInt)
			return
		}
		ok, cmd, code = true, storage.CmdZRemRangeByRank, notify.CodeZRemRangeByRank
	case zrangeScore:
		r.score, ok = c.parseScoreRange(c.Args[2], c.Args[3])
		cmd, code = storage.CmdZRemRangeByScore, notify.CodeZRemRangeByScore
	default:
		r.lex, ok = c.parseLexRange(c.Args[2], c.Args[3])
		r.removing = true
		cmd, code = storage.CmdZRemRangeByLex, notify.CodeZRemRangeByLex
	}
	if !ok {
		return
	}
	key := c.Args[1]
	defer c.lock(key)()
	k, ok := c.readOf(key, storage.TypeZSet)
	switch {
	case !ok:
		return
	case !k.live:
		c.W.Int(0)
		return
	}
	out, ok := c.zrangeEntries(&k.m, &r)
	if !ok {
		return
	}
	if len(out) > 0 {
		e := c.newZEdit(&k, k.m)
		for _, x := range out {
			e.remove(e.known(x.member, x.score))
		}
		// A removal from an end narrows the score bounds, so that later
		// walks from that end skip what it deleted.
		switch s := r.score; {
		case kind == zrangeRank && zrankFromStart(&r, k.m.Size):
			e.raiseLow(out[len(out)-1].score)
		case kind == zrangeRank && zrankToEnd(&r, k.m.Size):
			e.lowerHigh(out[0].score)
		case kind == zrangeScore && math.IsInf(s.min, -1) && !s.minEx:
			e.raiseLow(s.max)
		case kind == zrangeScore && math.IsInf(s.max, 1) && !s.maxEx:
			e.lowerHigh(s.min)
		}
		if !e.commit(c.newBatch(storage.TypeZSet, cmd), key, code) {
			return
		}
	}
	c.W.Int(int64(len(out)))
}
