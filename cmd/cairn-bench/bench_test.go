package main

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer accepts connections on a loopback port and runs handle on
// each, with a Reader of its commands. It is closed with the test.
func fakeServer(t *testing.T, handle func(c net.Conn, rd *Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c, NewReader(c, 4096))
			}()
		}
	}()
	return ln.Addr().String()
}

// startRedisServer starts a redis-server on a free loopback port with
// extra arguments, waits until it answers PING and returns its address. It
// is killed with the test. Like the tests under tests/, it fails rather
// than skips without redis-server (make test installs it).
func startRedisServer(t *testing.T, extra ...string) string {
	t.Helper()
	server, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server not installed (make test installs it): %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	log, err := os.Create(filepath.Join(dir, "redis.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}, extra...)
	cmd := exec.Command(server, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := dial(addr, time.Second, 0); err == nil {
			_, err = c.do("PING")
			c.close()
			if err == nil {
				return addr
			}
		}
		if time.Now().After(deadline) {
			text, _ := os.ReadFile(log.Name())
			t.Fatalf("redis-server did not answer on %s; log:\n%s", addr, text)
		}
	}
}

func testCommon(addr string) *common {
	return &common{addr: addr, dialAddr: addr, timeout: 2 * time.Second, limit: 10 * time.Second, drain: time.Second}
}

// TestSubscriberCounts checks that a subscriber counts message and
// pmessage frames, flags wrong channels and sizes and other frames, and
// reports the server closing its connection.
func TestSubscriberCounts(t *testing.T) {
	addr := fakeServer(t, func(c net.Conn, rd *Reader) {
		v, err := rd.ReadFrame()
		if err != nil || len(v.Elems) != 2 || string(v.Elems[0].Str) != "SUBSCRIBE" {
			return
		}
		var out []byte
		out = AppendFrame(out, Value{Kind: '*', Elems: []Value{{Kind: '$', Str: []byte("subscribe")}, {Kind: '$', Str: []byte("ch")}, {Kind: ':', Int: 1}}})
		msg := func(kind string, parts ...string) {
			e := []Value{{Kind: '$', Str: []byte(kind)}}
			for _, p := range parts {
				e = append(e, Value{Kind: '$', Str: []byte(p)})
			}
			out = AppendFrame(out, Value{Kind: '*', Elems: e})
		}
		msg("message", "ch", "abcd")
		msg("pmessage", "c*", "ch", "abcd")
		msg("message", "other", "abcd") // wrong channel
		msg("message", "ch", "abc")     // wrong size
		out = append(out, "+PONG\r\n"...)
		c.Write(out)
	})
	s, err := subscribe(testCommon(addr), 7, "SUBSCRIBE", []string{"ch"}, "ch", 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.start(time.Now().Add(5 * time.Second))
	<-s.done // the server closes after writing
	st := collect([]*subscriber{s})
	if st.received != 4 || st.corrupt != 2 || st.unexpected != 1 || st.disconnected != 1 {
		t.Errorf("got %+v; want 4 received, 2 corrupt, 1 unexpected, 1 disconnected", st)
	}
	if !strings.Contains(st.firstProblem, "subscriber 7") {
		t.Errorf("first problem %q does not name the subscriber", st.firstProblem)
	}
}

// TestSubscribeError checks that an error reply to SUBSCRIBE comes back as
// a *ServerError with the server's text.
func TestSubscribeError(t *testing.T) {
	addr := fakeServer(t, func(c net.Conn, rd *Reader) {
		if _, err := rd.ReadFrame(); err == nil {
			c.Write([]byte("-ERR unknown command 'SUBSCRIBE'\r\n"))
		}
	})
	_, err := subscribe(testCommon(addr), 0, "SUBSCRIBE", []string{"ch"}, "ch", 4, 0)
	var se *ServerError
	if !errors.As(err, &se) || se.Msg != "ERR unknown command 'SUBSCRIBE'" {
		t.Fatalf("got %v, want the server's error", err)
	}
	if !strings.Contains(err.Error(), "server error: ERR unknown command") {
		t.Errorf("error text %q lacks \"server error: \"", err)
	}
}

// TestPublishPipelined checks the window (never more than window
// unanswered commands) and the reply sum, against a server that replies
// 3 to each PUBLISH as it reads them.
func TestPublishPipelined(t *testing.T) {
	var maxAhead atomic.Int64
	addr := fakeServer(t, func(c net.Conn, rd *Reader) {
		for {
			if _, err := rd.ReadFrame(); err != nil {
				return
			}
			// Count what the client sent ahead: commands already buffered.
			ahead := int64(1)
			for {
				_, ok, err := rd.Buffered()
				if err != nil || !ok {
					break
				}
				ahead++
			}
			if ahead > maxAhead.Load() {
				maxAhead.Store(ahead)
			}
			c.Write([]byte(strings.Repeat(":3\r\n", int(ahead))))
		}
	})
	c, err := dial(addr, 2*time.Second, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	var replies atomic.Int64
	frame := AppendCommand(nil, "PUBLISH", "ch", "x")
	res, err := publishPipelined(c, frame, 1000, 16, time.Now().Add(10*time.Second), &replies)
	if err != nil {
		t.Fatal(err)
	}
	if res.sent != 1000 || res.replies != 1000 || res.sum != 3000 || res.stoppedEarly || replies.Load() != 1000 {
		t.Errorf("got %+v, replies %d", res, replies.Load())
	}
	if maxAhead.Load() > 16 {
		t.Errorf("%d commands were unanswered at once, more than the window of 16", maxAhead.Load())
	}
}

// TestPublishPipelinedError checks that an error reply stops the run with
// the server's text.
func TestPublishPipelinedError(t *testing.T) {
	addr := fakeServer(t, func(c net.Conn, rd *Reader) {
		if _, err := rd.ReadFrame(); err == nil {
			c.Write([]byte("-ERR unknown command 'PUBLISH'\r\n"))
		}
	})
	c, err := dial(addr, 2*time.Second, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	var replies atomic.Int64
	_, err = publishPipelined(c, AppendCommand(nil, "PUBLISH", "ch", "x"), 10, 4, time.Now().Add(5*time.Second), &replies)
	if err == nil || !strings.Contains(err.Error(), "PUBLISH: server error: ERR unknown command 'PUBLISH'") {
		t.Fatalf("got %v", err)
	}
}

func TestResolveAddr(t *testing.T) {
	for _, tc := range []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:6379", false, true},
		{"[::1]:6379", false, true},
		{"localhost:6379", false, true},
		{"10.1.2.3:6379", false, false},
		{"10.1.2.3:6379", true, true},
		{"127.0.0.1", false, false},
		{"127.0.0.1:0", false, false},
		{"127.0.0.1:x", false, false},
	} {
		_, err := resolveAddr(tc.addr, tc.remote)
		if (err == nil) != tc.ok {
			t.Errorf("resolveAddr(%q, %v) = %v, want ok=%v", tc.addr, tc.remote, err, tc.ok)
		}
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for q, want := range map[float64]time.Duration{0.5: 50, 0.99: 99, 1: 100, 0: 1} {
		if got := percentile(d, q); got != want {
			t.Errorf("percentile(1..100, %v) = %v, want %v", q, got, want)
		}
	}
	if got := percentile(d[:1], 0.99); got != 1 {
		t.Errorf("percentile of one sample = %v", got)
	}
}

func TestRunUsage(t *testing.T) {
	var out, errw strings.Builder
	for _, args := range [][]string{
		nil,
		{"nope"},
		{"fanout", "-addr", "192.0.2.1:6379"},
		{"fanout", "-subs", "0"},
		{"fanout", "-pattern-subs", "200"},
		{"stall", "-msgs", "1000000", "-rate", "1"},
		{"patterns", "-channel", "x:cb-nm"},
		{"fanout", "extra"},
	} {
		if code := run(args, &out, &errw); code != 2 {
			t.Errorf("run(%q) = %d, want 2", args, code)
		}
	}
}
