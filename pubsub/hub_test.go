package pubsub

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// recorder is a Subscriber that keeps the RESP2 frames it is handed.
type recorder struct{ frames []string }

func (r *recorder) Deliver(m *Message) { r.frames = append(r.frames, string(m.Frame(2))) }

func TestPublishReachesChannelsAndPatterns(t *testing.T) {
	h := NewHub()
	a, b, c := &recorder{}, &recorder{}, &recorder{}
	if n := h.Subscribe(a, KindChannel, []byte("news")); n != 1 {
		t.Fatalf("count = %d", n)
	}
	if n := h.Subscribe(a, KindPattern, []byte("n*")); n != 2 {
		t.Fatalf("count = %d", n)
	}
	if n := h.Subscribe(a, KindChannel, []byte("news")); n != 2 {
		t.Fatalf("duplicate subscribe changed the count: %d", n)
	}
	h.Subscribe(b, KindPattern, []byte("n*"))
	h.Subscribe(c, KindShard, []byte("news"))
	if r, s := h.Receivers([]byte("news")), h.ShardReceivers([]byte("news")); r != 3 || s != 1 || len(a.frames) != 0 {
		t.Fatalf("Receivers = %d, ShardReceivers = %d (want 3 and 1), delivered %q", r, s, a.frames)
	}
	if got := h.Publish([]byte("news"), []byte("hi")); got != 3 {
		t.Fatalf("PUBLISH receivers = %d, want 3", got)
	}
	want := []string{
		"*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n",
		"*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$2\r\nhi\r\n",
	}
	if strings.Join(a.frames, "|") != strings.Join(want, "|") {
		t.Fatalf("a got %q", a.frames)
	}
	if len(b.frames) != 1 || len(c.frames) != 0 {
		t.Fatalf("b %q c %q", b.frames, c.frames)
	}
	if got := h.PublishShard([]byte("news"), []byte("s")); got != 1 || c.frames[0] != "*3\r\n$8\r\nsmessage\r\n$4\r\nnews\r\n$1\r\ns\r\n" {
		t.Fatalf("SPUBLISH = %d, %q", got, c.frames)
	}
}

func TestRESP3Frames(t *testing.T) {
	m := &Message{kind: KindChannel, channel: []byte("c"), payload: []byte("")}
	if got := string(m.Frame(3)); got != ">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$0\r\n\r\n" {
		t.Fatalf("RESP3 frame %q", got)
	}
}

func TestEmptyChannelAndLoneStar(t *testing.T) {
	h := NewHub()
	r := &recorder{}
	h.Subscribe(r, KindPattern, []byte("*"))
	if n := h.Publish([]byte(""), []byte("x")); n != 0 {
		t.Fatalf("a lone * matched the empty channel: %d", n)
	}
	if n := h.Publish([]byte("a"), []byte("x")); n != 1 {
		t.Fatalf("a lone * did not match a: %d", n)
	}
}

func TestStateIsReleased(t *testing.T) {
	h := NewHub()
	for i := 0; i < 10000; i++ {
		r := &recorder{}
		h.Subscribe(r, KindChannel, []byte(fmt.Sprint("c", i%7)))
		h.Subscribe(r, KindPattern, []byte(fmt.Sprint("p", i)))
		h.Subscribe(r, KindShard, []byte("s"))
		if i%2 == 0 {
			h.Drop(r)
		} else {
			h.Unsubscribe(r, KindChannel, []byte(fmt.Sprint("c", i%7)))
			h.Unsubscribe(r, KindPattern, []byte(fmt.Sprint("p", i)))
			h.Unsubscribe(r, KindShard, []byte("s"))
		}
	}
	if s := h.Stats(); s != (Stats{}) || len(h.byPrefix) != 0 || len(h.prefixLens) != 0 || len(h.clients) != 0 {
		t.Fatalf("state left behind: %+v, %d prefixes", s, len(h.byPrefix))
	}
}

func TestUnsubscribeOrderAndCounts(t *testing.T) {
	h := NewHub()
	r := &recorder{}
	for _, n := range []string{"a", "b", "c"} {
		h.Subscribe(r, KindChannel, []byte(n))
	}
	h.Subscribe(r, KindPattern, []byte("p"))
	if got := h.Names(r, KindChannel); strings.Join(got, ",") != "a,b,c" {
		t.Fatalf("names %v", got)
	}
	if n := h.Unsubscribe(r, KindChannel, []byte("b")); n != 3 {
		t.Fatalf("count after unsubscribe = %d", n)
	}
	if n := h.Unsubscribe(r, KindChannel, []byte("nope")); n != 3 {
		t.Fatalf("count after unsubscribing a channel not held = %d", n)
	}
	if got := h.Names(r, KindChannel); strings.Join(got, ",") != "a,c" {
		t.Fatalf("names %v", got)
	}
	if ch, p, s := h.Counts(r); ch != 2 || p != 1 || s != 0 {
		t.Fatalf("counts %d %d %d", ch, p, s)
	}
}

