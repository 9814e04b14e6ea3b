package tests

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitingForReplicas is the log line of a shutdown that waits for lagging
// replicas.
const waitingForReplicas = "waiting for replicas before shutting down"

// lagReplica starts a primary (with args) and a replica behind a proxy,
// writes k=1 and waits for the replica to have it, then holds the
// replication stream back and increments k on the primary: the primary
// acknowledged k=2, the replica has k=1.
func lagReplica(t *testing.T, args ...string) (p, r *Node, proxy *Proxy) {
	t.Helper()
	p = StartCairn(t, args...)
	pc := p.Client()
	proxy = StartProxy(t, p.Addr())
	r = StartCairn(t, "--slaveof", proxy.SlaveOf())
	rc := r.Client()
	cx := ctx(t)
	must(t, pc.Set(cx, "k", "1", 0).Err())
	waitCaughtUp(t, pc, rc)
	proxy.HoldAfter(0)
	must(t, pc.Incr(cx, "k").Err())
	return p, r, proxy
}

// TestShutdownWaitsForLaggingReplica: SIGTERM and SHUTDOWN wait, as
// Redis 7's do, for a replica that lags behind to catch up before the
// primary stops: meanwhile reads are served and writes held back; once
// the replica has every acknowledged write, the primary exits 0 and the
// held-back write never ran.
func TestShutdownWaitsForLaggingReplica(t *testing.T) {
	for _, how := range []string{"sigterm", "shutdown"} {
		t.Run(how, func(t *testing.T) {
			p, r, proxy := lagReplica(t, "--shutdown-timeout", "60")
			admin := p.Raw()
			if how == "sigterm" {
				p.cmd.Process.Signal(syscall.SIGTERM)
			} else {
				admin.Send("SHUTDOWN\r\n")
			}
			waitFor(t, 20*time.Second, "the primary to wait for the replica", func() bool {
				return strings.Contains(p.Log.String(), waitingForReplicas)
			})
			reader := p.Raw()
			reader.Expect("$1\r\n2\r\n", "GET", "k")
			writer := p.Raw()
			writer.Send("SET late 1\r\n")
			waitFor(t, 20*time.Second, "the write to be held back", func() bool {
				return strings.Contains(reader.Do("INFO", "clients"), "\r\nblocked_clients:1\r\n")
			})
			if code, exited := p.WaitExit(0); exited {
				t.Fatalf("the primary exited (%d) while its replica lagged; log:\n%s", code, p.Log.String())
			}

			proxy.Release()
			if code, ok := p.WaitExit(30 * time.Second); !ok || code != 0 {
				t.Fatalf("the primary did not exit 0 once the replica caught up (code %d, exited %v); log:\n%s", code, ok, p.Log.String())
			}
			if !strings.Contains(p.Log.String(), "replicas caught up; shutting down") {
				t.Fatalf("no catch-up line in the log:\n%s", p.Log.String())
			}
			if !writer.Closed() {
				t.Fatal("the held-back writer's connection is still open")
			}
			if how == "shutdown" && !admin.Closed() {
				t.Fatal("SHUTDOWN's connection is still open")
			}
			rc := r.Client()
			cx := ctx(t)
			if v, err := rc.Get(cx, "k").Result(); err != nil || v != "2" {
				t.Fatalf("GET k on the replica: %q, %v; want 2", v, err)
			}
			if n, err := rc.Exists(cx, "late").Result(); err != nil || n != 0 {
				t.Fatalf("EXISTS late on the replica: %d, %v; want 0", n, err)
			}
		})
	}
}

// TestShutdownAbort: SHUTDOWN ABORT ends a shutdown's wait for a lagging
// replica: the waiting SHUTDOWN fails with Redis's error, writes go on,
// and a second ABORT finds nothing to abort. SHUTDOWN's argument errors
// are Redis's.
func TestShutdownAbort(t *testing.T) {
	p, r, proxy := lagReplica(t, "--shutdown-timeout", "60")
	c := p.Raw()
	c.Expect("-ERR No shutdown in progress.\r\n", "SHUTDOWN", "ABORT")
	c.Expect("-ERR syntax error\r\n", "SHUTDOWN", "ABORT", "NOW")
	c.Expect("-ERR syntax error\r\n", "SHUTDOWN", "SAVE", "NOSAVE")
	c.Expect("-ERR syntax error\r\n", "SHUTDOWN", "LATER")

	stopper := p.Raw()
	stopper.Send("SHUTDOWN NOSAVE\r\n")
	waitFor(t, 20*time.Second, "the primary to wait for the replica", func() bool {
		return strings.Contains(p.Log.String(), waitingForReplicas)
	})
	writer := p.Raw()
	writer.Send("SET late 1\r\n")
	c.Expect("+OK\r\n", "SHUTDOWN", "ABORT")
	if got := stopper.Reply(); got != "-ERR Errors trying to SHUTDOWN. Check logs.\r\n" {
		t.Fatalf("the aborted SHUTDOWN: %q", got)
	}
	if got := writer.Reply(); got != "+OK\r\n" {
		t.Fatalf("the write held back by the aborted shutdown: %q", got)
	}
	c.Expect("-ERR No shutdown in progress.\r\n", "SHUTDOWN", "ABORT")
	c.Expect("+OK\r\n", "SET", "after", "1")

	proxy.Release()
	waitCaughtUp(t, p.Client(), r.Client())
	p.Stop()
}

// TestShutdownTimeoutAndNow: a replica that stays behind delays SIGTERM
// only for shutdown-timeout seconds, after which the primary logs it and
// exits 0; SHUTDOWN NOW and shutdown-on-sigterm now do not wait.
func TestShutdownTimeoutAndNow(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		p, _, _ := lagReplica(t, "--shutdown-timeout", "1")
		err, done := p.Signal(syscall.SIGTERM, 20*time.Second)
		if !done || err != nil {
			t.Fatalf("SIGTERM: exited %v, %v; log:\n%s", done, err, p.Log.String())
		}
		for _, line := range []string{waitingForReplicas, "shutting down before a lagging replica caught up"} {
			if !strings.Contains(p.Log.String(), line) {
				t.Fatalf("no %q in the log:\n%s", line, p.Log.String())
			}
		}
	})
	t.Run("shutdown now", func(t *testing.T) {
		p, _, _ := lagReplica(t, "--shutdown-timeout", "60")
		p.Raw().Send("SHUTDOWN NOW\r\n")
		if code, ok := p.WaitExit(20 * time.Second); !ok || code != 0 {
			t.Fatalf("SHUTDOWN NOW: code %d, exited %v; log:\n%s", code, ok, p.Log.String())
		}
		if strings.Contains(p.Log.String(), waitingForReplicas) {
			t.Fatalf("SHUTDOWN NOW waited for the replica; log:\n%s", p.Log.String())
		}
	})
	t.Run("shutdown-on-sigterm now", func(t *testing.T) {
		p, _, _ := lagReplica(t, "--shutdown-timeout", "60")
		must(t, p.Client().ConfigSet(ctx(t), "shutdown-on-sigterm", "now").Err())
		p.Stop()
		if strings.Contains(p.Log.String(), waitingForReplicas) {
			t.Fatalf("SIGTERM with shutdown-on-sigterm now waited for the replica; log:\n%s", p.Log.String())
		}
	})
}
