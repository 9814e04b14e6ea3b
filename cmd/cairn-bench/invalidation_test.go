package main

import (
	"net"
	"strings"
	"testing"
	"time"
)

func TestKeyIndex(t *testing.T) {
	for _, tc := range []struct {
		key  string
		n    int
		want int
		ok   bool
	}{
		{"p:0", 10, 0, true},
		{"p:9", 10, 9, true},
		{"p:10", 10, 0, false}, // out of range
		{"p:123456", 1_000_000, 123456, true},
		{"p:", 10, 0, false},
		{"p", 10, 0, false},
		{"q:1", 10, 0, false},
		{"p:01", 10, 0, false}, // not the decimal form of an index
		{"p:-1", 10, 0, false},
		{"p:+1", 10, 0, false},
		{"p:1x", 10, 0, false},
		{"p:probe", 10, 0, false},
		{"p:99999999999999999999", 10, 0, false},
		{"xp:1", 10, 0, false},
	} {
		got, ok := keyIndex("p:", []byte(tc.key), tc.n)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("keyIndex(%q, %d) = %d, %v; want %d, %v", tc.key, tc.n, got, ok, tc.want, tc.ok)
		}
	}
}

func bulkV(s string) Value { return Value{Kind: '$', Str: []byte(s)} }

// pmsg returns a pmessage frame of kind ('*' for RESP2, '>' for RESP3).
func pmsg(kind byte, channel, payload string) Value {
	return Value{Kind: kind, Elems: []Value{bulkV("pmessage"), bulkV("__keyevent@0__:*"), bulkV(channel), bulkV(payload)}}
}

func TestPmessage(t *testing.T) {
	for _, kind := range []byte{'*', '>'} {
		ch, pl, ok := pmessage(pmsg(kind, "__keyevent@0__:set", "k"))
		if !ok || string(ch) != "__keyevent@0__:set" || string(pl) != "k" {
			t.Errorf("kind %c: got %q %q %v", kind, ch, pl, ok)
		}
	}
	// The same frame after a round trip through the wire format.
	wire := AppendFrame(nil, pmsg('*', "__keyevent@0__:set", "user:42"))
	v, _, err := ParseFrame(wire)
	if err != nil {
		t.Fatal(err)
	}
	if _, pl, ok := pmessage(v); !ok || string(pl) != "user:42" {
		t.Errorf("parsed frame: %q %v", pl, ok)
	}
	for _, v := range []Value{
		{Kind: '*', Elems: []Value{bulkV("message"), bulkV("ch"), bulkV("x")}},
		{Kind: '*', Elems: []Value{bulkV("pmessage"), bulkV("p"), bulkV("ch")}},
		{Kind: '*', Elems: []Value{bulkV("pmessage"), bulkV("p"), {Kind: '$', Null: true}, bulkV("x")}},
		{Kind: '*', Elems: []Value{bulkV("pmessage"), bulkV("p"), bulkV("ch"), {Kind: ':', Int: 1}}},
		{Kind: '~', Elems: []Value{bulkV("pmessage"), bulkV("p"), bulkV("ch"), bulkV("x")}},
		{Kind: '+', Str: []byte("PONG")},
	} {
		if _, _, ok := pmessage(v); ok {
			t.Errorf("%v was taken for a pmessage", v)
		}
	}
}

// TestTrackerStats feeds a tracker replies and events by hand and checks
// the matching.
func TestTrackerStats(t *testing.T) {
	tr := newEventTracker("p:", "0", 6)
	us := time.Microsecond
	for k := range 5 { // SET 5 got no reply
		tr.replied[k] = true
		tr.replyAt[k] = time.Duration(k+1) * time.Millisecond
	}
	ev := func(key string, at time.Duration) { tr.observe(pmsg('*', "__keyevent@0__:set", key), at) }
	ev("p:0", tr.replyAt[0]+100*us)
	ev("p:1", tr.replyAt[1]-50*us) // before its reply
	ev("p:2", tr.replyAt[2]+200*us)
	ev("p:2", tr.replyAt[2]+900*us) // duplicate: the first one counts
	// p:3 never comes.
	ev("p:4", tr.replyAt[4]+300*us)
	ev("p:5", 0)     // no reply
	ev("p:6", 0)     // out of range: foreign
	ev("other:1", 0) // foreign
	ev("p:probe", 0) // the probe
	tr.observe(pmsg('*', "__keyevent@0__:del", "p:3"), 0)
	tr.observe(Value{Kind: '+', Str: []byte("PONG")}, 0)

	st := tr.stats()
	want := eventStats{
		Expected: 5, Received: 4, Lost: 1, Duplicates: 1, Unmatched: 1, BeforeReply: 1,
		P50Micros: 100, P99Micros: 300, MaxMicros: 300, MinMicros: -50, MeanMicros: 137.5,
	}
	if st != want {
		t.Errorf("got  %+v\nwant %+v", st, want)
	}
	if !tr.probeSeen.Load() || tr.foreign != 2 || tr.other != 1 || tr.unexpected != 1 || !strings.Contains(tr.firstOdd, "PONG") {
		t.Errorf("probe %v, foreign %d, other %d, unexpected %d (%s); want true, 2, 1, 1 (PONG)",
			tr.probeSeen.Load(), tr.foreign, tr.other, tr.unexpected, tr.firstOdd)
	}
	if got := tr.matched.Load(); got != 5 {
		t.Errorf("matched %d, want 5 (indices 0, 1, 2, 4, 5)", got)
	}
}

