package tests

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// readThrough reads replies from r until what it read ends with marker,
// and returns everything read.
func readThrough(r *RawConn, marker string) string {
	r.t.Helper()
	var got string
	for !strings.HasSuffix(got, marker) {
		got += r.Reply()
	}
	return got
}

// TestClientReply: CLIENT REPLY OFF drops every reply until ON, SKIP the
// next command's, errors included; subscription confirmations and
// messages still arrive while replies are off, as in Redis 7.0. Each case
// sends its commands in one write, then ECHO end as the marker.
func TestClientReply(t *testing.T) {
	forEachTarget(t, func(t *testing.T, n *Node) {
		for _, c := range []struct {
			send []string
			want string
		}{
			{[]string{"CLIENT REPLY ON"}, "+OK\r\n"},
			{[]string{"CLIENT REPLY SKIP", "PING a", "PING b"}, "$1\r\nb\r\n"},
			{[]string{"CLIENT REPLY OFF", "SET cr:a 1", "INCR cr:a", "NOSUCH", "GET", "CLIENT REPLY SKIP", "CLIENT REPLY ON", "GET cr:a"},
				"+OK\r\n$1\r\n2\r\n"},
			{[]string{"CLIENT REPLY SKIP", "CLIENT REPLY SKIP", "PING a", "PING b"}, "$1\r\nb\r\n"},
			// While subscribed (RESP2), CLIENT REPLY ON is refused,
			// and the refusal dropped.
			{[]string{"CLIENT REPLY OFF", "SUBSCRIBE cr:ch", "PING", "CLIENT REPLY ON", "UNSUBSCRIBE", "CLIENT REPLY ON"},
				"*3\r\n$9\r\nsubscribe\r\n$5\r\ncr:ch\r\n:1\r\n*3\r\n$11\r\nunsubscribe\r\n$5\r\ncr:ch\r\n:0\r\n+OK\r\n"},
			// A pipeline of writes while replies are off is applied
			// in full, one reply-less command after the other.
			{[]string{"CLIENT REPLY OFF", "SET cr:b 1", "SET cr:c 2", "INCR cr:b", "MSET cr:d 4 cr:e 5", "CLIENT REPLY ON", "MGET cr:b cr:c cr:d cr:e"},
				"+OK\r\n*4\r\n$1\r\n2\r\n$1\r\n2\r\n$1\r\n4\r\n$1\r\n5\r\n"},
			{[]string{"CLIENT REPLY FOO"}, "-ERR syntax error\r\n"},
			// RESET turns replies back on, its own included.
			{[]string{"CLIENT REPLY OFF", "PING", "RESET", "PING"}, "+RESET\r\n+PONG\r\n"},
		} {
			r := n.Raw()
			cmds := append(append([]string{}, c.send...), "ECHO end")
			r.Send(strings.Join(cmds, "\r\n") + "\r\n")
			if got := readThrough(r, "$3\r\nend\r\n"); got != c.want+"$3\r\nend\r\n" {
				t.Errorf("%q: read %q, want %q", c.send, got, c.want+"$3\r\nend\r\n")
			}
		}
		// Messages reach a subscriber whose replies are off.
		sub := n.Raw()
		sub.Send("CLIENT REPLY OFF\r\nSUBSCRIBE cr:ch\r\n")
		if got := sub.Reply(); got != "*3\r\n$9\r\nsubscribe\r\n$5\r\ncr:ch\r\n:1\r\n" {
			t.Fatalf("subscribe confirmation %q", got)
		}
		if got := n.Raw().Do("PUBLISH", "cr:ch", "hello"); got != ":1\r\n" {
			t.Fatalf("PUBLISH = %q", got)
		}
		if got := sub.Reply(); got != "*3\r\n$7\r\nmessage\r\n$5\r\ncr:ch\r\n$5\r\nhello\r\n" {
			t.Fatalf("message %q", got)
		}
	})
}

// waitBlocked polls INFO until blocked clients are waiting for a pause.
func waitBlocked(t *testing.T, n *Node, blocked int) {
	t.Helper()
	want := fmt.Sprintf("blocked_clients:%d", blocked)
	waitFor(t, 10*time.Second, want, func() bool { return strings.Contains(n.Raw().Do("INFO", "clients"), want+"\r\n") })
}

