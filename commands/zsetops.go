package commands

import (
	"bytes"
	"cmp"
	"math"
	"slices"

	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/storage"
)

// Union, intersection and difference of sorted sets (and plain sets,
// whose members score 1), as Redis 7.0 computes them: the inputs sorted
// by size (smallest first) for a union or an intersection, each score
// times its input's weight, a NaN product or sum taken as 0.

func init() {
	// read is a command with numkeys at argument 1.
	read := func(name string, since, summary string, op setOp) *Spec {
		return &Spec{Name: name, Arity: -3, Flags: FlagReadOnly, KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, Begin: AtIndex(1), Find: KeyNum(0, 1, 1)}}, Group: "sorted-set", Since: since, Summary: summary, Handler: func(c *Ctx) { zsetOperation(c, op, nil) }}
	}
	// store is a command writing argument 1, numkeys at argument 2.
	store := func(name string, since, summary string, op setOp) *Spec {
		return &Spec{Name: name, Arity: -4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyOW|KeyUpdate), {Flags: KeyRO | KeyAccess, Begin: AtIndex(2), Find: KeyNum(0, 1, 1)}}, Group: "sorted-set", Since: since, Summary: summary, Handler: func(c *Ctx) { zsetOperation(c, op, c.Args[1]) }}
	}
	register(
		read("zunion", "6.2.0", "Returns the union of multiple sorted sets.", opUnion),
		read("zinter", "6.2.0", "Returns the intersect of multiple sorted sets.", opInter),
		read("zdiff", "6.2.0", "Returns the difference between multiple sorted sets.", opDiff),
		store("zunionstore", "2.0.0", "Stores the union of multiple sorted sets in a key.", opUnion),
		store("zinterstore", "2.0.0", "Stores the intersect of multiple sorted sets in a key.", opInter),
		store("zdiffstore", "6.2.0", "Stores the difference of multiple sorted sets in a key.", opDiff),
		&Spec{Name: "zintercard", Arity: -3, Flags: FlagReadOnly, KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, Begin: AtIndex(1), Find: KeyNum(0, 1, 1)}}, Group: "sorted-set", Since: "7.0.0", Summary: "Returns the number of members of the intersect of multiple sorted sets.", Handler: func(c *Ctx) { zsetOperation(c, opInterCard, nil) }},
	)
}

// opInterCard is ZINTERCARD: an intersection counted, up to a LIMIT.
const opInterCard setOp = 100

// zinput is one input of a sorted-set operation.
type zinput struct {
	k      keyState
	weight float64
}

// Aggregation of scores.
const (
	aggSum = iota
	aggMin
	aggMax
)

// zsetOperation is ZUNION, ZINTER, ZDIFF, their STORE forms (dst set) and
// ZINTERCARD, following Redis's argument checks and their order: numkeys,
// the keys' types, then the options.
func zsetOperation(c *Ctx, op setOp, dst []byte) {
	at := 1
	if dst != nil {
		at = 2
	}
	n, ok := parseInt(c.Args[at])
	if !ok {
		c.W.Error(errNotInt)
		return
	}
	if n < 1 {
		c.errorf("ERR at least 1 input key is needed for '%s' command", lower(c.Args[0]))
		return
	}
	if n > int64(len(c.Args)-at-1) {
		c.W.Error(errSyntax)
		return
	}
	keys := c.Args[at+1 : at+1+int(n)]
	if dst != nil {
		defer c.lock(append([][]byte{dst}, keys...)...)()
	} else {
		defer c.lock(keys...)()
	}
	in := make([]zinput, len(keys))
	for i, key := range keys {
		if in[i].k, ok = c.read(key); !ok {
			return
		}
		c.lookedUp(key, in[i].k.live)
		if t := in[i].k.m.Type; in[i].k.live && t != storage.TypeZSet && t != storage.TypeSet {
			c.W.Error(errWrongType)
			return
		}
		in[i].weight = 1
	}
	agg, withScores, limit := aggSum, false, int64(0)
	for i := at + 1 + int(n); i < len(c.Args); {
		left := len(c.Args) - i
		switch opt := keyword(c.Args[i]); {
		case op != opDiff && op != opInterCard && left >= int(n)+1 && opt == "weights":
			for j := range in {
				if in[j].weight, ok = parseScore(c.Args[i+1+j]); !ok {
					c.W.Error("ERR weight value is not a float")
					return
				}
			}
			i += int(n) + 1
		case op != opDiff && op != opInterCard && left >= 2 && opt == "aggregate":
			switch keyword(c.Args[i+1]) {
			case "sum":
				agg = aggSum
			case "min":
				agg = aggMin
			case "max":
				agg = aggMax
			default:
				c.W.Error(errSyntax)
				return
			}
			i += 2
		case dst == nil && op != opInterCard && opt == "withscores":
			withScores = true
			i++
		case op == opInterCard && left >= 2 && opt == "limit":
			if limit, ok = parseInt(c.Args[i+1]); !ok || limit < 0 {
				c.W.Error("ERR LIMIT can't be negative")
				return
			}
			i += 2
		default:
			c.W.Error(errSyntax)
			return
		}
	}
	var out []zentry
	switch op {
	case opUnion:
		out, ok = c.zunion(in, agg)
	case opDiff:
		out, ok = c.zdiff(in)
	default:
		out, ok = c.zinter(in, agg, limit)
	}
	if !ok {
		return
	}
	switch {
	case op == opInterCard:
		c.W.Int(int64(len(out)))
	case dst != nil:
		cmd, code := storage.CmdZUnionStore, notify.CodeZUnionStore
		switch op {
		case opInter:
			cmd, code = storage.CmdZInterStore, notify.CodeZInterStore
		case opDiff:
			cmd, code = storage.CmdZDiffStore, notify.CodeZDiffStore
		}
		c.zstore(dst, out, cmd, code)
	default:
		c.replyEntries(out, withScores, c.Client.Proto() >= 3)
	}
}

