package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/iotest"
	"time"
)

const testPattern = "__keyevent@0__:*"

// eventPayload returns the payload of message i of a test stream: keys
// with CR, LF, CRLF, NUL and every other byte, text that looks like RESP,
// empty ones and, now and then, one larger than a small Reader's buffer.
func eventPayload(i int) string {
	switch i % 7 {
	case 0:
		return fmt.Sprintf("key:%d", i)
	case 1:
		return "a\r\nb\r\n" + fmt.Sprint(i)
	case 2:
		b := make([]byte, 256)
		for j := range b {
			b[j] = byte(i + j)
		}
		return string(b)
	case 3:
		return ""
	case 4:
		return "*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n"
	case 5:
		return "\r\n\x00\r"
	}
	if i%70 == 6 {
		return strings.Repeat("big\r\n", 4000) // 20 KB
	}
	return "\n"
}

// eventStream returns n pmessage frames of testPattern with eventPayload
// payloads.
func eventStream(n int) []byte {
	var b []byte
	for i := range n {
		b = AppendFrame(b, pmsg('*', "__keyevent@0__:set", eventPayload(i)))
	}
	return b
}

// TestPmessageCounter checks that the count is exact however the stream
// is cut into reads, that -expect stops it at that count, and that other
// frames are counted apart and error replies end it.
func TestPmessageCounter(t *testing.T) {
	const n = 700
	stream := eventStream(n)
	for name, mk := range map[string]func() io.Reader{
		"whole":    func() io.Reader { return bytes.NewReader(stream) },
		"one byte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(stream)) },
		"half":     func() io.Reader { return iotest.HalfReader(bytes.NewReader(stream)) },
		"data+EOF": func() io.Reader { return iotest.DataErrReader(bytes.NewReader(stream)) },
	} {
		for _, size := range []int{16, subscribeBufSize} {
			p := &pmessageCounter{rd: NewReader(mk(), size), pattern: testPattern}
			if err := p.read(); !errors.Is(err, io.EOF) {
				t.Errorf("%s, buffer %d: ended with %v, want EOF", name, size, err)
			}
			if p.n != n || p.progress.Load() != n || p.unexpected != 0 {
				t.Errorf("%s, buffer %d: counted %d (progress %d), %d unexpected; want %d, 0", name, size, p.n, p.progress.Load(), p.unexpected, n)
			}
			if p.first.IsZero() || p.last.Before(p.first) {
				t.Errorf("%s, buffer %d: first %v, last %v", name, size, p.first, p.last)
			}

			p = &pmessageCounter{rd: NewReader(mk(), size), pattern: testPattern, expect: n - 5}
			if err := p.read(); err != nil || p.n != n-5 {
				t.Errorf("%s, buffer %d, expect %d: counted %d, %v", name, size, n-5, p.n, err)
			}
		}
	}

	var b []byte
	b = AppendFrame(b, pmsg('*', "__keyevent@0__:set", "k"))
	b = AppendFrame(b, Value{Kind: '*', Elems: []Value{bulkV("message"), bulkV("ch"), bulkV("x")}})
	b = AppendFrame(b, Value{Kind: '*', Elems: []Value{bulkV("pmessage"), bulkV("other*"), bulkV("other1"), bulkV("x")}})
	b = AppendFrame(b, pmsg('>', "__keyevent@0__:del", "k")) // RESP3 push
	b = append(b, "-ERR something broke\r\n"...)
	b = AppendFrame(b, pmsg('*', "__keyevent@0__:set", "after the error"))
	p := &pmessageCounter{rd: NewReader(bytes.NewReader(b), 4096), pattern: testPattern}
	err := p.read()
	var se *ServerError
	if !errors.As(err, &se) || se.Msg != "ERR something broke" {
		t.Errorf("got %v, want the server's error", err)
	}
	if p.n != 2 || p.unexpected != 2 || !strings.Contains(p.firstOdd, `bulk "message"`) {
		t.Errorf("counted %d, %d unexpected (first %s); want 2, 2, the message frame", p.n, p.unexpected, p.firstOdd)
	}
}

// TestPmessageCounterAllocs checks that counting allocates nothing per
// message once the Reader is warm.
func TestPmessageCounterAllocs(t *testing.T) {
	var data []byte
	for i := range 2000 {
		data = AppendFrame(data, pmsg('*', "__keyevent@0__:set", fmt.Sprintf("key:%06d", i)))
	}
	br := bytes.NewReader(data)
	p := &pmessageCounter{rd: NewReader(br, 64<<10), pattern: testPattern}
	allocs := testing.AllocsPerRun(10, func() {
		br.Reset(data)
		p.n = 0
		if err := p.read(); err != io.EOF || p.n != 2000 {
			t.Fatalf("counted %d, %v", p.n, err)
		}
	})
	if allocs > 1 {
		t.Errorf("%v allocations per 2000 messages", allocs)
	}
}