// TestClientPause: while CLIENT PAUSE WRITE lasts, reads run and writes
// (queued MULTI writes and pipelined writes too) wait, flagged b in CLIENT
// LIST, until CLIENT UNPAUSE; expired keys are hidden but neither deleted
// nor announced. CLIENT PAUSE ALL holds every command until its timeout,
// CLIENT UNPAUSE included.
func TestClientPause(t *testing.T) {
	forEachTarget(t, func(t *testing.T, n *Node) {
		admin, reader := n.Raw(), n.Raw()
		admin.Expect("+OK\r\n", "CONFIG", "SET", "notify-keyspace-events", "Ex")
		admin.Expect("+OK\r\n", "SET", "cp:gone", "1", "PX", "1000")
		admin.Expect("+OK\r\n", "CLIENT", "PAUSE", "60000", "WRITE")
		reader.Expect(":1\r\n", "EXISTS", "cp:gone") // not yet expired when the pause began

		// A write, a transaction with a write queued and a pipeline
		// of writes: each waits.
		writer := n.Raw()
		writer.Send("SET cp:a 1\r\n")
		waitBlocked(t, n, 1)
		txn := n.Raw()
		txn.Send("MULTI\r\nSET cp:b 2\r\nEXEC\r\n")
		if got := txn.Reply(); got != "+OK\r\n" {
			t.Fatalf("MULTI = %q", got)
		}
		waitBlocked(t, n, 2)
		pipe := n.Raw()
		pipe.Send("SET cp:c 3\r\nSET cp:d 4\r\nINCR cp:c\r\n")
		waitBlocked(t, n, 3)
		list := reader.Do("CLIENT", "LIST")
		for _, flags := range []string{"flags=b ", "flags=xb "} {
			if !regexp.MustCompile(flags + `.* cmd=set `).MatchString(list) {
				t.Fatalf("CLIENT LIST has no client with %s and cmd=set:\n%s", flags, list)
			}
		}
		reader.Expect("*4\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n", "MGET", "cp:a", "cp:b", "cp:c", "cp:d")

		// PUBLISH waits too (Redis flags it may_replicate).
		publisher := n.Raw()
		publisher.Send("PUBLISH cp:ch m\r\n")
		waitBlocked(t, n, 4)

		// The key expires during the pause: reads see it gone, yet
		// it is neither deleted (DBSIZE still counts it,
		// expired_keys stays 0) nor announced (the event comes
		// after the pause).
		sub := n.Raw()
		sub.Send("SUBSCRIBE __keyevent@0__:expired\r\n")
		sub.Reply()
		waitFor(t, 10*time.Second, "cp:gone to expire", func() bool { return reader.Do("PTTL", "cp:gone") == ":-2\r\n" })
		reader.Expect("$-1\r\n", "GET", "cp:gone")
		reader.Expect(":0\r\n", "EXISTS", "cp:gone")
		reader.Expect(":1\r\n", "DBSIZE")
		if info := reader.Do("INFO", "stats"); !strings.Contains(info, "expired_keys:0\r\n") {
			t.Fatalf("a key was reclaimed during the pause:\n%s", info)
		}

		admin.Expect("+OK\r\n", "CLIENT", "UNPAUSE")
		if got := writer.Reply(); got != "+OK\r\n" {
			t.Fatalf("SET after the pause = %q", got)
		}
		if got := readThrough(txn, "\r\n"); got != "+QUEUED\r\n" {
			t.Fatalf("queued SET after the pause = %q", got)
		}
		if got := txn.Reply(); got != "*1\r\n+OK\r\n" {
			t.Fatalf("EXEC after the pause = %q", got)
		}
		if got := readThrough(pipe, ":4\r\n"); got != "+OK\r\n+OK\r\n:4\r\n" {
			t.Fatalf("pipeline after the pause = %q", got)
		}
		if got := publisher.Reply(); got != ":0\r\n" {
			t.Fatalf("PUBLISH after the pause = %q", got)
		}
		reader.Expect("*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n4\r\n$1\r\n4\r\n", "MGET", "cp:a", "cp:b", "cp:c", "cp:d")
		// Now the expired key is reclaimed (by this GET or the
		// expiry cycle), with its event.
		reader.Expect("$-1\r\n", "GET", "cp:gone")
		if got := sub.Reply(); !strings.Contains(got, "cp:gone") {
			t.Fatalf("expired event after the pause = %q", got)
		}
		waitFor(t, 10*time.Second, "DBSIZE 4", func() bool { return reader.Do("DBSIZE") == ":4\r\n" })

		// ALL: every command waits, the pauser's own included, until
		// the timeout. The lower bound is the pause, not a speed.
		admin.Expect("+OK\r\n", "CLIENT", "PAUSE", "300", "ALL")
		start := time.Now()
		reader.Expect("+PONG\r\n", "PING")
		admin.Expect("+OK\r\n", "CLIENT", "UNPAUSE")
		if waited := time.Since(start); waited < 250*time.Millisecond {
			t.Fatalf("PING during CLIENT PAUSE 300 ALL answered after %v", waited)
		}
		// The replies of commands run before a waiting one are not
		// held back by it.
		admin.Expect("+OK\r\n", "CLIENT", "PAUSE", "60000", "WRITE")
		reader.Send("GET cp:a\r\nSET cp:e 5\r\n")
		if got := reader.Reply(); got != "$1\r\n1\r\n" {
			t.Fatalf("GET before a waiting SET = %q", got)
		}
		waitBlocked(t, n, 1)
		admin.Expect("+OK\r\n", "CLIENT", "UNPAUSE")
		if got := reader.Reply(); got != "+OK\r\n" {
			t.Fatalf("SET after the pause = %q", got)
		}
	})
}

