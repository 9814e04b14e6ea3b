package server

import (
	"net"
	"runtime"
	"sync"
	"time"

	"github.com/cairnkv/cairn/config"
)

// drainTimeout bounds how long a closing connection's writer keeps trying
// to hand its last bytes to a client that does not read.
const drainTimeout = 5 * time.Second

// outbox is the output queue of a connection that has subscribed: its
// replies and the messages publishers hand it are queued here and written
// by the connection's own writer goroutine, so a publisher never waits on
// the socket. Pending bytes are held to client-output-buffer-limit; a
// connection over its limit is closed from the publisher's goroutine
// without blocking it.
type outbox struct {
	c    *conn
	wake chan struct{} // capacity 1: "there is work"
	done chan struct{} // closed when the writer has exited

	mu        sync.Mutex
	queue     net.Buffers // chunks (outboxChunk) the bytes to write are copied into
	spare     net.Buffers // the writer's emptied previous queue, reused
	deferred  net.Buffers // chunks of the messages that arrived while a command ran
	free      [][]byte    // written chunks kept for reuse (at most maxFreeChunks)
	pending   int64       // bytes queued (deferred included), not yet written
	executing bool        // a command of this connection is running
	closing   bool        // no more input: drain, then close the socket
	dead      bool        // closed for exceeding its limit
	softSince time.Time   // when pending first went over the soft limit
}

// startOutbox switches c to queued output and starts its writer. It is
// called on c's own goroutine, while a command runs.
func (c *conn) startOutbox() {
	if c.ob != nil {
		return
	}
	o := &outbox{c: c, wake: make(chan struct{}, 1), done: make(chan struct{}), executing: true}
	c.refreshScope()
	c.ob = o
	go o.writer()
}

// begin marks the start of a command's execution: messages delivered from
// now on wait until its reply is queued.
func (o *outbox) begin() {
	o.mu.Lock()
	o.executing = true
	o.mu.Unlock()
}

// outboxChunk is the size of the chunks an outbox copies what it queues
// into: one writev carries a few of them rather than one buffer per
// message, and a publisher allocates nothing per message. Larger replies
// and messages get a chunk of their own size.
const outboxChunk = 4 << 10

// maxFreeChunks bounds the written chunks an outbox keeps for reuse, and
// so what an idle subscriber holds.
const maxFreeChunks = 2

// appendChunked appends a copy of p to the chunks of l, into the last one
// while it has room; o.mu is held.
func (o *outbox) appendChunked(l net.Buffers, p []byte) net.Buffers {
	if n := len(l); n > 0 && len(l[n-1])+len(p) <= cap(l[n-1]) {
		l[n-1] = append(l[n-1], p...)
		return l
	}
	var c []byte
	if n := len(o.free); n > 0 && len(p) <= outboxChunk {
		c, o.free = o.free[n-1], o.free[:n-1]
	} else {
		c = make([]byte, 0, max(outboxChunk, len(p)))
	}
	return append(l, append(c, p...))
}

// pushReply queues the replies of the commands just run, then the
// messages that arrived meanwhile, and ends the execution mark. The
// replies are copied unless owned is set: the caller then gives b up.
func (o *outbox) pushReply(b []byte, owned bool) {
	o.mu.Lock()
	if len(b) > 0 && !o.dead {
		if owned {
			o.queue = append(o.queue, b[:len(b):len(b)])
		} else {
			o.queue = o.appendChunked(o.queue, b)
		}
		o.pending += int64(len(b))
	}
	o.queue = append(o.queue, o.deferred...)
	o.deferred = nil
	o.executing = false
	o.check()
	o.mu.Unlock()
	o.signal()
}

// deliver queues a copy of a message frame from a publisher's goroutine.
func (o *outbox) deliver(frame []byte) {
	o.mu.Lock()
	if o.dead || o.closing {
		o.mu.Unlock()
		return
	}
	if o.executing {
		o.deferred = o.appendChunked(o.deferred, frame)
	} else {
		o.queue = o.appendChunked(o.queue, frame)
	}
	o.pending += int64(len(frame))
	o.check()
	o.mu.Unlock()
	o.signal()
}

