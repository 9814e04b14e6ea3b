package tests

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestLargeValues: strings beyond the inline maximum (64 KiB by default)
// live in value records of their own. Every string command, a restart
// and a replica see them whole, and TTL commands leave them intact.
func TestLargeValues(t *testing.T) {
	p := StartCairn(t)
	r := startReplica(t, p)
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	big := strings.Repeat("0123456789", 200_000) // 2 MB
	must(t, pc.Set(cx, "big", big, 0).Err())
	must(t, pc.Expire(cx, "big", time.Hour).Err())
	must(t, pc.Persist(cx, "big").Err())
	must(t, pc.Expire(cx, "big", 2*time.Hour).Err())
	must(t, pc.Append(cx, "big", "tail").Err())
	must(t, pc.SetRange(cx, "big", 0, "head").Err())
	want := "head" + big[4:] + "tail"
	must(t, pc.Copy(cx, "big", "copy", 0, false).Err())
	must(t, pc.Rename(cx, "copy", "moved").Err())
	must(t, pc.Set(cx, "shrunk", big, 0).Err())
	must(t, pc.Set(cx, "shrunk", "small", 0).Err())
	must(t, pc.Set(cx, "gone", big, 0).Err())
	must(t, pc.Del(cx, "gone").Err())
	check := func(where string) {
		t.Helper()
		c := pc
		if where == "replica" {
			waitCaughtUp(t, pc, rc)
			c = rc
		}
		for _, k := range []string{"big", "moved"} {
			got, err := c.Get(cx, k).Result()
			if err != nil || got != want {
				t.Fatalf("%s: GET %s: %d bytes (%v), want %d", where, k, len(got), err, len(want))
			}
		}
		if n := c.StrLen(cx, "big").Val(); n != int64(len(want)) {
			t.Fatalf("%s: STRLEN = %d", where, n)
		}
		if s := c.GetRange(cx, "big", -6, -1).Val(); s != "89tail" {
			t.Fatalf("%s: GETRANGE -6 -1 = %q", where, s)
		}
		if ttl := c.TTL(cx, "big").Val(); ttl <= time.Hour || ttl > 2*time.Hour {
			t.Fatalf("%s: TTL = %v", where, ttl)
		}
		vals := c.MGet(cx, "shrunk", "gone", "moved").Val()
		if len(vals) != 3 || vals[0] != "small" || vals[1] != nil || vals[2] != want {
			t.Fatalf("%s: MGET shrunk gone moved: %.20q", where, vals)
		}
		if n := c.DBSize(cx).Val(); n != 3 {
			t.Fatalf("%s: DBSIZE = %d", where, n)
		}
	}
	check("primary")
	check("replica")
	p.Stop()
	p.Restart()
	pc = p.Client()
	check("primary after a restart")
	// GETDEL and GETSET reply with the whole value, then drop or replace it.
	if got, _ := pc.Do(cx, "GETSET", "moved", "x").Text(); got != want {
		t.Fatalf("GETSET: %d bytes", len(got))
	}
	if got := pc.GetDel(cx, "big").Val(); !bytes.Equal([]byte(got), []byte(want)) {
		t.Fatalf("GETDEL: %d bytes", len(got))
	}
	check2 := pc.MGet(cx, "big", "moved").Val()
	if check2[0] != nil || check2[1] != "x" {
		t.Fatalf("after GETDEL and GETSET: %q", check2)
	}
}

