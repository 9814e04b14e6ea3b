package tests

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// serverMillis returns the server's clock (TIME) in milliseconds.
func serverMillis(t *testing.T, c *RawConn) int64 {
	t.Helper()
	// *2 $<n> seconds $<n> microseconds
	parts := strings.Split(c.Do("TIME"), "\r\n")
	if len(parts) < 5 {
		t.Fatalf("TIME: %q", parts)
	}
	s, err1 := strconv.ParseInt(parts[2], 10, 64)
	us, err2 := strconv.ParseInt(parts[4], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("TIME: %q", parts)
	}
	return s*1000 + us/1000
}

// execPing runs MULTI, PING, EXEC on c and returns EXEC's reply: a null
// array when a watched key aborted the transaction.
func execPing(t *testing.T, c *RawConn) string {
	t.Helper()
	for _, step := range [][2]string{{"MULTI", "+OK\r\n"}, {"PING", "+QUEUED\r\n"}} {
		if got := c.Do(step[0]); got != step[1] {
			t.Fatalf("%s: %q, want %q", step[0], got, step[1])
		}
	}
	return c.Do("EXEC")
}

// TestWatchKeyExpiredAtWatch: a key that had already expired when WATCH
// ran is as good as absent, as in Redis 7. Removing it (DEL, the active
// expire cycle, FLUSHDB) does not abort the transaction; writing it does,
// also after it was removed. Whether the expire cycle reclaims the key
// before or after WATCH, the replies are the same, on both servers.
func TestWatchKeyExpiredAtWatch(t *testing.T) {
	const pass, abort = "*1\r\n+PONG\r\n", "*-1\r\n"
	forEachTarget(t, func(t *testing.T, n *Node) {
		main, other := n.Raw(), n.Raw()
		// watchExpired sets key with a 20 ms expiry, waits on the server's
		// clock until it has expired, and watches it.
		watchExpired := func(key string) {
			t.Helper()
			setAt := serverMillis(t, other)
			other.Expect("+OK\r\n", "SET", key, "v", "PX", "20")
			waitFor(t, 5*time.Second, "the key to expire", func() bool { return serverMillis(t, other) > setAt+40 })
			main.Expect("+OK\r\n", "WATCH", key)
		}
		for _, c := range []struct {
			name    string
			between [][]string // other's commands between WATCH and EXEC
			want    string
		}{
			{"nothing", nil, pass},
			{"DEL", [][]string{{"DEL", "k"}}, pass},
			{"FLUSHDB", [][]string{{"FLUSHDB"}}, pass},
			{"SET", [][]string{{"SET", "k", "new"}}, abort},
			{"DEL then SET", [][]string{{"DEL", "k"}, {"SET", "k", "new"}}, abort},
			{"FLUSHDB then SET", [][]string{{"FLUSHDB"}, {"SET", "k", "new"}}, abort},
		} {
			watchExpired("k")
			for _, cmd := range c.between {
				other.Do(cmd...)
			}
			if got := execPing(t, main); got != c.want {
				t.Errorf("key expired at WATCH, then %s: EXEC %q, want %q", c.name, got, c.want)
			}
		}
	})
}

// TestWatchFlushOtherNamespace: FLUSHDB empties the connection's own
// namespace only, so it aborts the transactions watching a key there and
// no other.
func TestWatchFlushOtherNamespace(t *testing.T) {
	n := StartCairn(t, "--requirepass", "admin")
	admin := n.Raw()
	for _, cmd := range [][]string{{"AUTH", "admin"}, {"NAMESPACE", "ADD", "a", "tokenA"}, {"NAMESPACE", "ADD", "b", "tokenB"}} {
		if got := admin.Do(cmd...); got != "+OK\r\n" {
			t.Fatalf("%v: %q", cmd, got)
		}
	}
	conn := func(token string) *RawConn {
		c := n.Raw()
		if got := c.Do("AUTH", token); got != "+OK\r\n" {
			t.Fatalf("AUTH %s: %q", token, got)
		}
		return c
	}
	a, b, watcher := conn("tokenA"), conn("tokenB"), conn("tokenB")
	for _, c := range []*RawConn{a, b} {
		if got := c.Do("SET", "k", "v"); got != "+OK\r\n" {
			t.Fatalf("SET: %q", got)
		}
	}
	for _, c := range []struct {
		ns      string
		flusher *RawConn
		want    string
	}{{"a", a, "*1\r\n+PONG\r\n"}, {"b", b, "*-1\r\n"}} {
		if got := watcher.Do("WATCH", "k"); got != "+OK\r\n" {
			t.Fatalf("WATCH: %q", got)
		}
		if got := c.flusher.Do("FLUSHDB"); got != "+OK\r\n" {
			t.Fatalf("FLUSHDB in %s: %q", c.ns, got)
		}
		if got := execPing(t, watcher); got != c.want {
			t.Errorf("WATCH in namespace b, FLUSHDB in %s: EXEC %q, want %q", c.ns, got, c.want)
		}
	}
}