// BenchmarkPmessageCounter measures the cost of counting one keyspace
// event, read from memory through a Reader of subscribeBufSize.
func BenchmarkPmessageCounter(b *testing.B) {
	const perRun = 10000
	var data []byte
	for i := range perRun {
		data = AppendFrame(data, pmsg('*', "__keyevent@0__:set", fmt.Sprintf("key:%012d", i)))
	}
	br := bytes.NewReader(data)
	p := &pmessageCounter{rd: NewReader(br, subscribeBufSize), pattern: testPattern}
	b.SetBytes(int64(len(data) / perRun))
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += perRun {
		br.Reset(data)
		p.n = 0
		p.expect = int64(min(perRun, b.N-done))
		if err := p.read(); err != nil {
			b.Fatal(err)
		}
	}
}

// psubServer starts a fake server that answers PSUBSCRIBE testPattern and
// then runs send on the connection, which it closes when send returns.
// Anything else gets an error reply.
func psubServer(t *testing.T, send func(c net.Conn, rd *Reader)) string {
	return fakeServer(t, func(c net.Conn, rd *Reader) {
		v, err := rd.ReadFrame()
		if err != nil {
			return
		}
		if args := command(v); len(args) != 2 || args[0] != "PSUBSCRIBE" || args[1] != testPattern {
			c.Write([]byte("-ERR the fake server wants PSUBSCRIBE " + testPattern + "\r\n"))
			return
		}
		confirm := Value{Kind: '*', Elems: []Value{bulkV("psubscribe"), bulkV(testPattern), {Kind: ':', Int: 1}}}
		if _, err := c.Write(AppendFrame(nil, confirm)); err != nil {
			return
		}
		send(c, rd)
	})
}

// writeChunks writes b in pieces of random sizes, so that frames straddle
// the reads of the client.
func writeChunks(c net.Conn, b []byte) {
	r := rand.New(rand.NewPCG(1, 2))
	for len(b) > 0 {
		k := min(len(b), 1+r.IntN(3000))
		if _, err := c.Write(b[:k]); err != nil {
			return
		}
		b = b[k:]
	}
}

// untilClosed waits until the client closes its end.
func untilClosed(rd *Reader) {
	for {
		if _, err := rd.ReadFrame(); err != nil {
			return
		}
	}
}

func subscribeCfg(addr string) *subscribeConfig {
	cm := testCommon(addr)
	cm.quiet = true
	return &subscribeConfig{common: cm, pattern: testPattern, signals: make(chan os.Signal, 1)}
}

// lineWriter is an io.Writer, safe for concurrent use, that closes
// subscribed when the line "subscribed" is written to it.
type lineWriter struct {
	mu         sync.Mutex
	b          strings.Builder
	subscribed chan struct{}
}

func newLineWriter() *lineWriter { return &lineWriter{subscribed: make(chan struct{})} }

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if strings.HasPrefix(w.b.String(), "subscribed\n") || strings.Contains(w.b.String(), "\nsubscribed\n") {
		select {
		case <-w.subscribed:
		default:
			close(w.subscribed)
		}
	}
	return len(p), nil
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestSubscribeFake counts a stream of pmessages with awkward payloads,
// written in pieces, until the server closes the connection.
func TestSubscribeFake(t *testing.T) {
	const n = 3000
	addr := psubServer(t, func(c net.Conn, _ *Reader) { writeChunks(c, eventStream(n)) })
	w := newLineWriter()
	r, err := runSubscribe(subscribeCfg(addr), w)
	if err != nil {
		t.Fatal(err)
	}
	if r.Received != n || r.EndedBy != endedClosed || !r.ExpectMet || r.UnexpectedFrames != 0 || r.Error != "" {
		t.Errorf("got %+v; want %d received, closed", r, n)
	}
	if r.Seconds <= 0 || r.PerSec <= 0 {
		t.Errorf("%.6f s, %.0f msgs/s; want both positive", r.Seconds, r.PerSec)
	}
	if w.String() != "subscribed\n" {
		t.Errorf("stderr %q, want only the subscribed line (-quiet)", w.String())
	}
}

