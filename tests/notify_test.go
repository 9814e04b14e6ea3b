package tests

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// eventStream is a PSUBSCRIBE on a node that collects (channel, payload)
// pairs.
type eventStream struct {
	t  *testing.T
	ps *redis.PubSub
	ch <-chan *redis.Message
}

// subscribeEvents subscribes rdb to the patterns plus the marker channel.
func subscribeEvents(t *testing.T, rdb *redis.Client, patterns ...string) *eventStream {
	t.Helper()
	ps := rdb.PSubscribe(ctx(t), append(patterns, "marker*")...)
	if _, err := ps.Receive(ctx(t)); err != nil { // first confirmation
		t.Fatal(err)
	}
	for i := 0; i < len(patterns); i++ { // the remaining confirmations
		if _, err := ps.Receive(ctx(t)); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { ps.Close() })
	return &eventStream{t: t, ps: ps, ch: ps.Channel(redis.WithChannelSize(10000))}
}

// until publishes a marker through pub and returns every message received
// before it, as "channel=payload" strings. Messages published before the
// marker arrive before it, so this proves what did (not) happen.
func (s *eventStream) until(pub *redis.Client) []string {
	s.t.Helper()
	marker := fmt.Sprintf("marker:%d", time.Now().UnixNano())
	if err := pub.Publish(ctx(s.t), marker, "end").Err(); err != nil {
		s.t.Fatal(err)
	}
	var got []string
	timeout := time.After(20 * time.Second)
	for {
		select {
		case m := <-s.ch:
			if m.Channel == marker {
				return got
			}
			if !strings.HasPrefix(m.Channel, "marker:") {
				got = append(got, m.Channel+"="+m.Payload)
			}
		case <-timeout:
			s.t.Fatalf("marker %s never arrived; got %q", marker, got)
		}
	}
}

func expectEvents(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("%s:\n got  %q\n want %q", what, got, want)
	}
}

func TestNotifyConfig(t *testing.T) {
	n := StartCairn(t)
	r := n.Raw()
	steps := []struct {
		cmd  []string
		want string
	}{
		{[]string{"CONFIG", "GET", "notify-keyspace-events"}, "*2\r\n$22\r\nnotify-keyspace-events\r\n$0\r\n\r\n"},
		{[]string{"CONFIG", "SET", "notify-keyspace-events", "KEA"}, "+OK\r\n"},
		{[]string{"CONFIG", "GET", "notify-keyspace-events"}, "*2\r\n$22\r\nnotify-keyspace-events\r\n$3\r\nAKE\r\n"},
		{[]string{"CONFIG", "SET", "notify-keyspace-events", "KEAq"}, "-ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'.\r\n"},
		{[]string{"CONFIG", "GET", "notify-keyspace-events"}, "*2\r\n$22\r\nnotify-keyspace-events\r\n$3\r\nAKE\r\n"},
		{[]string{"CONFIG", "SET", "notify-keyspace-events", "KEAnm"}, "+OK\r\n"},
		{[]string{"CONFIG", "GET", "notify-keyspace-events"}, "*2\r\n$22\r\nnotify-keyspace-events\r\n$4\r\nAKEm\r\n"},
		{[]string{"CONFIG", "SET", "notify-keyspace-events", "Ex"}, "+OK\r\n"},
		{[]string{"CONFIG", "GET", "notify-keyspace-events"}, "*2\r\n$22\r\nnotify-keyspace-events\r\n$2\r\nxE\r\n"},
		{[]string{"CONFIG", "SET", "notify-keyspace-events", "$gK"}, "+OK\r\n"},
		{[]string{"CONFIG", "GET", "notify-keyspace-events"}, "*2\r\n$22\r\nnotify-keyspace-events\r\n$3\r\ng$K\r\n"},
	}
	for _, s := range steps {
		if got := r.Do(s.cmd...); got != s.want {
			t.Errorf("%v: got %q, want %q", s.cmd, got, s.want)
		}
	}
	// An invalid value in the config stops start-up, naming it.
	code, out := runToExit(t, t.TempDir(), "--notify-keyspace-events", "KEAq", "--port", fmt.Sprint(freePort(t)))
	if code != 1 || !strings.Contains(out, "notify-keyspace-events") || !strings.Contains(out, "KEAq") {
		t.Fatalf("bad flag at start-up: exit %d, %s", code, out)
	}
}

