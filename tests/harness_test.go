// Package tests holds Cairn's end-to-end tests: they start real bin/cairn
// processes (and, for differential tests, a real redis-server) on free
// loopback ports in temporary directories and talk to them over TCP.
package tests

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// cairnBin returns the server binary under test: $CAIRN_BIN, or bin/cairn
// at the repository root. `make test` builds it once per run.
func cairnBin(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("CAIRN_BIN"); p != "" {
		return p
	}
	p, err := filepath.Abs("../bin/cairn")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("server binary %s missing (run `make build` or set CAIRN_BIN): %v", p, err)
	}
	return p
}

// envInt returns the number in the environment variable name (a seed or a
// length a test lets a run override), or def when it is unset; anything
// but a non-negative integer fails t.
func envInt(t testing.TB, name string, def int64) int64 {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		t.Fatalf("%s: %q is not a non-negative integer", name, v)
	}
	return n
}

// testPorts hands out the ports of $CAIRN_TEST_PORTS ("low-high") one
// after another. The Makefile gives its plain and race passes disjoint
// ranges below the kernel's ephemeral ports (32768-60999 on Linux), so
// that neither another test run nor an outgoing connection's source port
// takes a port between freePort and the server's bind, or while a server
// restarts on it. Unset, the kernel picks.
var testPorts struct {
	sync.Mutex
	once      sync.Once
	next, end int // end 0: the kernel picks
	err       error
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	p := &testPorts
	p.Lock()
	defer p.Unlock()
	p.once.Do(func() {
		v := os.Getenv("CAIRN_TEST_PORTS")
		if v == "" {
			return
		}
		lo, hi, ok := strings.Cut(v, "-")
		low, err1 := strconv.Atoi(lo)
		high, err2 := strconv.Atoi(hi)
		if !ok || err1 != nil || err2 != nil || low < 1024 || high > 65535 || low > high {
			p.err = fmt.Errorf("CAIRN_TEST_PORTS: %q is not a range low-high of ports from 1024 to 65535", v)
			return
		}
		p.next, p.end = low, high
	})
	if p.err != nil {
		t.Fatal(p.err)
	}
	if p.end == 0 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
	for ; p.next <= p.end; p.next++ {
		if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p.next)); err == nil {
			l.Close()
			p.next++
			return p.next - 1
		}
	}
	t.Fatalf("freePort: every port of CAIRN_TEST_PORTS=%s is used", os.Getenv("CAIRN_TEST_PORTS"))
	return 0
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Tail returns the last n bytes of the log, for a failure message.
func (b *syncBuffer) Tail(n int) string {
	s := b.String()
	return s[max(len(s)-n, 0):]
}

// Node is one server process under test.
type Node struct {
	t    testing.TB
	Name string
	Port int
	Dir  string
	bin  string
	args []string
	cmd  *exec.Cmd
	env  []string // extra environment variables
	Log  *syncBuffer
	exit chan error
}

// Addr returns host:port.
func (n *Node) Addr() string { return "127.0.0.1:" + strconv.Itoa(n.Port) }

// StartCairn starts bin/cairn on a free port in a fresh temp dir with the
// extra arguments and waits until it answers PING.
func StartCairn(t testing.TB, args ...string) *Node {
	t.Helper()
	return StartCairnEnv(t, nil, args...)
}

// StartCairnEnv is StartCairn with extra environment variables, such as
// CAIRN_DEBUG_FAULTS=1 for the test-only fault hooks.
func StartCairnEnv(t testing.TB, env []string, args ...string) *Node {
	t.Helper()
	n := &Node{t: t, Name: "cairn", Port: freePort(t), Dir: t.TempDir(), bin: cairnBin(t), env: env}
	n.args = append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(n.Port), "--dir", filepath.Join(n.Dir, "data")}, args...)
	n.start()
	t.Cleanup(func() { n.Kill() })
	return n
}