// TestSubscribeExpect checks that -expect stops the reading at that count
// although more messages come and the connection stays open, and the
// table and JSON reports.
func TestSubscribeExpect(t *testing.T) {
	const n = 1000
	addr := psubServer(t, func(c net.Conn, rd *Reader) {
		writeChunks(c, eventStream(n+100))
		untilClosed(rd)
	})
	w := newLineWriter()
	var out strings.Builder
	start := time.Now()
	args := []string{"subscribe", "-addr", addr, "-expect", fmt.Sprint(n), "-json", "-quiet"}
	if code := run(args, &out, w); code != 0 {
		t.Fatalf("run(%q) = %d; stderr:\n%s\nstdout:\n%s", args, code, w, &out)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v; -expect should have stopped it at once", d)
	}
	var r subscribeResult
	if err := json.Unmarshal([]byte(out.String()), &r); err != nil {
		t.Fatalf("%v in:\n%s", err, out.String())
	}
	if r.Received != n || r.Expect != n || !r.ExpectMet || r.EndedBy != endedExpect || r.Error != "" {
		t.Errorf("got %+v", r)
	}
	if w.String() != "subscribed\n" {
		t.Errorf("stderr %q", w.String())
	}

	out.Reset()
	args = []string{"subscribe", "-addr", addr, "-expect", "10", "-quiet"}
	if code := run(args, &out, newLineWriter()); code != 0 {
		t.Fatalf("run(%q) = %d; stdout:\n%s", args, code, &out)
	}
	for _, want := range []string{"received", "10 pmessages", "10: met", "-expect reached", "msgs/s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, &out)
		}
	}
}

// TestSubscribeExpectNotMet checks the report and exit status when the
// connection closes before -expect messages came.
func TestSubscribeExpectNotMet(t *testing.T) {
	addr := psubServer(t, func(c net.Conn, _ *Reader) { c.Write(eventStream(99)) })
	for _, asJSON := range []bool{true, false} {
		var out, errw strings.Builder
		args := []string{"subscribe", "-addr", addr, "-expect", "100", "-quiet"}
		if asJSON {
			args = append(args, "-json")
		}
		if code := run(args, &out, &errw); code != 1 {
			t.Fatalf("run(%q) = %d, want 1; stderr:\n%s", args, code, &errw)
		}
		want := "received 99 of the 100 expected pmessages (stopped by closed)"
		if !strings.Contains(errw.String(), "cairn-bench subscribe: "+want) {
			t.Errorf("stderr lacks %q:\n%s", want, &errw)
		}
		if !asJSON {
			if !strings.Contains(out.String(), "100: NOT met") {
				t.Errorf("the table does not say so:\n%s", &out)
			}
			continue
		}
		var r subscribeResult
		if err := json.Unmarshal([]byte(out.String()), &r); err != nil {
			t.Fatalf("%v in:\n%s", err, out.String())
		}
		if r.Received != 99 || r.ExpectMet || r.EndedBy != endedClosed || r.Error != want {
			t.Errorf("got %+v", r)
		}
	}
}

// TestSubscribeServerError checks that an error reply to PSUBSCRIBE, and
// one or bad bytes among the messages, fail the run with a clear message.
func TestSubscribeServerError(t *testing.T) {
	addr := fakeServer(t, func(c net.Conn, rd *Reader) {
		if _, err := rd.ReadFrame(); err == nil {
			c.Write([]byte("-ERR unknown command 'PSUBSCRIBE'\r\n"))
		}
	})
	_, err := runSubscribe(subscribeCfg(addr), nil)
	var se *ServerError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "PSUBSCRIBE: server error: ERR unknown command 'PSUBSCRIBE'") {
		t.Errorf("got %v, want the server's error", err)
	}
	var out, errw strings.Builder
	if code := run([]string{"subscribe", "-addr", addr, "-json"}, &out, &errw); code != 1 {
		t.Errorf("run = %d, want 1", code)
	}
	if !strings.Contains(errw.String(), "server error: ERR unknown command") || strings.Contains(errw.String(), "subscribed") ||
		!strings.Contains(out.String(), `"error"`) {
		t.Errorf("stderr:\n%s\nstdout:\n%s", &errw, &out)
	}

	for _, tc := range []struct{ tail, want string }{
		{"-ERR OOM command not allowed\r\n", "after 3 pmessages: server error: ERR OOM command not allowed"},
		{"?what\r\n", "after 3 pmessages: resp: protocol error"},
		{"*4\r\n$8\r\npmess", "after 3 pmessages: unexpected EOF"},
	} {
		addr := psubServer(t, func(c net.Conn, _ *Reader) { c.Write(append(eventStream(3), tc.tail...)) })
		_, err := runSubscribe(subscribeCfg(addr), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("after %q: got %v, want %q", tc.tail, err, tc.want)
		}
	}
}

