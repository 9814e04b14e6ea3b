//go:build unix

package sockio

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// Conn reads and writes one TCP connection with raw system calls. The
// zero value is not usable; call Wrap.
type Conn struct {
	nc net.Conn
	rc syscall.RawConn // nil: nc is not a TCP socket, so Conn calls nc

	// The functions handed to rc, bound once so that a call allocates
	// nothing, and the state they work on: the read side belongs to the
	// one reader, the write side to the one writer.
	readFn, writevFn, tryWritevFn func(fd uintptr) bool

	rbuf  []byte
	rn    int
	rerr  syscall.Errno
	one   [1][]byte // Write's buffer, as WriteBuffers takes it
	wbufs [][]byte
	wn    int64
	werr  syscall.Errno
	full  bool // TryWrite found the send buffer full
	iov   []syscall.Iovec
}

// Wrap returns a Conn for nc. For a connection that is not a
// *net.TCPConn (a net.Pipe in a test, say) the Conn simply calls nc's
// methods.
func Wrap(nc net.Conn) *Conn {
	c := &Conn{nc: nc}
	if tc, ok := nc.(*net.TCPConn); ok {
		if rc, err := tc.SyscallConn(); err == nil {
			c.rc = rc
			c.readFn, c.writevFn, c.tryWritevFn = c.read, c.writev, c.tryWritev
		}
	}
	return c
}

// PeerClosed reports whether the peer has closed its side of the
// connection, or the connection failed, without consuming a byte: a
// non-blocking peek. Unread bytes count as open. The reader calls it
// while it is not reading (a command waiting for CLIENT PAUSE to end).
func (c *Conn) PeerClosed() bool {
	if c.rc == nil {
		return false
	}
	closed := false
	c.rc.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = (n == 0 && err == nil) || (err != nil && err != syscall.EAGAIN && err != syscall.EINTR)
	})
	return closed
}

// maxIovecs bounds the buffers one writev(2) takes (Linux's IOV_MAX).
const maxIovecs = 1024

// Read reads up to len(p) bytes, waiting until some are available. It
// returns io.EOF when the peer has closed its side, and the net package's
// errors (a timeout for a passed read deadline, net.ErrClosed after
// Close) otherwise.
func (c *Conn) Read(p []byte) (int, error) {
	if c.rc == nil {
		return c.nc.Read(p)
	}
	if len(p) == 0 {
		return 0, nil
	}
	c.rbuf, c.rn, c.rerr = p, 0, 0
	err := c.rc.Read(c.readFn)
	c.rbuf = nil
	switch {
	case err != nil:
		return 0, err
	case c.rerr != 0:
		return 0, c.opError("read", c.rerr)
	case c.rn == 0:
		return 0, io.EOF
	}
	return c.rn, nil
}

// read is the readiness callback of Read: false means "wait, then call
// again".
func (c *Conn) read(fd uintptr) bool {
	p := c.rbuf
	for {
		r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		c.rn, c.rerr = int(r), e
		return true
	}
}

// Write writes all of p, waiting while the socket's send buffer is full.
// It returns the bytes written and, when it wrote fewer than len(p), why.
func (c *Conn) Write(p []byte) (int, error) {
	if c.rc == nil {
		return c.nc.Write(p)
	}
	c.one[0] = p
	n, err := c.writeBuffers(c.one[:], "write", c.writevFn)
	c.one[0] = nil
	return int(n), err
}

// TryWrite writes as much of p as the socket's send buffer takes now,
// without waiting. full reports that the buffer filled before all of p
// was written; err, that the write failed.
func (c *Conn) TryWrite(p []byte) (n int, full bool, err error) {
	if c.rc == nil {
		n, err = c.nc.Write(p)
		return n, false, err
	}
	c.one[0] = p
	c.full = false
	wn, err := c.writeBuffers(c.one[:], "write", c.tryWritevFn)
	c.one[0] = nil
	return int(wn), c.full && err == nil, err
}

// WriteBuffers writes every buffer of bufs in order, several per
// writev(2), and returns the bytes written. Like net.Buffers.WriteTo it
// consumes bufs: elements of the caller's slice may be resliced past the
// bytes written, but no byte of the buffers is modified.
func (c *Conn) WriteBuffers(bufs [][]byte) (int64, error) {
	if c.rc == nil {
		nb := net.Buffers(bufs)
		return nb.WriteTo(c.nc)
	}
	return c.writeBuffers(bufs, "writev", c.writevFn)
}

// writeBuffers is Write, TryWrite and WriteBuffers on a TCP socket; op
// names the call in errors, and fn is the readiness callback.
func (c *Conn) writeBuffers(bufs [][]byte, op string, fn func(uintptr) bool) (int64, error) {
	c.wbufs, c.wn, c.werr = bufs, 0, 0
	err := c.rc.Write(fn)
	c.wbufs = nil
	clear(c.iov[:cap(c.iov)]) // drop the pointers into the caller's buffers
	if err == nil && c.werr != 0 {
		err = c.opError(op, c.werr)
	}
	return c.wn, err
}

// writev is the readiness callback of WriteBuffers.
func (c *Conn) writev(fd uintptr) bool {
	for {
		iov := c.iov[:0]
		for _, b := range c.wbufs {
			if len(iov) == maxIovecs {
				break
			}
			if len(b) > 0 {
				v := syscall.Iovec{Base: &b[0]}
				v.SetLen(len(b))
				iov = append(iov, v)
			}
		}
		c.iov = iov
		if len(iov) == 0 {
			return true
		}
		r, _, e := syscall.RawSyscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
		switch {
		case e == syscall.EINTR:
		case e == syscall.EAGAIN:
			return false
		case e != 0:
			c.werr = e
			return true
		case r == 0: // never for a non-empty write to a socket; do not spin
			c.werr = syscall.EIO
			return true
		default:
			c.wn += int64(r)
			c.wbufs = consume(c.wbufs, int64(r))
		}
	}
}

// tryWritev is the readiness callback of TryWrite: it writes what the
// socket takes and never asks to wait.
func (c *Conn) tryWritev(fd uintptr) bool {
	if !c.writev(fd) {
		c.full = true
	}
	return true
}

// consume drops the first n bytes of bufs.
func consume(bufs [][]byte, n int64) [][]byte {
	for len(bufs) > 0 {
		l := int64(len(bufs[0]))
		if n < l {
			bufs[0] = bufs[0][n:]
			return bufs
		}
		n -= l
		bufs = bufs[1:]
	}
	return bufs
}

// opError wraps errno the way the net package does, so that callers'
// checks (errors.Is(err, syscall.EPIPE), net.Error) work unchanged.
func (c *Conn) opError(op string, errno syscall.Errno) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.nc.LocalAddr(), Addr: c.nc.RemoteAddr(),
		Err: os.NewSyscallError(op, errno)}
}
