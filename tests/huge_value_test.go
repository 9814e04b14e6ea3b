package tests

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
)

// hugeValue returns n bytes, pseudo-random except for a run of zeros in
// the middle (chunks that are not stored), from seed.
func hugeValue(n int, seed uint64) []byte {
	v := make([]byte, n+8)
	r := rand.New(rand.NewPCG(seed, seed))
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(v[i:], r.Uint64())
	}
	clear(v[n/3 : n/3+1<<20])
	return v[:n:n]
}

// bulk returns the RESP bulk string of v.
func bulk(v []byte) string { return "$" + strconv.Itoa(len(v)) + "\r\n" + string(v) + "\r\n" }

// TestHugeValues: values of 10 MB, past every size at which the write and
// read paths change (a request the reader sizes at once, a batch Pebble
// applies as a memtable of its own, a replication-log entry kept on disk
// only, a replicated batch applied in place, a reply handed to the
// outbox without a copy), arrive whole: one by one, pipelined, in
// MULTI/EXEC, as the old value of GETSET, SET ... GET and GETDEL, to a
// subscribed RESP3 client, on a replica, on a replica that catches up
// from the primary's log after a kill -9, and after restarts.
func TestHugeValues(t *testing.T) {
	const size = 10 << 20
	a, b, c := hugeValue(size, 1), hugeValue(size, 2), hugeValue(size+5, 3)

	p := StartCairnEnv(t, leDebug)
	r := StartCairnEnv(t, leDebug, "--slaveof", "127.0.0.1 "+strconv.Itoa(p.Port))
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	must(t, pc.Set(cx, "a", a, 0).Err())

	// Pipelined: the value's reply between small ones.
	cmds, err := pc.Pipelined(cx, func(pp redis.Pipeliner) error {
		pp.Ping(cx)
		pp.Get(cx, "a")
		pp.GetRange(cx, "a", size-4, -1)
		pp.GetEx(cx, "a", 0)
		pp.StrLen(cx, "a")
		return nil
	})
	must(t, err)
	if got := cmds[1].(*redis.StringCmd).Val(); got != string(a) {
		t.Fatalf("pipelined GET: %d bytes, not the value", len(got))
	}
	if got := cmds[2].(*redis.StringCmd).Val(); got != string(a[size-4:]) {
		t.Fatalf("pipelined GETRANGE -4: %q", got)
	}
	if got := cmds[3].(*redis.StringCmd).Val(); got != string(a) {
		t.Fatalf("pipelined GETEX: %d bytes, not the value", len(got))
	}
	if got := cmds[4].(*redis.IntCmd).Val(); got != size {
		t.Fatalf("pipelined STRLEN: %d", got)
	}

	// MULTI/EXEC: GET and GETRANGE read what the transaction wrote; GETEX
	// with a past time replies with the value it deletes.
	tx, err := pc.TxPipelined(cx, func(pp redis.Pipeliner) error {
		pp.Set(cx, "b", b, 0)
		pp.Get(cx, "b")
		pp.GetRange(cx, "b", 10, 19)
		pp.Set(cx, "gone", c, 0)
		pp.Do(cx, "GETEX", "gone", "PXAT", "1")
		pp.Exists(cx, "gone")
		return nil
	})
	must(t, err)
	if got := tx[1].(*redis.StringCmd).Val(); got != string(b) {
		t.Fatalf("GET in MULTI: %d bytes, not the value", len(got))
	}
	if got := tx[2].(*redis.StringCmd).Val(); got != string(b[10:20]) {
		t.Fatalf("GETRANGE in MULTI: %q", got)
	}
	if got, _ := tx[4].(*redis.Cmd).Text(); got != string(c) {
		t.Fatalf("GETEX PXAT 1 in MULTI: %d bytes, not the value", len(got))
	}
	if got := tx[5].(*redis.IntCmd).Val(); got != 0 {
		t.Fatalf("EXISTS after GETEX PXAT 1: %d", got)
	}

	// GETSET, SET ... GET and GETDEL reply with the value they replace or
	// delete, read before their write: alone, and in a transaction whose
	// batch already holds the write.
	for _, inTx := range []bool{false, true} {
		run := pc.Pipelined
		if inTx {
			run = pc.TxPipelined
		}
		cmds, err := run(cx, func(pp redis.Pipeliner) error {
			pp.Set(cx, "x", a, 0)
			pp.GetSet(cx, "x", b)
			pp.SetArgs(cx, "x", c, redis.SetArgs{Get: true})
			pp.GetDel(cx, "x")
			pp.Exists(cx, "x")
			return nil
		})
		must(t, err)
		for i, want := range [][]byte{a, b, c} {
			var got string
			switch cmd := cmds[i+1].(type) {
			case *redis.StringCmd:
				got = cmd.Val()
			case *redis.StatusCmd:
				got = cmd.Val()
			}
			if got != string(want) {
				t.Fatalf("%v (transaction %v): %d bytes, not the old value", cmds[i+1].Args()[:2], inTx, len(got))
			}
		}
		if got := cmds[4].(*redis.IntCmd).Val(); got != 0 {
			t.Fatalf("EXISTS after GETDEL (transaction %v): %d", inTx, got)
		}
	}

	// A subscribed RESP3 client: its replies go through its outbox.
	sub := p.Raw()
	if got := sub.Do("HELLO", "3"); got[0] != '%' {
		t.Fatalf("HELLO 3: %.40q", got)
	}
	sub.Expect(">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n", "SUBSCRIBE", "ch")
	sub.Expect(bulk(a), "GET", "a")
	sub.Expect(bulk(b[size-3:]), "GETRANGE", "b", "-3", "-1")

	check := func(where string, n *Node, keys map[string][]byte) {
		t.Helper()
		cl := n.Client()
		for k, want := range keys {
			got, err := cl.Get(cx, k).Bytes()
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s: GET %s: %d bytes (%v), want the value of %d", where, k, len(got), err, len(want))
			}
		}
		if n, err := cl.DBSize(cx).Result(); err != nil || n != int64(len(keys)) {
			t.Fatalf("%s: DBSIZE = %d, %v; want %d", where, n, err, len(keys))
		}
		leCheckValues(t, where, cl)
	}
	waitCaughtUp(t, pc, rc)
	check("replica", r, map[string][]byte{"a": a, "b": b})

	// The replica, killed, catches up from the primary's log, whose
	// entries of this size are kept on disk only.
	partial := infoOf(pc, "stats")["sync_partial_ok"]
	r.Kill()
	must(t, pc.Set(cx, "c", c, 0).Err())
	must(t, pc.Append(cx, "a", "tail").Err())
	r.Restart()
	rc = r.Client()
	waitCaughtUp(t, pc, rc)
	a = append(a, "tail"...)
	all := map[string][]byte{"a": a, "b": b, "c": c}
	check("replica after kill -9", r, all)
	if got := infoOf(pc, "stats")["sync_partial_ok"]; got == partial {
		t.Fatalf("the replica did not catch up from the log (sync_partial_ok still %s)", got)
	}

	check("primary", p, all)
	p.Stop()
	p.Restart()
	check("primary after a restart", p, all)
	r.Stop()
	r.Restart()
	check("replica after a restart", r, all)
}