// TestManySubscriptionsRemovedInAnyOrder holds thousands of names of
// each kind, with patterns sharing prefixes and lengths, removes them from
// the front, the back and the middle (leaving holes that get squeezed
// out), re-adds some, and checks the order, the counts and what a publish
// reaches after each step, then that Drop leaves no state behind.
func TestManySubscriptionsRemovedInAnyOrder(t *testing.T) {
	h := NewHub()
	r, other := &recorder{}, &recorder{}
	var want []string
	for i := range 3000 {
		n := fmt.Sprint("c", i)
		h.Subscribe(r, KindChannel, []byte(n))
		h.Subscribe(r, KindPattern, []byte(fmt.Sprint("p", i%10, ":*:", i)))
		want = append(want, n)
	}
	h.Subscribe(other, KindPattern, []byte("p1:*"))
	check := func(step string) {
		t.Helper()
		if got := h.Names(r, KindChannel); !slices.Equal(got, want) {
			t.Fatalf("%s: %d names, want %d (first %v)", step, len(got), len(want), got[:min(3, len(got))])
		}
		if ch, _, _ := h.Counts(r); ch != len(want) {
			t.Fatalf("%s: count %d, want %d", step, ch, len(want))
		}
	}
	drop := func(step string, pick func(i int, n string) bool) {
		var keep []string
		for i, n := range want {
			if pick(i, n) {
				h.Unsubscribe(r, KindChannel, []byte(n))
			} else {
				keep = append(keep, n)
			}
		}
		want = keep
		check(step)
	}
	drop("front", func(i int, _ string) bool { return i < 1000 })
	drop("back", func(i int, _ string) bool { return i >= 1500 })
	drop("every other", func(i int, _ string) bool { return i%2 == 0 })
	for _, n := range []string{"c0", "c1001", "new"} { // c1001 is held: no change
		if h.Subscribe(r, KindChannel, []byte(n)); n != "c1001" {
			want = append(want, n)
		}
	}
	check("re-added")
	for i := range 3000 {
		if i%3 != 0 {
			h.Unsubscribe(r, KindPattern, []byte(fmt.Sprint("p", i%10, ":*:", i)))
		}
	}
	// p1:*:i (i%3 == 0) of r, and other's p1:*, match p1:x:1011.
	if n := h.Publish([]byte("p1:x:1011"), []byte("m")); n != 2 {
		t.Fatalf("receivers = %d, want 2", n)
	}
	h.Drop(r)
	h.Drop(other)
	if s := h.Stats(); s != (Stats{}) || len(h.byPrefix) != 0 || len(h.prefixLens) != 0 || len(h.prefixesOfLen) != 0 || len(h.clients) != 0 {
		t.Fatalf("state left behind: %+v, %d prefixes", s, len(h.byPrefix))
	}
}

// BenchmarkDropSubscriptions drops a client holding 100,000 channels and
// 10,000 patterns of one prefix, as a disconnect does; removal is linear
// in the names (it was quadratic: 9 s for 30,000 channels).
//
//	go test -run '^$' -bench DropSubscriptions ./pubsub
func BenchmarkDropSubscriptions(b *testing.B) {
	h := NewHub()
	for range b.N {
		r := &recorder{}
		for i := range 100_000 {
			h.Subscribe(r, KindChannel, []byte(fmt.Sprint("channel:", i)))
			if i < 10_000 {
				h.Subscribe(r, KindPattern, []byte(fmt.Sprint("user:*:", i)))
			}
		}
		h.Drop(r)
	}
}

func TestPatternPrefixIndex(t *testing.T) {
	h := NewHub()
	r := &recorder{}
	for _, p := range []string{"news.*", "n*", "*", "news.tech", "new?.*", "x*", "\\n*", "[n]ews*", "news.tech.*"} {
		h.Subscribe(r, KindPattern, []byte(p))
	}
	// news.* n* * news.tech new?.* [n]ews* match; x*, \n* and news.tech.* do not.
	if n := h.Publish([]byte("news.tech"), []byte("m")); n != 7 {
		t.Fatalf("receivers = %d, want 7 (frames %q)", n, r.frames)
	}
}

// Patterns made of a literal prefix and stars skip the glob; escaped
// prefixes and a literal star after the prefix must not.
func TestPatternStarSuffix(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		match   []string
		miss    []string
	}{
		{"ev:*", []string{"ev:", "ev:set", "ev:*"}, []string{"ev", "EV:set", "xev:set"}},
		{"ev:**", []string{"ev:", "ev:del"}, []string{"ev"}},
		{`ev\:*`, []string{"ev:", "ev:set"}, []string{"ev", `ev\:set`}},
		{`ev:\*`, []string{"ev:*"}, []string{"ev:", "ev:set", `ev:\*`}},
		{`ev:\**`, []string{"ev:*", "ev:*x"}, []string{"ev:", "ev:x"}},
		{"*", []string{"anything"}, []string{""}},
	} {
		h := NewHub()
		h.Subscribe(&recorder{}, KindPattern, []byte(tc.pattern))
		for _, ch := range tc.match {
			if n := h.Publish([]byte(ch), []byte("m")); n != 1 {
				t.Errorf("pattern %q, channel %q: %d receivers, want 1", tc.pattern, ch, n)
			}
		}
		for _, ch := range tc.miss {
			if n := h.Publish([]byte(ch), []byte("m")); n != 0 {
				t.Errorf("pattern %q, channel %q: %d receivers, want 0", tc.pattern, ch, n)
			}
		}
	}
}

