package commands

import (
	"iter"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnkv/cairn/storage"
)

// The blocking list commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP)
// serve a client at once when one of its keys holds a list, and otherwise
// queue it on every key (listWaiters) and wait. A command whose write
// leaves a list at a key that has waiters (Ctx.put) marks the key ready
// on its client; once the command has finished and released its locks
// (at the end of Dispatch, or of a pipelined group), the client serves
// the ready keys before it runs anything else: it wakes their first
// waiters in the order they blocked, one at a time, and each pops under
// its own locks, with its own events and commit, as if it had just run.
// So, as in Redis, a client that pushes to a list a client waits on
// finds the element taken when its next command runs, and the events of
// the push come before those of the pop.

// listWaiters is the queue of clients blocked on each list key, and on
// each sorted-set key (zsetwait.go: waitKey keeps the two apart); it
// belongs to the Env.
type listWaiters struct {
	mu    sync.Mutex
	byKey map[string][]*listWaiter // by namespaced key, in blocking order
	count atomic.Int64             // registered waiters: 0 lets writes skip the map
}

// A listWaiter is one blocked command.
type listWaiter struct {
	keys []string // namespaced
	// reads marks a command that only reads (XREAD): it keeps waiting on
	// a replica, whose applied writes serve it.
	reads bool
	// wake carries the ready key and the channel for the answer; it is
	// sent to once per registration, by whoever removed the waiter from
	// the queues.
	wake chan listWake
}

// listWake asks a waiter to try to pop from key, and then to answer on
// done whether the key held nothing for it (true: it waits again, first
// in line, and the key's later waiters would find nothing either); or,
// with demoted, to end its wait with errDemoted.
type listWake struct {
	key     string
	demoted bool
	done    chan bool
}

// errDemoted ends the waits of blocked list and sorted-set commands when the node
// becomes a replica, as in Redis: a replica's lists change only by the
// primary's writes, which serve no waiter.
const errDemoted = "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)"

// waitKey is the key in listWaiters of the waiters for a list (t
// TypeList), a sorted set (TypeZSet) or a stream (TypeStream) at ns's key: a client blocked on a
// list waits while a sorted set is there, and the reverse, as in Redis.
func waitKey(t storage.Type, ns string, key []byte) string {
	sep := "\x00"
	switch t {
	case storage.TypeZSet:
		sep = "\x01"
	case storage.TypeStream:
		sep = "\x02"
	}
	return ns + sep + string(key)
}

// add queues w on its keys, first in line with front.
func (l *listWaiters) add(w *listWaiter, front bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byKey == nil {
		l.byKey = map[string][]*listWaiter{}
	}
	for _, k := range w.keys {
		if front {
			l.byKey[k] = append([]*listWaiter{w}, l.byKey[k]...)
		} else {
			l.byKey[k] = append(l.byKey[k], w)
		}
	}
	l.count.Add(1)
}

// removeLocked takes w off its queues and reports whether it was on them.
func (l *listWaiters) removeLocked(w *listWaiter) bool {
	queued := false
	for _, k := range w.keys {
		q := l.byKey[k]
		if i := slices.Index(q, w); i >= 0 {
			queued = true
			if len(q) == 1 {
				delete(l.byKey, k)
			} else {
				l.byKey[k] = slices.Delete(q, i, i+1)
			}
		}
	}
	if queued {
		l.count.Add(-1)
	}
	return queued
}

// remove takes w off its queues, reporting whether it was on them (false:
// someone is waking it).
func (l *listWaiters) remove(w *listWaiter) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.removeLocked(w)
}

// claim takes the first waiter of key off its queues.
func (l *listWaiters) claim(key string) *listWaiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.byKey[key]
	if len(q) == 0 {
		return nil
	}
	w := q[0]
	l.removeLocked(w)
	return w
}

// unblockAll ends every wait with errDemoted.
func (l *listWaiters) unblockAll() {
	l.mu.Lock()
	all := map[*listWaiter]bool{}
	for _, q := range l.byKey {
		for _, w := range q {
			all[w] = true
		}
	}
	clear(l.byKey)
	l.count.Store(0)
	l.mu.Unlock()
	for w := range all {
		w.wake <- listWake{demoted: true, done: make(chan bool, 1)}
	}
}

// has reports whether a client waits on key.
func (l *listWaiters) has(key string) bool {
	if l.count.Load() == 0 {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.byKey[key]) > 0
}

// keyWritten notes a write that leaves a list or a sorted set (t) at key:
// if a client waits on it, the key is ready and the writing client serves
// it when its command ends.
func (c *Ctx) keyWritten(t storage.Type, key []byte) {
	if c.Client == nil || c.Env.lists.count.Load() == 0 {
		return
	}
	k := waitKey(t, c.ns(), key)
	if !slices.Contains(c.Client.readyLists, k) && c.Env.lists.has(k) {
		c.Client.readyLists = append(c.Client.readyLists, k)
	}
}

