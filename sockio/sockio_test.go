package sockio

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"testing"
	"time"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// readAll reads n bytes from c through a Conn in small, uneven reads, so
// that the reader often finds the socket empty and waits.
func readAll(t *testing.T, c *Conn, n int) []byte {
	t.Helper()
	out := make([]byte, 0, n)
	buf := make([]byte, 3000)
	for len(out) < n {
		k, err := c.Read(buf[:1+len(out)%len(buf)])
		if err != nil {
			t.Fatalf("read after %d of %d bytes: %v", len(out), n, err)
		}
		out = append(out, buf[:k]...)
	}
	return out
}

// A write far larger than the socket buffers must wait for the reader
// (the EAGAIN path) and deliver every byte in order.
func TestWriteAndReadLargeStream(t *testing.T) {
	a, b := tcpPair(t)
	want := randomBytes(8<<20, 1)
	transfer(t, Wrap(b), want, func() (int64, error) {
		n, err := Wrap(a).Write(want)
		return int64(n), err
	})
}

// transfer runs write on another goroutine and checks that it reports
// every byte of want written and that r reads exactly want.
func transfer(t *testing.T, r *Conn, want []byte, write func() (int64, error)) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		n, err := write()
		if err == nil && n != int64(len(want)) {
			err = errors.New("short write without an error")
		}
		errc <- err
	}()
	got := readAll(t, r, len(want))
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the bytes read differ from the bytes written")
	}
}

// WriteBuffers must write many buffers (more than one writev can take,
// empty ones among them, more than the socket buffers hold) in order.
func TestWriteBuffers(t *testing.T) {
	a, b := tcpPair(t)
	var bufs [][]byte
	var want []byte
	for i := range 5000 {
		n := i % 700 // every 700th buffer is empty
		p := randomBytes(n, uint64(i)+7)
		bufs = append(bufs, p)
		want = append(want, p...)
	}
	orig := make([][]byte, len(bufs))
	copy(orig, bufs)
	transfer(t, Wrap(b), want, func() (int64, error) { return Wrap(a).WriteBuffers(bufs) })
	var again []byte
	for _, p := range orig {
		again = append(again, p...)
	}
	if !bytes.Equal(again, want) {
		t.Fatal("WriteBuffers modified the bytes of a buffer")
	}
}

func TestReadEOFAfterPeerCloses(t *testing.T) {
	a, b := tcpPair(t)
	if _, err := Wrap(a).Write([]byte("bye")); err != nil {
		t.Fatal(err)
	}
	a.Close()
	c := Wrap(b)
	if got := readAll(t, c, 3); string(got) != "bye" {
		t.Fatalf("read %q, want %q", got, "bye")
	}
	if n, err := c.Read(make([]byte, 10)); n != 0 || err != io.EOF {
		t.Fatalf("read after the peer closed: %d, %v; want 0, io.EOF", n, err)
	}
}

func TestReadDeadlineAndLocalClose(t *testing.T) {
	_, b := tcpPair(t)
	c := Wrap(b)
	b.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := c.Read(make([]byte, 10))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past its deadline: %v; want a deadline error", err)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read past its deadline: %v is not a net.Error timeout", err)
	}
	b.SetReadDeadline(time.Time{})
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(10 * time.Millisecond) // let the reader block; the test passes either way
	b.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read interrupted by Close: %v; want net.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a read blocked across Close")
	}
}

// Writing to a peer that has gone must end in an error, never hang.
func TestWriteToClosedPeerFails(t *testing.T) {
	a, b := tcpPair(t)
	b.Close()
	c := Wrap(a)
	p := make([]byte, 64<<10)
	deadline := time.Now().Add(10 * time.Second)
	a.SetWriteDeadline(deadline)
	for time.Now().Before(deadline) {
		if _, err := c.Write(p); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatal("writes to a closed peer never failed")
			}
			return
		}
	}
	t.Fatal("writes to a closed peer never failed")
}

// A connection that is not TCP is served by its own methods.
func TestNonTCPFallsBack(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() {
		Wrap(a).WriteBuffers([][]byte{[]byte("he"), nil, []byte("llo")})
	}()
	if got := readAll(t, Wrap(b), 5); string(got) != "hello" {
		t.Fatalf("read %q over a pipe, want %q", got, "hello")
	}
}

// One goroutine reads a Conn while another writes it, as a connection's
// reader and its subscriber writer do; the peer echoes.
func TestConcurrentReaderAndWriter(t *testing.T) {
	a, b := tcpPair(t)
	go io.Copy(b, b) // echo
	c := Wrap(a)
	want := randomBytes(2<<20, 3)
	transfer(t, c, want, func() (int64, error) {
		var total int64
		for i := 0; i < len(want); i += 64 << 10 {
			chunk := want[i:min(i+64<<10, len(want))]
			var n int64
			var err error
			if i%(128<<10) == 0 {
				var k int
				k, err = c.Write(chunk)
				n = int64(k)
			} else {
				n, err = c.WriteBuffers([][]byte{chunk[:100], chunk[100:]})
			}
			if total += n; err != nil {
				return total, err
			}
		}
		return total, nil
	})
}

// TryWrite takes what the send buffer holds and reports it full rather
// than wait for a reader that is not reading; the bytes it took arrive
// intact, and once they are read a small write fits whole.
func TestTryWriteStopsWhenFull(t *testing.T) {
	client, server := tcpPair(t)
	w, r := Wrap(server), Wrap(client)
	data := randomBytes(64<<20, 7)
	n, full, err := w.TryWrite(data)
	if err != nil || !full || n <= 0 || n >= len(data) {
		t.Fatalf("TryWrite of 64 MB to a reader that does not read: n=%d full=%v err=%v", n, full, err)
	}
	if got := readAll(t, r, n); !bytes.Equal(got, data[:n]) {
		t.Fatal("the bytes TryWrite took arrived altered")
	}
	n, full, err = w.TryWrite(data[:1000])
	if err != nil || full || n != 1000 {
		t.Fatalf("TryWrite of 1000 bytes to a drained socket: n=%d full=%v err=%v", n, full, err)
	}
	if got := readAll(t, r, 1000); !bytes.Equal(got, data[:1000]) {
		t.Fatal("small write arrived altered")
	}
	// A closed peer answers a write with a reset, which fails a later one.
	client.Close()
	for deadline := time.Now().Add(5 * time.Second); err == nil && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		_, _, err = w.TryWrite(data[:1000])
	}
	if err == nil {
		t.Fatal("TryWrite to a closed peer never failed")
	}
}