// check applies client-output-buffer-limit to the pending bytes; o.mu is
// held. A connection over its hard limit, or over its soft limit for
// longer than the limit's seconds, is closed.
func (o *outbox) check() {
	if o.dead {
		return
	}
	class := config.ClientNormal
	switch {
	case o.c.client.Monitoring():
		class = config.ClientReplica
	case o.c.client.Subscribed(): // the pubsub class of client-output-buffer-limit
		class = config.ClientPubSub
	}
	lim := o.c.s.env.Config.BufferLimit(class)
	switch {
	case lim.Hard > 0 && o.pending >= lim.Hard:
		o.kill(class, "hard")
	case lim.Soft > 0 && o.pending >= lim.Soft:
		now := time.Now()
		if o.softSince.IsZero() {
			o.softSince = now
		} else if now.Sub(o.softSince) > time.Duration(lim.SoftSeconds)*time.Second {
			o.kill(class, "soft")
		}
	default:
		o.softSince = time.Time{}
	}
}

// kill closes the connection for exceeding its output limit; o.mu is held.
func (o *outbox) kill(class config.ClientClass, which string) {
	o.dead = true
	o.c.s.env.Stats.OutputLimitDisconnections.Add(1)
	o.c.s.log.Warn("client closed for overcoming of output buffer limits", "client", o.c.client.Addr,
		"id", o.c.client.ID, "class", class.String(), "limit", which, "pending_bytes", o.pending)
	o.queue, o.deferred = nil, nil
	o.c.close()
}

// Pending returns the bytes queued but not yet written (CLIENT LIST omem).
func (o *outbox) Pending() int64 {
	if o == nil {
		return 0
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.pending
}

func (o *outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// finish stops further input, lets the writer drain what is queued (for
// at most drainTimeout) and waits for it to exit.
func (o *outbox) finish() {
	o.mu.Lock()
	o.closing = true
	o.mu.Unlock()
	o.signal()
	o.c.nc.SetWriteDeadline(time.Now().Add(drainTimeout))
	<-o.done
}

// maxSpareBuffers bounds the capacity of the queue slice the writer keeps
// for reuse, so one burst does not pin a large slice.
const maxSpareBuffers = 1024

// maxWriteYields and maxWriteWait bound how many times, and for how long,
// the writer yields to publishers before it writes what they queued. When
// writers of one key take turns under its lock, each yield lets about one
// more event in; under a load of many keys one yield lets in dozens. The
// time bound keeps events prompt: a yield may also hand the CPU to a
// flush or compaction, and a 1 ms bound made a replica's event p99 several
// times longer (docs/performance.md).
const (
	maxWriteYields = 16
	maxWriteWait   = 100 * time.Microsecond
)

// writer is the connection's only socket writer once it has an outbox.
func (o *outbox) writer() {
	defer close(o.done)
	for range o.wake {
		// Let the goroutines that are about to publish run first, so
		// one write carries many messages rather than one each: yield
		// while the queue still grows, within the bounds above.
		start := time.Now()
		for i, pending := 0, int64(-1); i < maxWriteYields; i++ {
			runtime.Gosched()
			o.mu.Lock()
			n := o.pending
			o.mu.Unlock()
			if n == pending || time.Since(start) > maxWriteWait {
				break
			}
			pending = n
		}
		for {
			o.mu.Lock()
			bufs := o.queue
			closing := o.closing
			if len(bufs) > 0 {
				o.queue, o.spare = o.spare, nil
			}
			o.mu.Unlock()
			if len(bufs) == 0 {
				if closing {
					return
				}
				break
			}
			n, err := o.c.sock.WriteBuffers(bufs)
			o.c.s.env.Stats.NetOutput.Add(n)
			o.mu.Lock()
			o.pending -= n
			for _, c := range bufs {
				if len(o.free) < maxFreeChunks && cap(c) == outboxChunk {
					o.free = append(o.free, c[:0])
				}
			}
			clear(bufs) // the other chunks can go
			if cap(bufs) <= maxSpareBuffers {
				o.spare = bufs[:0]
			}
			o.mu.Unlock()
			if err != nil {
				o.c.close()
				o.mu.Lock()
				o.dead = true
				o.queue, o.deferred = nil, nil
				o.mu.Unlock()
				return
			}
		}
	}
}
