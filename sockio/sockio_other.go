//go:build !unix

package sockio

import "net"

// Conn reads and writes one TCP connection; here, without raw system
// calls, through the net.Conn it wraps. The zero value is not usable;
// call Wrap.
type Conn struct {
	nc net.Conn
}

// Wrap returns a Conn for nc.
func Wrap(nc net.Conn) *Conn { return &Conn{nc: nc} }

// Read reads up to len(p) bytes, waiting until some are available, as
// nc.Read does.
func (c *Conn) Read(p []byte) (int, error) { return c.nc.Read(p) }

// PeerClosed reports false here: without raw system calls, a closed peer
// is only seen by the next read.
func (c *Conn) PeerClosed() bool { return false }

// Write writes all of p, as nc.Write does.
func (c *Conn) Write(p []byte) (int, error) { return c.nc.Write(p) }

// TryWrite writes p; here it waits as Write does, so full is always
// false.
func (c *Conn) TryWrite(p []byte) (n int, full bool, err error) {
	n, err = c.nc.Write(p)
	return n, false, err
}

// WriteBuffers writes every buffer of bufs in order and returns the bytes
// written; like net.Buffers.WriteTo it consumes bufs.
func (c *Conn) WriteBuffers(bufs [][]byte) (int64, error) {
	nb := net.Buffers(bufs)
	return nb.WriteTo(c.nc)
}
