package tests

// Replication end to end: real primaries and replicas, each test a script
// (start, write, kill, restart, check). "Nothing happened" is proved with a
// later marker, never with a sleep; every wait polls with a bound.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const adminPass = "adm1n-pass"

// startReplica starts a replica of primary.
func startReplica(t *testing.T, primary *Node, args ...string) *Node {
	t.Helper()
	return StartCairn(t, append([]string{"--slaveof", "127.0.0.1 " + strconv.Itoa(primary.Port)}, args...)...)
}

// startProxiedReplica starts a replica of primary connected through a new
// Proxy, which a test can cut or have corrupt the stream.
func startProxiedReplica(t *testing.T, primary *Node, args ...string) (*Proxy, *Node) {
	t.Helper()
	proxy := StartProxy(t, primary.Addr())
	return proxy, StartCairn(t, append([]string{"--slaveof", proxy.SlaveOf()}, args...)...)
}

// infoOf returns the fields of an INFO section, nil if the node does not
// answer.
func infoOf(c *redis.Client, section string) map[string]string {
	cx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := c.Info(cx, section).Result()
	if err != nil {
		return nil
	}
	m := map[string]string{}
	for _, line := range strings.Split(s, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// stat returns one integer field of INFO stats or replication.
func stat(t *testing.T, c *redis.Client, section, field string) int64 {
	t.Helper()
	m := infoOf(c, section)
	v, err := strconv.ParseInt(m[field], 10, 64)
	if err != nil {
		t.Fatalf("INFO %s has no integer %s: %v", section, field, m)
	}
	return v
}

// syncStats returns the primary's sync_full and sync_partial_ok.
func syncStats(t *testing.T, primary *redis.Client) (full, partial int64) {
	t.Helper()
	return stat(t, primary, "stats", "sync_full"), stat(t, primary, "stats", "sync_partial_ok")
}

// waitCaughtUp waits until the replica's link is up and it applied every
// batch the primary committed (call it once writes have stopped).
func waitCaughtUp(t *testing.T, primary, replica *redis.Client) {
	t.Helper()
	var p, r map[string]string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		p, r = infoOf(primary, "replication"), infoOf(replica, "replication")
		if p != nil && r != nil && r["master_link_status"] == "up" && r["slave_repl_offset"] == p["master_repl_offset"] {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the replica did not catch up:\nprimary %v\nreplica %v", p, r)
}

// waitLinkUp waits until a replica's link to its primary is up.
func waitLinkUp(t *testing.T, replica *redis.Client) {
	t.Helper()
	waitFor(t, 30*time.Second, "the replication link to come up", func() bool {
		return infoOf(replica, "replication")["master_link_status"] == "up"
	})
}

// keyState is what the comparison looks at for one key.
type keyState struct {
	typ, val string
	expireAt int64 // PEXPIRETIME: -1 without a TTL
}

// snapshot reads every key of the client's keyspace: SCAN, then TYPE, GET
// (HGETALL of a hash, SMEMBERS of a set, LRANGE of a list, ZRANGE of a
// sorted set) and PEXPIRETIME of each.
func snapshot(t *testing.T, c *redis.Client) map[string]keyState {
	t.Helper()
	cx := ctx(t)
	var names []string
	var cursor uint64
	for {
		keys, next, err := c.Scan(cx, cursor, "*", 1000).Result()
		if err != nil {
			t.Fatalf("SCAN: %v", err)
		}
		names = append(names, keys...)
		if next == 0 {
			break
		}
		cursor = next
	}
	sort.Strings(names)
	out := make(map[string]keyState, len(names))
	for len(names) > 0 {
		chunk := names[:min(500, len(names))]
		names = names[len(chunk):]
		pipe := c.Pipeline()
		types := make([]*redis.StatusCmd, len(chunk))
		vals := make([]*redis.StringCmd, len(chunk))
		exps := make([]*redis.Cmd, len(chunk))
		for i, k := range chunk {
			types[i] = pipe.Type(cx, k)
			vals[i] = pipe.Get(cx, k)
			exps[i] = pipe.Do(cx, "PEXPIRETIME", k)
		}
		// GET of a hash fails with WRONGTYPE: HGETALL reads it below.
		if _, err := pipe.Exec(cx); err != nil && !errors.Is(err, redis.Nil) && !strings.HasPrefix(err.Error(), "WRONGTYPE") {
			t.Fatalf("reading keys: %v", err)
		}
		for i, k := range chunk {
			exp, _ := exps[i].Int64()
			out[k] = keyState{typ: types[i].Val(), val: vals[i].Val(), expireAt: exp}
			switch types[i].Val() {
			case "hash":
				h, err := c.HGetAll(cx, k).Result()
				if err != nil {
					t.Fatalf("HGETALL %q: %v", k, err)
				}
				st := out[k]
				st.val = fmt.Sprint(h) // fmt prints maps sorted by key
				out[k] = st
			case "set":
				m, err := c.SMembers(cx, k).Result()
				if err != nil {
					t.Fatalf("SMEMBERS %q: %v", k, err)
				}
				sort.Strings(m)
				st := out[k]
				st.val = fmt.Sprint(m)
				out[k] = st
			case "list":
				l, err := c.LRange(cx, k, 0, -1).Result()
				if err != nil {
					t.Fatalf("LRANGE %q: %v", k, err)
				}
				st := out[k]
				st.val = fmt.Sprintf("%q", l)
				out[k] = st
			case "zset":
				z, err := c.ZRangeWithScores(cx, k, 0, -1).Result()
				if err != nil {
					t.Fatalf("ZRANGE %q: %v", k, err)
				}
				st := out[k]
				st.val = fmt.Sprintf("%v", z)
				out[k] = st
			}
		}
	}
	return out
}

// compareData fails unless both clients see the same keys with the same
// type, value and expiry time, and the same DBSIZE.
func compareData(t *testing.T, what string, primary, replica *redis.Client) {
	t.Helper()
	a, b := snapshot(t, primary), snapshot(t, replica)
	var diffs []string
	for k, va := range a {
		if vb, ok := b[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%q missing on the replica", k))
		} else if va != vb {
			diffs = append(diffs, fmt.Sprintf("%q: primary %+v, replica %+v", k, va, vb))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%q only on the replica", k))
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		t.Fatalf("%s: %d of %d keys differ, e.g.:\n%s", what, len(diffs), len(a), strings.Join(diffs[:min(10, len(diffs))], "\n"))
	}
	if len(a) == 0 {
		t.Fatalf("%s: no keys to compare", what)
	}
	cx := ctx(t)
	if pa, pb := primary.DBSize(cx).Val(), replica.DBSize(cx).Val(); pa != pb || pa != int64(len(a)) {
		t.Fatalf("%s: DBSIZE primary %d, replica %d, keys scanned %d", what, pa, pb, len(a))
	}
}

// writeMix runs n writes under prefix: SETs (some binary, some with a
// TTL), DELs, INCRs, APPENDs, PEXPIREs, MSETs, hash writes (HSET,
// HINCRBY, HDEL) and set writes (SADD, SREM, SMOVE, SUNIONSTORE),
// pipelined.
func writeMix(t *testing.T, c *redis.Client, prefix string, n int) {
	t.Helper()
	cx := ctx(t)
	key := func(i int) string { return fmt.Sprintf("%s:%d", prefix, i) }
	pipe := c.Pipeline()
	for i := 0; i < n; i++ {
		switch i % 14 {
		case 0, 1, 2:
			pipe.Set(cx, key(i), fmt.Sprintf("v%d", i*7), 0)
		case 3:
			pipe.Set(cx, key(i), "bin\x00\r\n"+key(i), 0)
		case 4:
			pipe.Set(cx, key(i), "ttl", 1000*time.Second)
		case 5:
			pipe.Del(cx, key(i-4), key(i+1000000))
		case 6:
			pipe.Incr(cx, fmt.Sprintf("%s:counter:%d", prefix, i%13))
		case 7:
			pipe.Append(cx, key(i-7), "+x")
		case 8:
			pipe.PExpire(cx, key(i-6), 500*time.Second)
		case 9:
			pipe.MSet(cx, key(i), "m", fmt.Sprintf("%s:m:%d", prefix, i), "n")
		case 10:
			pipe.HSet(cx, key(i), "a", i, "b", "x\x00y", "c", key(i))
		case 11:
			pipe.HIncrBy(cx, key(i-1), "a", 5)
			pipe.HDel(cx, key(i-1), "b")
			if i%28 == 11 {
				pipe.PExpire(cx, key(i-1), 500*time.Second)
			}
		case 12:
			pipe.SAdd(cx, key(i), "1", "2", fmt.Sprintf("x%d", i))
		case 13:
			pipe.SRem(cx, key(i-1), "1")
			pipe.SMove(cx, key(i-1), key(i-1)+":moved", "2")
			pipe.SUnionStore(cx, key(i), key(i-1), key(i-1)+":moved")
			list := fmt.Sprintf("%s:list:%d", prefix, i%5)
			pipe.RPush(cx, list, i, "x\x00y")
			pipe.LPush(cx, list, -i)
			pipe.LInsert(cx, list, "AFTER", -i, "ins")
			if i%3 == 0 {
				pipe.LPop(cx, list)
				pipe.LRem(cx, list, 1, "ins")
				pipe.LMove(cx, list, list+":moved", "RIGHT", "LEFT")
			}
			zset := fmt.Sprintf("%s:zset:%d", prefix, i%7)
			pipe.ZAdd(cx, zset, redis.Z{Score: float64(i % 11), Member: key(i)}, redis.Z{Score: -0.5, Member: "x\x00y"})
			pipe.ZIncrBy(cx, zset, 1.25, key(i-14))
			if i%3 == 0 {
				pipe.ZPopMin(cx, zset)
				pipe.ZRemRangeByScore(cx, zset, "(8", "+inf")
				pipe.ZUnionStore(cx, zset+":union", &redis.ZStore{Keys: []string{zset, key(i)}, Weights: []float64{2, 1}})
			}
		}
		if i%100 == 99 || i == n-1 {
			if _, err := pipe.Exec(cx); err != nil {
				t.Fatalf("writes under %s: %v", prefix, err)
			}
		}
	}
}

// writer writes w:<i> = <i> on c until stopped, counting its writes.
type writer struct {
	n    atomic.Int64
	stop chan struct{}
	done chan error
}

func startWriter(c *redis.Client, prefix string) *writer {
	w := &writer{stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		for i := 0; ; i++ {
			select {
			case <-w.stop:
				w.done <- nil
				return
			default:
			}
			cx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := c.Set(cx, fmt.Sprintf("%s:%d", prefix, i), strconv.Itoa(i), 0).Err()
			cancel()
			if err != nil {
				w.done <- err
				return
			}
			w.n.Add(1)
		}
	}()
	return w
}

// waitWrites waits until the writer has done n more writes.
func (w *writer) waitWrites(t *testing.T, n int64) {
	t.Helper()
	target := w.n.Load() + n
	waitFor(t, 20*time.Second, "writes", func() bool {
		select {
		case err := <-w.done:
			w.done <- err
			t.Fatalf("writer stopped: %v", err)
		default:
		}
		return w.n.Load() >= target
	})
}

func (w *writer) finish(t *testing.T) {
	t.Helper()
	close(w.stop)
	if err := <-w.done; err != nil {
		t.Fatalf("writer: %v", err)
	}
}

// signal sends sig to a node without waiting for it to exit; after
// SIGSTOP it waits until the node has stopped.
func signal(t *testing.T, n *Node, sig syscall.Signal) {
	t.Helper()
	if err := n.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
	if sig == syscall.SIGSTOP {
		// kill returns before a node running on the other CPU stops, and
		// a test that sends it data must know it can no longer answer.
		waitFor(t, 10*time.Second, "the node to stop", func() bool { return stopped(n.cmd.Process.Pid) })
	}
}

// expectEOF fails unless the server closes the connection (EOF or reset,
// not a timeout), ignoring what it sends before.
func expectEOF(t *testing.T, r *RawConn, what string) {
	t.Helper()
	r.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err := io.Copy(io.Discard, r.rd)
	var ne net.Error
	if err != nil && errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: the connection stayed open", what)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// 1. A replica started after 2,000 writes (TTLs, DELs, namespaces) holds
// the same data after its full sync, and after streaming more; a namespace
// added on the primary works on the replica.
func TestReplicationFullSyncThenStreaming(t *testing.T) {
	auth := []string{"--requirepass", adminPass, "--masterauth", adminPass}
	p := StartCairn(t, auth...)
	cx := ctx(t)
	pc := p.Client(withPassword(adminPass))
	must(t, pc.Do(cx, "NAMESPACE", "ADD", "tenant", "tenant-token").Err())
	pt := p.Client(withPassword("tenant-token"))
	writeMix(t, pc, "a", 1500)
	writeMix(t, pt, "t", 500)

	r := startReplica(t, p, auth...)
	rc := r.Client(withPassword(adminPass))
	rt := r.Client(withPassword("tenant-token"))
	waitCaughtUp(t, pc, rc)
	compareData(t, "after the full sync", pc, rc)
	compareData(t, "namespace tenant after the full sync", pt, rt)
	if full, partial := syncStats(t, pc); full != 1 || partial != 0 {
		t.Fatalf("sync_full %d, sync_partial_ok %d; want 1, 0", full, partial)
	}
	role := fmt.Sprint(rc.Do(cx, "ROLE").Val())
	if want := fmt.Sprintf("[slave 127.0.0.1 %d connected %s]", p.Port, infoOf(pc, "replication")["master_repl_offset"]); role != want {
		t.Fatalf("ROLE on the replica: %s, want %s", role, want)
	}

	// Streaming, and a second replica's full sync under write load.
	w := startWriter(pc, "w")
	r2 := startReplica(t, p, auth...)
	must(t, pc.Do(cx, "NAMESPACE", "ADD", "late", "late-token").Err())
	pl := p.Client(withPassword("late-token"))
	writeMix(t, pc, "b", 500)
	must(t, pt.FlushDB(cx).Err())
	writeMix(t, pt, "u", 200)
	writeMix(t, pl, "l", 200)
	r2c := r2.Client(withPassword(adminPass))
	waitLinkUp(t, r2c)
	w.waitWrites(t, 200)
	w.finish(t)
	waitCaughtUp(t, pc, rc)
	compareData(t, "after streaming", pc, rc)
	compareData(t, "namespace tenant after streaming", pt, rt)
	waitCaughtUp(t, pc, r2c)
	compareData(t, "full sync under write load", pc, r2c)
	compareData(t, "namespace late, full sync under write load", pl, r2.Client(withPassword("late-token")))
	// The namespace added while streaming: its token authenticates on the
	// replica and reads that namespace's keys.
	rl := r.Client(withPassword("late-token"))
	if got := rl.Get(cx, "l:0").Val(); got != "v0+x" {
		t.Fatalf("GET l:0 with the late token on the replica: %q", got)
	}
	compareData(t, "namespace late after streaming", pl, rl)
	if full, _ := syncStats(t, pc); full != 2 {
		t.Fatalf("sync_full %d after streaming and a second replica; want 2", full)
	}
}

// 2. A replica rejects writes with Redis's exact error, serves reads
// while streaming, and never expires keys itself.
func TestReplicationReadOnlyReplica(t *testing.T) {
	p := StartCairn(t)
	r := startReplica(t, p)
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	pc.Set(cx, "k", "v", 0)
	waitCaughtUp(t, pc, rc)
	raw := r.Raw()
	for _, cmd := range [][]string{
		{"SET", "k", "x"}, {"DEL", "k"}, {"INCR", "n"}, {"APPEND", "k", "x"}, {"MSET", "a", "1"},
		{"EXPIRE", "k", "10"}, {"RENAME", "k", "k2"}, {"FLUSHDB"}, {"FLUSHALL"},
	} {
		if got := raw.Do(cmd...); got != "-READONLY You can't write against a read only replica.\r\n" {
			t.Fatalf("%v on the replica: %q", cmd, got)
		}
	}
	if got := raw.Do("GET", "k"); got != "$1\r\nv\r\n" {
		t.Fatalf("GET k on the replica: %q", got)
	}

	// Reads while streaming: every value read is one the primary wrote.
	w := startWriter(pc, "s")
	reads := 0
	for w.n.Load() < 2000 {
		i := w.n.Load()
		got, err := rc.Get(cx, fmt.Sprintf("s:%d", i)).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("GET on the replica while streaming: %v", err)
		}
		if err == nil && got != strconv.FormatInt(i, 10) {
			t.Fatalf("GET s:%d on the replica: %q", i, got)
		}
		reads++
	}
	w.finish(t)
	waitCaughtUp(t, pc, rc)
	compareData(t, "after streaming", pc, rc)

	// Expiry: the key's time passes while the primary is stopped; the
	// replica hides it from reads but does not delete it, and the key goes
	// from the replica when the primary's expiry deletes it.
	must(t, pc.Set(cx, "short", "v", 0).Err())
	must(t, pc.PExpire(cx, "short", 300*time.Millisecond).Err())
	waitCaughtUp(t, pc, rc)
	size := rc.DBSize(cx).Val()
	signal(t, p, syscall.SIGSTOP)
	stopped := true
	defer func() {
		if stopped {
			signal(t, p, syscall.SIGCONT)
		}
	}()
	waitFor(t, 10*time.Second, "the key to expire logically on the replica", func() bool {
		return rc.Exists(cx, "short").Val() == 0
	})
	if got := rc.DBSize(cx).Val(); got != size {
		t.Fatalf("replica DBSIZE went from %d to %d while the primary was stopped: the replica deleted an expired key", size, got)
	}
	signal(t, p, syscall.SIGCONT)
	stopped = false
	waitFor(t, 10*time.Second, "the primary's expiry to reach the replica", func() bool {
		return rc.DBSize(cx).Val() == size-1
	})
	waitCaughtUp(t, pc, rc)
	if pc.Exists(cx, "short").Val() != 0 || stat(t, pc, "stats", "expired_keys") != 1 {
		t.Fatalf("primary: short exists %d, expired_keys %d", pc.Exists(cx, "short").Val(), stat(t, pc, "stats", "expired_keys"))
	}
	if got := stat(t, rc, "stats", "expired_keys"); got != 0 {
		t.Fatalf("replica expired_keys %d, want 0", got)
	}
	compareData(t, "after expiry", pc, rc)
}

// 3. A replica killed under write load resumes partially after restart.
func TestReplicationReplicaKilledResumesPartially(t *testing.T) {
	p := StartCairn(t)
	r := startReplica(t, p)
	pc := p.Client()
	writeMix(t, pc, "a", 500)
	waitCaughtUp(t, pc, r.Client())
	full0, partial0 := syncStats(t, pc)

	w := startWriter(pc, "w")
	w.waitWrites(t, 300)
	r.Kill()
	w.waitWrites(t, 300)
	r.Restart()
	rc := r.Client()
	waitLinkUp(t, rc)
	w.waitWrites(t, 300)
	w.finish(t)
	waitCaughtUp(t, pc, rc)
	compareData(t, "after the replica's restart", pc, rc)
	if full, partial := syncStats(t, pc); full != full0 || partial != partial0+1 {
		t.Fatalf("sync_full %d -> %d, sync_partial_ok %d -> %d; want a partial resync only\nreplica log:\n%s",
			full0, full, partial0, partial, r.Log.String())
	}
}

// 4. Primary restarts: after SIGTERM, and after kill -9 with sync yes,
// replicas resume partially under the same replication id; after kill -9
// with sync no, the primary takes a new id and replicas full-sync.
func TestReplicationPrimaryRestart(t *testing.T) {
	p := StartCairn(t)
	r1, r2 := startReplica(t, p), startReplica(t, p)
	cx := ctx(t)
	pc := p.Client()
	writeMix(t, pc, "a", 500)
	replicas := []*Node{r1, r2}
	caughtUp := func(what string) {
		t.Helper()
		for _, r := range replicas {
			rc := r.Client()
			waitCaughtUp(t, pc, rc)
			compareData(t, what, pc, rc)
		}
	}
	caughtUp("before restarts")
	replid := func() string { return infoOf(pc, "replication")["master_replid"] }
	// restart stops the primary (SIGTERM or kill -9), adds args and
	// starts it again; the replicas must come back partially under the
	// same id, or by full syncs under a new one.
	restart := func(how string, partial bool, args ...string) {
		t.Helper()
		id := replid()
		if how == "kill -9" {
			p.Kill()
		} else {
			p.Stop()
		}
		p.args = append(p.args, args...)
		p.Restart()
		pc = p.Client()
		waitFor(t, 30*time.Second, "both replicas to reconnect", func() bool {
			return infoOf(pc, "replication")["connected_slaves"] == "2"
		})
		full, part := syncStats(t, pc)
		switch {
		case partial && (replid() != id || full != 0 || part != 2):
			t.Fatalf("%s: replid %s -> %s, sync_full %d, sync_partial_ok %d; want the same id, 0, 2\nprimary log:\n%s",
				how, id, replid(), full, part, p.Log.String())
		case !partial && (replid() == id || full != 2 || part != 0):
			t.Fatalf("%s: replid %s -> %s, sync_full %d, sync_partial_ok %d; want a new id, 2, 0\nprimary log:\n%s",
				how, id, replid(), full, part, p.Log.String())
		}
	}

	restart("SIGTERM", true)
	writeMix(t, pc, "b", 300)
	caughtUp("after a clean restart")

	restart("SIGTERM", true, "--rocksdb.write_options.sync", "yes")
	writeMix(t, pc, "c", 300)
	caughtUp("with sync yes")
	restart("kill -9", true)
	writeMix(t, pc, "d", 300)
	caughtUp("after kill -9 with sync yes")

	restart("SIGTERM", true, "--rocksdb.write_options.sync", "no")
	writeMix(t, pc, "e", 300)
	caughtUp("with sync no")
	restart("kill -9", false)
	writeMix(t, pc, "f", 300)
	caughtUp("after kill -9 with sync no")
	if pc.Get(cx, "f:0").Val() != "v0+x" {
		t.Fatal("lost the last writes")
	}
}

// 5. A promoted replica serves its former sibling partially.
func TestReplicationPromoteAndFollowSibling(t *testing.T) {
	p := StartCairn(t)
	a, b := startReplica(t, p), startReplica(t, p)
	pc, ac, bc := p.Client(), a.Client(), b.Client()
	cx := ctx(t)
	writeMix(t, pc, "p", 1000)
	waitCaughtUp(t, pc, ac)
	waitCaughtUp(t, pc, bc)
	p.Stop()

	must(t, ac.Do(cx, "REPLICAOF", "NO", "ONE").Err())
	if role := infoOf(ac, "replication")["role"]; role != "master" {
		t.Fatalf("A after REPLICAOF NO ONE: role %s", role)
	}
	must(t, bc.Do(cx, "REPLICAOF", "127.0.0.1", strconv.Itoa(a.Port)).Err())
	writeMix(t, ac, "a", 500)
	waitCaughtUp(t, ac, bc)
	compareData(t, "B following A", ac, bc)
	if full, partial := syncStats(t, ac); full != 0 || partial != 1 {
		t.Fatalf("A: sync_full %d, sync_partial_ok %d; want 0, 1\nA log:\n%s\nB log:\n%s", full, partial, a.Log.String(), b.Log.String())
	}
	ai, bi := infoOf(ac, "replication"), infoOf(bc, "replication")
	if bi["master_replid"] != ai["master_replid"] {
		t.Fatalf("B's replid %s is not A's %s", bi["master_replid"], ai["master_replid"])
	}
}

// 6. A replica with the wrong masterauth reports the refusal.
func TestReplicationWrongMasterAuth(t *testing.T) {
	p := StartCairn(t, "--requirepass", adminPass)
	r := startReplica(t, p, "--masterauth", "wrong")
	rc := r.Client()
	waitFor(t, 10*time.Second, "the refusal in INFO", func() bool {
		return strings.Contains(infoOf(rc, "replication")["master_link_last_error"], "masterauth")
	})
	info := infoOf(rc, "replication")
	if info["master_link_status"] != "down" || !strings.Contains(info["master_link_last_error"], "WRONGPASS") {
		t.Fatalf("INFO replication: %v", info)
	}
	if log := r.Log.String(); !strings.Contains(log, "primary refused masterauth") {
		t.Fatalf("no clear log line:\n%s", log)
	}
	// With the right password the link comes up.
	must(t, rc.ConfigSet(ctx(t), "masterauth", adminPass).Err())
	waitLinkUp(t, rc)
}

// 7. A byte flipped in the stream: the replica catches it, reconnects,
// never applies the corrupt batch, and ends identical to the primary.
func TestReplicationCorruptStream(t *testing.T) {
	p := StartCairn(t)
	proxy, r := startProxiedReplica(t, p)
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	writeMix(t, pc, "a", 500)
	waitCaughtUp(t, pc, rc)
	full0, partial0 := syncStats(t, pc)

	// A cut connection resumes partially.
	proxy.Cut()
	writeMix(t, pc, "b", 200)
	waitCaughtUp(t, pc, rc)

	// Values of 1 KB: the flipped byte lands in a batch, most likely in a
	// value. Every key is written once, so a corrupt value would stay.
	proxy.FlipAfter(16 << 10)
	value := func(i int) string { return strings.Repeat(fmt.Sprintf("%08d", i), 128) }
	i := 0
	waitFor(t, 30*time.Second, "the replica to detect the corruption", func() bool {
		for end := i + 10; i < end; i++ {
			must(t, pc.Set(cx, fmt.Sprintf("c:%d", i), value(i), 0).Err())
		}
		return strings.Contains(r.Log.String(), "corrupt stream")
	})
	if !proxy.Flipped() {
		t.Fatal("the corruption was detected before the byte was flipped")
	}
	writeMix(t, pc, "d", 200)
	waitCaughtUp(t, pc, rc)
	compareData(t, "after the corruption", pc, rc)
	for j := 0; j < i; j++ {
		if got := rc.Get(cx, fmt.Sprintf("c:%d", j)).Val(); got != value(j) {
			t.Fatalf("c:%d on the replica holds a wrong value (%d bytes)", j, len(got))
		}
	}
	if proxy.Accepted() < 3 {
		t.Fatalf("the replica connected %d times; want a reconnection after the cut and after the corruption", proxy.Accepted())
	}
	if full, partial := syncStats(t, pc); full != full0 || partial != partial0+2 {
		t.Fatalf("sync_full %d -> %d, sync_partial_ok %d -> %d; want two partial resyncs", full0, full, partial0, partial)
	}

	// A byte flipped in the replication id of the +CONTINUE line, which has
	// no checksum (after REPLCONF's "+OK\r\n" and "+CONTINUE "): the
	// replica refuses the reply instead of adopting a corrupt id, which
	// would fail its next partial resync, and reconnects.
	proxy.Cut()
	proxy.FlipAfter(5 + 10 + 3)
	writeMix(t, pc, "e", 100)
	waitCaughtUp(t, pc, rc)
	if !proxy.Flipped() || !strings.Contains(r.Log.String(), "bad PSYNC reply") {
		t.Fatalf("the corrupt +CONTINUE went unnoticed:\n%s", r.Log.String())
	}
	proxy.Cut()
	writeMix(t, pc, "f", 100)
	waitCaughtUp(t, pc, rc)
	if got, want := infoOf(rc, "replication")["master_replid"], infoOf(pc, "replication")["master_replid"]; got != want {
		t.Fatalf("replica's master_replid %q, primary's %q", got, want)
	}
	if full, partial := syncStats(t, pc); full != full0 || partial != partial0+5 {
		t.Fatalf("sync_full %d -> %d, sync_partial_ok %d -> %d; want three more partial resyncs", full0, full, partial0, partial)
	}
	compareData(t, "after a corrupt +CONTINUE", pc, rc)

	// A byte flipped in a checkpoint file: the full sync is discarded and
	// retried, and the replica ends with the new primary's data.
	q := StartCairn(t)
	qc := q.Client()
	writeMix(t, qc, "q", 300)
	proxyQ := StartProxy(t, q.Addr())
	proxyQ.FlipAfter(2 << 10)
	before := strings.Count(r.Log.String(), "corrupt stream")
	must(t, rc.Do(cx, "REPLICAOF", "127.0.0.1", strconv.Itoa(proxyQ.Port)).Err())
	waitCaughtUp(t, qc, rc)
	compareData(t, "after a corrupt full sync and its retry", qc, rc)
	if !proxyQ.Flipped() || strings.Count(r.Log.String(), "corrupt stream") != before+1 {
		t.Fatalf("the corrupt full sync went unnoticed:\n%s", r.Log.String())
	}
	if full := stat(t, qc, "stats", "sync_full"); full != 2 {
		t.Fatalf("sync_full %d on the new primary; want 2 (one corrupt, one retried)", full)
	}
}

// 7b. A replica reconnects 100 ms after each link it loses after applying
// batches, however often that happens; while its primary is down it
// retries every second at most.
func TestReplicationReconnectBackoff(t *testing.T) {
	p := StartCairn(t)
	proxy, r := startProxiedReplica(t, p)
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	const cuts = 6
	for i := 0; i < cuts; i++ {
		must(t, pc.Set(cx, "k", strconv.Itoa(i), 0).Err())
		waitCaughtUp(t, pc, rc)
		proxy.Cut()
	}
	delays := func() []string {
		var out []string
		for _, line := range strings.Split(r.Log.String(), "\n") {
			if strings.Contains(line, "replication link down; reconnecting") {
				_, in, _ := strings.Cut(line, " in=")
				out = append(out, in)
			}
		}
		return out
	}
	waitFor(t, 30*time.Second, "the replica to notice every cut", func() bool { return len(delays()) >= cuts })
	waitCaughtUp(t, pc, rc)
	if got := delays(); !slices.Equal(got, slices.Repeat([]string{"100ms"}, cuts)) {
		t.Fatalf("delays before reconnecting after %d cuts: %q; want 100ms each", cuts, got)
	}

	// The primary down: the delay doubles (from 200 ms: the last session
	// applied nothing) up to a second.
	p.Stop()
	want := []string{"200ms", "400ms", "800ms", "1s", "1s"}
	waitFor(t, 30*time.Second, "two attempts a second apart", func() bool { return len(delays()) >= cuts+len(want) })
	if got := delays()[cuts : cuts+len(want)]; !slices.Equal(got, want) {
		t.Fatalf("delays before reconnecting while the primary is down: %q; want %q", got, want)
	}
	p.Restart()
	must(t, pc.Set(cx, "k", "after", 0).Err())
	waitCaughtUp(t, pc, rc)
	if got := rc.Get(cx, "k").Val(); got != "after" {
		t.Fatalf("replica's k after the primary's restart: %q", got)
	}
}

// 8. Keyspace notifications on a replica (proposal §6).
func TestReplicationNotifications(t *testing.T) {
	p := StartCairn(t, "--notify-keyspace-events", "KEA")
	r := startReplica(t, p, "--notify-keyspace-events", "KEA")
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	waitCaughtUp(t, pc, rc)
	onPrimary := subscribeEvents(t, p.Client(), "__key*@0__:*")
	onReplica := subscribeEvents(t, r.Client(), "__key*@0__:*")

	// Replica subscribers receive the same set/del events as the
	// primary's, in the same per-key order.
	for i := 0; i < 30; i++ {
		k := fmt.Sprintf("k%d", i%7)
		pc.Set(cx, k, strconv.Itoa(i), 0)
		if i%3 == 0 {
			pc.Del(cx, k, "missing")
		}
	}
	pc.Set(cx, "k-nx", "x", 0)
	pc.SetNX(cx, "k-nx", "y", 0) // fails: no event
	// One batch, several deleted keys: one event pair per key.
	pc.Set(cx, "x1", "1", 0)
	pc.Set(cx, "x2", "1", 0)
	pc.Set(cx, "x3", "1", 0)
	pc.Del(cx, "x1", "missing", "x2", "x3")
	// Expiry publishes "expired" on both nodes; FLUSHDB nothing.
	pc.Set(cx, "exp", "1", 0)
	pc.PExpire(cx, "exp", time.Millisecond)
	waitFor(t, 10*time.Second, "exp to expire", func() bool { return stat(t, pc, "stats", "expired_keys") == 1 })
	wantEvents := onPrimary.until(pc)
	if len(wantEvents) != 2*(30+10+1+6+3) || !slices.Contains(wantEvents, "__keyevent@0__:expired=exp") {
		t.Fatalf("primary published %d events: %q", len(wantEvents), wantEvents)
	}
	expectEvents(t, "replica events", onReplica.until(pc), wantEvents...)
	pc.FlushDB(cx)
	expectEvents(t, "FLUSHDB on the primary", onPrimary.until(pc))
	expectEvents(t, "FLUSHDB on the replica", onReplica.until(pc))

	// Class bits off on the primary: the replica, with KEA, has nothing
	// to publish. The marker, a replicated PUBLISH, proves it.
	must(t, pc.ConfigSet(cx, "notify-keyspace-events", "").Err())
	pc.Set(cx, "quiet", "1", 0)
	pc.Del(cx, "quiet", "k1")
	expectEvents(t, "primary with notifications off", onReplica.until(pc))
	expectEvents(t, "primary's own subscriber", onPrimary.until(pc))
	must(t, pc.ConfigSet(cx, "notify-keyspace-events", "KEA").Err())

	// A replica restart (kill -9, replay of its WAL) republishes nothing.
	r.Kill()
	r.Restart()
	rc = r.Client()
	waitCaughtUp(t, pc, rc)
	onReplica = subscribeEvents(t, r.Client(), "__key*@0__:*")
	expectEvents(t, "after the replica's restart", onReplica.until(pc))
	pc.Set(cx, "after", "1", 0)
	expectEvents(t, "one write after the restart", onReplica.until(pc), "__keyspace@0__:after=set", "__keyevent@0__:set=after")

	// A full sync publishes nothing, so it disconnects the replica's
	// keyspace subscribers; other subscribers stay.
	keyspace := r.Raw()
	if got := keyspace.Do("PSUBSCRIBE", "__keyevent@0__:*"); !strings.HasPrefix(got, "*3\r\n$10\r\npsubscribe\r\n") {
		t.Fatalf("PSUBSCRIBE: %q", got)
	}
	plain := r.Raw()
	if got := plain.Do("SUBSCRIBE", "news"); !strings.HasPrefix(got, "*3\r\n$9\r\nsubscribe\r\n") {
		t.Fatalf("SUBSCRIBE: %q", got)
	}
	other := StartCairn(t)
	oc := other.Client()
	writeMix(t, oc, "o", 100)
	// As a FLUSHALL would, the full sync breaks the WATCH of a key of
	// the old data or of the new, not of a key in neither.
	must(t, pc.Set(cx, "only-old", "1", 0).Err())
	must(t, oc.Set(cx, "only-new", "1", 0).Err())
	waitCaughtUp(t, pc, rc)
	watchers := map[string]*RawConn{}
	for _, k := range []string{"only-old", "only-new", "in-neither"} {
		watchers[k] = r.Raw()
		if got := watchers[k].Do("WATCH", k); got != "+OK\r\n" {
			t.Fatalf("WATCH %s on the replica: %q", k, got)
		}
	}
	must(t, rc.Do(cx, "REPLICAOF", "127.0.0.1", strconv.Itoa(other.Port)).Err())
	expectEOF(t, keyspace, "keyspace subscriber after a full sync")
	waitCaughtUp(t, oc, rc)
	compareData(t, "after the full sync from another primary", oc, rc)
	for k, want := range map[string]string{"only-old": "*-1\r\n", "only-new": "*-1\r\n", "in-neither": "*1\r\n+PONG\r\n"} {
		if got := execPing(t, watchers[k]); got != want {
			t.Errorf("WATCH %s on the replica, then a full sync: EXEC %q, want %q", k, got, want)
		}
	}
	if n := rc.Publish(cx, "news", "still here").Val(); n != 1 {
		t.Fatalf("PUBLISH news on the replica reached %d subscribers", n)
	}
	if got := plain.Reply(); got != "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$10\r\nstill here\r\n" {
		t.Fatalf("plain subscriber after the full sync: %q", got)
	}
}

// Replicated events of a namespace reach that namespace's subscribers
// and the admin on the replica, on the namespace's channel.
func TestReplicationNotificationsNamespaces(t *testing.T) {
	args := []string{"--requirepass", adminPass, "--masterauth", adminPass, "--notify-keyspace-events", "KEA"}
	p := StartCairn(t, args...)
	r := startReplica(t, p, args...)
	cx := ctx(t)
	pc := p.Client(withPassword(adminPass))
	must(t, pc.Do(cx, "NAMESPACE", "ADD", "tenant A", "ta").Err())
	waitCaughtUp(t, pc, r.Client(withPassword(adminPass)))
	admin := subscribeEvents(t, r.Client(withPassword(adminPass)), "__keyevent@*")
	tenant := subscribeEvents(t, r.Client(withPassword("ta")), "__keyevent@*")
	pc.Set(cx, "k", "1", 0)
	p.Client(withPassword("ta")).Set(cx, "k", "2", 0)
	p.Client(withPassword("ta")).Del(cx, "k")
	expectEvents(t, "admin on the replica", admin.until(pc),
		"__keyevent@0__:set=k", "__keyevent@ns:tenant%20A__:set=k", "__keyevent@ns:tenant%20A__:del=k")
	expectEvents(t, "tenant on the replica", tenant.until(pc),
		"__keyevent@ns:tenant%20A__:set=k", "__keyevent@ns:tenant%20A__:del=k")
}

// 9. PUBLISH on the primary reaches both nodes' subscribers; PUBLISH on
// the replica only the replica's.
func TestReplicationPublish(t *testing.T) {
	p := StartCairn(t)
	r := startReplica(t, p)
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	waitCaughtUp(t, pc, rc)
	onPrimary := subscribeEvents(t, p.Client(), "news*")
	onReplica := subscribeEvents(t, r.Client(), "news*")
	if n := pc.Publish(cx, "news", "from the primary").Val(); n != 1 {
		t.Fatalf("PUBLISH on the primary counted %d receivers; want its own subscriber only", n)
	}
	if n := rc.Publish(cx, "news.replica", "from the replica").Val(); n != 1 {
		t.Fatalf("PUBLISH on the replica counted %d receivers", n)
	}
	expectEvents(t, "primary subscriber", onPrimary.until(pc), "news=from the primary")
	got := onReplica.until(pc)
	sort.Strings(got) // the replica's own PUBLISH races the replicated one
	expectEvents(t, "replica subscriber", got, "news.replica=from the replica", "news=from the primary")
}

// 10. WAIT counts the replica that acknowledged the write.
func TestReplicationWait(t *testing.T) {
	p := StartCairn(t)
	r := startReplica(t, p)
	pc := p.Client()
	cx := ctx(t)
	waitCaughtUp(t, pc, r.Client())
	must(t, pc.Set(cx, "k", "v", 0).Err())
	if n, err := pc.Do(cx, "WAIT", "1", "1000").Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 1000: %d, %v", n, err)
	}
	if n, err := pc.Do(cx, "WAIT", "2", "100").Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 2 100 with one replica: %d, %v", n, err)
	}
	if err := r.Client().Do(cx, "WAIT", "1", "100").Err(); err == nil || !strings.HasPrefix(err.Error(), "ERR WAIT cannot be used with replica instances") {
		t.Fatalf("WAIT on the replica: %v", err)
	}
}

// A replica restarted as a primary takes a new id (its former primary goes
// on with the old history) and keeps the old one as the previous id: sent
// back to its primary (REPLICAOF), it resumes partially if it wrote
// nothing, and full-syncs if it did.
func TestReplicationReplicaRestartedAsPrimary(t *testing.T) {
	p := StartCairn(t)
	r := startReplica(t, p)
	pc := p.Client()
	cx := ctx(t)
	writeMix(t, pc, "a", 300)
	waitCaughtUp(t, pc, r.Client())
	pid := infoOf(pc, "replication")["master_replid"]
	r.args = r.args[:len(r.args)-2] // no --slaveof from now on
	for _, write := range []bool{false, true} {
		r.Stop() // a replica
		r.Restart()
		rc := r.Client()
		info := infoOf(rc, "replication")
		if info["role"] != "master" || info["master_replid"] == pid || info["master_replid2"] != pid {
			t.Fatalf("replica restarted as a primary: %v; want a new id and %s as replid2", info, pid)
		}
		if write {
			must(t, rc.Set(cx, "diverged", "1", 0).Err())
		}
		full0, partial0 := syncStats(t, pc)
		must(t, rc.Do(cx, "REPLICAOF", "127.0.0.1", strconv.Itoa(p.Port)).Err())
		writeMix(t, pc, "b", 100)
		waitCaughtUp(t, pc, rc)
		compareData(t, "back to the primary", pc, rc)
		full, partial := syncStats(t, pc)
		if write && (full != full0+1 || partial != partial0) {
			t.Fatalf("after writing as a primary: sync_full %d -> %d, sync_partial_ok %d -> %d; want a full sync", full0, full, partial0, partial)
		}
		if !write && (full != full0 || partial != partial0+1) {
			t.Fatalf("without writes: sync_full %d -> %d, sync_partial_ok %d -> %d; want a partial resync", full0, full, partial0, partial)
		}
	}
}

// A full sync replaces the replica's history: the replication id it had
// before must not let anyone continue from it.
func TestReplicationFullSyncForgetsOldHistory(t *testing.T) {
	a := StartCairn(t)
	ac := a.Client()
	cx := ctx(t)
	// D follows A for 50 writes, then stops (clean: it keeps A's id).
	d := startReplica(t, a)
	writeMix(t, ac, "a", 50)
	waitCaughtUp(t, ac, d.Client())
	d.Stop()
	// B follows A to 1,000 writes and is promoted: A's id becomes its
	// previous one. Then B follows C, a primary with other data, from a
	// full sync, and C's history goes past D's offset.
	b := startReplica(t, a)
	writeMix(t, ac, "a2", 950)
	bc := b.Client()
	waitCaughtUp(t, ac, bc)
	must(t, bc.Do(cx, "REPLICAOF", "NO", "ONE").Err())
	c := StartCairn(t)
	cc := c.Client()
	writeMix(t, cc, "c", 10)
	must(t, bc.Do(cx, "REPLICAOF", "127.0.0.1", strconv.Itoa(c.Port)).Err())
	waitCaughtUp(t, cc, bc)
	writeMix(t, cc, "c2", 200)
	waitCaughtUp(t, cc, bc)
	// D, pointed at B with A's id and offset, must not continue from
	// C's batches.
	d.args = append(d.args[:len(d.args)-2], "--slaveof", "127.0.0.1 "+strconv.Itoa(b.Port))
	d.Restart()
	dc := d.Client()
	waitCaughtUp(t, bc, dc)
	compareData(t, "D following B", bc, dc)
}

// A replica that takes no bytes is dropped after repl-timeout; the
// primary's writes never wait for it, and it resumes partially.
func TestReplicationStalledReplicaDropped(t *testing.T) {
	p := StartCairn(t, "--repl-timeout", "1")
	r := startReplica(t, p)
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	writeMix(t, pc, "a", 100)
	waitCaughtUp(t, pc, rc)
	full0, partial0 := syncStats(t, pc)
	signal(t, r, syscall.SIGSTOP)
	stopped := true
	defer func() {
		if stopped {
			signal(t, r, syscall.SIGCONT)
		}
	}()
	big := strings.Repeat("x", 256<<10)
	var slowest time.Duration
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; infoOf(pc, "replication")["connected_slaves"] != "0"; i++ {
		if time.Now().After(deadline) {
			t.Fatal("the stalled replica was not dropped")
		}
		start := time.Now()
		must(t, pc.Set(cx, fmt.Sprintf("big:%d", i%20), big, 0).Err())
		slowest = max(slowest, time.Since(start))
	}
	if slowest > 2*time.Second {
		t.Fatalf("a write took %v while the replica stalled", slowest)
	}
	// The log reaches the test through a pipe: wait for the line.
	waitFor(t, 10*time.Second, "a log line for the dropped replica", func() bool {
		return strings.Contains(p.Log.String(), "dropping replica")
	})
	signal(t, r, syscall.SIGCONT)
	stopped = false
	waitCaughtUp(t, pc, rc)
	compareData(t, "after the stall", pc, rc)
	if full, partial := syncStats(t, pc); full != full0 || partial != partial0+1 {
		t.Fatalf("sync_full %d -> %d, sync_partial_ok %d -> %d; want a partial resync", full0, full, partial0, partial)
	}
}

// A replica that was away while retention removed the entries it needs
// comes back by a full sync.
func TestReplicationTrimmedLogForcesFullSync(t *testing.T) {
	// Segments of 256 KB (a test-only knob; 64 MB by default) and 1 MB
	// kept: 3 MB of writes trim the log past the replica's offset.
	p := StartCairnEnv(t, []string{"CAIRN_DEBUG_FAULTS=1", "CAIRN_DEBUG_REPL_SEGMENT_BYTES=262144"}, "--repl-log-max-bytes", "1mb")
	r := startReplica(t, p)
	pc := p.Client()
	cx := ctx(t)
	writeMix(t, pc, "a", 100)
	waitCaughtUp(t, pc, r.Client())
	r.Stop()
	big := strings.Repeat("y", 100<<10)
	pipe := pc.Pipeline()
	for i := 0; i < 30; i++ {
		pipe.Set(cx, fmt.Sprintf("big:%d", i%10), fmt.Sprint(i)+big, 0)
		if i%10 == 9 {
			if _, err := pipe.Exec(cx); err != nil {
				t.Fatal(err)
			}
		}
	}
	full0, _ := syncStats(t, pc)
	err0 := stat(t, pc, "stats", "sync_partial_err")
	r.Restart()
	rc := r.Client()
	waitCaughtUp(t, pc, rc)
	compareData(t, "after a full sync", pc, rc)
	if full := stat(t, pc, "stats", "sync_full"); full != full0+1 || stat(t, pc, "stats", "sync_partial_err") != err0+1 {
		t.Fatalf("sync_full %d -> %d, sync_partial_err %d -> %d; want one refused partial and a full sync\n%s",
			full0, full, err0, stat(t, pc, "stats", "sync_partial_err"), p.Log.String())
	}
}

// TestReplicationServeStaleData: a replica whose link is down answers
// reads (and PING) only while slave-serve-stale-data is yes, as Redis
// 7.0.15 does (checked by hand against a replica of a closed port).
func TestReplicationServeStaleData(t *testing.T) {
	nowhere := freePort(t) // nothing listens there
	r := StartCairn(t, "--slaveof", fmt.Sprintf("127.0.0.1 %d", nowhere), "--slave-serve-stale-data", "no")
	raw := r.Raw()
	for _, c := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"GET", "k"}, "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n"},
		// PING is no stale command in Redis 7.0 either; ECHO is.
		{[]string{"PING"}, "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n"},
		{[]string{"ECHO", "hi"}, "$2\r\nhi\r\n"},
		{[]string{"SET", "k", "v"}, "-READONLY You can't write against a read only replica.\r\n"},
		{[]string{"CONFIG", "SET", "replica-serve-stale-data", "yes"}, "+OK\r\n"},
		{[]string{"GET", "k"}, "$-1\r\n"},
	} {
		if got := raw.Do(c.cmd...); got != c.want {
			t.Errorf("%v: got %q, want %q", c.cmd, got, c.want)
		}
	}
}

