package tests

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// failoverState returns INFO replication's master_failover_state.
func failoverState(c *redis.Client) string {
	return infoOf(c, "replication")["master_failover_state"]
}

// waitRole waits until INFO replication's role is role (for a replica,
// with its link up).
func waitRole(t *testing.T, c *redis.Client, role string) {
	t.Helper()
	waitFor(t, 30*time.Second, "role "+role, func() bool {
		m := infoOf(c, "replication")
		return m["role"] == role && (role == "master" || m["master_link_status"] == "up") &&
			m["master_failover_state"] == "no-failover"
	})
}

// TestFailover: FAILOVER on a primary under writes holds the writes back,
// waits for the replica, swaps the roles, and the writes that waited meet
// a replica (READONLY); the old primary continues from the new one
// partially, and both hold the same data, later writes included. A second
// replica keeps following the old primary, which now relays.
func TestFailover(t *testing.T) {
	p := StartCairn(t)
	r := startReplica(t, p)
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	writeMix(t, pc, "f", 300)
	waitCaughtUp(t, pc, rc)
	w := startWriter(pc, "w")
	w.waitWrites(t, 50)

	admin := p.Raw()
	admin.Expect("+OK\r\n", "FAILOVER", "TO", "127.0.0.1", strconv.Itoa(r.Port))
	waitRole(t, rc, "master")
	waitRole(t, pc, "slave")
	if err := <-w.done; err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Fatalf("the writer's SET during the failover: %v, want READONLY", err)
	}
	// Every write the primary acknowledged is on the new primary.
	acked := w.n.Load()
	keys := make([]string, acked)
	for i := range keys {
		keys[i] = "w:" + strconv.FormatInt(int64(i), 10)
	}
	if n, err := rc.Exists(cx, keys...).Result(); err != nil || n != acked {
		t.Fatalf("the new primary has %d of the %d acknowledged writes (%v)", n, acked, err)
	}
	if got := infoOf(pc, "replication")["master_port"]; got != strconv.Itoa(r.Port) {
		t.Fatalf("the old primary follows port %s, want %d", got, r.Port)
	}
	// The old primary continued from the new one's history: a partial
	// resync, the only one the new primary served.
	if full, partial := syncStats(t, rc); full != 0 || partial != 1 {
		t.Fatalf("the new primary served %d full and %d partial syncs, want 0 and 1", full, partial)
	}
	must(t, rc.Set(cx, "after", "1", 0).Err())
	waitCaughtUp(t, rc, pc)
	compareData(t, "old primary following the promoted replica", rc, pc)
	if got := admin.Do("SET", "x", "1"); got != "-READONLY You can't write against a read only replica.\r\n" {
		t.Fatalf("SET on the old primary = %q", got)
	}
	admin.Expect("-ERR FAILOVER is not valid when server is a replica.\r\n", "FAILOVER")
	admin.Expect("-ERR No failover in progress.\r\n", "FAILOVER", "ABORT")
}

// TestFailoverAnyReplicaWithTwo: FAILOVER without TO picks a replica that
// has everything; the other replica stays with the old primary, which
// relays the new primary's writes to it.
func TestFailoverAnyReplicaWithTwo(t *testing.T) {
	p := StartCairn(t)
	r1, r2 := startReplica(t, p), startReplica(t, p)
	pc, c1, c2 := p.Client(), r1.Client(), r2.Client()
	cx := ctx(t)
	writeMix(t, pc, "a", 200)
	waitCaughtUp(t, pc, c1)
	waitCaughtUp(t, pc, c2)
	must(t, pc.Do(cx, "FAILOVER").Err())
	waitRole(t, pc, "slave")
	port := infoOf(pc, "replication")["master_port"]
	var newPrimary, other *redis.Client
	switch port {
	case strconv.Itoa(r1.Port):
		newPrimary, other = c1, c2
	case strconv.Itoa(r2.Port):
		newPrimary, other = c2, c1
	default:
		t.Fatalf("the old primary follows port %s, neither replica (%d, %d)", port, r1.Port, r2.Port)
	}
	waitRole(t, newPrimary, "master")
	writeMix(t, newPrimary, "b", 100)
	waitCaughtUp(t, newPrimary, pc)
	waitCaughtUp(t, pc, other)
	compareData(t, "the old primary", newPrimary, pc)
	compareData(t, "the replica that stayed", newPrimary, other)
}

