package tests

import (
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
)

// Proxy is a loopback TCP proxy between a replica (the client side) and
// its primary (the target). It can cut every connection it carries, flip
// one byte of the primary->replica direction or hold that direction back,
// so tests can break, corrupt or stall a replication stream at a chosen
// point.
type Proxy struct {
	ln     net.Listener
	target string
	Port   int

	mu       sync.Mutex
	conns    map[net.Conn]struct{} // both ends of every live pair
	accepted int
	flipIn   int64 // >= 0: primary->replica bytes left before the flip
	flipped  bool
	flips    int           // bytes flipped so far
	holdIn   int64         // >= 0: primary->replica bytes left before the hold
	released chan struct{} // closed by Release
}

// StartProxy listens on a free loopback port and forwards every
// connection to target (host:port). It is closed at test end.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target, Port: ln.Addr().(*net.TCPAddr).Port,
		conns: map[net.Conn]struct{}{}, flipIn: -1, holdIn: -1}
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// SlaveOf returns the proxy's address in the "host port" form that
// --slaveof takes.
func (p *Proxy) SlaveOf() string { return "127.0.0.1 " + strconv.Itoa(p.Port) }

// Accepted returns how many connections the proxy accepted so far.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// FlipAfter arms a one-shot corruption: after n more bytes have gone from
// the primary to the replica, the next byte is inverted.
func (p *Proxy) FlipAfter(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flipIn, p.flipped = n, false
}

// Flipped reports whether the armed byte was flipped.
func (p *Proxy) Flipped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.flipped
}

// Armed reports whether a flip is armed and not yet done.
func (p *Proxy) Armed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.flipIn >= 0
}

// Flips returns how many bytes the proxy has flipped so far.
func (p *Proxy) Flips() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.flips
}

// HoldAfter arms a hold: after n more bytes have gone from the primary to
// the replica, the proxy forwards nothing more in that direction until
// Release.
func (p *Proxy) HoldAfter(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holdIn, p.released = n, make(chan struct{})
}

// Release ends a hold: the bytes held back go on.
func (p *Proxy) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released != nil {
		close(p.released)
		p.released = nil
	}
	p.holdIn = -1
}

// Cut closes every connection the proxy carries; new ones are accepted.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

// Close stops accepting, ends a hold and cuts every connection.
func (p *Proxy) Close() {
	p.ln.Close()
	p.Release()
	p.Cut()
}

func (p *Proxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		p.mu.Lock()
		p.accepted++
		p.conns[client], p.conns[server] = struct{}{}, struct{}{}
		p.mu.Unlock()
		done := func() {
			client.Close()
			server.Close()
			p.mu.Lock()
			delete(p.conns, client)
			delete(p.conns, server)
			p.mu.Unlock()
		}
		go func() { io.Copy(server, client); done() }()
		go func() { p.downstream(client, server); done() }()
	}
}

// downstream copies primary->replica bytes, applying an armed flip.
func (p *Proxy) downstream(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if p.flipIn >= 0 && !p.flipped {
				if p.flipIn < int64(n) {
					buf[p.flipIn] ^= 0xff
					p.flipped = true
					p.flips++
					p.flipIn = -1
				} else {
					p.flipIn -= int64(n)
				}
			}
			first, wait := n, (chan struct{})(nil)
			if p.holdIn >= 0 {
				if p.holdIn < int64(n) {
					first, wait = int(p.holdIn), p.released
					p.holdIn = -1
				} else {
					p.holdIn -= int64(n)
				}
			}
			p.mu.Unlock()
			if _, werr := dst.Write(buf[:first]); werr != nil {
				return
			}
			if wait != nil {
				<-wait
				if _, werr := dst.Write(buf[first:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}
