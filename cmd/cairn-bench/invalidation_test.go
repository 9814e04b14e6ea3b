package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"reflect"
	"slices"
	"strconv"
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
	tr := newEventTracker("p:", "0", mustMix(t, "set"), 6)
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

	st, kinds := tr.stats()
	want := eventStats{
		Expected: 5, Received: 4, Lost: 1, Duplicates: 1, Unmatched: 1, BeforeReply: 1,
		P50Micros: 100, P99Micros: 300, MaxMicros: 300, MinMicros: -50, MeanMicros: 137.5,
	}
	if st != want {
		t.Errorf("got  %+v\nwant %+v", st, want)
	}
	wantKinds := []kindStats{{Kind: "set", Events: []string{"set"}, Sent: 5, Received: 4, Lost: 1, Duplicates: 1, OtherEvents: 1,
		P50Micros: 100, P99Micros: 300, MaxMicros: 300}}
	if !reflect.DeepEqual(kinds, wantKinds) {
		t.Errorf("kinds %+v\nwant  %+v", kinds, wantKinds)
	}
	if !tr.probeSeen.Load() || tr.foreign != 2 || tr.other != 1 || tr.otherKey != 1 || tr.unexpected != 1 || !strings.Contains(tr.firstOdd, "PONG") {
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
		duration: 100 * time.Millisecond, db: "0", prefix: "t:", mixFlag: "set", via: "notifications",
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

// trackingHook makes a fakePair's replica answer HELLO 3 and CLIENT
// TRACKING and then send what arrives on events, until the client goes.
func trackingHook(events chan Value, stop chan struct{}, tracking *[]string) func(c net.Conn, rd *Reader, args []string) bool {
	return func(c net.Conn, rd *Reader, args []string) bool {
		if strings.ToUpper(args[0]) != "HELLO" {
			return false
		}
		if _, err := c.Write([]byte("%1\r\n$5\r\nproto\r\n:3\r\n")); err != nil {
			return true
		}
		v, err := rd.ReadFrame()
		if err != nil {
			return true
		}
		*tracking = command(v)
		if _, err := c.Write([]byte("+OK\r\n")); err != nil {
			return true
		}
		for {
			select {
			case v := <-events:
				if _, err := c.Write(AppendFrame(nil, v)); err != nil {
					return true
				}
			case <-stop:
				return true
			}
		}
	}
}

// invalidate returns an invalidate push naming keys.
func invalidate(keys ...string) Value {
	v := Value{Kind: '>', Elems: []Value{bulkV("invalidate"), {Kind: '*'}}}
	for _, k := range keys {
		v.Elems[1].Elems = append(v.Elems[1].Elems, bulkV(k))
	}
	return v
}

// TestInvalidationFakeTracking runs the mode with -via tracking against a
// fake pair whose replica sends an invalidate push for every SET but one,
// two keys in one push for another, and a flush (null keys).
func TestInvalidationFakeTracking(t *testing.T) {
	f := newFakePair(t, 1000, 0)
	events := make(chan Value, 10000)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	var tracking []string
	f.onReplica = trackingHook(events, stop, &tracking)
	f.onSet = func(key string) {
		switch {
		case strings.HasSuffix(key, ":7"):
			return // lost
		case strings.HasSuffix(key, ":3"):
			events <- invalidate(key, "someone-else")
			events <- Value{Kind: '>', Elems: []Value{bulkV("invalidate"), {Kind: '*', Null: true}}}
			return
		}
		events <- invalidate(key)
	}
	cfg := invalidationCfg(f)
	cfg.via = "tracking"
	cfg.quiet = true
	cfg.drain = 300 * time.Millisecond
	r, err := runInvalidation(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tracking) != 6 || strings.Join(tracking[:5], " ") != "CLIENT TRACKING on BCAST PREFIX" || !strings.HasPrefix(tracking[5], "t:") {
		t.Errorf("the replica got %q", tracking)
	}
	if r.Via != "tracking" || r.Expected != 200 || r.Received != 199 || r.Lost != 1 || r.Duplicates != 0 ||
		r.ForeignEvents != 1 || r.Unexpected != 1 {
		t.Errorf("got %+v", r)
	}
	if !strings.Contains(writeTableString(r), "CLIENT TRACKING BCAST invalidations") {
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
		{"invalidation", "-mix", "set,nope"},
		{"invalidation", "-mix", ""},
		{"invalidation", "-mix", "setrange", "-size", "0"},
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

// mustMix parses a -mix value that the test knows to be valid.
func mustMix(t *testing.T, s string) []*writeKind {
	t.Helper()
	mix, err := parseMix(s)
	if err != nil {
		t.Fatal(err)
	}
	return mix
}

// allKinds is a -mix of every write kind.
const allKinds = "set,incr,append,setrange,incrbyfloat,mset,getset,setex"

func TestParseMix(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		bad  string // the kind the usage error must name
	}{
		{in: "set", want: []string{"set"}},
		{in: allKinds, want: strings.Split(allKinds, ",")},
		{in: " set , incr ", want: []string{"set", "incr"}},
		{in: "set,set,incr", want: []string{"set", "set", "incr"}},
		{in: "set,nope", bad: `"nope"`},
		{in: "SET", bad: `"SET"`},
		{in: "incrby", bad: `"incrby"`}, // an event name, not a kind
		{in: "set,,incr", bad: "empty write kind"},
		{in: "", bad: "empty write kind"},
		{in: "set,", bad: "empty write kind"},
	} {
		mix, err := parseMix(tc.in)
		if tc.bad != "" {
			var ue usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.bad) || !strings.Contains(err.Error(), "-mix") {
				t.Errorf("parseMix(%q) = %v, %v; want a usage error naming %s", tc.in, mixNames(mix), err, tc.bad)
			}
			continue
		}
		if err != nil || !slices.Equal(mixNames(mix), tc.want) {
			t.Errorf("parseMix(%q) = %v, %v; want %v", tc.in, mixNames(mix), err, tc.want)
		}
	}
}

// TestMixUsage checks that the tool rejects a bad -mix with exit status 2
// and a message naming the kind.
func TestMixUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-mix", "set,incr,bogus"}, `unknown write kind "bogus"`},
		{[]string{"-mix", "setrange", "-size", "0"}, "-size of at least 1"},
	} {
		var out, errw strings.Builder
		args := append([]string{"invalidation", "-primary", "127.0.0.1:1", "-replica", "127.0.0.1:2"}, tc.args...)
		if code := run(args, &out, &errw); code != 2 || !strings.Contains(errw.String(), tc.want) {
			t.Errorf("run(%q) = %d, stderr %q; want 2 and %q", args, code, errw.String(), tc.want)
		}
	}
}

