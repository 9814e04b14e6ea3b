package tests

// Keyspace-notification parity for the string and generic key commands.
//
// TestDifferentialEvents sends the same seeded random stream of commands to
// Cairn and to redis-server, both with notify-keyspace-events KEAnm, and
// compares what a PSUBSCRIBE * client receives on each: key by key, the
// sequences of (channel, payload) pairs must be identical.
// TestReplicaEventsMatchPrimary runs such a stream on a Cairn primary and
// compares its subscriber's events with a replica subscriber's.
//
// Only per-key sequences are compared: events of different keys are not
// ordered with respect to each other. Before each step of the stream a
// marker is published on the connection that sends the commands; markers
// are left out of the comparison and only tell a failure message after
// which step an event arrived.
//
// Besides the random stream (TTLs of 200 s and more, or times already
// past), both tests expire keys for real: keys exp:<i>, set with TTLs of
// 1 to 1.5 s and never touched again, must publish expired through active
// expiry; keys lazy:<i> are accessed once after their TTL has passed, by
// which time they are expired actively or, at the access, lazily: both
// publish the same per-key sequence.
//
// Re-run a failure with the seed and length from its message:
//
//	CAIRN_EVENTS_SEED=N CAIRN_EVENTS_N=M go test -count=1 -run '^TestDifferentialEvents$' -v ./tests/
//
// CAIRN_EVENTS_SELFCHECK=1 runs TestDifferentialEvents against two
// redis-servers instead: it must pass, which shows that the stream itself
// is deterministic.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/rdb"
	"github.com/redis/go-redis/v9"
)

const (
	evDefaultSeed = 20260902
	evDefaultN    = 3000
	// evFlags enables every class, new-key (n) and key-miss (m) events.
	evFlags = "KEAnm"
	// evMarker prefixes the marker channels; the step number or "end"
	// follows.
	evMarker = "marker:ev:"
	// Times in the stream are slots: evMinFutureSec + slot*evSlotSec
	// seconds after the stream starts. Shared (even) slots serve every
	// command; a command with GT or LT gets an odd slot of its own, so the
	// expire times it compares always differ by evSlotSec or more, far
	// beyond the milliseconds between the servers' clocks.
	evSlotSec      = 100
	evMinFutureSec = 200
	evSharedSlots  = 50
	evFreshSlots   = 5000
	// evMultiChance is the share of steps that are a MULTI transaction.
	evMultiChance = 0.05
	// evLazyTTLMs is the TTL of the lazy:<i> keys; they are accessed
	// evLazyWait after the last of them was set.
	evLazyTTLMs = 1200
	evLazyWait  = 1500 * time.Millisecond
	// Hang guards for the expired events of the exp:<i> keys: the
	// reference node gets evExpiredGuard, the node under test at most
	// evExpiredGrace more once the reference has them all.
	evExpiredGuard = 30 * time.Second
	evExpiredGrace = 10 * time.Second
	// Failure messages detail the first evShowKeys differing keys, each
	// with the last evTimelineLen steps up to the difference.
	evShowKeys    = 3
	evTimelineLen = 14
)

// evKeys is the key space of the random stream: small, so keys are
// created, overwritten, renamed and deleted over and over.
var evKeys = []string{"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11"}

func evSettings(t *testing.T) (seed int64, n int) {
	return envInt(t, "CAIRN_EVENTS_SEED", evDefaultSeed), int(envInt(t, "CAIRN_EVENTS_N", evDefaultN))
}

// TestDifferentialEvents compares the keyspace events of Cairn and Redis
// 7.0, key by key, over a seeded random stream of string and generic key
// commands, transactions, and keys expiring actively and lazily.
func TestDifferentialEvents(t *testing.T) {
	seed, n := evSettings(t)
	t.Run("direct", func(t *testing.T) { evDifferential(t, seed, n, false) })
	// Every command through a Lua script: the same events, in the same
	// order, from the script's one batch.
	t.Run("script", func(t *testing.T) { evDifferential(t, seed+1, n/4, true) })
}

func evDifferential(t *testing.T, seed int64, n int, script bool) {
	redisNode := StartRedis(t)
	testName := "cairn"
	var testNode *Node
	if os.Getenv("CAIRN_EVENTS_SELFCHECK") == "1" {
		testName, testNode = "redis2", StartRedis(t)
	} else {
		testNode = StartCairn(t)
	}
	targets := []evTarget{{"redis", redisNode.Raw()}, {testName, testNode.Raw()}}
	for _, tg := range targets {
		if got := tg.conn.Do("CONFIG", "SET", "notify-keyspace-events", evFlags); got != "+OK\r\n" {
			t.Fatalf("CONFIG SET notify-keyspace-events %s on %s: %q", evFlags, tg.name, got)
		}
	}
	r := &evRun{
		t: t, seed: seed, n: n, testName: "TestDifferentialEvents",
		targets:   targets,
		ref:       evSubscribe(t, "redis", redisNode),
		sub:       evSubscribe(t, testName, testNode),
		stepOrder: true,
		script:    script,
	}
	r.run()
	// Each expired key counts once, whether reclaimed actively or lazily;
	// a key set or EXPIREd with a time already past is deleted, not expired.
	// The counters of what the stream did: every command sent to both
	// (the subscribers' own commands apart), its errors, the keys it read.
	checkSameCounters(t, targets[1].conn, targets[0].conn, diffStatsFields,
		"psubscribe", "ping", "client", "hello")
}

// TestReplicaEventsMatchPrimary compares, key by key, the keyspace events
// published on a Cairn primary with those its replica publishes for the
// replicated writes, expiry included. keymiss events are left out: reads
// happen on the primary only.
func TestReplicaEventsMatchPrimary(t *testing.T) {
	seed, n := evSettings(t)
	flags := []string{"--notify-keyspace-events", evFlags}
	// Most values out of line: the replica applies their value records.
	primary := StartCairnEnv(t, leDebug, append(flags, diffSmallInline...)...)
	replica := StartCairnEnv(t, leDebug, append([]string{"--slaveof", "127.0.0.1 " + strconv.Itoa(primary.Port)}, flags...)...)
	pc, rc := primary.Client(), replica.Client()
	// Subscribe once the initial full sync is over: it disconnects the
	// replica's keyspace subscribers.
	waitCaughtUp(t, pc, rc)
	replicaEvRun(t, seed, n, primary, replica).run()
	// The replica serves what the primary holds, key by key (its row
	// cache included: a key is read even when SCAN would not list it).
	waitCaughtUp(t, pc, rc)
	pr, rr := primary.Raw(), replica.Raw()
	for _, k := range evKeys {
		for _, cmd := range [][]string{{"TYPE", k}, {"GET", k}} {
			// The replica first: a primary's read reclaims an expired key.
			if got, want := rr.Do(cmd...), pr.Do(cmd...); got != want {
				t.Errorf("after the stream, %v: replica %q, primary %q", cmd, got, want)
			}
		}
	}
	if got, want := rr.Do("DBSIZE"), pr.Do("DBSIZE"); got != want {
		t.Errorf("after the stream, DBSIZE: replica %q, primary %q", got, want)
	}
	// Neither holds a chunk record that no value owns.
	for _, c := range []*RawConn{rr, pr} {
		if got := c.Do("DEBUG", "CHECK-VALUES"); !strings.HasPrefix(got, ":") {
			t.Errorf("after the stream, DEBUG CHECK-VALUES: %q", got)
		}
	}
}

// TestReplicaEventsAcrossBrokenLinks is TestReplicaEventsMatchPrimary with
// the replica connected through a proxy that, at seeded random steps, cuts
// the link or flips a byte of the stream (which the replica detects and
// reconnects from). No reconnection may need a full sync, and the
// replica must publish each replicated write's events exactly once: none
// lost with the cut batch, none repeated by the resent one.
func TestReplicaEventsAcrossBrokenLinks(t *testing.T) {
	seed, n := evSettings(t)
	flags := []string{"--notify-keyspace-events", evFlags}
	primary := StartCairn(t, flags...)
	proxy, replica := startProxiedReplica(t, primary, flags...)
	pc, rc := primary.Client(), replica.Client()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replica's log:\n%s", replica.Log.String())
		}
	})
	waitCaughtUp(t, pc, rc)
	full0, partial0 := syncStats(t, pc)
	faults := rand.New(rand.NewPCG(uint64(seed), 0xfa17))
	cuts, flips := 0, 0
	r := replicaEvRun(t, seed, n, primary, replica)
	r.afterStep = func() {
		switch x := faults.IntN(400); {
		case x == 0:
			proxy.Cut()
			cuts++
		case x == 1 && !proxy.Armed():
			// Within the next few batches' bytes.
			proxy.FlipAfter(int64(faults.IntN(2000)))
			flips++
		}
	}
	r.run()
	full, partial := syncStats(t, pc)
	t.Logf("%d cuts and %d flips armed (%d flipped): %d connections, %d partial resyncs",
		cuts, flips, proxy.Flips(), proxy.Accepted(), partial-partial0)
	if full != full0 {
		t.Errorf("sync_full %d -> %d: a broken link forced a full sync", full0, full)
	}
	// A cut during a handshake ends a connection before its PSYNC.
	if reconnections := int64(proxy.Accepted() - 1); partial == partial0 || partial-partial0 > reconnections {
		t.Errorf("%d partial resyncs for %d reconnections", partial-partial0, reconnections)
	}
}

