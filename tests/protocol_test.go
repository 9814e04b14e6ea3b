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
		"COMMAND INFO nosuch\r\n", // a null bulk, not a null array
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

// TestRepliesDoNotWaitForTrailingBytes: a whole request is answered at
// once, whatever follows it in the same packet: an empty line, a "*0", or
// the start of the next request (which a pipelined group must not wait
// for). Each connection's replies are read with a hang guard only.
func TestRepliesDoNotWaitForTrailingBytes(t *testing.T) {
	forEachTarget(t, func(t *testing.T, n *Node) {
		for _, c := range []struct {
			send, want, then, thenWant string
		}{
			{send: "PING\r\n\r\n", want: "+PONG\r\n"},
			{send: "PING\r\n   \r\n", want: "+PONG\r\n"},
			{send: "*1\r\n$4\r\nPING\r\n*0\r\n", want: "+PONG\r\n"},
			{send: "SET tb:a 1\r\n\r\n", want: "+OK\r\n"},
			{send: "*1\r\n$4\r\nPING\r\n*1\r\n", want: "+PONG\r\n", then: "$4\r\nPING\r\n", thenWant: "+PONG\r\n"},
			{send: "*3\r\n$3\r\nSET\r\n$4\r\ntb:b\r\n$1\r\n2\r\n*3\r\n$3\r\nSET", want: "+OK\r\n",
				then: "\r\n$4\r\ntb:c\r\n$1\r\n3\r\n", thenWant: "+OK\r\n"},
			{send: "*2\r\n$4\r\nINCR\r\n$4\r\ntb:d\r\n*2\r\n$4\r\nINCR\r\n$4\r\ntb:d\r\n*2\r\n$4\r\nINCR\r\n$4\r\ntb:", want: ":1\r\n:2\r\n",
				then: "d\r\n", thenWant: ":3\r\n"},
		} {
			r := n.Raw()
			r.Send(c.send)
			got := r.Reply()
			for len(got) < len(c.want) {
				got += r.Reply()
			}
			if got != c.want {
				t.Fatalf("%q: replies %q, want %q", c.send, got, c.want)
			}
			if c.then != "" {
				r.Send(c.then)
				if got := r.Reply(); got != c.thenWant {
					t.Fatalf("%q then %q: reply %q, want %q", c.send, c.then, got, c.thenWant)
				}
			}
		}
		// The writes were applied, not just answered.
		if got := n.Raw().Do("MGET", "tb:a", "tb:b", "tb:c", "tb:d"); got != "*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n3\r\n" {
			t.Fatalf("MGET = %q", got)
		}
	})
}

// TestPipelineSentBeforeReading: a client that sends a whole pipeline
// before reading any reply (redis-py's pipeline does) must not deadlock
// when the replies outgrow the socket buffers: the server goes on reading
// requests and queues replies, as Redis does. 20,000 ECHOs of 1 KB are
// ~20 MB each way, far beyond loopback's buffers.
func TestPipelineSentBeforeReading(t *testing.T) {
	forEachTarget(t, func(t *testing.T, n *Node) {
		r := n.Raw()
		const count = 20_000
		payload := func(i int) string { return fmt.Sprintf("%06d:%s", i, strings.Repeat("p", 1017)) }
		var req bytes.Buffer
		for i := range count {
			p := payload(i)
			fmt.Fprintf(&req, "*2\r\n$4\r\nECHO\r\n$%d\r\n%s\r\n", len(p), p)
		}
		// Writes are done before any read; the deadline only guards
		// against the deadlock this test is about.
		r.c.SetWriteDeadline(time.Now().Add(60 * time.Second))
		if _, err := r.c.Write(req.Bytes()); err != nil {
			t.Fatalf("sending %d bytes of pipelined ECHOs without reading: %v", req.Len(), err)
		}
		for i := range count {
			p := payload(i)
			if got, want := r.Reply(), fmt.Sprintf("$%d\r\n%s\r\n", len(p), p); got != want {
				t.Fatalf("reply %d = %.40q..., want %.40q...", i, got, want)
			}
		}
		// The connection serves on: a write pipelined behind a read.
		r.Send("*3\r\n$3\r\nSET\r\n$2\r\npk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$2\r\npk\r\n")
		if got := r.Reply() + r.Reply(); got != "+OK\r\n$1\r\nv\r\n" {
			t.Fatalf("after the pipeline: %q", got)
		}
	})
}