// TestClientPauseWaitsForWritesInFlight: CLIENT PAUSE WRITE returns only
// once every write already past the pause has finished, so that no write
// commits or publishes after the pause's OK. The test-only commit pause
// holds a SET for two seconds after its commit; a pause issued meanwhile
// must not return before those two seconds are over (a lower bound, which
// a slow machine cannot break).
func TestClientPauseWaitsForWritesInFlight(t *testing.T) {
	n := StartCairnEnv(t, []string{"CAIRN_DEBUG_FAULTS=1"})
	writer, admin := n.Raw(), n.Raw()
	writer.Expect("+OK\r\n", "DEBUG", "COMMIT-PAUSE", "2000")
	sent := time.Now()
	writer.Send("SET inflight 1\r\n")
	// The SET has committed (its key is there) and is held before its
	// reply.
	waitFor(t, 10*time.Second, "the SET to commit", func() bool { return admin.Do("EXISTS", "inflight") == ":1\r\n" })
	admin.Expect("+OK\r\n", "CLIENT", "PAUSE", "60000", "WRITE")
	if waited := time.Since(sent); waited < 2*time.Second {
		t.Fatalf("CLIENT PAUSE WRITE returned %v after a SET held 2s in flight began", waited)
	}
	if got := writer.Reply(); got != "+OK\r\n" {
		t.Fatalf("SET = %q", got)
	}
	admin.Expect("+OK\r\n", "CLIENT", "UNPAUSE")
}

// TestClientPauseShutdown: a server asked to stop while clients wait for a
// long pause exits promptly and cleanly, and the waiting write never runs.
func TestClientPauseShutdown(t *testing.T) {
	n := StartCairn(t)
	if got := n.Raw().Do("CLIENT", "PAUSE", "600000", "WRITE"); got != "+OK\r\n" {
		t.Fatalf("CLIENT PAUSE = %q", got)
	}
	w := n.Raw()
	w.Send("SET paused 1\r\n")
	waitBlocked(t, n, 1)
	n.Stop() // exit 0 within 5 s of SIGTERM
	if !w.Closed() {
		t.Fatal("the waiting client's connection stayed open")
	}
	n.Restart()
	if got := n.Raw().Do("EXISTS", "paused"); got != ":0\r\n" {
		t.Fatalf("the write that waited for the pause ran: EXISTS = %q", got)
	}
}

// TestClientPauseFreesClientsThatLeave: a client that closes its
// connection while its write waits for CLIENT PAUSE is gone at once (from
// connected_clients), not when the pause ends, and its write never runs.
func TestClientPauseFreesClientsThatLeave(t *testing.T) {
	forEachTarget(t, func(t *testing.T, n *Node) {
		admin := n.Raw()
		admin.Expect("+OK\r\n", "CLIENT", "PAUSE", "60000", "WRITE")
		leaver := n.Raw()
		leaver.Send("SET left 1\r\n")
		waitFor(t, 10*time.Second, "the write to wait", func() bool {
			return strings.Contains(admin.Do("INFO", "clients"), "blocked_clients:1\r\n")
		})
		leaver.c.Close()
		waitFor(t, 10*time.Second, "the client that left to be freed", func() bool {
			info := admin.Do("INFO", "clients")
			return strings.Contains(info, "connected_clients:1\r\n") && strings.Contains(info, "blocked_clients:0\r\n")
		})
		admin.Expect("+OK\r\n", "CLIENT", "UNPAUSE")
		// A write after the unpause on this connection is the marker:
		// the one that left would have run before it.
		admin.Expect("+OK\r\n", "SET", "marker", "1")
		admin.Expect(":0\r\n", "EXISTS", "left")
	})
}