// TestWriteKinds checks the command each kind sends, the event it
// expects, and the replies it accepts.
func TestWriteKinds(t *testing.T) {
	ok := Value{Kind: '+', Str: []byte("OK")}
	nilBulk := Value{Kind: '$', Null: true}
	for _, tc := range []struct {
		kind   string
		args   []string
		events []string // the names it accepts, the expected one first
		good   []Value
		bad    []Value
	}{
		{"set", []string{"SET", "k", "vvv"}, []string{"set"},
			[]Value{ok}, []Value{{Kind: ':', Int: 1}, {Kind: '+', Str: []byte("QUEUED")}, nilBulk}},
		{"incr", []string{"INCR", "k"}, []string{"incrby"},
			[]Value{{Kind: ':', Int: 1}}, []Value{{Kind: ':', Int: 2}, ok, bulkV("1")}},
		{"append", []string{"APPEND", "k", "vvv"}, []string{"append"},
			[]Value{{Kind: ':', Int: 3}}, []Value{{Kind: ':', Int: 6}, ok}},
		{"setrange", []string{"SETRANGE", "k", "0", "vvv"}, []string{"setrange"},
			[]Value{{Kind: ':', Int: 3}}, []Value{{Kind: ':', Int: 0}, ok}},
		{"incrbyfloat", []string{"INCRBYFLOAT", "k", "1.5"}, []string{"incrbyfloat", "set"},
			[]Value{bulkV("1.5")}, []Value{bulkV("3"), {Kind: ',', Str: []byte("1.5")}, nilBulk, ok}},
		{"mset", []string{"MSET", "k", "vvv"}, []string{"set"},
			[]Value{ok}, []Value{{Kind: ':', Int: 1}}},
		{"getset", []string{"GETSET", "k", "vvv"}, []string{"set"},
			[]Value{nilBulk, {Kind: '_', Null: true}}, []Value{bulkV("old"), bulkV(""), ok, {Kind: '*', Null: true}}},
		{"setex", []string{"SETEX", "k", "100", "vvv"}, []string{"set"},
			[]Value{ok}, []Value{{Kind: ':', Int: 1}}},
	} {
		k := mustMix(t, tc.kind)[0]
		if got := k.args("k", "vvv"); !slices.Equal(got, tc.args) {
			t.Errorf("%s: command %q, want %q", tc.kind, got, tc.args)
		}
		for _, name := range tc.events {
			if !k.accepts([]byte(name)) {
				t.Errorf("%s: does not accept the event %q", tc.kind, name)
			}
		}
		for _, name := range []string{"expire", "del", "incrbyfloat", "set", "incrby", "append", "setrange", "sets", ""} {
			if !slices.Contains(tc.events, name) && k.accepts([]byte(name)) {
				t.Errorf("%s: accepts the event %q", tc.kind, name)
			}
		}
		for _, v := range tc.good {
			if err := k.check(v, "vvv"); err != nil {
				t.Errorf("%s: reply %v: %v", tc.kind, v, err)
			}
		}
		for _, v := range tc.bad {
			if err := k.check(v, "vvv"); err == nil {
				t.Errorf("%s: reply %v accepted", tc.kind, v)
			}
		}
	}
}