// serveReadyLists wakes the waiters of the list and sorted-set keys cl's
// commands made ready, in order, until each key's value is empty or its
// waiters are served. cl holds no key lock.
func (e *Env) serveReadyLists(cl *Client) {
	for len(cl.readyLists) > 0 {
		key := cl.readyLists[0]
		cl.readyLists = cl.readyLists[1:]
		for {
			w := e.lists.claim(key)
			if w == nil {
				break
			}
			done := make(chan bool, 1)
			w.wake <- listWake{key: key, done: done}
			if <-done { // the key holds nothing more for its waiters
				break
			}
		}
	}
	cl.readyLists = nil
}

func init() {
	bpop := func(name, since, summary string, handler Handler) *Spec {
		return &Spec{Name: name, Arity: -3, Flags: FlagWrite | FlagNoScript | FlagBlocking, FirstKey: 1, LastKey: -2, Step: 1, KeySpecs: []KeySpec{KeyRange(1, -2, 1, KeyRW|KeyAccess|KeyDelete)}, Group: "list", Since: since, Summary: summary, Handler: handler}
	}
	bmove := func(name string, arity int, since, summary string, handler Handler) *Spec {
		return &Spec{Name: name, Arity: arity, Flags: FlagWrite | FlagDenyOOM | FlagNoScript | FlagBlocking, FirstKey: 1, LastKey: 2, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRW|KeyAccess|KeyDelete), Key(2, KeyRW|KeyInsert)}, Group: "list", Since: since, Summary: summary, Handler: handler}
	}
	register(
		bpop("blpop", "2.0.0", "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", func(c *Ctx) { blockingPop(c, true) }),
		bpop("brpop", "2.0.0", "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", func(c *Ctx) { blockingPop(c, false) }),
		bmove("brpoplpush", 4, "2.2.0", "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped.", cmdBRPopLPush),
		bmove("blmove", 6, "6.2.0", "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved.", cmdBLMove),
		&Spec{Name: "blmpop", Arity: -5, Flags: FlagWrite | FlagBlocking, KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Begin: AtIndex(2), Find: KeyNum(0, 1, 1)}}, Group: "list", Since: "7.0.0", Summary: "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", Handler: cmdBLMPop},
	)
}

// blockTimeoutArg parses a blocking command's timeout in seconds (a
// float) as Redis does, returning it in milliseconds (0: none).
func (c *Ctx) blockTimeoutArg(i int) (time.Duration, bool) {
	f, ok := parseLongDouble(c.Args[i])
	if !ok {
		c.W.Error("ERR timeout is not a float or out of range")
		return 0, false
	}
	secs, _ := f.Float64()
	ms := math.Trunc(secs * 1000)
	switch {
	case ms <= -1 || ms >= math.MaxInt64 || math.IsNaN(ms):
		// Redis's conversion of a number past the range of its integers
		// gives a negative one.
		c.W.Error("ERR timeout is negative")
		return 0, false
	}
	// Past a century is as good as forever, and fits a time.Duration.
	return time.Duration(min(int64(ms), int64(100*365*24*time.Hour/time.Millisecond))) * time.Millisecond, true
}

// blockOn runs a blocking command of type t (a list or a sorted set): try,
// under the locks of keys and extra, serves it at once (reports true)
// when one of keys holds a value of type t.
// Otherwise, in a transaction or a script, it replies with inTxn (Redis
// never blocks there); elsewhere the command waits on keys until a write
// makes one ready and try, run again with the ready key first, serves
// it, or until timeout (0: none), CLIENT UNBLOCK or the connection's
// end, and then replies with timedOut or the unblock error. try returns
// false when no key held a list, to wait (again).
func (c *Ctx) blockOn(t storage.Type, keys, extra [][]byte, timeout time.Duration, inTxn, timedOut func(), try func(ready []byte) bool) {
	unlock := c.lock(append(slices.Clone(keys), extra...)...)
	if try(nil) {
		unlock()
		return
	}
	if c.txn != nil {
		unlock()
		inTxn()
		return
	}
	w := &listWaiter{wake: make(chan listWake, 1), reads: c.Spec.Flags&FlagWrite == 0}
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if wk := waitKey(t, c.ns(), k); !seen[wk] {
			seen[wk] = true
			w.keys = append(w.keys, wk)
		}
	}
	c.Env.lists.add(w, false)
	unlock()
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	served, demoted := false, false
	unblockedWithError := c.block(func(stop <-chan struct{}) {
		for {
			select {
			case wk := <-w.wake:
				if !wk.demoted {
					served, demoted = c.tryServe(w, keys, extra, []byte(wk.key[len(c.ns())+1:]), try)
				} else {
					demoted = true
				}
				waitsAgain := !served && !demoted // queued again by tryServe
				wk.done <- waitsAgain
				if waitsAgain {
					continue
				}
				return
			case <-stop:
			case <-deadline:
			}
			if !c.Env.lists.remove(w) {
				// Claimed meanwhile: the wake is on its way.
				(<-w.wake).done <- false
			}
			return
		}
	})
	switch {
	case demoted:
		c.W.Error(errDemoted)
	case served:
	case unblockedWithError:
		c.W.Error(errUnblocked)
	default:
		timedOut()
	}
}