func BenchmarkPublishManyPatterns(b *testing.B) {
	h := NewHub()
	for i := 0; i < 1000; i++ {
		h.Subscribe(&recorder{}, KindPattern, []byte(fmt.Sprintf("other.%d.*", i)))
	}
	r := &recorder{}
	h.Subscribe(r, KindPattern, []byte("news.*"))
	ch, payload := []byte("news.tech"), make([]byte, 64)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h.Publish(ch, payload)
		r.frames = r.frames[:0]
	}
}

// TestChurnKeepsEveryoneElseSubscribed subscribes and unsubscribes in
// every order and checks that each publish reaches exactly the current
// subscribers, once each.
func TestChurnKeepsEveryoneElseSubscribed(t *testing.T) {
	h := NewHub()
	subs := make([]*recorder, 5)
	for i := range subs {
		subs[i] = &recorder{}
	}
	on := map[int]bool{}
	steps := []struct {
		sub   bool
		which int
	}{
		{true, 0}, {true, 1}, {true, 2}, {false, 1}, {true, 3}, {false, 0}, {true, 1},
		{false, 3}, {false, 3}, {true, 4}, {true, 0}, {false, 4}, {false, 2}, {false, 1}, {false, 0},
	}
	for i, st := range steps {
		if st.sub {
			h.Subscribe(subs[st.which], KindPattern, []byte("ch*"))
		} else {
			h.Unsubscribe(subs[st.which], KindPattern, []byte("ch*"))
		}
		on[st.which] = st.sub
		for _, r := range subs {
			r.frames = nil
		}
		want := 0
		for _, v := range on {
			if v {
				want++
			}
		}
		if got := h.Publish([]byte("chan"), []byte(fmt.Sprint(i))); got != want {
			t.Fatalf("step %d: %d receivers, want %d", i, got, want)
		}
		for j, r := range subs {
			if n := len(r.frames); n != map[bool]int{true: 1, false: 0}[on[j]] {
				t.Fatalf("step %d: subscriber %d got %d messages (subscribed: %v)", i, j, n, on[j])
			}
		}
	}
	if len(h.byKind[KindPattern]) != 0 {
		t.Fatal("the pattern outlived its last subscriber")
	}
}

// keeper is a Subscriber that keeps each message's frames, RESP2 then
// RESP3, or RESP3 first when resp3First.
type keeper struct {
	resp3First bool
	frames     []string
}

func (k *keeper) Deliver(m *Message) {
	if k.resp3First {
		r3 := string(m.Frame(3))
		k.frames = append(k.frames, string(m.Frame(2)), r3)
		return
	}
	k.frames = append(k.frames, string(m.Frame(2)), string(m.Frame(3)))
}

// TestPublishFramesInBothProtocols checks the frames of every message of
// publications that reuse one Message (and its frame buffers) for a
// channel and a pattern, in both protocols encoded in either order, with
// payloads that grow and shrink from one publication to the next, and
// with the publisher overwriting its buffer after each.
func TestPublishFramesInBothProtocols(t *testing.T) {
	for _, resp3First := range []bool{false, true} {
		h := NewHub()
		k := &keeper{resp3First: resp3First}
		h.Subscribe(k, KindChannel, []byte("chan"))
		h.Subscribe(k, KindPattern, []byte("ch*"))
		var want []string
		for _, payload := range []string{"", strings.Repeat("p", 123), "x", strings.Repeat("q", 70<<10), "y"} {
			buf := []byte("chan" + payload)
			if n := h.Publish(buf[:4], buf[4:]); n != 2 {
				t.Fatalf("receivers = %d, want 2", n)
			}
			copy(buf, strings.Repeat("X", len(buf)))
			bulk := fmt.Sprintf("$%d\r\n%s\r\n", len(payload), payload)
			want = append(want,
				"*3\r\n$7\r\nmessage\r\n$4\r\nchan\r\n"+bulk,
				">3\r\n$7\r\nmessage\r\n$4\r\nchan\r\n"+bulk,
				"*4\r\n$8\r\npmessage\r\n$3\r\nch*\r\n$4\r\nchan\r\n"+bulk,
				">4\r\n$8\r\npmessage\r\n$3\r\nch*\r\n$4\r\nchan\r\n"+bulk)
		}
		if !slices.Equal(k.frames, want) {
			t.Fatalf("resp3 first %v: frames %.300q\nwant %.300q", resp3First, k.frames, want)
		}
	}
}
