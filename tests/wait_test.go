package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestWaitBlocksAsRedis runs, on Cairn and on redis-server, a WAIT that
// cannot be satisfied (a primary without replicas, no timeout) and ends
// it each way Redis allows: CLIENT UNBLOCK with TIMEOUT (the count so far)
// and with ERROR, CLIENT KILL, and the client leaving. While it waits the
// client shows flag b and counts in blocked_clients; once it is gone
// neither does, and the time blocked is not in SLOWLOG. Inside MULTI,
// WAIT does not block: EXEC replies at once and leaves its keys free.
func TestWaitBlocksAsRedis(t *testing.T) {
	for name, start := range map[string]func(testing.TB, ...string) *Node{"cairn": StartCairn, "redis": StartRedis} {
		t.Run(name, func(t *testing.T) {
			n := start(t)
			b := n.Raw()
			blocked := func(id string, want bool) {
				t.Helper()
				waitFor(t, 10*time.Second, fmt.Sprintf("client %s blocked=%v", id, want), func() bool {
					list := b.Do("CLIENT", "LIST", "ID", id)
					info := b.Do("INFO", "clients")
					if want {
						return strings.Contains(list, " flags=b ") && strings.Contains(info, "blocked_clients:1\r\n")
					}
					return !strings.Contains(list, "id="+id+" ") && strings.Contains(info, "blocked_clients:0\r\n")
				})
			}
			a := n.Raw()
			id := strings.Trim(a.Do("CLIENT", "ID"), ":\r\n")
			wait := "*3\r\n$4\r\nWAIT\r\n$1\r\n1\r\n$1\r\n0\r\n"

			a.Send(wait)
			blocked(id, true)
			b.Expect(":1\r\n", "CLIENT", "UNBLOCK", id)
			if got := a.Reply(); got != ":0\r\n" {
				t.Errorf("WAIT after CLIENT UNBLOCK = %q", got)
			}
			a.Send(wait)
			blocked(id, true)
			b.Expect(":1\r\n", "CLIENT", "UNBLOCK", id, "ERROR")
			if got := a.Reply(); got != "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n" {
				t.Errorf("WAIT after CLIENT UNBLOCK ERROR = %q", got)
			}
			b.Expect(":0\r\n", "CLIENT", "UNBLOCK", id)

			// The time blocked is not the command's: a WAIT that timed
			// out after 200 ms stays out of a 100 ms SLOWLOG.
			b.Expect("+OK\r\n", "CONFIG", "SET", "slowlog-log-slower-than", "100000")
			a.Expect(":0\r\n", "WAIT", "1", "200")
			b.Expect("*0\r\n", "SLOWLOG", "GET")

			a.Expect("+OK\r\n", "MULTI")
			a.Expect("+QUEUED\r\n", "WAIT", "1", "0")
			a.Expect("+QUEUED\r\n", "SET", "wk", "1")
			a.Expect("*2\r\n:0\r\n+OK\r\n", "EXEC")
			b.Expect("$1\r\n1\r\n", "GET", "wk")

			a.Send(wait)
			blocked(id, true)
			b.Expect(":1\r\n", "CLIENT", "KILL", "ID", id)
			if !a.Closed() {
				t.Error("the killed client's connection is still open")
			}
			blocked(id, false)

			c := n.Raw()
			id = strings.Trim(c.Do("CLIENT", "ID"), ":\r\n")
			c.Send(wait)
			blocked(id, true)
			c.c.Close()
			blocked(id, false)
		})
	}
}
