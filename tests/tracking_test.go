package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// CLIENT TRACKING end-to-end tests. The replies and pushes of every option
// are compared byte for byte with redis-server's in
// testdata/pubsub/tracking*.txt (TestPubSubScripts); these tests cover
// what a script cannot: concurrency, replicas, full syncs and the size
// limit of the tracking table.

// trackingCache is a client-side cache kept the way a client library
// keeps one with CLIENT TRACKING: a read's reply fills it, an
// invalidation push empties the keys it names (a null one, everything).
// It reads its RESP3 connection itself, frame by frame, in order.
type trackingCache struct {
	c       net.Conn
	rd      *bufio.Reader
	entries map[string]string
}

func dialTrackingCache(n *Node, options ...string) (*trackingCache, error) {
	c, err := net.DialTimeout("tcp", n.Addr(), 5*time.Second)
	if err != nil {
		return nil, err
	}
	tc := &trackingCache{c: c, rd: bufio.NewReader(c), entries: map[string]string{}}
	if _, err := tc.do("HELLO", "3"); err != nil {
		return nil, err
	}
	if r, err := tc.do(append([]string{"CLIENT", "TRACKING", "on"}, options...)...); err != nil || r != "+OK\r\n" {
		return nil, fmt.Errorf("CLIENT TRACKING on: %q %v", r, err)
	}
	return tc, nil
}

// do sends a command and returns its reply, applying the invalidations
// read before it.
func (tc *trackingCache) do(args ...string) (string, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	tc.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := tc.c.Write(b.Bytes()); err != nil {
		return "", err
	}
	for {
		var f bytes.Buffer
		if err := readRaw(tc.rd, &f); err != nil {
			return "", err
		}
		v := diffParse(f.String())
		if v.kind != '>' {
			return f.String(), nil
		}
		if len(v.elems) != 2 || v.elems[0].str != "invalidate" {
			return "", fmt.Errorf("unexpected push %q", f.String())
		}
		if v.elems[1].null {
			clear(tc.entries)
		}
		for _, k := range v.elems[1].elems {
			delete(tc.entries, k.str)
		}
	}
}

// get reads key through the cache: from the server on a miss.
func (tc *trackingCache) get(key string) error {
	if _, ok := tc.entries[key]; ok {
		return nil
	}
	r, err := tc.do("GET", key)
	if err != nil {
		return err
	}
	switch v := diffParse(r); {
	case v.null:
		tc.entries[key] = "<nil>"
	case v.kind == '$':
		tc.entries[key] = v.str
	default:
		return fmt.Errorf("GET %s: %q", key, r)
	}
	return nil
}

// checkFresh syncs the cache (a PING: every push sent before its reply
// is applied) and fails t for every entry that differs from the server's
// value.
func (tc *trackingCache) checkFresh(t *testing.T, truth *RawConn, who string) {
	t.Helper()
	if r, err := tc.do("PING"); err != nil || r != "+PONG\r\n" {
		t.Fatalf("%s: PING: %q %v", who, r, err)
	}
	for k, v := range tc.entries {
		want := "<nil>"
		if r := diffParse(truth.Do("GET", k)); !r.null {
			want = r.str
		}
		if v != want {
			t.Errorf("%s: cached %s = %q, the server has %q", who, k, v, want)
		}
	}
}