// subscribeHook makes a fakePair's replica answer PSUBSCRIBE and then
// send, as pmessages, what arrives on events, until the client goes.
func subscribeHook(events chan Value, stop chan struct{}) func(c net.Conn, rd *Reader, args []string) bool {
	return func(c net.Conn, rd *Reader, args []string) bool {
		if strings.ToUpper(args[0]) != "PSUBSCRIBE" {
			return false
		}
		confirm := Value{Kind: '*', Elems: []Value{bulkV("psubscribe"), bulkV(args[1]), {Kind: ':', Int: 1}}}
		if _, err := c.Write(AppendFrame(nil, confirm)); err != nil {
			return true
		}
		gone := make(chan struct{})
		go func() { // the client closing its end
			rd.ReadFrame()
			close(gone)
		}()
		for {
			select {
			case v := <-events:
				if _, err := c.Write(AppendFrame(nil, v)); err != nil {
					return true
				}
			case <-gone:
				return true
			case <-stop:
				return true
			}
		}
	}
}

func invalidationCfg(f *fakePair) *invalidationConfig {
	return &invalidationConfig{
		common:    testCommon(f.primary),
		replFlags: replFlags{primary: f.primary, replica: f.replica},
		rate:      2000, writers: 3, msgs: 1000, size: 8,
		duration: 100 * time.Millisecond, db: "0", prefix: "t:",
	}
}

// TestInvalidationFake runs the mode against a fake pair whose replica
// publishes a set event for every SET but one, twice for another, and
// some events the run must not count.
func TestInvalidationFake(t *testing.T) {
	f := newFakePair(t, 1000, 0)
	events := make(chan Value, 10000)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	f.onReplica = subscribeHook(events, stop)
	f.onSet = func(key string) {
		switch {
		case strings.HasSuffix(key, ":7"):
			return // lost
		case strings.HasSuffix(key, ":3"):
			events <- pmsg('*', "__keyevent@0__:set", key)
			events <- pmsg('*', "__keyevent@0__:del", key)
			events <- pmsg('*', "__keyevent@0__:set", "someone-else")
		}
		events <- pmsg('*', "__keyevent@0__:set", key)
	}
	cfg := invalidationCfg(f)
	cfg.quiet = true
	cfg.drain = 300 * time.Millisecond
	r, err := runInvalidation(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Planned != 200 || r.Writes != 200 || f.sets.Load() != 201 { // 200 and the probe
		t.Errorf("planned %d, writes %d, server saw %d SETs; want 200, 200, 201", r.Planned, r.Writes, f.sets.Load())
	}
	if r.Expected != 200 || r.Received != 199 || r.Lost != 1 || r.Duplicates != 1 ||
		r.ForeignEvents != 1 || r.OtherEvents != 1 || r.Unmatched != 0 || r.Unexpected != 0 {
		t.Errorf("got %+v", r)
	}
	if r.WriteSeconds < 0.09 || r.WriteSeconds > 0.5 {
		t.Errorf("writing took %.3f s; 200 SETs at 2000/s take 0.1 s", r.WriteSeconds)
	}
	if r.P99Micros <= 0 || r.MaxMicros < r.P99Micros || r.P99Micros < r.P50Micros {
		t.Errorf("latencies p50 %v p99 %v max %v", r.P50Micros, r.P99Micros, r.MaxMicros)
	}
	if !strings.Contains(writeTableString(r), "lost 1, duplicates 1") {
		t.Errorf("table:\n%s", writeTableString(r))
	}
}

// TestInvalidationNoEvents checks that a replica that publishes nothing
// stops the run at the probe, with a hint.
func TestInvalidationNoEvents(t *testing.T) {
	f := newFakePair(t, 1000, 0)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	f.onReplica = subscribeHook(make(chan Value), stop)
	cfg := invalidationCfg(f)
	cfg.quiet = true
	cfg.timeout = 100 * time.Millisecond
	_, err := runInvalidation(cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "published no __keyevent@0__:set event") ||
		!strings.Contains(err.Error(), "notify-keyspace-events") {
		t.Fatalf("got %v", err)
	}
	if f.sets.Load() != 1 {
		t.Errorf("%d SETs sent; want only the probe", f.sets.Load())
	}
}

func TestReplicationModesUsage(t *testing.T) {
	var out, errw strings.Builder
	for _, args := range [][]string{
		{"invalidation", "-writers", "0"},
		{"invalidation", "-rate", "0"},
		{"invalidation", "-duration", "0s"},
		{"invalidation", "-duration", "2m"}, // more than -duration-limit
		{"invalidation", "-primary", "192.0.2.1:6379"},
		{"invalidation", "-replica", "127.0.0.1"},
		{"invalidation", "-primary", "127.0.0.1:7000", "-replica", "127.0.0.1:7000"},
		{"invalidation", "-db", "*"},
		{"catchup", "-conns", "0"},
		{"catchup", "-poll", "-1s"},
		{"catchup", "-catchup-timeout", "0s"},
		{"catchup", "-size", "1000000", "-pipeline", "1000"},
	} {
		if code := run(args, &out, &errw); code != 2 {
			t.Errorf("run(%q) = %d, want 2", args, code)
		}
	}
}

func TestInvalidationTotal(t *testing.T) {
	for _, tc := range []struct {
		rate, msgs int
		d          time.Duration
		want       int
	}{
		{5000, 1_000_000, 10 * time.Second, 50000},
		{5000, 1000, 10 * time.Second, 1000},
		{1, 10, time.Millisecond, 1},
	} {
		c := &invalidationConfig{rate: tc.rate, msgs: tc.msgs, duration: tc.d}
		if got := c.total(); got != tc.want {
			t.Errorf("rate %d, msgs %d, duration %v: total %d, want %d", tc.rate, tc.msgs, tc.d, got, tc.want)
		}
	}
}