// TestFailoverTimeoutAbortAndForce: while the replica is stopped
// (SIGSTOP) it acknowledges nothing. FAILOVER then waits with writes held
// back, rolls back at its TIMEOUT or on FAILOVER ABORT (the held write
// then runs on the primary), and with TO ... FORCE fails over anyway once
// the timeout passes; the nodes converge on the new primary's data.
func TestFailoverTimeoutAbortAndForce(t *testing.T) {
	p := StartCairn(t)
	r := startReplica(t, p)
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	writeMix(t, pc, "t", 100)
	waitCaughtUp(t, pc, rc)
	signal(t, r, syscall.SIGSTOP)
	stopped := true
	defer func() {
		if stopped {
			signal(t, r, syscall.SIGCONT)
		}
	}()
	must(t, pc.Set(cx, "unacked", "1", 0).Err())
	admin, writer := p.Raw(), p.Raw()

	// Rolled back at the timeout.
	admin.Expect("+OK\r\n", "FAILOVER", "TIMEOUT", "700")
	if got := failoverState(pc); got != "waiting-for-sync" {
		t.Fatalf("master_failover_state = %q, want waiting-for-sync", got)
	}
	admin.Expect("-ERR FAILOVER already in progress.\r\n", "FAILOVER")
	admin.Expect("-ERR REPLICAOF not allowed while failing over.\r\n", "REPLICAOF", "NO", "ONE")
	writer.Send("*3\r\n$3\r\nSET\r\n$4\r\nheld\r\n$1\r\n1\r\n")
	waitBlocked(t, p, 1)
	// CLIENT UNPAUSE does not release the failover's hold.
	admin.Expect("+OK\r\n", "CLIENT", "UNPAUSE")
	if got := writer.Reply(); got != "+OK\r\n" {
		t.Fatalf("the held SET after the failover's timeout = %q", got)
	}
	if got := failoverState(pc); got != "no-failover" {
		t.Fatalf("master_failover_state after the timeout = %q", got)
	}
	if got := infoOf(pc, "replication")["role"]; got != "master" {
		t.Fatalf("role after the timeout = %q", got)
	}

	// Rolled back by FAILOVER ABORT.
	admin.Expect("+OK\r\n", "FAILOVER")
	writer.Send("*3\r\n$3\r\nSET\r\n$4\r\nheld\r\n$1\r\n2\r\n")
	waitBlocked(t, p, 1)
	admin.Expect("+OK\r\n", "FAILOVER", "ABORT")
	if got := writer.Reply(); got != "+OK\r\n" {
		t.Fatalf("the held SET after FAILOVER ABORT = %q", got)
	}
	waitFor(t, 10*time.Second, "no failover", func() bool { return failoverState(pc) == "no-failover" })

	// FORCE: fails over to the stopped replica once the timeout passes,
	// and completes when it runs again.
	admin.Expect("+OK\r\n", "FAILOVER", "TO", "127.0.0.1", strconv.Itoa(r.Port), "TIMEOUT", "300", "FORCE")
	waitFor(t, 10*time.Second, "failover-in-progress", func() bool { return failoverState(pc) == "failover-in-progress" })
	signal(t, r, syscall.SIGCONT)
	stopped = false
	waitRole(t, rc, "master")
	waitRole(t, pc, "slave")
	must(t, rc.Set(cx, "after", "1", 0).Err())
	waitCaughtUp(t, rc, pc)
	compareData(t, "after a forced failover", rc, pc)
}

// TestFailoverTargetRefusesOrDies: PSYNC FAILOVER is refused, with
// Redis's errors, by a primary and by a replica of another id; and a
// target killed (-9) after the failover chose it makes the old primary a
// primary again, serving writes.
func TestFailoverTargetRefusesOrDies(t *testing.T) {
	p := StartCairn(t)
	r := startReplica(t, p)
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	must(t, pc.Set(cx, "k", "v", 0).Err())
	waitCaughtUp(t, pc, rc)
	p.Raw().Expect("-ERR PSYNC FAILOVER can't be sent to a master.\r\n", "PSYNC", strings.Repeat("a", 40), "2", "FAILOVER")
	r.Raw().Expect("-ERR PSYNC FAILOVER replid must match my replid.\r\n", "PSYNC", strings.Repeat("a", 40), "2", "FAILOVER")
	if got := infoOf(rc, "replication")["role"]; got != "slave" {
		t.Fatalf("the replica's role after a refused PSYNC FAILOVER = %q", got)
	}

	signal(t, r, syscall.SIGSTOP)
	must(t, pc.Set(cx, "k", "v2", 0).Err())
	admin := p.Raw()
	admin.Expect("+OK\r\n", "FAILOVER", "TO", "127.0.0.1", strconv.Itoa(r.Port), "TIMEOUT", "200", "FORCE")
	waitFor(t, 10*time.Second, "failover-in-progress", func() bool { return failoverState(pc) == "failover-in-progress" })
	r.Kill()
	waitRole(t, pc, "master")
	must(t, pc.Set(cx, "k", "v3", 0).Err())
	if got := pc.Get(cx, "k").Val(); got != "v3" {
		t.Fatalf("GET k on the primary again = %q", got)
	}
	if !strings.Contains(p.Log.String(), "FAILOVER aborted") {
		t.Fatalf("the old primary did not log the abort:\n%s", p.Log.Tail(20))
	}
}

// TestFailoverKeepsNotifications: keyspace subscribers stay subscribed
// across a FAILOVER on both nodes. Before it the replica republishes the
// primary's events; after it the new primary publishes its own writes'
// events once, and the old primary, now a replica, republishes them.
func TestFailoverKeepsNotifications(t *testing.T) {
	p := StartCairn(t, "--notify-keyspace-events", "KEA")
	r := startReplica(t, p, "--notify-keyspace-events", "KEA")
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	waitCaughtUp(t, pc, rc)
	onP := subscribeEvents(t, p.Client(), "__keyevent@0__:*")
	onR := subscribeEvents(t, r.Client(), "__keyevent@0__:*")

	must(t, pc.Set(cx, "before", "1", 0).Err())
	expectEvents(t, "the primary's own write", onP.until(pc), "__keyevent@0__:set=before")
	expectEvents(t, "the replica republishing it", onR.until(pc), "__keyevent@0__:set=before")

	p.Raw().Expect("+OK\r\n", "FAILOVER", "TO", "127.0.0.1", strconv.Itoa(r.Port))
	waitRole(t, rc, "master")
	waitRole(t, pc, "slave")
	must(t, rc.Set(cx, "after", "1", 0).Err())
	must(t, rc.Del(cx, "before").Err())
	want := []string{"__keyevent@0__:set=after", "__keyevent@0__:del=before"}
	expectEvents(t, "the new primary's own writes", onR.until(rc), want...)
	expectEvents(t, "the old primary republishing them", onP.until(rc), want...)
}