// tryServe runs try for the ready key under the locks of keys and extra;
// when it does not serve, w waits again, first in line, queued before
// the locks are released so that no push is missed, unless the node has
// become a replica meanwhile (demoted). It reads the keys as of now, not
// as of when the command began.
func (c *Ctx) tryServe(w *listWaiter, keys, extra [][]byte, ready []byte, try func(ready []byte) bool) (served, demoted bool) {
	c.Now = time.Now() // keys that expired while it waited are gone
	unlock := c.lock(append(slices.Clone(keys), extra...)...)
	if try(ready) {
		unlock()
		c.Env.serveReadyLists(c.Client)
		return true, false
	}
	defer unlock()
	if c.replica() && !w.reads {
		return false, true
	}
	c.Env.lists.add(w, true)
	return false, false
}

// blockingPop is BLPOP and BRPOP (from the head with left).
func blockingPop(c *Ctx, left bool) {
	timeout, ok := c.blockTimeoutArg(len(c.Args) - 1)
	if !ok {
		return
	}
	keys := c.Args[1 : len(c.Args)-1]
	cmd := popCommandCode(left)
	c.blockOn(storage.TypeList, keys, nil, timeout, c.W.NullArray, c.W.NullArray, func(ready []byte) bool {
		return c.popFirst(readyFirst(ready, keys), left, 1, false, cmd)
	})
}

// readyFirst returns keys with the ready key (if any) first.
func readyFirst(ready []byte, keys [][]byte) [][]byte {
	if ready == nil {
		return keys
	}
	return append([][]byte{ready}, keys...)
}

func cmdBRPopLPush(c *Ctx) { blockingMove(c, 3, false, true, storage.CmdRPopLPush) }

func cmdBLMove(c *Ctx) {
	if from, to, ok := c.parseSides(3); ok {
		blockingMove(c, 5, from, to, storage.CmdLMove)
	}
}

// blockingMove is BRPOPLPUSH and BLMOVE, whose timeout is Args[at].
// Timed out, it replies a null array, as Redis's does (RESP2); in a
// transaction, a null bulk.
func blockingMove(c *Ctx, at int, fromLeft, toLeft bool, cmd storage.Command) {
	timeout, ok := c.blockTimeoutArg(at)
	if !ok {
		return
	}
	src, dst := c.Args[1], c.Args[2]
	c.blockOn(storage.TypeList, [][]byte{src}, [][]byte{dst}, timeout, c.W.NullBulk, c.W.NullArray, func([]byte) bool {
		s, ok := c.readOf(src, storage.TypeList)
		switch {
		case !ok:
			return true
		case !s.live:
			return false
		}
		if v, ok := c.moveElement(src, dst, &s, fromLeft, toLeft, cmd); ok {
			c.W.Bulk(v)
		}
		return true
	})
}

func cmdBLMPop(c *Ctx) {
	keys, left, count, ok := c.parseMPop(2)
	if !ok {
		return
	}
	timeout, ok := c.blockTimeoutArg(1)
	if !ok {
		return
	}
	c.blockOn(storage.TypeList, keys, nil, timeout, c.W.NullArray, c.W.NullArray, func(ready []byte) bool {
		return c.popFirst(readyFirst(ready, keys), left, count, true, storage.CmdLMPop)
	})
}

// Written implements storage.WriteObserver for the Env: the client
// registry's watches and tracking hear every committed write, and on a
// replica the primary's writes to streams that clients wait on (XREAD
// BLOCK) serve those clients, as Redis's replicas do. It runs inside the
// commit section, so the waiters are served by a goroutine of their own.
func (e *Env) Written(writes iter.Seq[storage.Write]) {
	e.Clients.Written(writes)
	if e.lists.count.Load() == 0 || !e.isReplica() {
		return
	}
	var ready []string
	for w := range writes {
		if w.MetaKey == nil || w.Deleted {
			continue
		}
		ns, key, err := storage.DecodeMetaKey(w.MetaKey)
		if err != nil {
			continue
		}
		if k := waitKey(storage.TypeStream, string(ns), key); !slices.Contains(ready, k) && e.lists.has(k) {
			ready = append(ready, k)
		}
	}
	if len(ready) > 0 {
		go e.serveReadyLists(&Client{readyLists: ready})
	}
}

// Watching implements storage.WriteObserver: the registry's watchers, or
// clients waiting on a replica's streams.
func (e *Env) Watching() bool {
	return e.Clients.Watching() || e.lists.count.Load() > 0 && e.isReplica()
}

// Flushing implements storage.WriteObserver for the client registry.
func (e *Env) Flushing(namespaces []string, present func(metaKey []byte) bool) {
	e.Clients.Flushing(namespaces, present)
}
