// Package sockio reads and writes TCP sockets with raw system calls.
//
// Go's net package brackets every read(2) and write(2) with the
// scheduler's syscall hooks: the goroutine's P is released for the
// duration, the runtime's monitor thread is woken if it was asleep, and a
// call that lasts past the monitor's next tick (20 µs when busy) hands the
// P to another OS thread. A socket is non-blocking, so those calls never
// wait: a loopback write spends its time running the receiver's TCP path,
// which is CPU work the process must do anyway. On one CPU the hooks only
// add thread switches: with a primary and a replica sharing a core at
// 5,000 writes/s, the replica spent more than a quarter of its CPU in the
// monitor thread alone (docs/performance.md). Conn issues the calls
// through syscall.RawConn with raw system calls instead, so the goroutine
// keeps its P; waiting for readiness, deadlines and Close behave exactly
// as with net.Conn, as the net package's own poller still does the
// waiting.
//
// A Conn is safe for one reader and one writer at a time, like the
// net.Conn it wraps; the caller keeps ownership of that net.Conn (its
// deadlines, Close, addresses).
package sockio

import (
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// Conn reads and writes one TCP connection with raw system calls. The
// zero value is not usable; call Wrap.
type Conn struct {
	nc net.Conn
	rc syscall.RawConn // nil: nc is not a TCP socket, so Conn calls nc
}

// Wrap returns a Conn for nc. For a connection that is not a
// *net.TCPConn (a net.Pipe in a test, say) the Conn simply calls nc's
// methods.
func Wrap(nc net.Conn) *Conn {
	c := &Conn{nc: nc}
	if tc, ok := nc.(*net.TCPConn); ok {
		if rc, err := tc.SyscallConn(); err == nil {
			c.rc = rc
		}
	}
	return c
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
	var n int
	var errno syscall.Errno
	err := c.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait for readiness, then call again
			}
			n, errno = int(r), e
			return true
		}
	})
	runtime.KeepAlive(p)
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, c.opError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write writes all of p, waiting while the socket's send buffer is full.
// It returns the bytes written and, when it wrote fewer than len(p), why.
func (c *Conn) Write(p []byte) (int, error) {
	if c.rc == nil {
		return c.nc.Write(p)
	}
	written := 0
	var errno syscall.Errno
	err := c.rc.Write(func(fd uintptr) bool {
		for written < len(p) {
			rest := p[written:]
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)))
			switch e {
			case 0:
				written += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	runtime.KeepAlive(p)
	if err == nil && errno != 0 {
		err = c.opError("write", errno)
	}
	return written, err
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
	var total int64
	var iov [maxIovecs]syscall.Iovec
	var errno syscall.Errno
	err := c.rc.Write(func(fd uintptr) bool {
		for len(bufs) > 0 {
			n := 0
			for _, b := range bufs {
				if n == maxIovecs {
					break
				}
				if len(b) == 0 {
					continue
				}
				iov[n].Base = &b[0]
				iov[n].SetLen(len(b))
				n++
			}
			if n == 0 {
				bufs = nil
				break
			}
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(n))
			switch e {
			case 0:
				total += int64(r)
				bufs = consume(bufs, int64(r))
			case syscall.EINTR:
			case syscall.EAGAIN:
				clear(iov[:n])
				return false
			default:
				errno = e
				clear(iov[:n])
				return true
			}
			clear(iov[:n])
		}
		return true
	})
	if err == nil && errno != 0 {
		err = c.opError("writev", errno)
	}
	return total, err
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