// evSamePerKey checks that sub received, key by key, the same events in
// the same order as ref, up to marker (published to both), and returns
// how many events the two received.
func evSamePerKey(t *testing.T, marker string, ref, sub *evCollector) int {
	t.Helper()
	perKey := func(c *evCollector) map[string][]string {
		out := map[string][]string{}
		for _, e := range c.until(t, marker) {
			out[evKeyOf(e)] = append(out[evKeyOf(e)], e.channel+" "+e.payload)
		}
		return out
	}
	want, got := perKey(ref), perKey(sub)
	total := 0
	for key, w := range want {
		total += len(w) + len(got[key])
		if g := got[key]; !slices.Equal(g, w) {
			i := 0
			for i < min(len(g), len(w)) && g[i] == w[i] {
				i++
			}
			t.Errorf("key %q: %s's events differ from %s's at #%d:\n %s %q\n %s %q", key, sub.name, ref.name, i,
				sub.name, g[i:min(len(g), i+6)], ref.name, w[i:min(len(w), i+6)])
		}
	}
	if len(want) != len(got) {
		t.Errorf("events for %d keys on %s, %d on %s", len(want), ref.name, len(got), sub.name)
	}
	return total
}

// replicaEvRun returns the run that sends the stream to primary and
// compares, key by key, the events replica publishes with the primary's
// (keymiss apart: reads happen on the primary only). Call it once the
// replica's initial full sync is over: that disconnects its keyspace
// subscribers.
func replicaEvRun(t *testing.T, seed int64, n int, primary, replica *Node) *evRun {
	pc, rc := primary.Client(), replica.Client()
	return &evRun{
		t: t, seed: seed, n: n, testName: t.Name(),
		targets:     []evTarget{{"primary", primary.Raw()}},
		ref:         evSubscribe(t, "primary", primary),
		sub:         evSubscribe(t, "replica", replica),
		dropKeymiss: true,
		beforeEnd:   func() { waitCaughtUp(t, pc, rc) },
	}
}

// ---- subscribers ----

// evEvent is one message a subscriber received.
type evEvent struct {
	channel, payload string
	// step is the number of the last step whose marker arrived before
	// the event, -1 if none had.
	step int
}

// evCollector records everything a PSUBSCRIBE * connection receives.
type evCollector struct {
	name    string
	ps      *redis.PubSub
	done    chan struct{}
	mu      sync.Mutex
	events  []evEvent      // without markers
	markers map[string]int // marker channel -> len(events) at its arrival
	step    int
	err     error         // why the subscription ended
	changed chan struct{} // closed and replaced on every arrival
}

// evSubscribe subscribes to every channel of n and collects the messages
// until the test ends.
func evSubscribe(t *testing.T, name string, n *Node) *evCollector {
	t.Helper()
	ps := n.Client().PSubscribe(ctx(t), "*")
	if _, err := ps.Receive(ctx(t)); err != nil { // the confirmation
		t.Fatalf("PSUBSCRIBE * on %s: %v", name, err)
	}
	c := &evCollector{name: name, ps: ps, done: make(chan struct{}), markers: map[string]int{}, step: -1, changed: make(chan struct{})}
	go c.receive()
	t.Cleanup(func() {
		ps.Close()
		<-c.done
	})
	return c
}

func (c *evCollector) receive() {
	defer close(c.done)
	for {
		m, err := c.ps.ReceiveMessage(context.Background())
		c.mu.Lock()
		switch {
		case err != nil:
			c.err = err
		case strings.HasPrefix(m.Channel, evMarker):
			c.markers[m.Channel] = len(c.events)
			if n, err := strconv.Atoi(strings.TrimPrefix(m.Channel, evMarker)); err == nil {
				c.step = n
			}
		default:
			c.events = append(c.events, evEvent{channel: m.Channel, payload: m.Payload, step: c.step})
		}
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// wait reports whether cond, evaluated on every arrival, held within d.
func (c *evCollector) wait(d time.Duration, cond func(events []evEvent, markers map[string]int) bool) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		c.mu.Lock()
		ok, ch, err := cond(c.events, c.markers), c.changed, c.err
		c.mu.Unlock()
		if ok {
			return true
		}
		if err != nil {
			return false
		}
		select {
		case <-ch:
		case <-timer.C:
			return false
		}
	}
}

// until returns the events received before marker.
func (c *evCollector) until(t *testing.T, marker string) []evEvent {
	t.Helper()
	if !c.wait(20*time.Second, func(_ []evEvent, m map[string]int) bool { _, ok := m[marker]; return ok }) {
		c.mu.Lock()
		defer c.mu.Unlock()
		t.Fatalf("the subscriber on %s never received %s (subscription error: %v; %d events received)", c.name, marker, c.err, len(c.events))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.events[:c.markers[marker]])
}

// ---- running ----

// evTarget is a connection the stream's commands are sent to.
type evTarget struct {
	name string
	conn *RawConn
}

// evStep is one step of a run: a command, several commands in a row, or a
// MULTI transaction, sent to every target.
type evStep struct {
	phase   string
	idx     int // within its phase
	cmds    [][]string
	keys    []string   // the keys the commands name
	replies [][]string // per target, per command
}

type evRun struct {
	t           *testing.T
	seed        int64
	n           int
	testName    string
	targets     []evTarget
	ref, sub    *evCollector // the reference and the node under test
	dropKeymiss bool
	// stepOrder also compares the order of each step's events across
	// keys ("expired" apart: the expire cycles publish it between any
	// two steps); only where both sides run the same commands.
	stepOrder bool
	// script sends each command through EVAL "return
	// redis.call(unpack(ARGV))" 0 command...
	script    bool
	beforeEnd func() // runs before the end marker is published
	afterStep func() // runs after every step
	gen       *evGen
	steps     []evStep
	keyLog    map[string][]int // key -> steps naming it
	commands  int              // sent to each target
	failed    bool
}

// run sends the whole stream, collects both sides' events and compares
// them.
func (r *evRun) run() {
	r.t.Helper()
	r.gen = newEvGen(r.seed)
	r.keyLog = map[string][]int{}
	expKeys := r.startExpiring()
	for i := 0; i < r.n; i++ {
		cmds, keys := r.gen.next()
		r.do("random", i, keys, cmds...)
	}
	// A key the stream set with a time already past is expired by now;
	// whether actively or by this access, expired is published now.
	for i, k := range evKeys {
		r.do("touch", i, []string{k}, []string{"EXISTS", k})
	}
	r.lazyExpiry()
	r.waitExpired(expKeys)
	if r.beforeEnd != nil {
		r.beforeEnd()
	}
	end := evMarker + "end"
	for _, tg := range r.targets {
		tg.conn.Do("PUBLISH", end, "end")
	}
	r.compare(r.ref.until(r.t, end), r.sub.until(r.t, end))
}

// do runs one step on every target, after publishing its marker there.
func (r *evRun) do(phase string, idx int, keys []string, cmds ...[]string) {
	r.t.Helper()
	step := len(r.steps)
	s := evStep{phase: phase, idx: idx, cmds: cmds, keys: keys}
	finished := false
	defer func() {
		if !finished && !r.failed {
			r.t.Logf("stopped at step %d (%s #%d, seed %d): %s", step, phase, idx, r.seed, evShowCmds(cmds))
		}
	}()
	for _, tg := range r.targets {
		tg.conn.Do("PUBLISH", evMarker+strconv.Itoa(step), phase)
	}
	for _, tg := range r.targets {
		rep := make([]string, len(cmds))
		for i, c := range cmds {
			if r.script {
				c = append([]string{"EVAL", "return redis.call(unpack(ARGV))", "0"}, c...)
			}
			rep[i] = tg.conn.Do(c...)
		}
		s.replies = append(s.replies, rep)
	}
	r.steps = append(r.steps, s)
	seen := map[string]bool{}
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			r.keyLog[k] = append(r.keyLog[k], step)
		}
	}
	r.commands += len(cmds)
	if r.afterStep != nil {
		r.afterStep()
	}
	finished = true
}

// evExpiring sets the keys exp:<i> with TTLs of 1 to 1.5 s in different
// ways. Nothing touches them afterwards.
var evExpiring = []func(k string) [][]string{
	func(k string) [][]string { return [][]string{{"SET", k, "v", "PX", "1500"}} },
	func(k string) [][]string { return [][]string{{"SET", k, "v", "EX", "1"}} },
	func(k string) [][]string { return [][]string{{"SETEX", k, "1", "v"}} },
	func(k string) [][]string { return [][]string{{"PSETEX", k, "1500", "v"}} },
	func(k string) [][]string { return [][]string{{"SET", k, "v", "PXAT", evInMs(1500)}} },
	func(k string) [][]string { return [][]string{{"SET", k, "v"}, {"PEXPIRE", k, "1500"}} },
	func(k string) [][]string { return [][]string{{"SET", k, "v"}, {"EXPIRE", k, "1"}} },
	func(k string) [][]string { return [][]string{{"SET", k, "v"}, {"GETEX", k, "PX", "1500"}} },
	func(k string) [][]string {
		return [][]string{{"SET", k, "v"}, {"PEXPIREAT", k, evInMs(1500)}, {"SET", k, "w", "KEEPTTL"}}
	},
	func(k string) [][]string {
		return [][]string{{"SET", k, "1", "PX", "1500"}, {"APPEND", k, "2"}, {"INCRBYFLOAT", k, "0.5"}, {"SETRANGE", k, "0", "3"}}
	},
	func(k string) [][]string {
		return [][]string{{"HSET", k, "a", "1", "b", "2"}, {"PEXPIRE", k, "1500"}, {"HINCRBY", k, "a", "1"}, {"HDEL", k, "b"}}
	},
}

// evInMs returns the Unix time in milliseconds d milliseconds from now.
func evInMs(d int64) string { return strconv.FormatInt(time.Now().UnixMilli()+d, 10) }

func (r *evRun) startExpiring() []string {
	r.t.Helper()
	var keys []string
	for i, f := range evExpiring {
		k := fmt.Sprintf("exp:%d", i)
		keys = append(keys, k)
		r.do("expiring", i, []string{k}, f(k)...)
	}
	return keys
}