// zaggregate combines score s into the result r as agg says, as Redis
// does: a sum that is NaN (opposite infinities, or an s that is NaN) is
// 0, and MIN and MAX keep r when s is NaN or equal to it.
func zaggregate(r *float64, s float64, agg int) {
	switch agg {
	case aggSum:
		if *r += s; math.IsNaN(*r) {
			*r = 0
		}
	case aggMin:
		if s < *r { // not a NaN, and -0 does not replace 0, as in Redis
			*r = s
		}
	case aggMax:
		if s > *r {
			*r = s
		}
	}
}

// weighted is score s times weight w, 0 for a NaN product (0 times an
// infinity), as in Redis.
func weighted(s, w float64) float64 {
	if p := s * w; !math.IsNaN(p) {
		return p
	}
	return 0
}

// zinputEntries calls fn with each member of input x and its score (1
// for a set's members) until fn returns false; on a storage error it
// replies and returns false.
func (c *Ctx) zinputEntries(x *zinput, fn func(member []byte, s float64) bool) bool {
	if !x.k.live {
		return true
	}
	if x.k.m.Type == storage.TypeZSet {
		if err := c.Env.Store.ScanZSet(c.batch(), c.ns(), &x.k.m, nil, false, fn); err != nil {
			c.storageError(err)
			return false
		}
		return true
	}
	return c.fields(&x.k.m, func(f, _ []byte) bool { return fn(f, 1) })
}

// zinputScore returns member's score in input x (1 in a set), and
// whether x has it; on a storage error it replies and returns ok=false.
func (c *Ctx) zinputScore(x *zinput, member []byte) (s float64, found, ok bool) {
	if x.k.m.Type == storage.TypeZSet {
		return c.zscore(&x.k, member)
	}
	_, found, ok = c.liveField(&x.k, &x.k.m, member)
	return 1, found, ok
}

// bySize sorts inputs by their member counts, smallest first, as Redis
// does before a union or an intersection; a missing key counts 0.
func bySize(in []zinput) {
	size := func(x zinput) uint64 {
		if !x.k.live {
			return 0
		}
		return x.k.m.Size
	}
	slices.SortStableFunc(in, func(a, b zinput) int { return cmp.Compare(size(a), size(b)) })
}

// sortEntries puts es in a sorted set's order: by score, then member.
func sortEntries(es []zentry) []zentry {
	slices.SortFunc(es, func(a, b zentry) int {
		if c := cmp.Compare(a.score, b.score); c != 0 {
			return c
		}
		return bytes.Compare(a.member, b.member)
	})
	return es
}

func (c *Ctx) zunion(in []zinput, agg int) ([]zentry, bool) {
	bySize(in)
	index := map[string]int{}
	var out []zentry
	for i := range in {
		w := in[i].weight
		if !c.zinputEntries(&in[i], func(member []byte, s float64) bool {
			s = weighted(s, w)
			if j, ok := index[string(member)]; ok {
				zaggregate(&out[j].score, s, agg)
				return true
			}
			index[string(member)] = len(out)
			out = append(out, zentry{bytes.Clone(member), s})
			return true
		}) {
			return nil, false
		}
	}
	return sortEntries(out), true
}

// zinter intersects the inputs, stopping at limit members (0: none).
func (c *Ctx) zinter(in []zinput, agg int, limit int64) ([]zentry, bool) {
	bySize(in)
	if !in[0].k.live {
		return nil, true
	}
	var out []zentry
	var failed bool
	if !c.zinputEntries(&in[0], func(member []byte, s float64) bool {
		// As in Redis, only the first input's product that is NaN (0
		// times an infinity) counts as 0; the others reach zaggregate as
		// NaN, which makes a SUM 0 and leaves MIN and MAX as they were.
		score := weighted(s, in[0].weight)
		for j := 1; j < len(in); j++ {
			x := &in[j]
			if x.k.live && in[0].k.live && x.k.m.Version == in[0].k.m.Version && x.k.m.Type == in[0].k.m.Type {
				zaggregate(&score, s*x.weight, agg) // the same key again
				continue
			}
			xs, found, ok := c.zinputScore(x, member)
			if !ok {
				failed = true
				return false
			}
			if !found {
				return true
			}
			zaggregate(&score, xs*x.weight, agg)
		}
		out = append(out, zentry{bytes.Clone(member), score})
		return limit == 0 || int64(len(out)) < limit
	}) || failed {
		return nil, false
	}
	return sortEntries(out), true
}

func (c *Ctx) zdiff(in []zinput) ([]zentry, bool) {
	if !in[0].k.live {
		return nil, true
	}
	var out []zentry
	var failed bool
	if !c.zinputEntries(&in[0], func(member []byte, s float64) bool {
		for j := 1; j < len(in); j++ {
			if !in[j].k.live {
				continue
			}
			_, found, ok := c.zinputScore(&in[j], member)
			if !ok {
				failed = true
				return false
			}
			if found {
				return true
			}
		}
		out = append(out, zentry{bytes.Clone(member), s})
		return true
	}) || failed {
		return nil, false
	}
	return sortEntries(out), true
}