// StartRedis starts Debian's redis-server, persistence off, on a free port,
// in the C locale: SORT ... ALPHA compares with the server's collation,
// which in the C locale is the byte order Cairn's uses.
func StartRedis(t testing.TB, args ...string) *Node {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server not installed (make test installs it): %v", err)
	}
	n := &Node{t: t, Name: "redis", Port: freePort(t), Dir: t.TempDir(), bin: bin, env: []string{"LC_ALL=C"}}
	n.args = append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(n.Port), "--dir", n.Dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--enable-debug-command", "yes"}, args...)
	n.start()
	t.Cleanup(func() { n.Kill() })
	return n
}

func (n *Node) start() {
	n.t.Helper()
	n.Log = &syncBuffer{}
	n.cmd = exec.Command(n.bin, n.args...)
	n.cmd.Stdout, n.cmd.Stderr = n.Log, n.Log
	if n.env != nil {
		n.cmd.Env = append(os.Environ(), n.env...)
	}
	n.cmd.Dir = n.Dir
	dieWithTests(n.cmd)
	if err := n.cmd.Start(); err != nil {
		n.t.Fatalf("start %s: %v", n.Name, err)
	}
	n.exit = make(chan error, 1)
	cmd := n.cmd
	go func() { n.exit <- cmd.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-n.exit:
			n.exit <- err
			n.t.Fatalf("%s exited during start-up (%v); log:\n%s", n.Name, err, n.Log.String())
		default:
		}
		if c, err := net.DialTimeout("tcp", n.Addr(), 200*time.Millisecond); err == nil {
			c.Write([]byte("PING\r\n"))
			c.SetReadDeadline(time.Now().Add(time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			// A replica that serves no stale data refuses PING while
			// its link is down, as Redis does; that is an answer too.
			if line == "+PONG\r\n" || line == "-NOAUTH Authentication required.\r\n" || strings.HasPrefix(line, "-MASTERDOWN ") {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	n.t.Fatalf("%s did not answer on %s; log:\n%s", n.Name, n.Addr(), n.Log.String())
}

// Client returns a RESP2 go-redis client; it is closed at test end.
func (n *Node) Client(opts ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: n.Addr(), Protocol: 2, DisableIdentity: true, ReadTimeout: 10 * time.Second, MaxRetries: -1}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewClient(o)
	n.t.Cleanup(func() { c.Close() })
	return c
}

// Signal sends sig and waits for the process to exit, returning its error.
func (n *Node) Signal(sig syscall.Signal, timeout time.Duration) (error, bool) {
	if n.cmd == nil || n.cmd.Process == nil {
		return nil, true
	}
	n.cmd.Process.Signal(sig)
	select {
	case err := <-n.exit:
		n.exit <- err
		return err, true
	case <-time.After(timeout):
		return nil, false
	}
}

// Stop sends SIGTERM and fails the test unless the process exits 0 within
// 5 seconds.
func (n *Node) Stop() {
	n.t.Helper()
	err, done := n.Signal(syscall.SIGTERM, 5*time.Second)
	if !done {
		n.t.Fatalf("%s did not exit within 5s of SIGTERM; log:\n%s", n.Name, n.Log.String())
	}
	if err != nil {
		n.t.Fatalf("%s exited with %v after SIGTERM; log:\n%s", n.Name, err, n.Log.String())
	}
}

// WaitExit waits up to timeout for the process to exit by itself and
// returns its exit code (-1 when a signal ended it); ok is false if it is
// still running.
func (n *Node) WaitExit(timeout time.Duration) (code int, ok bool) {
	select {
	case err := <-n.exit:
		n.exit <- err
		return n.cmd.ProcessState.ExitCode(), true
	case <-time.After(timeout):
		return 0, false
	}
}

// Kill sends SIGKILL and waits for the process to go.
func (n *Node) Kill() { n.Signal(syscall.SIGKILL, 10*time.Second) }

// Restart starts the process again with the same arguments and data.
func (n *Node) Restart() {
	n.t.Helper()
	n.start()
}

// waitFor polls cond until it holds, failing the test after timeout (a
// guard against hangs, not a speed requirement).
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ctx returns a context bounded to guard against hangs.
func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// RawConn is a raw TCP connection for protocol-level tests.
type RawConn struct {
	t  testing.TB
	c  net.Conn
	rd *bufio.Reader
}

// Raw dials n.
func (n *Node) Raw() *RawConn {
	n.t.Helper()
	c, err := net.DialTimeout("tcp", n.Addr(), 5*time.Second)
	if err != nil {
		n.t.Fatal(err)
	}
	n.t.Cleanup(func() { c.Close() })
	return &RawConn{t: n.t, c: c, rd: bufio.NewReader(c)}
}

// Send writes raw bytes.
func (r *RawConn) Send(s string) {
	r.t.Helper()
	if _, err := r.c.Write([]byte(s)); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// Do sends a command as a RESP multibulk and returns the raw reply.
func (r *RawConn) Do(args ...string) string {
	r.t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	r.Send(b.String())
	return r.Reply()
}

// Expect sends a command as Do does and fails the test unless the raw
// reply is want.
func (r *RawConn) Expect(want string, args ...string) {
	r.t.Helper()
	if got := r.Do(args...); got != want {
		r.t.Fatalf("%q: reply %q, want %q", args, got, want)
	}
}

// Reply reads one complete RESP reply and returns its raw bytes.
func (r *RawConn) Reply() string {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b bytes.Buffer
	if err := readRaw(r.rd, &b); err != nil {
		r.t.Fatalf("read reply: %v (got so far %q)", err, b.String())
	}
	return b.String()
}

// Closed reports whether the server closed the connection (EOF on read).
func (r *RawConn) Closed() bool {
	r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := r.rd.ReadByte()
	return err != nil
}

// readRaw copies one RESP2/RESP3 value from rd to out.
func readRaw(rd *bufio.Reader, out *bytes.Buffer) error {
	line, err := rd.ReadString('\n')
	if err != nil {
		return err
	}
	out.WriteString(line)
	if len(line) < 3 {
		return fmt.Errorf("short line %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+', '-', ':', '_', ',', '#', '(':
		return nil
	case '$', '=', '!':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return err
		}
		out.Write(buf)
		return nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return err
		}
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			if err := readRaw(rd, out); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unexpected reply type %q", line)
}

// blockingScript is what the scripts of blocking commands (lists, sorted
// sets, streams) share, each run against Cairn and redis-server alike
// with Redis's replies and events as the expectations: a server that
// publishes keyspace events, a subscriber to them, two clients that
// block (a, b) and a writer (w).
type blockingScript struct {
	t       *testing.T
	n       *Node
	a, b, w *RawConn
	events  *eventStream
}

// runBlockingScript runs script against a fresh Cairn and a fresh
// redis-server, each in a subtest.
func runBlockingScript(t *testing.T, script func(t *testing.T, s *blockingScript)) {
	for _, server := range []string{"cairn", "redis"} {
		t.Run(server, func(t *testing.T) {
			start := StartCairn
			if server == "redis" {
				start = StartRedis
			}
			n := start(t, "--notify-keyspace-events", "KEA")
			s := &blockingScript{t: t, n: n, events: subscribeEvents(t, n.Client(), "__keyevent@0__:*")}
			s.a, s.b, s.w = n.Raw(), n.Raw(), n.Raw()
			script(t, s)
		})
	}
}

// blocked waits until want clients are blocked.
func (s *blockingScript) blocked(want int) {
	s.t.Helper()
	waitFor(s.t, 10*time.Second, fmt.Sprintf("%d blocked clients", want), func() bool { return blockedClients(s.t, s.w) == want })
}

// step checks the keyspace events published since the last step.
func (s *blockingScript) step(what string, want ...string) {
	s.t.Helper()
	expectEvents(s.t, what, s.events.until(s.n.Client()), want...)
}

// reply checks r's next reply.
func (s *blockingScript) reply(r *RawConn, what, want string) {
	s.t.Helper()
	if got := r.Reply(); got != want {
		s.t.Fatalf("%s: %q, want %q", what, got, want)
	}
}
