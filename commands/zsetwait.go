package commands

import "github.com/cairnkv/cairn/storage"

// The blocking sorted-set commands wait as the blocking list commands do
// (listwait.go), on the sorted sets at their keys.

func init() {
	bpop := func(name, summary string, max bool) *Spec {
		return &Spec{Name: name, Arity: -3, Flags: FlagWrite | FlagNoScript | FlagFast | FlagBlocking, FirstKey: 1, LastKey: -2, Step: 1, KeySpecs: []KeySpec{KeyRange(1, -2, 1, KeyRW|KeyAccess|KeyDelete)}, Group: "sorted-set", Since: "5.0.0", Summary: summary, Handler: func(c *Ctx) { blockingZPop(c, max) }}
	}
	register(
		bpop("bzpopmin", "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", false),
		bpop("bzpopmax", "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.  Deletes the sorted set if the last element was popped.", true),
		&Spec{Name: "bzmpop", Arity: -5, Flags: FlagWrite | FlagBlocking, KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Begin: AtIndex(2), Find: KeyNum(0, 1, 1)}}, Group: "sorted-set", Since: "7.0.0", Summary: "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", Handler: cmdBZMPop},
	)
}

// blockingZPop is BZPOPMIN and BZPOPMAX (max).
func blockingZPop(c *Ctx, max bool) {
	timeout, ok := c.blockTimeoutArg(len(c.Args) - 1)
	if !ok {
		return
	}
	keys := c.Args[1 : len(c.Args)-1]
	c.blockOn(storage.TypeZSet, keys, nil, timeout, c.W.NullArray, c.W.NullArray, func(ready []byte) bool {
		return c.zpopFirst(readyFirst(ready, keys), max, 1, false)
	})
}

func cmdBZMPop(c *Ctx) {
	keys, max, count, ok := c.parseZMPop(2)
	if !ok {
		return
	}
	timeout, ok := c.blockTimeoutArg(1)
	if !ok {
		return
	}
	c.blockOn(storage.TypeZSet, keys, nil, timeout, c.W.NullArray, c.W.NullArray, func(ready []byte) bool {
		return c.zpopFirst(readyFirst(ready, keys), max, count, true)
	})
}