// TestTrackingCacheNeverStale races reads through CLIENT TRACKING caches
// with a write of the same key, round after round, and checks after each
// round that no cache holds a value the server no longer has. It fails if
// a write can fall between a read and the server's record of it (the
// reader then caches the old value and never hears of the new one).
func TestTrackingCacheNeverStale(t *testing.T) {
	forEachTarget(t, func(t *testing.T, n *Node) {
		const readers, rounds = 3, 1500
		caches := make([]*trackingCache, readers)
		for i := range caches {
			tc, err := dialTrackingCache(n)
			if err != nil {
				t.Fatal(err)
			}
			caches[i] = tc
		}
		w := n.Client()
		truth := n.Raw()
		for round := range rounds {
			var wg sync.WaitGroup
			errs := make(chan error, readers+1)
			for _, tc := range caches {
				wg.Add(1)
				go func() {
					defer wg.Done()
					clear(tc.entries)
					if err := tc.get("k"); err != nil {
						errs <- err
					}
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := w.Set(ctx(t), "k", strconv.Itoa(round), 0).Err(); err != nil {
					errs <- err
				}
			}()
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			for i, tc := range caches {
				tc.checkFresh(t, truth, fmt.Sprintf("round %d, reader %d", round, i))
			}
			if t.Failed() {
				return
			}
		}
	})
}

// TestTrackingOnReplica reads through a cache on a replica while the
// primary writes: the replica's client hears of each write it applies
// (default mode and BCAST), and of a full sync (REPLICAOF), which replaces
// its data, as of a flush.
func TestTrackingOnReplica(t *testing.T) {
	primary := StartCairn(t)
	replica := startReplica(t, primary)
	pc := primary.Client()
	waitCaughtUp(t, pc, replica.Client())

	r := replica.Raw()
	r.Do("HELLO", "3")
	r.Expect("+OK\r\n", "CLIENT", "TRACKING", "on")
	b := replica.Raw()
	b.Do("HELLO", "3")
	b.Expect("+OK\r\n", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:")

	r.Expect("_\r\n", "GET", "k")
	must(t, pc.Set(ctx(t), "k", "1", 0).Err())
	if got := r.Reply(); got != ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n" {
		t.Fatalf("replica push after SET k: %q", got)
	}
	must(t, pc.MSet(ctx(t), "user:2", "a", "user:1", "b", "other", "c").Err())
	if got := b.Reply(); got != ">2\r\n$10\r\ninvalidate\r\n*2\r\n$6\r\nuser:1\r\n$6\r\nuser:2\r\n" {
		t.Fatalf("BCAST push after MSET: %q", got)
	}
	// An expiry on the primary reaches the replica as a delete.
	r.Expect("$1\r\n1\r\n", "GET", "k")
	must(t, pc.PExpire(ctx(t), "k", time.Second).Err())
	if got := r.Reply(); got != ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n" {
		t.Fatalf("replica push after PEXPIRE k: %q", got)
	}
	r.Expect("$1\r\n1\r\n", "GET", "k")
	if got := r.Reply(); got != ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n" {
		t.Fatalf("replica push after k expired: %q", got)
	}
	r.Expect("+PONG\r\n", "PING")
	b.Expect("+PONG\r\n", "PING")

	// A node that becomes a replica takes its new primary's data in a
	// full sync: its tracking clients drop everything.
	other := StartCairn(t)
	o := other.Raw()
	o.Do("HELLO", "3")
	o.Expect("+OK\r\n", "CLIENT", "TRACKING", "on")
	o.Expect("_\r\n", "GET", "user:1")
	o.Expect("+OK\r\n", "REPLICAOF", "127.0.0.1", strconv.Itoa(primary.Port))
	if got := o.Reply(); got != ">2\r\n$10\r\ninvalidate\r\n_\r\n" {
		t.Fatalf("push after the full sync: %q", got)
	}
	waitCaughtUp(t, pc, other.Client())
	o.Expect("$1\r\nb\r\n", "GET", "user:1")
}