// TestTrackerMix feeds a tracker of every kind, two keys each, the events
// a replica would publish, and checks that each is matched to its key by
// the name the key's kind expects.
func TestTrackerMix(t *testing.T) {
	mix := mustMix(t, allKinds)
	n := 2 * len(mix)
	tr := newEventTracker("p:", "0", mix, n)
	for k := range n {
		tr.replied[k] = true
		tr.replyAt[k] = time.Millisecond
	}
	ev := func(name string, k int, after time.Duration) {
		tr.observe(pmsg('>', "__keyevent@0__:"+name, "p:"+strconv.Itoa(k)), tr.replyAt[k]+after)
	}
	us := time.Microsecond
	// Index k is of kind mix[k%8]: 0 and 8 set, 1 and 9 incr, 2 and 10
	// append, 3 and 11 setrange, 4 and 12 incrbyfloat, 5 and 13 mset, 6
	// and 14 getset, 7 and 15 setex.
	ev("set", 0, 10*us)
	ev("set", 8, 20*us)
	ev("incrby", 1, 10*us)
	ev("set", 9, 10*us) // not incr's event: another event, and 9 is lost
	ev("append", 2, 10*us)
	ev("append", 10, 30*us)
	ev("append", 10, 40*us) // a duplicate
	ev("setrange", 3, 10*us)
	ev("setrange", 11, 10*us)
	ev("incrbyfloat", 4, 50*us) // as a Cairn replica publishes it
	ev("set", 12, 60*us)        // as a Redis replica publishes it
	ev("set", 5, 10*us)
	ev("set", 13, 10*us)
	ev("set", 6, 10*us)
	ev("set", 14, 10*us)
	ev("set", 7, 70*us)
	ev("expire", 7, 80*us) // SETEX's second event: neither duplicate nor foreign
	ev("set", 15, 70*us)
	ev("expire", 15, 80*us)
	tr.observe(pmsg('>', "__keyevent@0__:incrby", "q:1"), 0) // foreign: the mix expects incrby
	tr.observe(pmsg('>', "__keyevent@0__:expire", "q:1"), 0) // other: the mix expects no expire
	tr.observe(pmsg('>', "__keyevent@1__:set", "p:0"), 0)    // other: another db

	st, kinds := tr.stats()
	if st.Expected != 16 || st.Received != 15 || st.Lost != 1 || st.Duplicates != 1 || st.Unmatched != 0 || st.MaxMicros != 70 {
		t.Errorf("run: %+v", st)
	}
	if tr.foreign != 1 || tr.other != 5 || tr.otherKey != 3 {
		t.Errorf("foreign %d, other %d, other for the run's keys %d; want 1, 5, 3", tr.foreign, tr.other, tr.otherKey)
	}
	want := map[string]string{ // sent/received/lost/duplicates/other max
		"set":         "2/2/0/0/0 20",
		"incr":        "2/1/1/0/1 10",
		"append":      "2/2/0/1/0 30",
		"setrange":    "2/2/0/0/0 10",
		"incrbyfloat": "2/2/0/0/0 60",
		"mset":        "2/2/0/0/0 10",
		"getset":      "2/2/0/0/0 10",
		"setex":       "2/2/0/0/2 70",
	}
	if len(kinds) != len(want) {
		t.Fatalf("%d kinds, want %d", len(kinds), len(want))
	}
	for i, k := range kinds {
		if k.Kind != mix[i].name {
			t.Errorf("kind %d is %s, want %s", i, k.Kind, mix[i].name)
		}
		got := fmt.Sprintf("%d/%d/%d/%d/%d %.0f", k.Sent, k.Received, k.Lost, k.Duplicates, k.OtherEvents, k.MaxMicros)
		if got != want[k.Kind] {
			t.Errorf("%s: %s, want %s", k.Kind, got, want[k.Kind])
		}
	}
}