// TestReplicationTransactions: a transaction is one batch on the replica
// too, WATCH on a replica sees the primary's writes, and a replica queues
// no write.
func TestReplicationTransactions(t *testing.T) {
	p := StartCairn(t)
	r := startReplica(t, p)
	pc, rc := p.Client(), r.Client()
	waitCaughtUp(t, pc, rc)
	before := stat(t, pc, "replication", "master_repl_offset")
	pr := p.Raw()
	for _, step := range [][2]string{
		{"MULTI", "+OK\r\n"}, {"SET a 1", "+QUEUED\r\n"}, {"INCR a", "+QUEUED\r\n"}, {"RENAME a b", "+QUEUED\r\n"},
		{"EXEC", "*3\r\n+OK\r\n:2\r\n+OK\r\n"},
	} {
		if got := pr.Do(strings.Fields(step[0])...); got != step[1] {
			t.Fatalf("primary %s: %q, want %q", step[0], got, step[1])
		}
	}
	if got := stat(t, pc, "replication", "master_repl_offset"); got != before+1 {
		t.Fatalf("the transaction took %d batches, want 1", got-before)
	}
	waitCaughtUp(t, pc, rc)
	rr := r.Raw()
	for _, step := range [][2]string{
		{"MULTI", "+OK\r\n"}, {"GET b", "+QUEUED\r\n"}, {"EXISTS a", "+QUEUED\r\n"}, {"EXEC", "*2\r\n$1\r\n2\r\n:0\r\n"},
		{"MULTI", "+OK\r\n"}, {"SET x 1", "-READONLY You can't write against a read only replica.\r\n"},
		{"EXEC", "-EXECABORT Transaction discarded because of previous errors.\r\n"},
		{"WATCH b", "+OK\r\n"},
	} {
		if got := rr.Do(strings.Fields(step[0])...); got != step[1] {
			t.Fatalf("replica %s: %q, want %q", step[0], got, step[1])
		}
	}
	must(t, pc.Set(ctx(t), "b", "3", 0).Err())
	waitCaughtUp(t, pc, rc)
	for _, step := range [][2]string{{"MULTI", "+OK\r\n"}, {"GET b", "+QUEUED\r\n"}, {"EXEC", "*-1\r\n"}} {
		if got := rr.Do(strings.Fields(step[0])...); got != step[1] {
			t.Fatalf("replica after the primary wrote a watched key, %s: %q, want %q", step[0], got, step[1])
		}
	}

	// A transaction that writes keys, flushes and writes again: the
	// replica has only what follows the flush (its cache kept the keys
	// written before it, once), and the flush breaks a replica's WATCH of
	// a key that was there but not one of a key that was not.
	for _, cmd := range [][]string{{"WATCH", "b"}, {"WATCH", "absent"}} {
		wc := r.Raw()
		if got := wc.Do(cmd...); got != "+OK\r\n" {
			t.Fatalf("replica %v: %q", cmd, got)
		}
		defer func(want string) {
			for _, step := range [][2]string{{"MULTI", "+OK\r\n"}, {"PING", "+QUEUED\r\n"}, {"EXEC", want}} {
				if got := wc.Do(step[0]); got != step[1] {
					t.Errorf("replica, %v then a flush: %s: %q, want %q", cmd, step[0], got, step[1])
				}
			}
		}(map[string]string{"b": "*-1\r\n", "absent": "*1\r\n+PONG\r\n"}[cmd[1]])
	}
	for _, step := range [][2]string{
		{"MULTI", "+OK\r\n"}, {"SET k v", "+QUEUED\r\n"}, {"FLUSHDB", "+QUEUED\r\n"}, {"SET j w", "+QUEUED\r\n"},
		{"EXEC", "*3\r\n+OK\r\n+OK\r\n+OK\r\n"},
	} {
		if got := pr.Do(strings.Fields(step[0])...); got != step[1] {
			t.Fatalf("primary %s: %q, want %q", step[0], got, step[1])
		}
	}
	waitCaughtUp(t, pc, rc)
	for _, step := range [][2]string{{"GET k", "$-1\r\n"}, {"GET j", "$1\r\nw\r\n"}, {"GET b", "$-1\r\n"}, {"DBSIZE", ":1\r\n"}} {
		if got := rr.Do(strings.Fields(step[0])...); got != step[1] {
			t.Errorf("replica after MULTI SET k, FLUSHDB, SET j: %s: %q, want %q", step[0], got, step[1])
		}
	}
}