// evLazyAccesses are the commands run on lazy:<i> once its TTL has passed:
// "$" stands for the key, "@" for a helper key lazy:<i>:src set without a
// TTL beforehand.
var evLazyAccesses = [][][]string{
	{{"GET", "$"}},
	{{"EXISTS", "$", "$"}},
	{{"TYPE", "$"}},
	{{"TTL", "$"}},
	{{"PTTL", "$"}},
	{{"STRLEN", "$"}},
	{{"MGET", "$", "$"}},
	{{"GETRANGE", "$", "0", "-1"}},
	{{"SET", "$", "w"}},
	{{"SET", "$", "w", "NX", "GET"}},
	{{"SET", "$", "w", "XX"}},
	{{"SETNX", "$", "w"}},
	{{"MSETNX", "$", "w"}},
	{{"GETSET", "$", "w"}},
	{{"APPEND", "$", "x"}},
	{{"INCR", "$"}},
	{{"DECRBY", "$", "3"}},
	{{"INCRBYFLOAT", "$", "1.5"}},
	{{"SETRANGE", "$", "2", "x"}},
	{{"EXPIRE", "$", "100"}},
	{{"PERSIST", "$"}},
	{{"GETDEL", "$"}},
	{{"GETEX", "$", "PERSIST"}},
	{{"DEL", "$", "$"}},
	{{"UNLINK", "$"}},
	{{"RENAME", "$", "@"}},
	{{"COPY", "$", "@"}},
	{{"RENAME", "@", "$"}},
	{{"RENAMENX", "@", "$"}},
	{{"COPY", "@", "$"}},
	{{"MULTI"}, {"GET", "$"}, {"SET", "$", "x"}, {"EXEC"}},
	{{"SETBIT", "$", "3", "1"}},
	{{"GETBIT", "$", "3"}},
	{{"BITCOUNT", "$"}},
	{{"BITPOS", "$", "1"}},
	{{"BITOP", "OR", "$", "@"}},
	{{"BITOP", "AND", "@", "$"}},
	{{"BITFIELD", "$", "INCRBY", "u8", "0", "1"}},
	{{"BITFIELD", "$", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "9"}},
	{{"BITFIELD_RO", "$", "GET", "u8", "0"}},
	{{"DUMP", "$"}},
	{{"RESTORE", "$", "0", string(rdb.EncodeString([]byte("restored")))}},
	{{"HSET", "$", "f", "v"}},
	{{"HGET", "$", "f"}},
	{{"HLEN", "$"}},
	{{"HGETALL", "$"}},
	{{"HDEL", "$", "a"}},
	{{"HINCRBY", "$", "a", "1"}},
	{{"HINCRBYFLOAT", "$", "a", "1.5"}},
	{{"HSCAN", "$", "0"}},
	{{"SADD", "$", "1"}},
	{{"SREM", "$", "a"}},
	{{"SPOP", "$", "5"}},
	{{"SMOVE", "$", "@", "a"}},
	{{"SMEMBERS", "$"}},
	{{"SINTERSTORE", "@", "$"}},
	{{"SUNIONSTORE", "$", "@"}},
	{{"LPUSH", "$", "a"}},
	{{"RPUSHX", "$", "a"}},
	{{"LPOP", "$"}},
	{{"LRANGE", "$", "0", "-1"}},
	{{"LMOVE", "$", "@", "LEFT", "LEFT"}},
	{{"LTRIM", "$", "0", "0"}},
	{{"LLEN", "$"}},
	{{"ZADD", "$", "1", "a"}},
	{{"ZSCORE", "$", "a"}},
	{{"ZRANGE", "$", "0", "-1"}},
	{{"ZPOPMIN", "$"}},
	{{"ZUNIONSTORE", "@", "1", "$"}},
	{{"ZRANGESTORE", "$", "@", "0", "-1"}},
}

// lazyExpiry sets the keys lazy:<i>, waits until their TTL has surely
// passed and runs one of evLazyAccesses on each.
func (r *evRun) lazyExpiry() {
	r.t.Helper()
	subst := func(i int, cmds [][]string) (out [][]string, keys []string, helper string) {
		k := fmt.Sprintf("lazy:%d", i)
		for _, c := range cmds {
			c = slices.Clone(c)
			for j := 1; j < len(c); j++ {
				switch c[j] {
				case "$":
					c[j] = k
					keys = append(keys, k)
				case "@":
					helper = k + ":src"
					c[j] = helper
					keys = append(keys, helper)
				}
			}
			out = append(out, c)
		}
		return out, keys, helper
	}
	for i, acc := range evLazyAccesses {
		k := fmt.Sprintf("lazy:%d", i)
		if _, _, helper := subst(i, acc); helper != "" {
			r.do("lazy-setup", i, []string{helper}, []string{"SET", helper, "s"})
		}
		set := []string{"SET", k, "v", "PX", strconv.Itoa(evLazyTTLMs)}
		if i%3 == 1 {
			set = []string{"PSETEX", k, strconv.Itoa(evLazyTTLMs), "v"}
		}
		switch acc[0][0][0] { // a hash for the hash commands, a set for the set ones, a list for the list ones
		case 'L':
			r.do("lazy-setup", i, []string{k}, []string{"RPUSH", k, "a", "b"}, []string{"PEXPIRE", k, strconv.Itoa(evLazyTTLMs)})
			continue
		case 'H':
			r.do("lazy-setup", i, []string{k}, []string{"HSET", k, "a", "1", "f", "v"}, []string{"PEXPIRE", k, strconv.Itoa(evLazyTTLMs)})
			continue
		case 'S':
			if acc[0][0] != "SET" && acc[0][0] != "SETNX" && acc[0][0] != "SETRANGE" && acc[0][0] != "SETBIT" {
				r.do("lazy-setup", i, []string{k}, []string{"SADD", k, "a", "b"}, []string{"PEXPIRE", k, strconv.Itoa(evLazyTTLMs)})
				continue
			}
		}
		r.do("lazy-setup", i, []string{k}, set)
	}
	// The wait is the condition itself: every TTL started before now.
	time.Sleep(evLazyWait)
	for i, acc := range evLazyAccesses {
		cmds, keys, _ := subst(i, acc)
		r.do("lazy", i, keys, cmds...)
	}
}

