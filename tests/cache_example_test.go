package tests

// examples/cache end to end: a primary and a replica, the cache in front of
// the replica, random writes of every kind Cairn publishes events for on
// the primary and concurrent readers of the cache.
//
// Causality is proved with markers. After each write the writer publishes
// "__keyevent@0__:cachetest-mark" with the write's number on the primary,
// in the same pipeline. The replica applies batches in the primary's order
// and publishes after applying, so when the cache reports the marker of
// write W, it has processed every event of writes 1..W. A reader notes the
// last marker seen before each Get; afterwards, with the complete history
// of every key, each result is checked: it must be a state the key had at
// or after its last write numbered <= W. That is exactly what the cache
// promises (an invalidation processed before a Get began means the value
// it replaced is never returned), and it also holds for reads that go to
// the replica, which by then has applied write W.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnkv/cairn/examples/cache"
	"github.com/redis/go-redis/v9"
)

const (
	cacheTestKeys   = 20
	cacheTestWrites = 2000
	cacheMarkEvent  = "cachetest-mark"
	cacheMarkChan   = "__keyevent@0__:" + cacheMarkEvent
)

func cacheKey(i int) string { return "ck:" + strconv.Itoa(i) }

// ckState is a key's state in the writer's model: exact, since only the
// writer writes and replies tell whenever a TTL may have run out.
type ckState struct {
	present bool
	val     string
	ttl     bool // the key has a TTL (and may vanish at any time)
}

// ckEntry is a key's state after write idx.
type ckEntry struct {
	idx int
	ckState
}

// ckModel is the writer's model of the primary and each key's history.
type ckModel struct {
	t    *testing.T
	cur  map[string]ckState
	hist map[string][]ckEntry
	ops  []string // ops[i]: write i, for messages
}

func newCKModel(t *testing.T) *ckModel {
	return &ckModel{t: t, cur: map[string]ckState{}, hist: map[string][]ckEntry{}, ops: []string{"(initial)"}}
}

func (m *ckModel) set(idx int, key string, s ckState) {
	m.cur[key] = s
	m.hist[key] = append(m.hist[key], ckEntry{idx, s})
}

// gone notes that a reply showed key missing without a write: its TTL ran
// out. The model must have known it could.
func (m *ckModel) gone(key, op string) {
	m.t.Helper()
	if s := m.cur[key]; s.present && !s.ttl {
		m.t.Fatalf("%s: %s is missing on the primary, but the model has %q without a TTL", op, key, s.val)
	}
	m.cur[key] = ckState{}
}

// same checks a value a reply returned against the model.
func (m *ckModel) same(key, op string, got any) {
	m.t.Helper()
	s := m.cur[key]
	switch v := got.(type) {
	case nil:
		m.gone(key, op)
	case string:
		if !s.present || s.val != v {
			m.t.Fatalf("%s returned %q for %s; the model has %+v", op, v, key, s)
		}
	default:
		m.t.Fatalf("%s: reply %T %v", op, got, got)
	}
}

// ckRead is one Get of a reader.
type ckRead struct {
	key   int
	mark  int // the last marker the cache had reported before the Get
	val   string
	found bool
}

// cacheWatch collects what the cache reports through its hooks.
type cacheWatch struct {
	mark      atomic.Int64
	badMark   atomic.Value // string: a marker out of order
	mu        sync.Mutex
	events    map[string]int   // event name -> count
	expiredAt map[string]int64 // key -> the last marker seen at its last "expired" event
	lost      chan error
	block     atomic.Bool
	release   chan struct{}
}

func (w *cacheWatch) onInvalidate(event, key string) {
	if event == cacheMarkEvent {
		n, err := strconv.ParseInt(key, 10, 64)
		if err != nil || n <= w.mark.Load() {
			w.badMark.Store(fmt.Sprintf("marker %q after %d", key, w.mark.Load()))
			return
		}
		w.mark.Store(n)
		return
	}
	w.mu.Lock()
	w.events[event]++
	if event == "expired" {
		w.expiredAt[key] = w.mark.Load()
	}
	w.mu.Unlock()
}

func (w *cacheWatch) onLost(err error) {
	select {
	case w.lost <- err:
	default:
	}
	if w.block.Load() {
		select {
		case <-w.release:
		case <-time.After(30 * time.Second): // a hang guard; the test fails on its own
		}
	}
}

