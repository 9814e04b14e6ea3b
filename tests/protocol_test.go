package tests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// exchange writes input on a fresh connection and returns what the server
// sends back until it closes the connection or goes quiet after a PING
// marker (appended so that a connection left open ends on "+PONG").
func exchange(t *testing.T, n *Node, input string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", n.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(input)); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	buf := make([]byte, 4096)
	markerSent := false
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		k, err := c.Read(buf)
		out.Write(buf[:k])
		if s, found := strings.CutSuffix(out.String(), "$6\r\nMARKER\r\n"); found {
			return s
		}
		var ne net.Error
		switch {
		case err == nil:
		case err == io.EOF:
			return out.String() + "<closed>"
		case errors.As(err, &ne) && ne.Timeout():
			if !markerSent {
				c.Write([]byte("*2\r\n$4\r\nECHO\r\n$6\r\nMARKER\r\n"))
				markerSent = true
			}
		default:
			return out.String() + "<closed>"
		}
	}
	t.Fatalf("no end to exchange of %q: %q", input, out.String())
	return ""
}

// TestProtocolMatchesRedis sends malformed and edge-case requests to Cairn
// and to redis-server and compares every byte each sends back.
func TestProtocolMatchesRedis(t *testing.T) {
	cairn := StartCairn(t)
	redis := StartRedis(t)
	inputs := []string{
		"PING\r\n",
		"PING\n",
		"*0\r\n*1\r\n$4\r\nPING\r\n",
		"*-1\r\n*1\r\n$4\r\nPING\r\n",
		"*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$3\r\nabc\r\n",
		"*abc\r\n",
		"*1\r\n$abc\r\n",
		"*1\r\n$-5\r\n",
		"*1\r\nPING\r\n",
		"*2000000\r\n",
		"*1\r\n$600000000\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\nb\r\n",
		"SET \"a b\" 'c d'\r\nGET \"a b\"\r\n",
		"SET \"unbalanced\r\n",
		"ECHO \"\\x41\\n\"\r\n",
		"\r\n\r\nPING\r\n",
		"*1\r\n$4\r\nPINGXX\r\n",
		"NOSUCHCMD a b\r\n",
		"GET\r\n",
		"*2\r\n$3\r\nGET\r\n$0\r\n\r\n",
	}
	for _, in := range inputs {
		want := exchange(t, redis, in)
		got := exchange(t, cairn, in)
		if got != want {
			t.Errorf("input %q:\n cairn: %q\n redis: %q", in, got, want)
		}
	}
	// The server lives on.
	if err := cairn.Client().Ping(ctx(t)).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestPipelineOfManyCommands(t *testing.T) {
	n := StartCairn(t)
	r := n.Raw()
	const count = 5000
	r.Send(strings.Repeat("*2\r\n$4\r\nINCR\r\n$1\r\nc\r\n", count))
	for i := 1; i <= count; i++ {
		if got := r.Reply(); got != fmt.Sprintf(":%d\r\n", i) {
			t.Fatalf("reply %d = %q", i, got)
		}
	}
}