// TestSubscribeUnexpected checks that frames other than pmessages of the
// pattern are counted apart and fail the run.
func TestSubscribeUnexpected(t *testing.T) {
	addr := psubServer(t, func(c net.Conn, _ *Reader) {
		b := eventStream(3)
		b = AppendFrame(b, Value{Kind: '*', Elems: []Value{bulkV("message"), bulkV("ch"), bulkV("x")}})
		b = AppendFrame(b, Value{Kind: '*', Elems: []Value{bulkV("pmessage"), bulkV("x*"), bulkV("x1"), bulkV("x")}})
		c.Write(b)
	})
	var out, errw strings.Builder
	if code := run([]string{"subscribe", "-addr", addr, "-quiet"}, &out, &errw); code != 1 {
		t.Errorf("run = %d, want 1", code)
	}
	if !strings.Contains(errw.String(), `received 2 frames that are not pmessages of "__keyevent@0__:*"; the first: array[3]{bulk "message"`) ||
		!strings.Contains(out.String(), "3 pmessages") || !strings.Contains(out.String(), "unexpected frames") {
		t.Errorf("stderr:\n%s\nstdout:\n%s", &errw, &out)
	}
}

// TestSubscribeStops checks the two ends of an open connection: a signal
// and -duration-limit.
func TestSubscribeStops(t *testing.T) {
	written := make(chan struct{}, 2)
	addr := psubServer(t, func(c net.Conn, rd *Reader) {
		c.Write(eventStream(10))
		written <- struct{}{}
		untilClosed(rd)
	})

	cfg := subscribeCfg(addr)
	cfg.expect = 20
	go func() {
		<-written
		time.Sleep(300 * time.Millisecond) // for the client to read them
		cfg.signals <- syscall.SIGTERM
	}()
	r, err := runSubscribe(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.EndedBy != endedSignal || r.Received != 10 || r.ExpectMet || !strings.Contains(r.Error, "received 10 of the 20") {
		t.Errorf("signal: got %+v", r)
	}

	cfg = subscribeCfg(addr)
	cfg.limit = 300 * time.Millisecond
	start := time.Now()
	r, err = runSubscribe(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < cfg.limit || d > 5*time.Second {
		t.Errorf("a limit of %v took %v", cfg.limit, d)
	}
	if r.EndedBy != endedLimit || r.Received != 10 || !r.ExpectMet || r.Error != "" {
		t.Errorf("limit: got %+v", r)
	}
}

func TestSubscribeUsage(t *testing.T) {
	var out, errw strings.Builder
	for _, args := range [][]string{
		{"subscribe", "-expect", "-1"},
		{"subscribe", "-pattern", ""},
		{"subscribe", "-addr", "192.0.2.1:6379"},
		{"subscribe", "extra"},
	} {
		if code := run(args, &out, &errw); code != 2 {
			t.Errorf("run(%q) = %d, want 2", args, code)
		}
	}
}

// TestSubscribeRedis runs the mode against a redis-server with keyspace
// events on: SETs of keys with CR, LF and binary bytes make exactly one
// __keyevent@0__:set event each.
func TestSubscribeRedis(t *testing.T) {
	addr := startRedisServer(t, "--notify-keyspace-events", "KEA")
	const n = 5000
	w := newLineWriter()
	var out strings.Builder
	code := make(chan int, 1)
	args := []string{"subscribe", "-addr", addr, "-pattern", testPattern, "-expect", fmt.Sprint(n), "-json", "-quiet", "-duration-limit", "30s"}
	go func() { code <- run(args, &out, w) }()
	select {
	case <-w.subscribed:
	case c := <-code:
		t.Fatalf("run(%q) = %d before subscribing; stderr:\n%s", args, c, w)
	case <-time.After(10 * time.Second):
		t.Fatalf("not subscribed after 10 s; stderr:\n%s", w)
	}

	c, err := dial(addr, 5*time.Second, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	var batch []byte
	for i := range n {
		batch = AppendCommand(batch, "SET", fmt.Sprintf("k\r\n%d\x00\xff", i), "v")
	}
	if err := c.write(batch); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if v, err := c.read(); err != nil || v.Kind != '+' {
			t.Fatalf("SET %d: %v, %v", i, v, err)
		}
	}

	select {
	case got := <-code:
		if got != 0 {
			t.Fatalf("run(%q) = %d; stderr:\n%s\nstdout:\n%s", args, got, w, &out)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the subscriber did not stop within 30 s of the SETs")
	}
	var r subscribeResult
	if err := json.Unmarshal([]byte(out.String()), &r); err != nil {
		t.Fatalf("%v in:\n%s", err, out.String())
	}
	if r.Received != n || !r.ExpectMet || r.EndedBy != endedExpect || r.UnexpectedFrames != 0 {
		t.Errorf("got %+v", r)
	}
}