func TestCacheExample(t *testing.T) {
	started := time.Now()
	p := StartCairn(t, "--notify-keyspace-events", "KEA")
	r := startReplica(t, p, "--notify-keyspace-events", "KEA")
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	waitCaughtUp(t, pc, rc)

	w := &cacheWatch{events: map[string]int{}, expiredAt: map[string]int64{}, lost: make(chan error, 16), release: make(chan struct{})}
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(w.release) }) }
	c, err := cache.New(r.Client(), cache.Options{
		OnInvalidate:       w.onInvalidate,
		OnSubscriptionLost: w.onLost,
		PingInterval:       time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		release() // a failed test may leave the hook blocked
		c.Close()
	})
	waitCtx, cancel := context.WithTimeout(cx, 10*time.Second)
	defer cancel()
	if err := c.WaitReady(waitCtx); err != nil {
		t.Fatal(err)
	}

	// markSeq numbers the markers: 1..cacheTestWrites during the random
	// phase, then one per sync.
	markSeq := 0
	// syncMark publishes a marker through pub and waits until the cache
	// reported it: every event the replica published before is processed.
	syncMark := func(pub *redis.Client, what string) {
		t.Helper()
		markSeq++
		n := markSeq
		must(t, pub.Publish(cx, cacheMarkChan, strconv.Itoa(n)).Err())
		waitFor(t, 10*time.Second, "marker of "+what, func() bool { return w.mark.Load() >= int64(n) })
	}

	// 1. Random writes and concurrent readers.
	m := newCKModel(t)
	var (
		stop   atomic.Bool
		reads  [][]ckRead
		readMu sync.Mutex
		errs   = make(chan error, 8)
		wg     sync.WaitGroup
	)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 7))
			var mine []ckRead
			defer func() {
				readMu.Lock()
				reads = append(reads, mine)
				readMu.Unlock()
			}()
			for i := 0; !stop.Load(); i++ {
				k := rng.IntN(cacheTestKeys)
				mark := int(w.mark.Load())
				v, found, err := c.Get(cx, cacheKey(k))
				if err != nil {
					errs <- err
					return
				}
				mine = append(mine, ckRead{key: k, mark: mark, val: v, found: found})
				if i%8 == 7 {
					time.Sleep(20 * time.Microsecond)
				}
			}
		}(uint64(g))
	}
	writeStart := time.Now()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CAIRN_CACHE_SEED"); s != "" {
		seed, err = strconv.ParseUint(s, 10, 64)
		must(t, err)
	}
	t.Logf("random phase: CAIRN_CACHE_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for i := 1; i <= cacheTestWrites; i++ {
		op := -1
		if i == cacheTestWrites {
			op = 1 // SET PX: some key keeps a TTL
		}
		cacheWrite(t, cx, pc, m, rng, i, op)
		markSeq = i
	}
	writeTime := time.Since(writeStart)
	syncMark(pc, "the random writes")
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a reader's Get failed: %v", err)
	}
	if bad, ok := w.badMark.Load().(string); ok {
		t.Fatalf("markers out of order: %s", bad)
	}

	// Every kind of event but "expired" (keys are rewritten faster than
	// their TTLs run out; see below) must have come through the replica.
	w.mu.Lock()
	events := fmt.Sprint(w.events)
	for _, ev := range []string{"set", "del", "expire", "persist", "append", "setrange", "incrby",
		"incrbyfloat", "rename_from", "rename_to", "copy_to"} {
		if w.events[ev] == 0 {
			t.Errorf("the cache never received a %q event; events: %s", ev, events)
		}
	}
	w.mu.Unlock()

	// Causality, checked against the complete history.
	nReads, nChecked := cacheCheckReads(t, m, reads)
	st := c.Stats()
	t.Logf("random phase: %d writes in %v, %d Gets checked (%d with a marker), stats %+v, events %s",
		cacheTestWrites, writeTime.Round(time.Millisecond), nReads, nChecked, st, events)
	if st.Hits < 1000 || st.Invalidations < cacheTestWrites || st.Misses < 200 {
		t.Fatalf("the run exercised too little of the cache: %+v", st)
	}
	if st.Resets != 0 || st.Subscriptions != 1 {
		t.Fatalf("the subscription dropped during the random phase: %+v", st)
	}

	// 2. Final state: once every TTL has run out and the replica's events
	// are all in, the cache returns exactly the primary's values.
	// The keys left with a TTL expire on the primary, whose active cycle
	// reclaims them and publishes "expired", which the replica publishes
	// too (the last write set a TTL, so there is at least one).
	var expiring []string
	for i := 0; i < cacheTestKeys; i++ {
		if k := cacheKey(i); m.cur[k].ttl {
			expiring = append(expiring, k)
		}
	}
	if len(expiring) == 0 {
		t.Fatal("no key was left with a TTL")
	}
	// A key's last write L is followed by its marker L, but the active
	// cycle may reclaim a key whose older TTL L kept between the two: the
	// event then comes after marker L-1.
	waitFor(t, 10*time.Second, fmt.Sprintf("expired events for %q", expiring), func() bool {
		for _, k := range expiring {
			if pc.Exists(cx, k).Val() != 0 {
				return false
			}
			w.mu.Lock()
			at := w.expiredAt[k]
			w.mu.Unlock()
			if hist := m.hist[k]; at < int64(hist[len(hist)-1].idx-1) {
				return false
			}
		}
		return true
	})
	syncMark(pc, "the expired events")
	before := c.Stats()
	for i := 0; i < cacheTestKeys; i++ {
		k := cacheKey(i)
		want, wantFound := "", false
		if s := m.cur[k]; s.present && !s.ttl {
			want, wantFound = s.val, true
		}
		pv, perr := pc.Get(cx, k).Result()
		if (perr == redis.Nil) == wantFound || (perr != nil && perr != redis.Nil) || (wantFound && pv != want) {
			t.Fatalf("the test's model of %s (%q, %v) differs from the primary's (%q, %v)", k, want, wantFound, pv, perr)
		}
		v, found, err := c.Get(cx, k)
		must(t, err)
		if v != want || found != wantFound {
			t.Errorf("final state: cache.Get(%s) = (%q, %v); the primary has (%q, %v)", k, v, found, want, wantFound)
		}
	}
	after := c.Stats()
	w.mu.Lock()
	expired := w.events["expired"]
	w.mu.Unlock()
	t.Logf("final state: %d of %d keys answered from the cache; %d expired events in all, %d keys waited for",
		after.Hits-before.Hits, cacheTestKeys, expired, len(expiring))
	if t.Failed() {
		t.FailNow()
	}

	// 3. CLIENT KILL of the subscription: the cache drops everything and
	// reads through, filling nothing, until it has resubscribed. Writes
	// made in the gap publish events nobody receives.
	for i := 0; i < cacheTestKeys; i++ {
		must(t, pc.Set(cx, cacheKey(i), "before-kill-"+strconv.Itoa(i), 0).Err())
	}
	syncMark(pc, "the writes before the kill")
	cacheExpectAll(t, c, "before the kill", func(i int) (string, bool) { return "before-kill-" + strconv.Itoa(i), true })
	before = c.Stats()
	cacheExpectAll(t, c, "before the kill, again", func(i int) (string, bool) { return "before-kill-" + strconv.Itoa(i), true })
	if got := c.Stats().Hits - before.Hits; got != cacheTestKeys {
		t.Fatalf("%d hits reading every key twice; want %d", got, cacheTestKeys)
	}
	before = c.Stats()
	w.block.Store(true)
	n, err := rc.ClientKillByFilter(cx, "TYPE", "pubsub").Result()
	if err != nil || n != 1 {
		t.Fatalf("CLIENT KILL TYPE pubsub on the replica: %d, %v; want 1 (the cache's subscription)", n, err)
	}
	select {
	case err := <-w.lost:
		t.Logf("subscription lost: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the cache did not notice its subscription was killed")
	}
	st = c.Stats()
	if st.Resets != before.Resets+1 || st.Entries != 0 || st.Subscribed {
		t.Fatalf("after the kill: %+v; want one more reset, no entry, not subscribed", st)
	}
	for i := 0; i < cacheTestKeys; i++ {
		if i%4 == 0 {
			must(t, pc.Del(cx, cacheKey(i)).Err())
		} else {
			must(t, pc.Set(cx, cacheKey(i), "gap-"+strconv.Itoa(i), 0).Err())
		}
	}
	waitCaughtUp(t, pc, rc)
	gap := func(i int) (string, bool) {
		if i%4 == 0 {
			return "", false
		}
		return "gap-" + strconv.Itoa(i), true
	}
	cacheExpectAll(t, c, "while unsubscribed", gap)
	cacheExpectAll(t, c, "while unsubscribed, again", gap)
	st = c.Stats()
	if st.Bypasses != before.Bypasses+2*cacheTestKeys || st.Entries != 0 || st.Hits != before.Hits || st.Misses != before.Misses {
		t.Fatalf("while unsubscribed: %+v; want %d bypasses, no entry, no hit, no miss", st, 2*cacheTestKeys)
	}
	w.block.Store(false)
	release()
	waitCtx, cancel = context.WithTimeout(cx, 10*time.Second)
	defer cancel()
	if err := c.WaitReady(waitCtx); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Subscriptions != 2 {
		t.Fatalf("after resubscribing: %+v; want 2 subscriptions", st)
	}
	// go-redis reconnects a broken PubSub by itself before reporting the
	// error; the cache closes that connection, so one pattern remains.
	waitFor(t, 10*time.Second, "one pattern subscriber on the replica", func() bool {
		return rc.PubSubNumPat(cx).Val() == 1
	})
	cacheExpectAll(t, c, "after resubscribing", gap)
	before = c.Stats()
	cacheExpectAll(t, c, "after resubscribing, again", gap)
	if got := c.Stats().Hits - before.Hits; got != cacheTestKeys {
		t.Fatalf("%d hits after resubscribing; want %d", got, cacheTestKeys)
	}
	// Invalidation works again.
	must(t, pc.Set(cx, cacheKey(1), "after-kill", 0).Err())
	must(t, pc.Del(cx, cacheKey(2)).Err())
	syncMark(pc, "the writes after resubscribing")
	cacheExpectAll(t, c, "after the writes following the kill", func(i int) (string, bool) {
		switch i {
		case 1:
			return "after-kill", true
		case 2:
			return "", false
		}
		return gap(i)
	})

	// 4. A full sync changes data without events: the replica disconnects
	// the cache's subscription and the cache drops everything.
	p2 := StartCairn(t, "--notify-keyspace-events", "KEA")
	p2c := p2.Client()
	for i := 0; i < cacheTestKeys; i += 2 {
		must(t, p2c.Set(cx, cacheKey(i), "p2-"+strconv.Itoa(i), 0).Err())
	}
	p2val := func(i int) (string, bool) {
		if i%2 == 0 {
			return "p2-" + strconv.Itoa(i), true
		}
		return "", false
	}
	before = c.Stats()
	must(t, rc.Do(cx, "REPLICAOF", "127.0.0.1", strconv.Itoa(p2.Port)).Err())
	waitFor(t, 20*time.Second, "the cache to reset after the full sync", func() bool { return c.Stats().Resets > before.Resets })
	waitCaughtUp(t, p2c, rc)
	waitCtx, cancel = context.WithTimeout(cx, 10*time.Second)
	defer cancel()
	if err := c.WaitReady(waitCtx); err != nil {
		t.Fatal(err)
	}
	cacheExpectAll(t, c, "after the full sync", p2val)
	cacheExpectAll(t, c, "after the full sync, again", p2val)
	must(t, p2c.Set(cx, cacheKey(1), "p2-after", 0).Err())
	syncMark(p2c, "a write on the new primary")
	cacheExpectAll(t, c, "after a write on the new primary", func(i int) (string, bool) {
		if i == 1 {
			return "p2-after", true
		}
		return p2val(i)
	})

	// 5. FLUSHDB publishes nothing: Reset is the application's job.
	must(t, p2c.FlushDB(cx).Err())
	syncMark(p2c, "FLUSHDB")
	before = c.Stats()
	cacheExpectAll(t, c, "after FLUSHDB, before Reset (stale, as documented)", func(i int) (string, bool) {
		if i == 1 {
			return "p2-after", true
		}
		return p2val(i)
	})
	c.Reset()
	cacheExpectAll(t, c, "after Reset", func(int) (string, bool) { return "", false })
	if st := c.Stats(); st.Resets != before.Resets+1 {
		t.Fatalf("Reset: %+v", st)
	}

	// 6. Close ends the subscription.
	must(t, c.Close())
	if _, _, err := c.Get(cx, cacheKey(0)); err != cache.ErrClosed {
		t.Fatalf("Get after Close: %v; want ErrClosed", err)
	}
	waitFor(t, 10*time.Second, "no pattern subscriber on the replica after Close", func() bool {
		return rc.PubSubNumPat(cx).Val() == 0
	})
	t.Logf("total %v", time.Since(started).Round(time.Millisecond))
}