// TestTrackingTableLimit fills the tracking table past
// tracking-table-max-keys, then lowers the limit with CONFIG SET: the
// server forgets keys to stay within it (on the next reads, or in its
// cron) and tells their readers to drop them, and INFO shows the table's
// size.
func TestTrackingTableLimit(t *testing.T) {
	forEachTarget(t, func(t *testing.T, n *Node) {
		a := n.Raw()
		tc, err := dialTrackingCache(n)
		if err != nil {
			t.Fatal(err)
		}
		read := func(from, to int) {
			t.Helper()
			for i := from; i < to; i++ {
				if err := tc.get("k" + strconv.Itoa(i)); err != nil {
					t.Fatal(err)
				}
			}
		}
		shrinks := func(keys int) {
			t.Helper()
			var info string
			want := fmt.Sprintf("tracking_total_keys:%d\r\n", keys)
			waitFor(t, 10*time.Second, "the tracking table to hold "+want, func() bool {
				info = a.Do("INFO", "stats")
				return strings.Contains(info, want)
			})
			if !strings.Contains(info, fmt.Sprintf("tracking_total_items:%d\r\n", keys)) || !strings.Contains(info, "tracking_total_prefixes:0\r\n") {
				t.Errorf("INFO stats: %s", info)
			}
			// The forgotten keys' invalidations have been sent: as many
			// keys stay cached as the table holds.
			if r, err := tc.do("PING"); err != nil || r != "+PONG\r\n" {
				t.Fatalf("PING: %q %v", r, err)
			}
			if len(tc.entries) != keys {
				t.Errorf("%d keys cached, want %d", len(tc.entries), keys)
			}
		}
		a.Expect("+OK\r\n", "CONFIG", "SET", "tracking-table-max-keys", "10")
		read(0, 30)
		shrinks(10)
		a.Expect("+OK\r\n", "CONFIG", "SET", "tracking-table-max-keys", "0")
		read(30, 40)
		shrinks(20)
		a.Expect("+OK\r\n", "CONFIG", "SET", "tracking-table-max-keys", "5")
		shrinks(5)
		if clients := a.Do("INFO", "clients"); !strings.Contains(clients, "tracking_clients:1\r\n") {
			t.Errorf("INFO clients: %s", clients)
		}
	})
}

// TestTrackingNamespaces checks that a tracking client hears only of its
// namespace: the same key name written in another namespace, a BCAST
// prefix's keys there, and another namespace's FLUSHDB send it nothing.
func TestTrackingNamespaces(t *testing.T) {
	n := StartCairn(t, "--requirepass", "admin")
	admin := n.Raw()
	admin.Expect("+OK\r\n", "AUTH", "admin")
	admin.Expect("+OK\r\n", "NAMESPACE", "ADD", "tenant", "tok")
	tenant := n.Raw()
	tenant.Expect("+OK\r\n", "AUTH", "tok")

	a := n.Raw() // tracks in the tenant's namespace
	a.Expect("+OK\r\n", "AUTH", "tok")
	a.Do("HELLO", "3")
	a.Expect("+OK\r\n", "CLIENT", "TRACKING", "on")
	a.Expect("_\r\n", "GET", "k")
	b := n.Raw() // BCAST in the tenant's namespace
	b.Expect("+OK\r\n", "AUTH", "tok")
	b.Do("HELLO", "3")
	b.Expect("+OK\r\n", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "k")

	// The admin writes its own k, and flushes its own namespace: nothing
	// for the tenant's clients (the PING markers come first).
	admin.Expect("+OK\r\n", "SET", "k", "admin")
	admin.Expect("+OK\r\n", "FLUSHDB")
	a.Expect("+PONG\r\n", "PING")
	b.Expect("+PONG\r\n", "PING")

	tenant.Expect("+OK\r\n", "SET", "k", "tenant")
	push := ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"
	if got := a.Reply(); got != push {
		t.Errorf("default-mode push: %q, want %q", got, push)
	}
	if got := b.Reply(); got != push {
		t.Errorf("BCAST push: %q, want %q", got, push)
	}
	tenant.Expect("+OK\r\n", "FLUSHDB")
	for _, c := range []*RawConn{a, b} {
		if got := c.Reply(); got != ">2\r\n$10\r\ninvalidate\r\n_\r\n" {
			t.Errorf("push after the tenant's FLUSHDB: %q", got)
		}
		c.Expect("+PONG\r\n", "PING")
	}
}