// TestEditedValuesGoToChunks: a whole write keeps a value of up to 64 KiB
// inline, and an edit keeps one of over 4 KiB in 4 KiB chunks, which
// DEBUG CHECK-VALUES counts.
func TestEditedValuesGoToChunks(t *testing.T) {
	n := StartCairnEnv(t, leDebug)
	r := n.Raw()
	x := func(n int) string { return strings.Repeat("x", n) }
	steps := []struct {
		args   []string
		chunks string
	}{
		{[]string{"SET", "k", x(4095)}, ":0\r\n"},
		{[]string{"APPEND", "k", "x"}, ":0\r\n"}, // 4096 bytes: one chunk's worth, inline
		{[]string{"APPEND", "k", "x"}, ":2\r\n"}, // 4097: two chunks
		{[]string{"SET", "k", x(10000)}, ":0\r\n"},
		{[]string{"SETRANGE", "k", "0", "y"}, ":3\r\n"},
		{[]string{"SET", "k", x(9000)}, ":0\r\n"},
		{[]string{"SETBIT", "k", "80000", "1"}, ":3\r\n"},
		{[]string{"SET", "k", x(5000)}, ":0\r\n"},
		{[]string{"BITFIELD", "k", "SET", "u8", "0", "65"}, ":2\r\n"},
		{[]string{"SET", "k", x(70000)}, ":18\r\n"},
		{[]string{"SET", "k", "small"}, ":0\r\n"},
	}
	for _, s := range steps {
		r.Do(s.args...)
		if got := r.Do("DEBUG", "CHECK-VALUES"); got != s.chunks {
			t.Fatalf("after %s %s: DEBUG CHECK-VALUES %q, want %q", s.args[0], s.args[len(s.args)-1][:min(10, len(s.args[len(s.args)-1]))], got, s.chunks)
		}
	}
	if got := r.Do("GET", "k"); got != "$5\r\nsmall\r\n" {
		t.Fatalf("GET k = %q", got)
	}
}

// TestMemoryUsage: MEMORY USAGE reports what a key takes in storage, so a
// long value counts its bytes and a TTL its expiry entry, also inside a
// namespace; MEMORY STATS counts the namespace's keys, and DOCTOR,
// MALLOC-STATS and HELP answer.
func TestMemoryUsage(t *testing.T) {
	n := StartCairn(t, "--requirepass", "pw")
	c := n.Client(func(o *redis.Options) { o.Password = "pw" })
	cx := ctx(t)
	usage := func(key string) int64 {
		t.Helper()
		v, err := c.MemoryUsage(cx, key).Result()
		if err != nil {
			t.Fatalf("MEMORY USAGE %s: %v", key, err)
		}
		return v
	}
	must(t, c.Set(cx, "small", "v", 0).Err())
	must(t, c.Set(cx, "big", strings.Repeat("x", 1<<20), 0).Err())
	small, big := usage("small"), usage("big")
	if small <= 1 || small > 64 || big < 1<<20 || big > 1<<20+1<<16 {
		t.Fatalf("MEMORY USAGE small = %d, big = %d", small, big)
	}
	must(t, c.Expire(cx, "big", time.Hour).Err())
	if got := usage("big"); got <= big {
		t.Fatalf("MEMORY USAGE big with a TTL = %d, without %d", got, big)
	}
	must(t, c.Do(cx, "NAMESPACE", "ADD", "ns1", "tok1").Err())
	nc := n.Client(func(o *redis.Options) { o.Password = "tok1" })
	if err := nc.MemoryUsage(cx, "big").Err(); err != redis.Nil {
		t.Fatalf("MEMORY USAGE of another namespace's key: %v, want nil", err)
	}
	must(t, nc.Set(cx, "big", strings.Repeat("y", 1<<20), 0).Err())
	if got, err := nc.MemoryUsage(cx, "big").Result(); err != nil || got < 1<<20 {
		t.Fatalf("MEMORY USAGE in a namespace = %d, %v", got, err)
	}
	// MEMORY STATS counts the keys of the connection's namespace.
	raw := n.Raw()
	raw.Expect("+OK\r\n", "AUTH", "tok1")
	if st := raw.Do("MEMORY", "STATS"); !strings.Contains(st, "$10\r\nkeys.count\r\n:1\r\n") {
		t.Fatalf("MEMORY STATS in a namespace with one key: %q", st)
	}
	for _, sub := range []string{"DOCTOR", "MALLOC-STATS"} {
		if s, err := c.Do(cx, "MEMORY", sub).Text(); err != nil || s == "" {
			t.Fatalf("MEMORY %s: %q, %v", sub, s, err)
		}
	}
	if lines, err := c.Do(cx, "MEMORY", "HELP").StringSlice(); err != nil || len(lines) < 10 {
		t.Fatalf("MEMORY HELP: %q, %v", lines, err)
	}
}