// TestTrackerRepeatedKind checks that a kind named twice in -mix is
// counted once, over all its indices.
func TestTrackerRepeatedKind(t *testing.T) {
	tr := newEventTracker("p:", "0", mustMix(t, "set,incr,set"), 6)
	for k := range 6 {
		tr.replied[k] = true
		name := "set"
		if k%3 == 1 {
			name = "incrby"
		}
		tr.observe(pmsg('*', "__keyevent@0__:"+name, "p:"+strconv.Itoa(k)), 0)
	}
	_, kinds := tr.stats()
	if len(kinds) != 2 || kinds[0].Kind != "set" || kinds[0].Sent != 4 || kinds[0].Received != 4 ||
		kinds[1].Kind != "incr" || kinds[1].Sent != 2 || kinds[1].Received != 2 {
		t.Errorf("got %+v", kinds)
	}
}

// newFakeWritesPair returns a fake pair whose replica answers PSUBSCRIBE
// and whose primary answers and publishes as fakeWrites says.
func newFakeWritesPair(t *testing.T) *fakePair {
	f := newFakePair(t, 1000, 0)
	events := make(chan Value, 10000)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	f.onReplica = subscribeHook(events, stop)
	fakeWrites(f, events)
	return f
}

// fakeWrites makes f's primary answer the write kinds' commands as Redis
// does on new keys and send the events a Redis replica would publish:
// set for INCRBYFLOAT (Redis replicates it as a SET) and set then expire
// for SETEX.
func fakeWrites(f *fakePair, events chan Value) {
	ev := func(name, key string) { events <- pmsg('*', "__keyevent@0__:"+name, key) }
	f.onSet = func(key string) { ev("set", key) }
	f.onCommand = func(args []string) []byte {
		switch strings.ToUpper(args[0]) {
		case "INCR":
			ev("incrby", args[1])
			return []byte(":1\r\n")
		case "APPEND":
			ev("append", args[1])
			return fmt.Appendf(nil, ":%d\r\n", len(args[2]))
		case "SETRANGE":
			ev("setrange", args[1])
			return fmt.Appendf(nil, ":%d\r\n", len(args[3]))
		case "INCRBYFLOAT":
			ev("set", args[1])
			return bulk(args[2])
		case "MSET":
			ev("set", args[1])
			return []byte("+OK\r\n")
		case "GETSET":
			ev("set", args[1])
			return []byte("$-1\r\n")
		case "SETEX":
			ev("set", args[1])
			ev("expire", args[1])
			return []byte("+OK\r\n")
		}
		return nil
	}
}

// TestInvalidationFakeMix runs the mode with every write kind against a
// fake pair that answers and publishes as a Redis pair does.
func TestInvalidationFakeMix(t *testing.T) {
	f := newFakeWritesPair(t)
	cfg := invalidationCfg(f)
	cfg.quiet = true
	cfg.drain = 300 * time.Millisecond
	cfg.mixFlag = allKinds
	r, err := runInvalidation(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Writes != 200 || r.Expected != 200 || r.Received != 200 || r.Lost != 0 || r.Duplicates != 0 ||
		r.ForeignEvents != 0 || r.OtherEvents != 25 || r.OtherKeyEvents != 25 || r.Unexpected != 0 {
		t.Errorf("got %+v", r)
	}
	if f.sets.Load() != 26 { // 25 SETs and the probe
		t.Errorf("the server saw %d SETs, want 26", f.sets.Load())
	}
	if !slices.Equal(r.Mix, strings.Split(allKinds, ",")) || len(r.Kinds) != 8 {
		t.Fatalf("mix %v, %d kinds", r.Mix, len(r.Kinds))
	}
	for _, k := range r.Kinds {
		wantOther := int64(0)
		if k.Kind == "setex" {
			wantOther = 25
		}
		if k.Sent != 25 || k.Received != 25 || k.Lost != 0 || k.OtherEvents != wantOther {
			t.Errorf("%+v", k)
		}
	}
	table := writeTableString(r)
	for _, want := range []string{"-mix " + allKinds, "__keyevent@0__:*", "incrbyfloat -> incrbyfloat|set", "other events 25"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}

	// The JSON keeps the fields of -mix set runs and adds the mix's.
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"p50_us", "p99_us", "max_us", "events_lost", "events_expected", "duplicates",
		"foreign_set_events", "other_events", "set_p99_us", "writes", "mix", "kinds", "other_key_events"} {
		if _, ok := m[field]; !ok {
			t.Errorf("JSON lacks %q: %s", field, b)
		}
	}
}

// TestInvalidationFakeBadReply checks that a reply the kind does not
// expect fails the run with the command and key named.
func TestInvalidationFakeBadReply(t *testing.T) {
	f := newFakeWritesPair(t)
	f.onCommand = func(args []string) []byte { return bulk("old") } // GETSET of a key that existed
	cfg := invalidationCfg(f)
	cfg.quiet = true
	cfg.mixFlag = "getset"
	_, err := runInvalidation(cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "GETSET t:") || !strings.Contains(err.Error(), "want nil") {
		t.Fatalf("got %v", err)
	}
}