func TestNotifyEvents(t *testing.T) {
	n := StartCairn(t, "--notify-keyspace-events", "KEA")
	rdb := n.Client()
	c := ctx(t)
	ev := subscribeEvents(t, n.Client(), "__key*@0__:*")
	rdb.Set(c, "k", "v", 0)
	expectEvents(t, "SET", ev.until(rdb), "__keyspace@0__:k=set", "__keyevent@0__:set=k")
	// Every successful form of SET publishes set; failed conditions nothing.
	rdb.Do(c, "SET", "k", "v2", "XX", "GET", "KEEPTTL")
	rdb.Do(c, "SET", "k", "v3", "NX")
	rdb.Do(c, "SET", "fresh", "v", "XX")
	rdb.Do(c, "SET", "ttl", "v", "EX", "100")
	expectEvents(t, "SET variants", ev.until(rdb),
		"__keyspace@0__:k=set", "__keyevent@0__:set=k",
		"__keyspace@0__:ttl=set", "__keyevent@0__:set=ttl",
		"__keyspace@0__:ttl=expire", "__keyevent@0__:expire=ttl")
	// One del per key actually deleted.
	rdb.Del(c, "k", "missing", "ttl", "k")
	rdb.Del(c, "missing")
	expectEvents(t, "DEL", ev.until(rdb),
		"__keyspace@0__:k=del", "__keyevent@0__:del=k",
		"__keyspace@0__:ttl=del", "__keyevent@0__:del=ttl")
	// Every other write publishes Redis's event; expiry publishes expired.
	rdb.Set(c, "a", "1", 0)
	ev.until(rdb)
	for _, cmd := range [][]any{
		{"APPEND", "a", "x"}, {"SETRANGE", "a", "0", "y"}, {"INCR", "n"}, {"GETSET", "a", "z"},
		{"SETNX", "b", "1"}, {"SETEX", "c", "100", "1"}, {"MSET", "d", "1"}, {"EXPIRE", "a", "100"},
		{"UNLINK", "b"}, {"RENAME", "a", "a2"}, {"PEXPIRE", "c", "1"},
	} {
		if err := rdb.Do(c, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	waitFor(t, 10*time.Second, "c to expire", func() bool { return rdb.Exists(c, "c").Val() == 0 })
	var want []string
	for _, kv := range [][2]string{{"a", "append"}, {"a", "setrange"}, {"n", "incrby"}, {"a", "set"},
		{"b", "set"}, {"c", "set"}, {"c", "expire"}, {"d", "set"}, {"a", "expire"}, {"b", "del"},
		{"a", "rename_from"}, {"a2", "rename_to"}, {"c", "expire"}, {"c", "expired"}} {
		want = append(want, "__keyspace@0__:"+kv[0]+"="+kv[1], "__keyevent@0__:"+kv[1]+"="+kv[0])
	}
	expectEvents(t, "other writes and expiry", ev.until(rdb), want...)
	// Notifications off: nothing.
	rdb.ConfigSet(c, "notify-keyspace-events", "")
	rdb.Set(c, "k", "v", 0)
	rdb.Del(c, "k")
	expectEvents(t, "flags off", ev.until(rdb))
	// K only, E only, class without selector.
	rdb.ConfigSet(c, "notify-keyspace-events", "K$")
	rdb.Set(c, "k", "v", 0)
	rdb.Del(c, "k")
	rdb.ConfigSet(c, "notify-keyspace-events", "Eg")
	rdb.Set(c, "k", "v", 0)
	rdb.Del(c, "k")
	rdb.ConfigSet(c, "notify-keyspace-events", "g$")
	rdb.Set(c, "k", "v", 0)
	expectEvents(t, "selectors", ev.until(rdb), "__keyspace@0__:k=set", "__keyevent@0__:del=k")
}

func TestNotifyNamespaces(t *testing.T) {
	n := StartCairn(t, "--notify-keyspace-events", "KEA", "--requirepass", "admin")
	c := ctx(t)
	admin := n.Client(withPassword("admin"))
	for _, ns := range [][]string{{"tenant A", "ta"}, {"0", "zero"}} {
		if err := admin.Do(c, "NAMESPACE", "ADD", ns[0], ns[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	a := n.Client(withPassword("ta"))
	zero := n.Client(withPassword("zero"))
	adminEvents := subscribeEvents(t, n.Client(withPassword("admin")), "__keyevent@*")
	aEvents := subscribeEvents(t, n.Client(withPassword("ta")), "__keyevent@*")
	zeroEvents := subscribeEvents(t, n.Client(withPassword("zero")), "__keyevent@*")
	admin.Set(c, "k", "1", 0)
	a.Set(c, "k", "2", 0)
	zero.Set(c, "k", "3", 0)
	expectEvents(t, "admin sees every namespace", adminEvents.until(admin),
		"__keyevent@0__:set=k", "__keyevent@ns:tenant%20A__:set=k", "__keyevent@ns:0__:set=k")
	expectEvents(t, "tenant A sees its own", aEvents.until(admin), "__keyevent@ns:tenant%20A__:set=k")
	expectEvents(t, "namespace 0 is not db 0", zeroEvents.until(admin), "__keyevent@ns:0__:set=k")
}

func TestNotifyFailedCommitPublishesNothing(t *testing.T) {
	n := StartCairnEnv(t, []string{"CAIRN_DEBUG_FAULTS=1"}, "--notify-keyspace-events", "KEA")
	rdb := n.Client()
	c := ctx(t)
	ev := subscribeEvents(t, n.Client(), "__key*")
	rdb.Set(c, "d", "1", 0)
	ev.until(rdb)
	if err := rdb.Do(c, "DEBUG", "COMMIT-FAULT", "2").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(c, "k", "v", 0).Err(); err == nil || !strings.Contains(err.Error(), "injected commit fault") {
		t.Fatalf("SET under a commit fault: %v", err)
	}
	if err := rdb.Del(c, "d").Err(); err == nil {
		t.Fatal("DEL under a commit fault succeeded")
	}
	expectEvents(t, "failed commits", ev.until(rdb))
	if rdb.Exists(c, "k").Val() != 0 || rdb.Exists(c, "d").Val() != 1 {
		t.Fatal("a failed commit changed data")
	}
	rdb.Set(c, "k", "v", 0)
	expectEvents(t, "after the fault", ev.until(rdb), "__keyspace@0__:k=set", "__keyevent@0__:set=k")
}

func TestNotifyFlagsReadAtPublishTime(t *testing.T) {
	n := StartCairnEnv(t, []string{"CAIRN_DEBUG_FAULTS=1"}, "--notify-keyspace-events", "KEA")
	writer, admin := n.Client(), n.Client()
	c := ctx(t)
	ev := subscribeEvents(t, n.Client(), "__key*")
	// The write commits with notifications on, then waits; the flags are
	// switched off before it publishes: nothing may be published.
	admin.Do(c, "DEBUG", "COMMIT-PAUSE", "1000")
	done := make(chan error, 1)
	go func() { done <- writer.Set(c, "k", "v", 0).Err() }()
	// DBSIZE shows the commit without touching the key: a read of the key
	// itself may wait for its lock, which the paused write holds.
	waitFor(t, 10*time.Second, "the write to commit", func() bool { return admin.DBSize(c).Val() == 1 })
	admin.ConfigSet(c, "notify-keyspace-events", "")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	expectEvents(t, "flags switched off before publishing", ev.until(admin))
	// And the other way round: off at commit, on at publish.
	admin.Do(c, "DEBUG", "COMMIT-PAUSE", "1000")
	go func() { done <- writer.Set(c, "k2", "v", 0).Err() }()
	waitFor(t, 10*time.Second, "the write to commit", func() bool { return admin.DBSize(c).Val() == 2 })
	admin.ConfigSet(c, "notify-keyspace-events", "E$")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	expectEvents(t, "flags switched on before publishing", ev.until(admin), "__keyevent@0__:set=k2")
}

func TestNotifyRestartRepublishesNothing(t *testing.T) {
	n := StartCairn(t, "--notify-keyspace-events", "KEA")
	rdb := n.Client()
	c := ctx(t)
	for i := 0; i < 100; i++ {
		rdb.Set(c, fmt.Sprint("k", i), "v", 0)
		rdb.Del(c, fmt.Sprint("k", i%7))
	}
	n.Kill()
	n.Restart()
	rdb = n.Client()
	ev := subscribeEvents(t, n.Client(), "__key*")
	expectEvents(t, "after a crash and WAL replay", ev.until(rdb))
	rdb.Set(c, "after", "v", 0)
	expectEvents(t, "one write, one publication", ev.until(rdb), "__keyspace@0__:after=set", "__keyevent@0__:set=after")
}

// TestPublishInScriptsAndTransactionsKeepsOrder: a PUBLISH in a script or
// in MULTI/EXEC reaches subscribers between the keyspace events of the
// commands before and after it, as in Redis, on the primary and, through
// the replication stream, on a replica; a script that only publishes
// reaches the replica too. The replies and the primary's messages must be
// redis-server's.
func TestPublishInScriptsAndTransactionsKeepsOrder(t *testing.T) {
	p := StartCairn(t, "--notify-keyspace-events", "KEA")
	r := startReplica(t, p, "--notify-keyspace-events", "KEA")
	ref := StartRedis(t, "--notify-keyspace-events", "KEA")
	pc, rc, refc := p.Client(), r.Client(), ref.Client()
	cx := ctx(t)
	waitLinkUp(t, rc)
	streams := map[string]*eventStream{
		"primary": subscribeEvents(t, pc, "__key*", "ch"),
		"replica": subscribeEvents(t, rc, "__key*", "ch"),
		"redis":   subscribeEvents(t, refc, "__key*", "ch"),
	}
	steps := [][]any{
		{"EVAL", "redis.call('set', KEYS[1], '1'); redis.call('publish', 'ch', 'm1'); redis.call('incr', KEYS[1]); return redis.call('publish', 'ch', 'm2')", "1", "k"},
		{"EVAL", "return redis.call('publish', 'ch', 'm3')", "0"},
		{"EVAL", "redis.call('publish', 'ch', 'm4'); redis.call('del', KEYS[1]); return redis.call('publish', 'ch', 'm5')", "1", "k"},
	}
	run := func(c *redis.Client) []string {
		var replies []string
		for _, s := range steps {
			v, err := c.Do(cx, s...).Result()
			replies = append(replies, fmt.Sprint(v, err))
		}
		cmds, err := c.TxPipelined(cx, func(pipe redis.Pipeliner) error {
			pipe.Set(cx, "k2", "a", 0)
			pipe.Publish(cx, "ch", "m6")
			pipe.Del(cx, "k2")
			return nil
		})
		replies = append(replies, fmt.Sprint(err))
		for _, c := range cmds {
			replies = append(replies, c.String())
		}
		return replies
	}
	want := run(refc)
	if got := run(pc); !slices.Equal(got, want) {
		t.Fatalf("replies %q, Redis's %q", got, want)
	}
	waitCaughtUp(t, pc, rc)
	wantMsgs := []string{
		"__keyspace@0__:k=set", "__keyevent@0__:set=k", "ch=m1", "__keyspace@0__:k=incrby", "__keyevent@0__:incrby=k", "ch=m2",
		"ch=m3",
		"ch=m4", "__keyspace@0__:k=del", "__keyevent@0__:del=k", "ch=m5",
		"__keyspace@0__:k2=set", "__keyevent@0__:set=k2", "ch=m6", "__keyspace@0__:k2=del", "__keyevent@0__:del=k2",
	}
	for name, pub := range map[string]*redis.Client{"primary": pc, "replica": pc, "redis": refc} {
		if got := streams[name].until(pub); !slices.Equal(got, wantMsgs) {
			t.Errorf("%s's subscriber got %q, want %q", name, got, wantMsgs)
		}
	}
}