// waitExpired waits until both subscribers received expired for every one
// of keys. The reference must publish them; if the node under test does
// not, the comparison reports it.
func (r *evRun) waitExpired(keys []string) {
	r.t.Helper()
	all := func(events []evEvent, _ map[string]int) bool {
		got := map[string]bool{}
		for _, e := range events {
			if e.channel == "__keyevent@0__:expired" {
				got[e.payload] = true
			}
		}
		for _, k := range keys {
			if !got[k] {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(evExpiredGuard)
	if !r.ref.wait(evExpiredGuard, all) {
		r.ref.mu.Lock()
		evs := slices.Clone(r.ref.events)
		r.ref.mu.Unlock()
		var b strings.Builder
		for _, k := range keys {
			got := strings.Join(evRender(k, evOfKey(evs, k)), " ")
			if got == "" {
				got = "(none)"
			}
			fmt.Fprintf(&b, "\n  %s: %s", k, got)
		}
		// The comparison that follows still shows what else differs.
		r.t.Errorf("%s did not publish expired for every key set with a TTL of 1-1.5 s within %v; its events for them (K:x = __keyspace@0__:<key> x, E:x = __keyevent@0__:x <key>):%s",
			r.ref.name, evExpiredGuard, b.String())
		return
	}
	if !r.sub.wait(min(time.Until(deadline), evExpiredGrace), all) {
		r.t.Logf("%s did not publish expired for all of %v in time; comparing what it published", r.sub.name, keys)
	}
}

// ---- comparing ----

const (
	evKeyspace = "__keyspace@0__:"
	evKeyevent = "__keyevent@0__:"
)

// evKeyOf returns the key an event is about; an event on another channel
// is grouped under the channel's name.
func evKeyOf(e evEvent) string {
	if k, ok := strings.CutPrefix(e.channel, evKeyspace); ok {
		return k
	}
	if strings.HasPrefix(e.channel, evKeyevent) {
		return e.payload
	}
	return "(channel " + e.channel + ")"
}

func evIsKeymiss(e evEvent) bool {
	return e.channel == evKeyevent+"keymiss" || (strings.HasPrefix(e.channel, evKeyspace) && e.payload == "keymiss")
}

func evOfKey(events []evEvent, key string) []evEvent {
	var out []evEvent
	for _, e := range events {
		if evKeyOf(e) == key {
			out = append(out, e)
		}
	}
	return out
}

func (r *evRun) byKey(events []evEvent) map[string][]evEvent {
	m := map[string][]evEvent{}
	for _, e := range events {
		if r.dropKeymiss && evIsKeymiss(e) {
			continue
		}
		k := evKeyOf(e)
		m[k] = append(m[k], e)
	}
	return m
}

// evFirstDiff returns the first index where a and b differ, -1 if they
// are equal.
func evFirstDiff(a, b []evEvent) int {
	for i := 0; i < max(len(a), len(b)); i++ {
		if i >= len(a) || i >= len(b) || a[i].channel != b[i].channel || a[i].payload != b[i].payload {
			return i
		}
	}
	return -1
}

// evDiffStep returns the step after which the first difference arrived.
func evDiffStep(a, b []evEvent, i int) int {
	s := int(^uint(0) >> 1)
	if i < len(a) {
		s = a[i].step
	}
	if i < len(b) {
		s = min(s, b[i].step)
	}
	return s
}

type evMismatch struct {
	key      string
	ref, sub []evEvent
	at, step int
}

func (r *evRun) compare(refAll, subAll []evEvent) {
	r.t.Helper()
	ref, sub := r.byKey(refAll), r.byKey(subAll)
	keys := map[string]bool{}
	nref, nsub := 0, 0
	for k, evs := range ref {
		keys[k] = true
		nref += len(evs)
	}
	for k, evs := range sub {
		keys[k] = true
		nsub += len(evs)
	}
	var bad []evMismatch
	for k := range keys {
		if i := evFirstDiff(ref[k], sub[k]); i >= 0 {
			bad = append(bad, evMismatch{key: k, ref: ref[k], sub: sub[k], at: i, step: evDiffStep(ref[k], sub[k], i)})
		}
	}
	slices.SortFunc(bad, func(a, b evMismatch) int {
		if a.step != b.step {
			return a.step - b.step
		}
		return strings.Compare(a.key, b.key)
	})
	r.t.Logf("seed %d: %d steps (%d random), %d commands sent to %s; compared %d events from %s and %d from %s over %d keys",
		r.seed, len(r.steps), r.n, r.commands, evTargetNames(r.targets), nref, r.ref.name, nsub, r.sub.name, len(keys))
	if nref == 0 {
		r.t.Fatalf("%s published no events at all: nothing was compared", r.ref.name)
	}
	r.t.Logf("%s's keyevent notifications by event: %s", r.ref.name, evCounts(ref))
	if r.stepOrder {
		r.compareStepOrder(refAll, subAll)
	}
	if len(bad) == 0 {
		return
	}
	r.failed = true
	// Detail the earliest differences, and the earliest within the random
	// stream, whose prefix CAIRN_EVENTS_N can cut the stream down to.
	shown := bad[:min(evShowKeys, len(bad))]
	n := r.n
	if i := slices.IndexFunc(bad, func(m evMismatch) bool { return r.phaseOf(m.step) == "random" }); i >= 0 {
		n = r.steps[bad[i].step].idx + 1
		if i >= len(shown) {
			shown = append(slices.Clone(shown), bad[i])
		}
	}
	for _, m := range shown {
		r.t.Error(r.report(m))
	}
	var names []string
	for _, m := range bad {
		names = append(names, strconv.Quote(m.key))
	}
	r.t.Errorf("events differ between %s and %s for %d of %d keys (%d detailed above): %s\nreproduce: CAIRN_EVENTS_SEED=%d CAIRN_EVENTS_N=%d go test -count=1 -run '^%s$' -v ./tests/",
		r.ref.name, r.sub.name, len(bad), len(keys), len(shown), strings.Join(names, ", "), r.seed, n, r.testName)
}

// compareStepOrder checks that each step's events, "expired" apart, came
// in the same order on both sides, across keys: a command that touches
// two keys (RENAME's "new", "rename_from", "rename_to") publishes in
// Redis's order. It reports the first step that differs.
func (r *evRun) compareStepOrder(refAll, subAll []evEvent) {
	r.t.Helper()
	byStep := func(events []evEvent) map[int][]string {
		m := map[int][]string{}
		for _, e := range events {
			if e.channel == evKeyevent+"expired" || strings.HasPrefix(e.channel, evKeyspace) && e.payload == "expired" {
				continue
			}
			m[e.step] = append(m[e.step], e.channel+" "+e.payload)
		}
		return m
	}
	ref, sub := byStep(refAll), byStep(subAll)
	for s := -1; s <= len(r.steps); s++ {
		if !slices.Equal(ref[s], sub[s]) {
			cmds := ""
			if s >= 0 && s < len(r.steps) {
				cmds = evShowCmds(r.steps[s].cmds)
			}
			r.t.Errorf("the events of %s (%s) came in another order or differ:\n %s %q\n %s %q",
				r.stepName(s), cmds, r.ref.name, ref[s], r.sub.name, sub[s])
			return
		}
	}
}

// phaseOf returns the phase of step s, "" if there is no such step.
func (r *evRun) phaseOf(s int) string {
	if s < 0 || s >= len(r.steps) {
		return ""
	}
	return r.steps[s].phase
}

// report describes one key's difference: both sequences around it and the
// steps that named the key or got events for it, with each side's events.
func (r *evRun) report(m evMismatch) string {
	var b strings.Builder
	fmt.Fprintf(&b, "events for key %q differ: %s published %d, %s %d; the first difference is at #%d, %s\n",
		m.key, r.ref.name, len(m.ref), r.sub.name, len(m.sub), m.at, r.stepName(m.step))
	fmt.Fprintf(&b, "  (K:x is __keyspace@0__:%s x, E:x is __keyevent@0__:x %s", m.key, m.key)
	if r.dropKeymiss {
		b.WriteString("; keymiss events left out")
	}
	b.WriteString(")\n")
	lo := max(0, m.at-8)
	for _, side := range []struct {
		name string
		evs  []evEvent
	}{{r.ref.name, m.ref}, {r.sub.name, m.sub}} {
		var parts []string
		if lo > 0 {
			parts = append(parts, "...")
		}
		rendered := evRender(m.key, side.evs)
		for i := lo; i < min(len(side.evs), m.at+8); i++ {
			mark := ""
			if i == m.at {
				mark = ">>"
			}
			parts = append(parts, fmt.Sprintf("%s#%d %s", mark, i, rendered[i]))
		}
		if m.at >= len(side.evs) {
			parts = append(parts, fmt.Sprintf(">>#%d (nothing)", m.at))
		} else if m.at+8 < len(side.evs) {
			parts = append(parts, "...")
		}
		fmt.Fprintf(&b, "  %-8s %s\n", side.name+":", strings.Join(parts, ", "))
	}

	// The timeline: steps naming the key, and steps after which an
	// event for it arrived (active expiry), up to the difference and a
	// couple after.
	byStep := func(evs []evEvent) map[int][]string {
		out := map[int][]string{}
		rendered := evRender(m.key, evs)
		for i, e := range evs {
			out[e.step] = append(out[e.step], rendered[i])
		}
		return out
	}
	refBy, subBy := byStep(m.ref), byStep(m.sub)
	set := map[int]bool{}
	for _, s := range r.keyLog[m.key] {
		set[s] = true
	}
	for s := range refBy {
		set[s] = true
	}
	for s := range subBy {
		set[s] = true
	}
	var steps []int
	for s := range set {
		steps = append(steps, s)
	}
	slices.Sort(steps)
	cut := len(steps)
	for i, s := range steps {
		if s > m.step {
			cut = i
			break
		}
	}
	from, to := max(0, cut-evTimelineLen), min(len(steps), cut+2)
	fmt.Fprintf(&b, "  steps naming %q or followed by events for it (%d of %d shown):\n", m.key, to-from, len(steps))
	for _, s := range steps[from:to] {
		mark := "   "
		if s == m.step {
			mark = ">> "
		}
		fmt.Fprintf(&b, "  %s%s", mark, r.stepName(s))
		if s >= 0 && s < len(r.steps) {
			st := r.steps[s]
			if !slices.Contains(st.keys, m.key) {
				b.WriteString(" (does not name the key)")
			}
			b.WriteString("\n")
			for j, c := range st.cmds {
				var reps []string
				for ti, tg := range r.targets {
					reps = append(reps, tg.name+" "+evShowReply(st.replies[ti][j]))
				}
				fmt.Fprintf(&b, "        %s  ->  %s\n", diffShow(c), strings.Join(reps, " | "))
			}
		} else {
			b.WriteString("\n")
		}
		for _, side := range []struct {
			name string
			evs  []string
		}{{r.ref.name, refBy[s]}, {r.sub.name, subBy[s]}} {
			got := strings.Join(side.evs, " ")
			if got == "" {
				got = "(none)"
			}
			fmt.Fprintf(&b, "        %-8s %s\n", side.name+":", got)
		}
	}
	return b.String()
}

func (r *evRun) stepName(s int) string {
	switch {
	case s < 0:
		return "before the first step"
	case s >= len(r.steps):
		return "after the last step"
	}
	return fmt.Sprintf("step %d (%s #%d)", s, r.steps[s].phase, r.steps[s].idx)
}

// evCounts counts the keyevent notifications by event name.
func evCounts(byKey map[string][]evEvent) string {
	counts := map[string]int{}
	for _, evs := range byKey {
		for _, e := range evs {
			if ev, ok := strings.CutPrefix(e.channel, evKeyevent); ok {
				counts[ev]++
			}
		}
	}
	var names []string
	for ev := range counts {
		names = append(names, ev)
	}
	slices.Sort(names)
	var parts []string
	for _, ev := range names {
		parts = append(parts, fmt.Sprintf("%s %d", ev, counts[ev]))
	}
	return strings.Join(parts, ", ")
}

// evRender renders events of key compactly: K:x for the keyspace channel,
// E:x for the keyevent channel.
func evRender(key string, evs []evEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		switch ev, ok := strings.CutPrefix(e.channel, evKeyevent); {
		case e.channel == evKeyspace+key:
			out[i] = "K:" + e.payload
		case ok && e.payload == key:
			out[i] = "E:" + ev
		default:
			out[i] = strconv.Quote(e.channel + "=" + e.payload)
		}
	}
	return out
}

// evShowReply renders a raw RESP reply on one line.
func evShowReply(raw string) string {
	s := evFormatReply(diffParse(raw))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

func evFormatReply(v diffReply) string {
	switch v.kind {
	case '+', '-', ':':
		return string(v.kind) + v.str
	case '$':
		if v.null {
			return "(nil)"
		}
		return strconv.Quote(v.str)
	case '*':
		if v.null {
			return "(nil)"
		}
		parts := make([]string, len(v.elems))
		for i, e := range v.elems {
			parts[i] = evFormatReply(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return strconv.Quote(v.str)
}

func evShowCmds(cmds [][]string) string {
	var parts []string
	for _, c := range cmds {
		parts = append(parts, diffShow(c))
	}
	return strings.Join(parts, "; ")
}

func evTargetNames(ts []evTarget) string {
	var names []string
	for _, tg := range ts {
		names = append(names, tg.name)
	}
	return strings.Join(names, " and ")
}

// ---- the generator ----

type evGen struct {
	rng   *rand.Rand
	base  time.Time
	fresh map[int]bool // odd slots given out
	// channel, when set, is where the stream's PUBLISHes go; otherwise
	// each goes to a key's keyspace channel, joining that key's events.
	// Concurrent writers each publish on their own channel: Cairn orders
	// a key's events with the writes of that key, and a PUBLISH takes no
	// key lock.
	channel string
}

func newEvGen(seed int64) *evGen {
	return &evGen{rng: rand.New(rand.NewPCG(uint64(seed), 0xe7e475)), base: time.Now(), fresh: map[int]bool{}}
}

var (
	evValues = []string{"1", "-7", "42", "0", "10", "3.5", "-0.25", "1e3", "abc", "", "hello world",
		"9223372036854775807", "-9223372036854775808"}
	evIncrArgs  = []string{"1", "-1", "7", "-100", "1000", "0", "abc", "", "1.5", "9223372036854775807", "-9223372036854775808"}
	evFloatArgs = []string{"1", "-1.5", "0.25", "3e2", "-0", "10", "abc", "", "inf", "-inf", "nan", "1e400"}
	evBadTTLs   = []string{"0", "-5", "abc", "", "1.5"}
)

func (g *evGen) pick(list []string) string { return list[g.rng.IntN(len(list))] }
func (g *evGen) chance(p float64) bool     { return g.rng.Float64() < p }
func (g *evGen) key() string               { return g.pick(evKeys) }
func (g *evGen) value() string             { return g.pick(evValues) }

func (g *evGen) keys(lo, hi int) []string {
	out := make([]string, lo+g.rng.IntN(hi-lo+1))
	for i := range out {
		out[i] = g.key()
	}
	return out
}

// slot returns a future time: a shared slot, or, for GT and LT, a slot no
// other command got.
func (g *evGen) slot(fresh bool) time.Time {
	s := 2 * g.rng.IntN(evSharedSlots)
	if fresh {
		s = 2*g.rng.IntN(evFreshSlots) + 1
		for try := 0; g.fresh[s]; try++ {
			if try > 100 {
				s = 2*(evFreshSlots+len(g.fresh)) + 1
				break
			}
			s = 2*g.rng.IntN(evFreshSlots) + 1
		}
		g.fresh[s] = true
	}
	return g.base.Add(time.Duration(evMinFutureSec+s*evSlotSec) * time.Second)
}

// evTimeArg expresses target as a command's time argument: in seconds or
// milliseconds, relative to now or absolute.
func evTimeArg(target time.Time, ms, abs bool) string {
	switch {
	case abs && ms:
		return strconv.FormatInt(target.UnixMilli(), 10)
	case abs:
		return strconv.FormatInt(target.Unix(), 10)
	case ms:
		return strconv.FormatInt(time.Until(target).Milliseconds(), 10)
	default:
		return strconv.FormatInt(int64(time.Until(target).Round(time.Second)/time.Second), 10)
	}
}

// past returns a time that has passed: a zero or negative relative time,
// or a Unix time long gone.
func (g *evGen) past(ms, abs bool) string {
	if !abs {
		return g.pick([]string{"0", "-1", "-5", "-100000"})
	}
	switch g.rng.IntN(3) {
	case 0:
		return "1"
	case 1:
		return evTimeArg(g.base.Add(-1000*time.Second), ms, true)
	default:
		return evTimeArg(g.base.Add(-time.Duration(1+g.rng.IntN(1000000))*time.Second), ms, true)
	}
}

func (g *evGen) future(unit string) []string {
	ms, abs := unit[0] == 'P', strings.HasSuffix(unit, "AT")
	return []string{unit, evTimeArg(g.slot(false), ms, abs)}
}

func evFlatten(groups [][]string) []string {
	var out []string
	for _, gr := range groups {
		out = append(out, gr...)
	}
	return out
}

var evBadSetOptions = [][]string{{"EX", "0"}, {"PX", "-5"}, {"EX", "abc"}, {"NX", "XX"}, {"KEEPTTL", "PX", "100000"}, {"FOO"}, {"PX"}}

// setOptions returns SET options in a random order: NX or XX, GET, an
// expiry (future, past or KEEPTTL), rarely an invalid one.
func (g *evGen) setOptions() []string {
	var groups [][]string
	if g.chance(0.3) {
		groups = append(groups, []string{g.pick([]string{"NX", "XX"})})
	}
	if g.chance(0.25) {
		groups = append(groups, []string{"GET"})
	}
	switch x := g.rng.IntN(20); {
	case x < 3:
		groups = append(groups, g.future("EX"))
	case x < 5:
		groups = append(groups, g.future("PX"))
	case x < 7:
		groups = append(groups, g.future("EXAT"))
	case x < 9:
		groups = append(groups, g.future("PXAT"))
	case x < 11:
		groups = append(groups, []string{"KEEPTTL"})
	case x < 12:
		o := g.pick([]string{"EXAT", "PXAT"})
		groups = append(groups, []string{o, g.past(o == "PXAT", true)})
	}
	if g.chance(0.03) {
		groups = append(groups, evBadSetOptions[g.rng.IntN(len(evBadSetOptions))])
	}
	g.rng.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })
	return evFlatten(groups)
}

var evBadGetexOptions = [][]string{{"EX", "0"}, {"PX", "-1"}, {"EX", "abc"}, {"PERSIST", "EX", "100000"}, {"FOO"}}

func (g *evGen) getexOptions() []string {
	switch x := g.rng.IntN(20); {
	case x < 4:
		return nil
	case x < 8:
		return []string{"PERSIST"}
	case x < 10:
		return g.future("EX")
	case x < 12:
		return g.future("PX")
	case x < 14:
		return g.future("EXAT")
	case x < 16:
		return g.future("PXAT")
	case x < 19:
		o := g.pick([]string{"EXAT", "PXAT"})
		return []string{o, g.past(o == "PXAT", true)}
	default:
		return evBadGetexOptions[g.rng.IntN(len(evBadGetexOptions))]
	}
}

// expire returns an EXPIRE-family command: a future time, a past one
// (the key is deleted) or an invalid one, with up to two of NX, XX, GT
// and LT.
func (g *evGen) expire() []string {
	name := g.pick([]string{"EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"})
	ms, abs := name[0] == 'P', strings.HasSuffix(name, "AT")
	var opts []string
	switch x := g.rng.IntN(20); {
	case x < 8:
	case x < 18:
		opts = []string{g.pick([]string{"NX", "XX", "GT", "LT"})}
	default:
		opts = []string{g.pick([]string{"NX", "XX", "GT", "LT"}), g.pick([]string{"NX", "XX", "GT", "LT"})}
	}
	gtlt := slices.Contains(opts, "GT") || slices.Contains(opts, "LT")
	var when string
	switch x := g.rng.IntN(20); {
	case x < 2:
		when = g.past(ms, abs)
	case x < 3:
		when = g.pick([]string{"abc", "", "1.5"})
	default:
		when = evTimeArg(g.slot(gtlt), ms, abs)
	}
	return append([]string{name, g.key(), when}, opts...)
}

type evBuilder struct {
	weight int
	build  func(g *evGen) (args, keys []string)
}

// evOne builds a command naming the keys at the given argument positions.
func evOne(args []string, keyAt ...int) ([]string, []string) {
	keys := make([]string, len(keyAt))
	for i, at := range keyAt {
		keys[i] = args[at]
	}
	return args, keys
}

// evAllKeys builds a command whose arguments after the name are all keys.
func evAllKeys(name string, keys []string) ([]string, []string) {
	return append([]string{name}, keys...), keys
}

var evBuilders = []evBuilder{
	{5, func(g *evGen) ([]string, []string) { return evOne([]string{"GET", g.key()}, 1) }},
	// A message on a key's keyspace channel joins that key's sequence: in
	// MULTI/EXEC it must arrive between the events of the commands around
	// it, as Redis delivers it.
	{2, func(g *evGen) ([]string, []string) {
		k, msg := g.key(), "message:"+g.value()
		if g.channel != "" {
			return []string{"PUBLISH", g.channel, msg}, nil
		}
		return []string{"PUBLISH", evKeyspace + k, msg}, []string{k}
	}},
	{14, func(g *evGen) ([]string, []string) {
		return evOne(append([]string{"SET", g.key(), g.value()}, g.setOptions()...), 1)
	}},
	{2, func(g *evGen) ([]string, []string) { return evOne([]string{"SETNX", g.key(), g.value()}, 1) }},
	{2, func(g *evGen) ([]string, []string) {
		ttl := evTimeArg(g.slot(false), false, false)
		if g.chance(0.1) {
			ttl = g.pick(evBadTTLs)
		}
		return evOne([]string{"SETEX", g.key(), ttl, g.value()}, 1)
	}},
	{2, func(g *evGen) ([]string, []string) {
		ttl := evTimeArg(g.slot(false), true, false)
		if g.chance(0.1) {
			ttl = g.pick(evBadTTLs)
		}
		return evOne([]string{"PSETEX", g.key(), ttl, g.value()}, 1)
	}},
	{3, func(g *evGen) ([]string, []string) {
		keys := g.keys(1, 4)
		args := []string{"MSET"}
		for _, k := range keys {
			args = append(args, k, g.value())
		}
		return args, keys
	}},
	{3, func(g *evGen) ([]string, []string) {
		keys := g.keys(1, 3)
		args := []string{"MSETNX"}
		for _, k := range keys {
			args = append(args, k, g.value())
		}
		return args, keys
	}},
	{2, func(g *evGen) ([]string, []string) { return evOne([]string{"GETSET", g.key(), g.value()}, 1) }},
	{2, func(g *evGen) ([]string, []string) { return evOne([]string{"GETDEL", g.key()}, 1) }},
	{5, func(g *evGen) ([]string, []string) {
		return evOne(append([]string{"GETEX", g.key()}, g.getexOptions()...), 1)
	}},
	{3, func(g *evGen) ([]string, []string) { return evOne([]string{"APPEND", g.key(), g.value()}, 1) }},
	{3, func(g *evGen) ([]string, []string) {
		off := strconv.Itoa(g.rng.IntN(21))
		if g.chance(0.05) {
			off = g.pick([]string{"-1", "abc"})
		}
		return evOne([]string{"SETRANGE", g.key(), off, g.pick([]string{"", "", "x", "abc", "hello"})}, 1)
	}},
	{2, func(g *evGen) ([]string, []string) {
		return evOne([]string{"GETRANGE", g.key(), strconv.Itoa(g.rng.IntN(16) - 5), strconv.Itoa(g.rng.IntN(16) - 5)}, 1)
	}},
	{1, func(g *evGen) ([]string, []string) { return evOne([]string{"STRLEN", g.key()}, 1) }},
	{2, func(g *evGen) ([]string, []string) { return evAllKeys("MGET", g.keys(1, 4)) }},
	{3, func(g *evGen) ([]string, []string) { return evOne([]string{"INCR", g.key()}, 1) }},
	{2, func(g *evGen) ([]string, []string) { return evOne([]string{"DECR", g.key()}, 1) }},
	{2, func(g *evGen) ([]string, []string) { return evOne([]string{"INCRBY", g.key(), g.pick(evIncrArgs)}, 1) }},
	{2, func(g *evGen) ([]string, []string) { return evOne([]string{"DECRBY", g.key(), g.pick(evIncrArgs)}, 1) }},
	{3, func(g *evGen) ([]string, []string) {
		return evOne([]string{"INCRBYFLOAT", g.key(), g.pick(evFloatArgs)}, 1)
	}},
	{4, func(g *evGen) ([]string, []string) { return evAllKeys(g.pick([]string{"DEL", "UNLINK"}), g.keys(1, 4)) }},
	{2, func(g *evGen) ([]string, []string) {
		return evAllKeys(g.pick([]string{"EXISTS", "EXISTS", "TOUCH"}), g.keys(1, 4))
	}},
	{9, func(g *evGen) ([]string, []string) { return evOne(g.expire(), 1) }},
	{2, func(g *evGen) ([]string, []string) { return evOne([]string{"PERSIST", g.key()}, 1) }},
	{4, func(g *evGen) ([]string, []string) {
		return evOne([]string{g.pick([]string{"RENAME", "RENAMENX"}), g.key(), g.key()}, 1, 2)
	}},
	{3, func(g *evGen) ([]string, []string) {
		args := []string{"COPY", g.key(), g.key()}
		if g.chance(0.5) {
			args = append(args, "REPLACE")
		}
		return evOne(args, 1, 2)
	}},
	{2, func(g *evGen) ([]string, []string) {
		return evOne([]string{g.pick([]string{"TTL", "PTTL"}), g.key()}, 1)
	}},
	{1, func(g *evGen) ([]string, []string) { return evOne([]string{"TYPE", g.key()}, 1) }},
	{2, func(g *evGen) ([]string, []string) {
		return evOne([]string{"SETBIT", g.key(), strconv.Itoa(g.rng.IntN(60)), g.pick([]string{"0", "1", "1", "2"})}, 1)
	}},
	{1, func(g *evGen) ([]string, []string) {
		return evOne([]string{"GETBIT", g.key(), strconv.Itoa(g.rng.IntN(60))}, 1)
	}},
	{1, func(g *evGen) ([]string, []string) { return evOne([]string{"BITCOUNT", g.key()}, 1) }},
	{1, func(g *evGen) ([]string, []string) {
		return evOne([]string{"BITPOS", g.key(), g.pick([]string{"0", "1"})}, 1)
	}},
	// BITOP writes to keys of its own, which never get a TTL: an empty
	// result deletes the destination, with "del" if it had expired
	// unnoticed but "expired" first if active expiry saw it, a race.
	{2, func(g *evGen) ([]string, []string) {
		dst := "bitop:" + strconv.Itoa(g.rng.IntN(3))
		op := g.pick([]string{"AND", "OR", "XOR", "NOT"})
		srcs := g.keys(1, 3)
		if op == "NOT" {
			srcs = srcs[:1]
		}
		return append([]string{"BITOP", op, dst}, srcs...), append([]string{dst}, srcs...)
	}},
	{2, func(g *evGen) ([]string, []string) {
		args := []string{"BITFIELD", g.key()}
		for n := 1 + g.rng.IntN(3); n > 0; n-- {
			typ := g.pick([]string{"u8", "i8", "u4", "i16"})
			off := strconv.Itoa(g.rng.IntN(40))
			switch g.rng.IntN(4) {
			case 0:
				args = append(args, "GET", typ, off)
			case 1:
				args = append(args, "SET", typ, off, strconv.Itoa(g.rng.IntN(600)-300))
			case 2:
				args = append(args, "INCRBY", typ, off, strconv.Itoa(g.rng.IntN(300)-150))
			default:
				args = append(args, "OVERFLOW", g.pick([]string{"WRAP", "SAT", "FAIL"}))
			}
		}
		return evOne(args, 1)
	}},
	{1, func(g *evGen) ([]string, []string) {
		return evOne([]string{"BITFIELD_RO", g.key(), "GET", "u8", strconv.Itoa(g.rng.IntN(40))}, 1)
	}},
	{2, func(g *evGen) ([]string, []string) {
		return evOne([]string{"RESTORE", g.key(), "0", g.restorePayload()}, 1)
	}},
	// RESTORE ... REPLACE deletes the old key without looking at its TTL,
	// so, like BITOP, it writes to keys of its own that never get one.
	{1, func(g *evGen) ([]string, []string) {
		return evOne([]string{"RESTORE", "restore:" + strconv.Itoa(g.rng.IntN(3)), "0", g.restorePayload(), "REPLACE"}, 1)
	}},
	// Hashes, over the same keys: hset, hdel (and del with the last
	// field), hincrby, hincrbyfloat, and WRONGTYPE errors publishing
	// nothing.
	{5, func(g *evGen) ([]string, []string) {
		args := []string{g.pick([]string{"HSET", "HSET", "HMSET"}), g.key()}
		for n := 1 + g.rng.IntN(2); n > 0; n-- {
			args = append(args, g.pick(evFields), g.value())
		}
		return evOne(args, 1)
	}},
	{1, func(g *evGen) ([]string, []string) {
		return evOne([]string{"HSETNX", g.key(), g.pick(evFields), g.value()}, 1)
	}},
	{4, func(g *evGen) ([]string, []string) {
		args := []string{"HDEL", g.key()}
		for n := 1 + g.rng.IntN(2); n > 0; n-- {
			args = append(args, g.pick(evFields))
		}
		return evOne(args, 1)
	}},
	{2, func(g *evGen) ([]string, []string) {
		return evOne([]string{"HINCRBY", g.key(), g.pick(evFields), g.pick(evIncrArgs)}, 1)
	}},
	{2, func(g *evGen) ([]string, []string) {
		return evOne([]string{"HINCRBYFLOAT", g.key(), g.pick(evFields), g.pick(evFloatArgs)}, 1)
	}},
	{2, func(g *evGen) ([]string, []string) {
		return evOne([]string{g.pick([]string{"HGET", "HLEN", "HGETALL", "HEXISTS", "HRANDFIELD"}), g.key(), g.pick(evFields)}[:2+g.rng.IntN(2)], 1)
	}},
	// Sets, over the same keys: sadd, srem and spop (del with the last
	// member), smove's srem and sadd, and the STORE forms' events on keys
	// of their own (never given a TTL, as BITOP's).
	{4, func(g *evGen) ([]string, []string) {
		args := []string{g.pick([]string{"SADD", "SADD", "SREM"}), g.key()}
		for n := 1 + g.rng.IntN(2); n > 0; n-- {
			args = append(args, g.pick(evMembers))
		}
		return evOne(args, 1)
	}},
	// SPOP of at least as many members as a stream set has (three at
	// most): deterministic, as the stream must be.
	{2, func(g *evGen) ([]string, []string) {
		return evOne([]string{"SPOP", g.key(), g.pick([]string{"3", "5"})}, 1)
	}},
	{2, func(g *evGen) ([]string, []string) {
		return evOne([]string{"SMOVE", g.key(), g.key(), g.pick(evMembers)}, 1, 2)
	}},
	{2, func(g *evGen) ([]string, []string) {
		dst := "sstore:" + strconv.Itoa(g.rng.IntN(3))
		srcs := g.keys(1, 3)
		return append([]string{g.pick([]string{"SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"}), dst}, srcs...), append([]string{dst}, srcs...)
	}},
	{1, func(g *evGen) ([]string, []string) {
		return evOne([]string{g.pick([]string{"SMEMBERS", "SCARD", "SISMEMBER", "SRANDMEMBER"}), g.key(), g.pick([]string{"1", "2", "x", "5"})}[:2+g.rng.IntN(2)], 1)
	}},
	// Lists, over the same keys and keys of their own (listKey): pushes, pops (del with the last
	// element), linsert, lset, lrem, ltrim, moves (one list's pop, the
	// other's push), and the blocking forms where a list is there or in
	// a transaction (never waiting).
	{4, func(g *evGen) ([]string, []string) {
		args := []string{g.pick([]string{"LPUSH", "RPUSH", "RPUSH", "LPUSHX", "RPUSHX"}), g.listKey()}
		for n := 1 + g.rng.IntN(2); n > 0; n-- {
			args = append(args, g.pick(evMembers))
		}
		return evOne(args, 1)
	}},
	{3, func(g *evGen) ([]string, []string) {
		return evOne([]string{g.pick([]string{"LPOP", "RPOP"}), g.listKey(), g.pick([]string{"1", "2", "0"})}[:2+g.rng.IntN(2)], 1)
	}},
	{2, func(g *evGen) ([]string, []string) {
		switch g.rng.IntN(4) {
		case 0:
			return evOne([]string{"LINSERT", g.listKey(), g.pick([]string{"BEFORE", "AFTER"}), g.pick(evMembers), "y"}, 1)
		case 1:
			return evOne([]string{"LSET", g.listKey(), g.pick([]string{"0", "-1", "5"}), "z"}, 1)
		case 2:
			return evOne([]string{"LREM", g.listKey(), g.pick([]string{"0", "1", "-1"}), g.pick(evMembers)}, 1)
		}
		return evOne([]string{"LTRIM", g.listKey(), g.pick([]string{"0", "1", "-2"}), g.pick([]string{"-1", "0", "1"})}, 1)
	}},
	{2, func(g *evGen) ([]string, []string) {
		if g.chance(0.3) {
			return evOne([]string{"RPOPLPUSH", g.listKey(), g.listKey()}, 1, 2)
		}
		return evOne([]string{"LMOVE", g.listKey(), g.listKey(), g.pick([]string{"LEFT", "RIGHT"}), g.pick([]string{"LEFT", "RIGHT"})}, 1, 2)
	}},
	{1, func(g *evGen) ([]string, []string) {
		keys := []string{g.listKey(), g.listKey()}[:1+g.rng.IntN(2)]
		return append(append([]string{"LMPOP", strconv.Itoa(len(keys))}, keys...), "LEFT", "COUNT", "2"), keys
	}},
	{1, func(g *evGen) ([]string, []string) {
		if g.chance(0.5) {
			return evOne([]string{"BLMOVE", g.listKey(), g.listKey(), "RIGHT", "LEFT", "0.001"}, 1, 2)
		}
		keys := []string{g.listKey(), g.listKey()}[:1+g.rng.IntN(2)]
		return append(append([]string{g.pick([]string{"BLPOP", "BRPOP"})}, keys...), "0.001"), keys
	}},
	{1, func(g *evGen) ([]string, []string) {
		return evOne([]string{g.pick([]string{"LRANGE", "LINDEX", "LLEN", "LPOS"}), g.listKey(), "0", "-1"}[:2+g.rng.IntN(3)], 1)
	}},
	// Sorted sets: zadd, zincr, zrem, the range removals, pops (one key's
	// or the first of several), stores (new, replaced, or del when
	// empty), the blocking pops where a sorted set is there or in a
	// transaction (never waiting), and reads.
	{4, func(g *evGen) ([]string, []string) {
		args := []string{"ZADD", g.zsetKey()}
		if g.chance(0.3) {
			args = append(args, g.pick([]string{"NX", "XX", "GT", "LT", "CH"}))
		}
		for n := 1 + g.rng.IntN(2); n > 0; n-- {
			args = append(args, g.pick([]string{"1", "2", "-1", "inf"}), g.pick(evMembers))
		}
		return evOne(args, 1)
	}},
	{2, func(g *evGen) ([]string, []string) {
		switch g.rng.IntN(5) {
		case 0:
			return evOne([]string{"ZINCRBY", g.zsetKey(), g.pick([]string{"1", "-2", "0"}), g.pick(evMembers)}, 1)
		case 1:
			return evOne([]string{"ZREM", g.zsetKey(), g.pick(evMembers), g.pick(evMembers)}, 1)
		case 2:
			return evOne([]string{"ZREMRANGEBYSCORE", g.zsetKey(), g.pick([]string{"-inf", "1", "(1"}), g.pick([]string{"1", "2", "+inf"})}, 1)
		case 3:
			return evOne([]string{"ZREMRANGEBYRANK", g.zsetKey(), g.pick([]string{"0", "1", "-1"}), g.pick([]string{"0", "-1", "5"})}, 1)
		}
		return evOne([]string{"ZREMRANGEBYLEX", g.zsetKey(), g.pick([]string{"-", "[1", "(x"}), g.pick([]string{"+", "[2", "(x"})}, 1)
	}},
	{2, func(g *evGen) ([]string, []string) {
		switch g.rng.IntN(4) {
		case 0:
			return evOne([]string{g.pick([]string{"ZPOPMIN", "ZPOPMAX"}), g.zsetKey(), g.pick([]string{"1", "2", "0"})}[:2+g.rng.IntN(2)], 1)
		case 1:
			keys := []string{g.zsetKey(), g.zsetKey()}[:1+g.rng.IntN(2)]
			return append(append([]string{"ZMPOP", strconv.Itoa(len(keys))}, keys...), g.pick([]string{"MIN", "MAX"}), "COUNT", "2"), keys
		case 2:
			keys := []string{g.zsetKey(), g.zsetKey()}[:1+g.rng.IntN(2)]
			return append(append([]string{g.pick([]string{"BZPOPMIN", "BZPOPMAX"})}, keys...), "0.001"), keys
		}
		keys := []string{g.zsetKey(), g.zsetKey()}[:1+g.rng.IntN(2)]
		return append(append([]string{"BZMPOP", "0.001", strconv.Itoa(len(keys))}, keys...), "MAX"), keys
	}},
	{2, func(g *evGen) ([]string, []string) {
		dst := "zstore:" + strconv.Itoa(g.rng.IntN(2))
		if g.chance(0.5) {
			return evOne([]string{"ZRANGESTORE", dst, g.zsetKey(), "0", g.pick([]string{"-1", "0", "1"})}, 1, 2)
		}
		src := []string{g.zsetKey(), g.zsetKey()}[:1+g.rng.IntN(2)]
		return append([]string{g.pick([]string{"ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"}), dst, strconv.Itoa(len(src))}, src...), append([]string{dst}, src...)
	}},
	{1, func(g *evGen) ([]string, []string) {
		return evOne([]string{g.pick([]string{"ZRANGE", "ZSCORE", "ZCARD", "ZRANK", "ZCOUNT"}), g.zsetKey(), "0", "-1"}[:2+g.rng.IntN(3)], 1)
	}},
	// GEO: GEOADD is a zadd; the stores publish georadiusstore or
	// geosearchstore on a key of their own (new, replaced, or del when
	// empty), after the source's keymiss; searches read.
	{2, func(g *evGen) ([]string, []string) {
		point := func() []string {
			return []string{g.pick([]string{"0", "0.01", "-0.02", "0.3"}), g.pick([]string{"0", "0.015", "-0.01", "0.2"})}
		}
		dst := "gstore:" + strconv.Itoa(g.rng.IntN(2))
		radius := g.pick([]string{"1", "5", "50", "0.1"})
		switch g.rng.IntN(5) {
		case 0, 1:
			args := []string{"GEOADD", g.zsetKey()}
			if g.chance(0.3) {
				args = append(args, g.pick([]string{"NX", "XX", "CH"}))
			}
			for n := 1 + g.rng.IntN(2); n > 0; n-- {
				args = append(append(args, point()...), g.pick(evMembers))
			}
			return evOne(args, 1)
		case 2:
			args := append(append([]string{"GEOSEARCHSTORE", dst, g.zsetKey(), "FROMLONLAT"}, point()...), "BYRADIUS", radius, "km")
			if g.chance(0.5) {
				args = append(args, "STOREDIST")
			}
			return evOne(args, 1, 2)
		case 3:
			args := append(append([]string{"GEORADIUS", g.zsetKey()}, point()...), radius, "km", g.pick([]string{"STORE", "STOREDIST"}), dst)
			return evOne(args, 1, 7)
		}
		return evOne(append(append([]string{"GEOSEARCH", g.zsetKey(), "FROMLONLAT"}, point()...), "BYBOX", radius, radius, "km"), 1)
	}},
	// HyperLogLogs: pfadd when PFADD changed a register or created the
	// key, and on every PFMERGE; nothing for PFCOUNT (though it writes
	// the cache back) and PFDEBUG TODENSE; keymiss for the keys PFCOUNT
	// and PFMERGE look up in vain.
	{3, func(g *evGen) ([]string, []string) {
		switch g.rng.IntN(4) {
		case 0, 1:
			args := []string{"PFADD", g.hllKey()}
			for n := g.rng.IntN(3); n > 0; n-- {
				args = append(args, g.pick(evMembers)+strconv.Itoa(g.rng.IntN(50)))
			}
			return evOne(args, 1)
		case 2:
			return evAllKeys("PFCOUNT", []string{g.hllKey(), g.hllKey()}[:1+g.rng.IntN(2)])
		}
		return evAllKeys("PFMERGE", []string{g.hllKey(), g.hllKey(), g.hllKey()}[:1+g.rng.IntN(3)])
	}},
	{1, func(g *evGen) ([]string, []string) {
		return evOne([]string{"PFDEBUG", g.pick([]string{"TODENSE", "ENCODING"}), g.hllKey()}, 2)
	}},
	// Streams: xadd (and xtrim when XADD's trimming deleted entries),
	// xdel, xtrim, xsetid, the xgroup-* events (XREADGROUP, XCLAIM and
	// XAUTOCLAIM make consumers), none for XACK, and keymiss for the
	// reads of missing streams.
	{4, func(g *evGen) ([]string, []string) {
		key := g.streamKey()
		args := []string{"XADD", key}
		if g.chance(0.3) {
			args = append(args, "MAXLEN", g.pick([]string{"0", "1", "3"}))
		}
		args = append(args, strconv.Itoa(g.rng.IntN(30))+g.pick([]string{"-*", "-1", ""}), "f", g.value())
		return args, []string{key}
	}},
	{2, func(g *evGen) ([]string, []string) {
		key := g.streamKey()
		switch g.rng.IntN(3) {
		case 0:
			return evOne([]string{"XDEL", key, strconv.Itoa(g.rng.IntN(30)) + "-" + strconv.Itoa(g.rng.IntN(2))}, 1)
		case 1:
			return evOne([]string{"XTRIM", key, g.pick([]string{"MAXLEN", "MINID"}), strconv.Itoa(g.rng.IntN(10))}, 1)
		}
		return evOne([]string{"XSETID", key, strconv.Itoa(30 + g.rng.IntN(10))}, 1)
	}},
	{3, func(g *evGen) ([]string, []string) {
		key, group := g.streamKey(), "g"+strconv.Itoa(g.rng.IntN(2))
		consumer := "c" + strconv.Itoa(g.rng.IntN(3))
		switch g.rng.IntN(8) {
		case 0:
			return evOne([]string{"XGROUP", "CREATE", key, group, g.pick([]string{"0", "$"}), "MKSTREAM"}, 2)
		case 1:
			return evOne([]string{"XGROUP", g.pick([]string{"SETID", "CREATE"}), key, group, "0"}, 2)
		case 2:
			return evOne([]string{"XGROUP", "DESTROY", key, group}, 2)
		case 3:
			return evOne([]string{"XGROUP", g.pick([]string{"CREATECONSUMER", "DELCONSUMER"}), key, group, consumer}, 2)
		case 4:
			return evOne([]string{"XREADGROUP", "GROUP", group, consumer, "COUNT", "2", "STREAMS", key, g.pick([]string{">", "0"})}, 7)
		case 5:
			return evOne([]string{"XCLAIM", key, group, consumer, "0", strconv.Itoa(g.rng.IntN(30)) + "-1", g.pick([]string{"FORCE", "JUSTID"})}, 1)
		case 6:
			return evOne([]string{"XAUTOCLAIM", key, group, consumer, "0", "0"}, 1)
		}
		return evOne([]string{"XACK", key, group, strconv.Itoa(g.rng.IntN(30)) + "-1"}, 1)
	}},
	{2, func(g *evGen) ([]string, []string) {
		key := g.streamKey()
		switch g.rng.IntN(5) {
		case 0:
			return evOne([]string{"XREAD", "COUNT", "1", "STREAMS", key, "0"}, 4)
		case 1:
			return evOne([]string{"XRANGE", key, "-", "+"}, 1)
		case 2:
			return evOne([]string{"XINFO", "STREAM", key}, 2)
		case 3:
			return evOne([]string{"XPENDING", key, "g0"}, 1)
		}
		return evOne([]string{"XLEN", key}, 1)
	}},
	// SORT ... STORE: sortstore on a key of its own (new, or del when
	// the result is empty), after the reads of any expired key.
	{1, func(g *evGen) ([]string, []string) {
		return evOne([]string{"SORT", g.key(), "ALPHA", "STORE", "sstore:" + strconv.Itoa(g.rng.IntN(3))}, 1, 4)
	}},
	// SCAN reclaims the expired keys it passes over (in EXEC too). One
	// call covers every key. Not with TYPE: then Redis 7.0 also counts a
	// miss and publishes keymiss for such a key, which makes the stream
	// depend on whether active expiry reclaimed the key first (a unit
	// test covers it: TestScanTypeReadsEachKey).
	{1, func(g *evGen) ([]string, []string) {
		return evOne([]string{"SCAN", "0", "MATCH", g.key(), "COUNT", "1000"}, 3)
	}},
}

// listKey returns a key for a list command: mostly one of the lists' own
// keys, which other commands leave alone, so that lists live long enough
// to be popped, trimmed and moved; sometimes one of the shared keys.
func (g *evGen) listKey() string {
	if g.chance(0.4) {
		return g.key()
	}
	return "list:" + strconv.Itoa(g.rng.IntN(3))
}

// zsetKey returns a key for a sorted-set command: mostly one of the
// sorted sets' own keys, sometimes one of the shared keys.
func (g *evGen) zsetKey() string {
	if g.chance(0.4) {
		return g.key()
	}
	return "zset:" + strconv.Itoa(g.rng.IntN(3))
}

// streamKey returns a key for a stream command: mostly one of the
// streams' own keys, sometimes one of the shared keys.
func (g *evGen) streamKey() string {
	if g.chance(0.2) {
		return g.key()
	}
	return "stream:" + strconv.Itoa(g.rng.IntN(3))
}

// hllKey returns a key for a HyperLogLog command: mostly one of the
// HyperLogLogs' own keys, sometimes one of the shared keys.
func (g *evGen) hllKey() string {
	if g.chance(0.4) {
		return g.key()
	}
	return "hll:" + strconv.Itoa(g.rng.IntN(3))
}

// evFields are the hash fields of the stream, evMembers its set members.
var (
	evFields  = []string{"a", "b", "c"}
	evMembers = []string{"1", "2", "x"}
)

// restorePayload returns a DUMP payload of a random value, Cairn's or
// Redis's encoding, a string or a hash.
func (g *evGen) restorePayload() string {
	switch x := g.rng.IntN(10); {
	case x < 2:
		return g.pick(redisDumps)
	case x < 3:
		return g.pick(redisHashDumps())
	case x < 5:
		return string(rdb.EncodeHash([][2][]byte{{[]byte(g.pick(evFields)), []byte(g.value())}}))
	case x < 6:
		return string(rdb.EncodeSet([][]byte{[]byte(g.pick(evMembers))}))
	}
	return string(rdb.EncodeString([]byte(g.value())))
}

var evTotalWeight = func() int {
	n := 0
	for _, b := range evBuilders {
		n += b.weight
	}
	return n
}()

func (g *evGen) command() ([]string, []string) {
	x := g.rng.IntN(evTotalWeight)
	for _, b := range evBuilders {
		if x < b.weight {
			return b.build(g)
		}
		x -= b.weight
	}
	panic("unreachable")
}

// next returns the commands of the next step: one command, or a MULTI
// transaction of one to four, ended by EXEC or DISCARD, in which a
// command Redis refuses to queue sometimes aborts the EXEC.
func (g *evGen) next() (cmds [][]string, keys []string) {
	if !g.chance(evMultiChance) {
		args, keys := g.command()
		return [][]string{args}, keys
	}
	cmds = [][]string{{"MULTI"}}
	for n := 1 + g.rng.IntN(4); n > 0; n-- {
		args, ks := g.command()
		cmds = append(cmds, args)
		keys = append(keys, ks...)
	}
	if g.chance(0.1) {
		k := g.key()
		bad := [][]string{{"GET"}, {"SET", k}, {"INCRBY", k}, {"EXPIRE", k}, {"NOSUCHCOMMAND", k}}[g.rng.IntN(5)]
		at := 1 + g.rng.IntN(len(cmds))
		cmds = slices.Insert(cmds, at, bad)
		if len(bad) > 1 {
			keys = append(keys, k)
		}
	}
	if g.chance(0.1) {
		return append(cmds, []string{"DISCARD"}), keys
	}
	return append(cmds, []string{"EXEC"}), keys
}

// TestReplicaEventsUnderConcurrentWriters has several connections send
// seeded random pipelines (MULTI/EXEC included) over the same keys to a
// primary at once, so that group commit merges their batches, while the
// replica's link through a proxy is cut or has a byte flipped now and
// then. The replica must publish, key by key, the same events in the same
// order as the primary, and end holding the same data.
func TestReplicaEventsUnderConcurrentWriters(t *testing.T) {
	seed, n := evSettings(t)
	const writers = 6
	flags := []string{"--notify-keyspace-events", "KEA"}
	primary := StartCairn(t, flags...)
	proxy, replica := startProxiedReplica(t, primary, flags...)
	pc, rc := primary.Client(), replica.Client()
	waitCaughtUp(t, pc, rc)
	full0, _ := syncStats(t, pc)
	subs := []*evCollector{evSubscribe(t, "primary", primary), evSubscribe(t, "replica", replica)}
	conns := make([]*RawConn, writers)
	for i := range conns {
		conns[i] = primary.Raw()
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := newEvGen(seed + int64(w))
			g.channel = "publish:w" + strconv.Itoa(w)
			for sent := 0; sent < n/writers; {
				if w == 0 {
					// A fault every ~20 pipelines of this writer.
					switch x := g.rng.IntN(40); {
					case x == 0:
						proxy.Cut()
					case x == 1 && !proxy.Armed():
						proxy.FlipAfter(int64(g.rng.IntN(4000)))
					}
				}
				var wire strings.Builder
				replies := 0
				for size := 1 + g.rng.IntN(16); size > 0; size-- {
					cmds, _ := g.next()
					for _, args := range cmds {
						fmt.Fprintf(&wire, "*%d\r\n", len(args))
						for _, a := range args {
							fmt.Fprintf(&wire, "$%d\r\n%s\r\n", len(a), a)
						}
						replies++
					}
					sent++
				}
				// RawConn fails the test on a broken connection; the
				// replies themselves depend on the interleaving.
				conns[w].Send(wire.String())
				for range replies {
					conns[w].Reply()
				}
			}
		}()
	}
	wg.Wait()
	waitCaughtUp(t, pc, rc)
	marker := evMarker + "end"
	primary.Raw().Do("PUBLISH", marker, "x") // replicated: the replica's marker too
	total := evSamePerKey(t, marker, subs[0], subs[1])
	compareData(t, "after the concurrent writers", pc, rc)
	if full, _ := syncStats(t, pc); full != full0 {
		t.Errorf("sync_full %d -> %d: a broken link forced a full sync", full0, full)
	}
	t.Logf("seed %d: %d writers, %d steps; %d events compared; %d batches; %d connections, %d bytes flipped", seed, writers, n,
		total, stat(t, pc, "replication", "master_repl_offset"), proxy.Accepted(), proxy.Flips())
}