// TestReplicationReadsNeverGoBackwards has writers INCR a few keys on the
// primary while readers MGET them on both nodes, and the replica's link is
// cut now and then: every reader must see each counter only grow (no
// stale row-cache entry, no batch applied twice or undone by a partial
// resync), and both nodes must end with every increment counted.
func TestReplicationReadsNeverGoBackwards(t *testing.T) {
	p := StartCairn(t)
	proxy, r := startProxiedReplica(t, p)
	pc, rc := p.Client(), r.Client()
	waitCaughtUp(t, pc, rc)
	const (
		writers, incrs = 4, 1500
		counters       = 8
		readerRounds   = 100000 // bounds each reader if the writers hang
	)
	keys := make([]string, counters)
	for i := range keys {
		keys[i] = fmt.Sprintf("counter:%d", i)
	}
	cx := ctx(t)
	var writing sync.WaitGroup
	for w := range writers {
		writing.Add(1)
		go func() {
			defer writing.Done()
			c := p.Client()
			defer c.Close()
			for i := range incrs {
				if err := c.Incr(cx, keys[(w+i*7)%counters]).Err(); err != nil {
					t.Errorf("INCR: %v", err)
					return
				}
				if w == 0 && i%300 == 150 {
					proxy.Cut()
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { writing.Wait(); close(done) }()
	var reading sync.WaitGroup
	for _, node := range []*Node{p, p, r, r} {
		reading.Add(1)
		go func() {
			defer reading.Done()
			c := node.Client()
			defer c.Close()
			last := make([]int64, counters)
			for round := 0; round < readerRounds; round++ {
				select {
				case <-done:
					return
				default:
				}
				vals, err := c.MGet(cx, keys...).Result()
				if err != nil {
					t.Errorf("MGET on %s: %v", node.Name, err)
					return
				}
				for i, v := range vals {
					var n int64
					if v != nil {
						n, _ = strconv.ParseInt(v.(string), 10, 64)
					}
					if n < last[i] {
						t.Errorf("%s on port %d: %s went from %d back to %d", node.Name, node.Port, keys[i], last[i], n)
						return
					}
					last[i] = n
				}
			}
		}()
	}
	reading.Wait()
	<-done
	waitCaughtUp(t, pc, rc)
	for _, c := range []*redis.Client{pc, rc} {
		var sum int64
		for _, k := range keys {
			n, _ := c.Get(cx, k).Int64()
			sum += n
		}
		if sum != writers*incrs {
			t.Errorf("counters sum to %d; want %d", sum, writers*incrs)
		}
	}
	if proxy.Accepted() < 2 {
		t.Errorf("the replica connected %d times; the cuts did not take", proxy.Accepted())
	}
}

// TestReplicationFailoverWithClientPause: the failover CLIENT PAUSE is for.
// The primary pauses writes while a writer keeps writing; once the
// replica's offset equals the primary's, the replica is promoted and the
// old primary follows it. The write that waited for the pause is then
// refused as written to a replica, not applied behind the new primary's
// back, and both nodes end with the same data.
func TestReplicationFailoverWithClientPause(t *testing.T) {
	p := StartCairn(t)
	r := startReplica(t, p)
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	writeMix(t, pc, "f", 500)
	w := startWriter(pc, "w")
	w.waitWrites(t, 100)

	admin := p.Raw()
	if got := admin.Do("CLIENT", "PAUSE", "60000", "WRITE"); got != "+OK\r\n" {
		t.Fatalf("CLIENT PAUSE = %q", got)
	}
	late := p.Raw()
	late.Send("SET late 1\r\n")
	waitBlocked(t, p, 2) // the writer's next SET and this one
	// Nothing moves the primary's offset now; the replica catches up.
	offset := stat(t, pc, "replication", "master_repl_offset")
	waitCaughtUp(t, pc, rc)
	if now := stat(t, pc, "replication", "master_repl_offset"); now != offset {
		t.Fatalf("the primary's offset moved from %d to %d during the pause", offset, now)
	}

	must(t, rc.Do(cx, "REPLICAOF", "NO", "ONE").Err())
	must(t, pc.Do(cx, "REPLICAOF", "127.0.0.1", strconv.Itoa(r.Port)).Err())
	if got := admin.Do("CLIENT", "UNPAUSE"); got != "+OK\r\n" {
		t.Fatalf("CLIENT UNPAUSE = %q", got)
	}
	if got := late.Reply(); got != "-READONLY You can't write against a read only replica.\r\n" {
		t.Fatalf("the SET that waited for the pause = %q", got)
	}
	close(w.stop)
	if err := <-w.done; err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Fatalf("the writer's waiting SET: %v, want READONLY", err)
	}
	must(t, rc.Set(cx, "after", "1", 0).Err())
	waitCaughtUp(t, rc, pc)
	compareData(t, "old primary following the promoted replica", rc, pc)
	if n, err := rc.Exists(cx, "late").Result(); err != nil || n != 0 {
		t.Fatalf("EXISTS late on the new primary = %d, %v", n, err)
	}
}

// TestReplicationFullSyncProgressInInfo: while a full sync is under way
// (held back by the proxy after 256 KB), the replica's INFO replication
// shows Redis's transfer fields, with the bytes received so far and -1
// for the total, which Cairn's full sync does not know beforehand; once
// it is done they are gone.
func TestReplicationFullSyncProgressInInfo(t *testing.T) {
	p := StartCairn(t)
	pc := p.Client()
	cx := ctx(t)
	big := strings.Repeat("x", 1<<20)
	for i := range 4 {
		must(t, pc.Set(cx, fmt.Sprintf("big%d", i), big, 0).Err())
	}
	proxy := StartProxy(t, p.Addr())
	proxy.HoldAfter(256 << 10)
	r := StartCairn(t, "--slaveof", proxy.SlaveOf())
	rc := r.Client()
	var m map[string]string
	waitFor(t, 30*time.Second, "the full sync to be held back midway", func() bool {
		m = infoOf(rc, "replication")
		read, _ := strconv.ParseInt(m["master_sync_read_bytes"], 10, 64)
		return m["master_sync_in_progress"] == "1" && read > 0
	})
	for field, want := range map[string]string{"master_sync_total_bytes": "-1", "master_sync_left_bytes": "-1",
		"master_sync_perc": "0.00", "master_link_status": "down"} {
		if m[field] != want {
			t.Errorf("%s = %q during the full sync, want %q (%v)", field, m[field], want, m)
		}
	}
	if read, _ := strconv.ParseInt(m["master_sync_read_bytes"], 10, 64); read > 256<<10 {
		t.Errorf("master_sync_read_bytes %d, more than the proxy let through", read)
	}
	if _, ok := m["master_sync_last_io_seconds_ago"]; !ok {
		t.Errorf("no master_sync_last_io_seconds_ago during the full sync: %v", m)
	}
	proxy.Release()
	waitCaughtUp(t, pc, rc)
	m = infoOf(rc, "replication")
	if _, ok := m["master_sync_read_bytes"]; ok || m["master_sync_in_progress"] != "0" {
		t.Fatalf("transfer fields after the full sync: %v", m)
	}
}

// TestMemberReadsFollowWrites: member reads (HGET, SISMEMBER, ZSCORE,
// LINDEX), which the member cache answers once read, follow every later
// write, on the primary and on a replica, where replicated batches change
// members without taking their keys' locks: values replaced, members
// added and removed, a key deleted and made again, list positions trimmed
// and pushed again.
func TestMemberReadsFollowWrites(t *testing.T) {
	p := StartCairn(t)
	r := StartCairn(t, "--slaveof", "127.0.0.1 "+strconv.Itoa(p.Port))
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	reads := func(c *redis.Client) string {
		h, _ := c.HGet(cx, "h", "f").Result()
		in, _ := c.SIsMember(cx, "s", "b").Result()
		z, _ := c.ZScore(cx, "z", "m").Result()
		l, _ := c.LIndex(cx, "l", 1).Result()
		return fmt.Sprintf("h.f=%s s.b=%v z.m=%v l[1]=%s", h, in, z, l)
	}
	do := func(cmds ...[]any) {
		t.Helper()
		for _, cmd := range cmds {
			must(t, pc.Do(cx, cmd...).Err())
		}
		waitCaughtUp(t, pc, rc)
	}
	do([]any{"HSET", "h", "f", "v1"}, []any{"SADD", "s", "a"}, []any{"ZADD", "z", "1", "m"}, []any{"RPUSH", "l", "a", "b", "c"})
	steps := []struct {
		cmds [][]any
		want string
	}{
		{nil, "h.f=v1 s.b=false z.m=1 l[1]=b"},
		{[][]any{{"HSET", "h", "f", "v2"}, {"SADD", "s", "b"}, {"ZADD", "z", "2", "m"}, {"LSET", "l", "1", "B"}},
			"h.f=v2 s.b=true z.m=2 l[1]=B"},
		{[][]any{{"HDEL", "h", "f"}, {"SREM", "s", "b"}, {"ZREM", "z", "m"}, {"LTRIM", "l", "0", "0"}},
			"h.f= s.b=false z.m=0 l[1]="},
		{[][]any{{"HSET", "h", "f", "v3"}, {"SADD", "s", "b"}, {"ZADD", "z", "3", "m"}, {"RPUSH", "l", "x", "y"}},
			"h.f=v3 s.b=true z.m=3 l[1]=x"},
		{[][]any{{"DEL", "h", "s", "z", "l"}, {"HSET", "h", "f", "v4"}, {"SADD", "s", "b"}, {"ZADD", "z", "4", "m"}, {"RPUSH", "l", "p", "q"}},
			"h.f=v4 s.b=true z.m=4 l[1]=q"},
		{[][]any{{"MULTI"}, {"HSET", "h", "f", "v5"}, {"SREM", "s", "b"}, {"ZINCRBY", "z", "1", "m"}, {"LPOP", "l"}, {"EXEC"}},
			"h.f=v5 s.b=false z.m=5 l[1]="},
	}
	for i, s := range steps {
		if s.cmds != nil {
			tx := pc.TxPipeline()
			for _, cmd := range s.cmds {
				if cmd[0] != "MULTI" && cmd[0] != "EXEC" {
					tx.Do(cx, cmd...)
				}
			}
			if _, err := tx.Exec(cx); err != nil && err != redis.Nil {
				t.Fatalf("step %d: %v", i, err)
			}
			waitCaughtUp(t, pc, rc)
		}
		// Each read twice: the first may fill the cache, the second
		// comes from it.
		for _, node := range []struct {
			name string
			c    *redis.Client
		}{{"primary", pc}, {"replica", rc}} {
			for range 2 {
				if got := reads(node.c); got != s.want {
					t.Fatalf("step %d on the %s: %s, want %s", i, node.name, got, s.want)
				}
			}
		}
	}
	if hits := stat(t, rc, "persistence", "member_cache_hits"); hits == 0 {
		t.Fatal("the replica's member cache answered no read")
	}
}