// cacheExpectAll reads every key through the cache and fails unless each
// is exactly what want says.
func cacheExpectAll(t *testing.T, c *cache.Cache, what string, want func(int) (string, bool)) {
	t.Helper()
	for i := 0; i < cacheTestKeys; i++ {
		v, found, err := c.Get(context.Background(), cacheKey(i))
		if err != nil {
			t.Fatalf("%s: Get(%s): %v", what, cacheKey(i), err)
		}
		if wv, wf := want(i); v != wv || found != wf {
			t.Fatalf("%s: Get(%s) = (%q, %v); want (%q, %v)", what, cacheKey(i), v, found, wv, wf)
		}
	}
}

// cacheWrite makes write number idx on the primary, a random command
// publishing events (op, or a random one when op < 0), pipelined with
// marker idx, and updates the model from the reply. Every value the writer creates is unique in its key's
// history (it carries idx, or grows a counter that never goes back).
func cacheWrite(t *testing.T, cx context.Context, pc *redis.Client, m *ckModel, rng *rand.Rand, idx, op int) {
	t.Helper()
	k := cacheKey(rng.IntN(cacheTestKeys))
	k2 := cacheKey(rng.IntN(cacheTestKeys - 1))
	if k2 == k {
		k2 = cacheKey(cacheTestKeys - 1)
	}
	cur := m.cur[k]
	val := fmt.Sprintf("v%d", idx)
	ttlMs := 100 + rng.IntN(400)
	var args []any
	var apply func(reply any, err error)
	if op < 0 {
		op = rng.IntN(19)
	}
	isInt := func(s ckState) bool { _, err := strconv.ParseInt(s.val, 10, 64); return !s.present || err == nil }
	isFloat := func(s ckState) bool { _, err := strconv.ParseFloat(s.val, 64); return !s.present || err == nil }
	if (op == 7 && !isInt(cur)) || (op == 8 && !isFloat(cur)) {
		op = 18 // a number to count from
	}
	// SETRANGE on a key that may have expired must tell, by its length,
	// whether it wrote over the old value.
	if op == 6 && cur.present && cur.ttl && len(cur.val) < 4 {
		op = 0
	}
	intReply := func(reply any) int64 {
		n, ok := reply.(int64)
		if !ok {
			t.Fatalf("write %d %v: reply %T %v", idx, args, reply, reply)
		}
		return n
	}
	strReply := func(reply any) string {
		s, ok := reply.(string)
		if !ok {
			t.Fatalf("write %d %v: reply %T %v", idx, args, reply, reply)
		}
		return s
	}
	switch op {
	case 0:
		args = []any{"SET", k, val}
		apply = func(any, error) { m.set(idx, k, ckState{true, val, false}) }
	case 1:
		args = []any{"SET", k, val, "PX", ttlMs}
		apply = func(any, error) { m.set(idx, k, ckState{true, val, true}) }
	case 2:
		args = []any{"SETEX", k, 1, val}
		apply = func(any, error) { m.set(idx, k, ckState{true, val, true}) }
	case 3:
		args = []any{"MSET", k, val, k2, val + "b"}
		apply = func(any, error) {
			m.set(idx, k, ckState{true, val, false})
			m.set(idx, k2, ckState{true, val + "b", false})
		}
	case 4:
		s := fmt.Sprintf("+a%d", idx)
		args = []any{"APPEND", k, s}
		apply = func(reply any, _ error) {
			n := intReply(reply)
			switch {
			case cur.present && n == int64(len(cur.val)+len(s)):
				m.set(idx, k, ckState{true, cur.val + s, cur.ttl})
			case n == int64(len(s)):
				if cur.present {
					m.gone(k, "APPEND")
				}
				m.set(idx, k, ckState{true, s, false})
			default:
				t.Fatalf("write %d %v: length %d; the model has %+v", idx, args, n, cur)
			}
		}
	case 5:
		args = []any{"UNLINK", k}
		apply = func(any, error) { m.set(idx, k, ckState{}) }
	case 6:
		s := fmt.Sprintf("r%d", idx)
		off := rng.IntN(4)
		if cur.present && cur.ttl {
			s, off = s[:1], rng.IntN(len(cur.val)-1) // off+len(s) < len(cur.val)
		} else if cur.present {
			off = rng.IntN(len(cur.val) + 3)
		}
		args = []any{"SETRANGE", k, off, s}
		overwrite := func(old string) string {
			b := []byte(old)
			for len(b) < off {
				b = append(b, 0)
			}
			return string(append(b[:off], append([]byte(s), b[min(off+len(s), len(b)):]...)...))
		}
		apply = func(reply any, _ error) {
			n := intReply(reply)
			if cur.present {
				if nv := overwrite(cur.val); int64(len(nv)) == n {
					m.set(idx, k, ckState{true, nv, cur.ttl})
					return
				}
				m.gone(k, "SETRANGE")
			}
			nv := overwrite("")
			if int64(len(nv)) != n {
				t.Fatalf("write %d %v: length %d; the model has %+v", idx, args, n, cur)
			}
			m.set(idx, k, ckState{true, nv, false})
		}
	case 7:
		args = []any{"INCR", k}
		apply = func(reply any, _ error) {
			n := intReply(reply)
			if cur.present {
				if old, _ := strconv.ParseInt(cur.val, 10, 64); n == old+1 {
					m.set(idx, k, ckState{true, strconv.FormatInt(n, 10), cur.ttl})
					return
				}
				m.gone(k, "INCR")
			}
			if n != 1 {
				t.Fatalf("write %d %v: %d; the model has %+v", idx, args, n, cur)
			}
			m.set(idx, k, ckState{true, "1", false})
		}
	case 8:
		args = []any{"INCRBYFLOAT", k, "0.5"}
		apply = func(reply any, _ error) {
			s := strReply(reply)
			got, _ := strconv.ParseFloat(s, 64)
			if cur.present {
				if old, _ := strconv.ParseFloat(cur.val, 64); got == old+0.5 {
					m.set(idx, k, ckState{true, s, cur.ttl})
					return
				}
				m.gone(k, "INCRBYFLOAT")
			}
			if s != "0.5" {
				t.Fatalf("write %d %v: %q; the model has %+v", idx, args, s, cur)
			}
			m.set(idx, k, ckState{true, s, false})
		}
	case 9:
		args = []any{"DEL", k, k2}
		apply = func(any, error) { m.set(idx, k, ckState{}); m.set(idx, k2, ckState{}) }
	case 10, 11:
		if op == 10 {
			args = []any{"EXPIRE", k, 1}
		} else {
			args = []any{"PEXPIRE", k, ttlMs}
		}
		apply = func(reply any, _ error) {
			if intReply(reply) == 1 {
				m.set(idx, k, ckState{true, cur.val, true})
			} else {
				m.gone(k, "EXPIRE")
			}
		}
	case 12:
		args = []any{"EXPIRE", k, -1} // deletes, publishing del
		apply = func(reply any, _ error) {
			if intReply(reply) == 1 {
				m.set(idx, k, ckState{})
			} else {
				m.gone(k, "EXPIRE -1")
			}
		}
	case 13:
		args = []any{"PERSIST", k}
		apply = func(reply any, _ error) {
			switch {
			case intReply(reply) == 1:
				m.set(idx, k, ckState{true, cur.val, false})
			case cur.ttl:
				m.gone(k, "PERSIST")
			}
		}
	case 14:
		args = []any{"RENAME", k, k2}
		apply = func(_ any, err error) {
			if err != nil {
				if !strings.Contains(err.Error(), "no such key") {
					t.Fatalf("write %d %v: %v", idx, args, err)
				}
				m.gone(k, "RENAME")
				return
			}
			m.set(idx, k2, cur)
			m.set(idx, k, ckState{})
		}
	case 15:
		args = []any{"COPY", k, k2, "REPLACE"}
		apply = func(reply any, _ error) {
			if intReply(reply) == 1 {
				m.set(idx, k2, cur)
			} else {
				m.gone(k, "COPY")
			}
		}
	case 16:
		args = []any{"GETDEL", k}
		apply = func(reply any, _ error) {
			m.same(k, "GETDEL", reply)
			m.set(idx, k, ckState{})
		}
	case 17:
		persist := rng.IntN(2) == 0
		if persist {
			args = []any{"GETEX", k, "PERSIST"}
		} else {
			args = []any{"GETEX", k, "PX", ttlMs}
		}
		apply = func(reply any, _ error) {
			m.same(k, "GETEX", reply)
			if reply != nil {
				m.set(idx, k, ckState{true, cur.val, !persist})
			}
		}
	case 18:
		if rng.IntN(2) == 0 {
			args = []any{"GETSET", k, strconv.Itoa(idx * 1_000_000)}
			apply = func(reply any, _ error) {
				m.same(k, "GETSET", reply)
				m.set(idx, k, ckState{true, strconv.Itoa(idx * 1_000_000), false})
			}
		} else {
			args = []any{"GETSET", k, val}
			apply = func(reply any, _ error) {
				m.same(k, "GETSET", reply)
				m.set(idx, k, ckState{true, val, false})
			}
		}
	}
	m.ops = append(m.ops, fmt.Sprint(args))
	var cmd *redis.Cmd
	var pub *redis.IntCmd
	_, _ = pc.Pipelined(cx, func(p redis.Pipeliner) error {
		cmd = p.Do(cx, args...)
		pub = p.Publish(cx, cacheMarkChan, strconv.Itoa(idx))
		return nil
	})
	must(t, pub.Err())
	reply, err := cmd.Result()
	switch {
	case err == redis.Nil:
		reply, err = nil, nil
	case err != nil && op != 14:
		t.Fatalf("write %d %v: %v", idx, args, err)
	}
	apply(reply, err)
}

