package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// StartSentinel starts Debian's redis-sentinel on a free port, monitoring
// the primary on primaryPort as "mymaster" with a quorum of one, and
// waits until it answers PING. A node is down after 3 s without a reply:
// Sentinel pings once a second, so 1 s made it take a node it had just
// connected to for down now and then (seen under the race detector).
func StartSentinel(t *testing.T, primaryPort int) *Node {
	t.Helper()
	bin, err := exec.LookPath("redis-sentinel")
	if err != nil {
		t.Fatalf("redis-sentinel not installed (make test installs it): %v", err)
	}
	n := &Node{t: t, Name: "sentinel", Port: freePort(t), Dir: t.TempDir(), bin: bin}
	conf := filepath.Join(n.Dir, "sentinel.conf")
	body := fmt.Sprintf(`bind 127.0.0.1
port %d
daemonize no
dir %s
sentinel monitor mymaster 127.0.0.1 %d 1
sentinel down-after-milliseconds mymaster 3000
sentinel failover-timeout mymaster 10000
`, n.Port, n.Dir, primaryPort)
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	n.args = []string{conf}
	n.start()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("Sentinel's log:\n%s", n.Log.Tail(8000))
		}
		n.Kill()
	})
	return n
}

// sentinelPrimaryPort returns the port Sentinel names for mymaster, 0 if
// it does not answer.
func sentinelPrimaryPort(s *redis.Client) int {
	cx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addr, err := s.Do(cx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster").StringSlice()
	if err != nil || len(addr) != 2 {
		return 0
	}
	port, _ := strconv.Atoi(addr[1])
	return port
}

// sentinelMasterFlags returns the flags Sentinel gives mymaster ("master"
// once no failover is in progress), "" if it does not answer.
func sentinelMasterFlags(s *redis.Client) string {
	cx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fields, err := s.Do(cx, "SENTINEL", "MASTER", "mymaster").StringSlice()
	if err != nil {
		return ""
	}
	for i := 0; i+1 < len(fields); i += 2 {
		if fields[i] == "flags" {
			return fields[i+1]
		}
	}
	return ""
}

// TestSentinelFailover: Redis Sentinel watches a Cairn primary and two
// replicas, one with slave-priority 0 (never to be promoted). The primary
// is killed (-9): Sentinel promotes the other replica (SLAVEOF NO ONE
// inside MULTI, as Sentinel sends it) and points the first at it, with
// every key the primary had; a go-redis failover client, which asks
// Sentinel for the primary, writes to the new one. The old primary,
// started again as a primary, is turned into a replica of the new one and
// gets the writes made meanwhile.
func TestSentinelFailover(t *testing.T) {
	p := StartCairn(t)
	r1, r2 := startReplica(t, p, "--slave-priority", "0"), startReplica(t, p)
	pc, c1, c2 := p.Client(), r1.Client(), r2.Client()
	for c, want := range map[*redis.Client]string{c1: "0", c2: "100"} {
		m := infoOf(c, "replication")
		if m["slave_priority"] != want || m["replica_announced"] != "1" || m["slave_read_repl_offset"] == "" {
			t.Fatalf("INFO replication of a replica: %v; want slave_priority %s, replica_announced and slave_read_repl_offset", m, want)
		}
	}
	cx := ctx(t)
	writeMix(t, pc, "s", 200)

	s := StartSentinel(t, p.Port)
	sc := s.Client()
	waitFor(t, 30*time.Second, "Sentinel to find both replicas", func() bool {
		reps, err := sc.Do(cx, "SENTINEL", "REPLICAS", "mymaster").Slice()
		return err == nil && len(reps) == 2
	})

	// A client that finds the primary through Sentinel, as applications do.
	fc := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "mymaster", SentinelAddrs: []string{s.Addr()},
		Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	t.Cleanup(func() { fc.Close() })
	must(t, fc.Set(cx, "via-sentinel", "before", 0).Err())
	waitCaughtUp(t, pc, c1)
	waitCaughtUp(t, pc, c2)
	keys := pc.DBSize(cx).Val()

	p.Kill()
	var newPort int
	waitFor(t, 60*time.Second, "Sentinel to promote a replica", func() bool {
		newPort = sentinelPrimaryPort(sc)
		return newPort != 0 && newPort != p.Port
	})
	if newPort != r2.Port {
		t.Fatalf("Sentinel promoted port %d, want %d (the other replica has slave-priority 0)", newPort, r2.Port)
	}
	primary, other := c2, c1
	waitRole(t, primary, "master")
	waitFor(t, 60*time.Second, "the other replica to follow the new primary", func() bool {
		m := infoOf(other, "replication")
		return m["role"] == "slave" && m["master_port"] == strconv.Itoa(newPort) && m["master_link_status"] == "up"
	})
	if n := primary.DBSize(cx).Val(); n != keys {
		t.Fatalf("the new primary has %d keys, the old one had %d", n, keys)
	}
	waitFor(t, 30*time.Second, "the Sentinel client to write to the new primary", func() bool {
		return fc.Set(cx, "via-sentinel", "after", 0).Err() == nil
	})
	if got := primary.Get(cx, "via-sentinel").Val(); got != "after" {
		t.Fatalf("GET via-sentinel on the new primary = %q", got)
	}
	writeMix(t, primary, "after", 50)
	waitCaughtUp(t, primary, other)
	compareData(t, "the replica that stayed", primary, other)

	// The old primary comes back once Sentinel has ended the failover
	// (before, it could take it for the primary still).
	waitFor(t, 60*time.Second, "Sentinel to end the failover", func() bool {
		return sentinelMasterFlags(sc) == "master" && sentinelPrimaryPort(sc) == newPort
	})
	p.Restart()
	waitFor(t, 60*time.Second, "Sentinel to make the old primary a replica", func() bool {
		m := infoOf(pc, "replication")
		return m["role"] == "slave" && m["master_port"] == strconv.Itoa(newPort) && m["master_link_status"] == "up"
	})
	waitCaughtUp(t, primary, pc)
	compareData(t, "the old primary", primary, pc)
}

// TestRoleChangeBesideKeys: EXEC refuses a transaction that queues
// REPLICAOF beside a command that names a key (Redis would run it; Cairn's
// role change waits for the replication link, which may wait for the keys
// EXEC holds), and runs nothing of it.
func TestRoleChangeBesideKeys(t *testing.T) {
	c := StartCairn(t).Raw()
	c.Expect("+OK\r\n", "MULTI")
	c.Expect("+QUEUED\r\n", "SET", "a", "1")
	c.Expect("+QUEUED\r\n", "REPLICAOF", "127.0.0.1", "1")
	c.Expect("-EXECABORT Transaction discarded: Cairn runs REPLICAOF in a transaction only beside commands that name no key.\r\n", "EXEC")
	c.Expect("$-1\r\n", "GET", "a")
	c.Expect("*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n", "ROLE")
}

// TestReplicaAnnounce: a replica started with replica-announce-ip and
// -port (behind NAT, say) is listed under them by its primary's INFO
// replication and ROLE, which FAILOVER TO and Redis Sentinel go by; its
// replica-announced shows in its own INFO replication.
func TestReplicaAnnounce(t *testing.T) {
	p := StartCairn(t)
	r := startReplica(t, p, "--replica-announce-ip", "10.9.8.7", "--replica-announce-port", "7777")
	pc := p.Client()
	waitFor(t, 30*time.Second, "the replica to be online", func() bool {
		return strings.HasPrefix(infoOf(pc, "replication")["slave0"], "ip=10.9.8.7,port=7777,state=online,")
	})
	role, err := pc.Do(ctx(t), "ROLE").Slice()
	if err != nil || len(role) != 3 {
		t.Fatalf("ROLE = %v, %v", role, err)
	}
	if got := fmt.Sprint(role[2]); !strings.HasPrefix(got, "[[10.9.8.7 7777 ") {
		t.Fatalf("ROLE's replicas = %s, want the announced address", got)
	}
	// replica-announced no asks Sentinel to keep the replica to itself.
	rc := r.Client()
	must(t, rc.ConfigSet(ctx(t), "replica-announced", "no").Err())
	if got := infoOf(rc, "replication")["replica_announced"]; got != "0" {
		t.Fatalf("replica_announced after CONFIG SET replica-announced no = %q", got)
	}
	// FAILOVER knows the replica by its announced address only.
	p.Raw().Expect("-ERR FAILOVER target HOST and PORT is not a replica.\r\n", "FAILOVER", "TO", "127.0.0.1", strconv.Itoa(r.Port))
}