// cacheCheckReads checks every Get of the random phase against the
// history: a Get that began after the cache reported marker W must return
// a state its key had at or after the key's last write numbered <= W.
// It returns the number of Gets and of those that had such a write.
func cacheCheckReads(t *testing.T, m *ckModel, reads [][]ckRead) (total, checked int) {
	t.Helper()
	type keyIndex struct {
		entries []ckEntry
		lastPos map[string]int // value -> last position holding it
		nilPos  int            // last position where the key is missing or may expire
	}
	idx := make([]keyIndex, cacheTestKeys)
	for i := range idx {
		ki := &idx[i]
		ki.entries = m.hist[cacheKey(i)]
		ki.lastPos = map[string]int{}
		ki.nilPos = -1
		for j, e := range ki.entries {
			if e.present {
				ki.lastPos[e.val] = j
			}
			if !e.present || e.ttl {
				ki.nilPos = j
			}
		}
	}
	failures := 0
	for _, rs := range reads {
		for _, r := range rs {
			total++
			ki := &idx[r.key]
			pos := sort.Search(len(ki.entries), func(j int) bool { return ki.entries[j].idx > r.mark }) - 1
			if pos >= 0 {
				checked++
			}
			var problem string
			if r.found {
				lp, ok := ki.lastPos[r.val]
				switch {
				case !ok:
					problem = "a value never written to the key"
				case lp < pos:
					problem = fmt.Sprintf("the value write %d (%s) set, replaced by write %d (%s)",
						ki.entries[lp].idx, m.ops[ki.entries[lp].idx], ki.entries[lp+1].idx, m.ops[ki.entries[lp+1].idx])
				}
			} else if pos >= 0 && ki.nilPos < pos {
				problem = "nil, but the key exists without a TTL since then"
			}
			if problem != "" {
				failures++
				if failures <= 10 {
					e := ki.entries[max(pos, 0)]
					t.Errorf("Get(%s) = (%q, %v) after the cache processed the events of write %d: %s; the key's last write by then was %d (%s) leaving %+v",
						cacheKey(r.key), r.val, r.found, r.mark, problem, e.idx, m.ops[e.idx], e.ckState)
				}
			}
		}
	}
	if failures > 0 {
		t.Fatalf("%d of %d Gets returned a replaced state", failures, total)
	}
	return total, checked
}
