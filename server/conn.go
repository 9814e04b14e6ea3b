package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnkv/cairn/commands"
	"github.com/cairnkv/cairn/pubsub"
	"github.com/cairnkv/cairn/server/resp"
	"github.com/cairnkv/cairn/sockio"
)

// flushThreshold is how many reply bytes a connection buffers before it
// writes them even though more pipelined requests are waiting.
const flushThreshold = 64 << 10

// conn is one client connection. Its goroutine is the only reader of the
// socket, and its only writer until the connection subscribes; from then on
// its outbox's writer goroutine writes everything (replies and messages),
// so publishers only ever enqueue.
type conn struct {
	s      *Server
	nc     net.Conn
	sock   *sockio.Conn // nc's reads and writes, with raw system calls
	client *commands.Client
	r      *resp.Reader
	w      *resp.Writer
	ob     *outbox // nil until the first subscription

	deadlineSet bool // an idle-timeout read deadline is armed

	// ahead is a request read past a pipelined group that could not join
	// it, and aheadErr the read error that ended a group; read returns
	// them first.
	ahead    [][]byte
	aheadErr error

	// scope is the namespace the client works in and whether it is the
	// admin, for publishers' goroutines (InNamespace).
	scope atomic.Pointer[clientScope]

	closeOnce sync.Once
	closed    chan struct{} // closed by close
}

type clientScope struct {
	namespace string
	admin     bool
}

// InNamespace implements pubsub.Member: keyspace notifications of a
// namespace reach the clients of that namespace and the admin.
func (c *conn) InNamespace(ns string) bool {
	sc := c.scope.Load()
	return sc != nil && (sc.admin || sc.namespace == ns)
}

// refreshScope publishes the client's namespace and role to publishers.
func (c *conn) refreshScope() {
	sc := c.scope.Load()
	if sc == nil || sc.namespace != c.client.Namespace || sc.admin != c.client.Admin {
		c.scope.Store(&clientScope{namespace: c.client.Namespace, admin: c.client.Admin})
	}
}

// Deliver implements pubsub.Subscriber: it queues a copy of the message frame in the
// protocol the connection speaks.
func (c *conn) Deliver(m *pubsub.Message) { c.ob.deliver(m.Frame(c.client.Proto())) }

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{s: s, nc: nc, sock: sockio.Wrap(nc), w: resp.NewWriter(), closed: make(chan struct{})}
	c.w.OnError = s.env.Stats.NoteError
	cl := &commands.Client{
		ID:      s.env.Clients.NextID(),
		Addr:    nc.RemoteAddr().String(),
		LAddr:   nc.LocalAddr().String(),
		FD:      connFD(nc),
		Created: time.Now(),
		Kill:    c.close,
		Closed:  c.closed,
	}
	cl.PeerGone = c.sock.PeerClosed
	cl.Subscriber = c
	cl.CanHandoff = true
	cl.StartQueuedOutput = c.startOutbox
	cl.OutputPending = func() int64 { return c.ob.Pending() }
	cl.Push = func(frame []byte) { c.ob.deliver(frame) }
	s.env.NewClientState(cl)
	cl.Touch("", cl.Created)
	c.client = cl
	c.r = resp.NewReader(countingReader{c.sock, s}, s.env.Config.Bytes("proto-max-bulk-len"))
	return c
}

// countingReader counts the bytes clients send, for INFO.
type countingReader struct {
	r io.Reader
	s *Server
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.s.env.Stats.NetInput.Add(int64(n))
	return n, err
}

// close closes the socket; the serving goroutine then exits.
func (c *conn) close() {
	c.closeOnce.Do(func() {
		// The socket first: a command that gives up on seeing closed
		// (WAIT, a paused command) must find no socket to reply to.
		c.nc.Close()
		close(c.closed)
	})
}

// interrupt wakes a connection blocked in a read so it notices shutdown;
// a command already running finishes and its reply is written first.
func (c *conn) interrupt() { c.nc.SetReadDeadline(time.Now()) }

func (c *conn) serve() {
	env := c.s.env
	env.Clients.Add(c.client)
	defer func() {
		env.Clients.Remove(c.client)
		env.StopMonitoring(c.client)
		env.PubSub.Drop(c)
		if c.ob != nil {
			c.ob.finish()
		}
		c.close()
		c.s.forget(c)
	}()
	for {
		if c.s.closing.Load() {
			c.flush()
			return
		}
		if !c.r.HasCommand() {
			// The idle timeout spares subscribers, which are idle by
			// nature, as Redis does; 0 turns it off at once.
			if timeout := env.Config.Int("timeout"); timeout > 0 && !c.client.Subscribed() {
				c.nc.SetReadDeadline(time.Now().Add(time.Duration(timeout) * time.Second))
				c.deadlineSet = true
			} else if c.deadlineSet {
				c.nc.SetReadDeadline(time.Time{})
				c.deadlineSet = false
				if c.s.closing.Load() {
					continue // do not lose Stop's interrupt
				}
			}
		}
		c.r.SetAuthRequired(!c.client.Authed)
		args, err := c.read()
		if err == nil && c.ob != nil {
			c.ob.begin()
		}
		if err != nil {
			var pe *resp.ProtocolError
			if errors.As(err, &pe) {
				c.w.Error("ERR " + pe.Error())
				env.Log.Debug("protocol error; closing connection", "addr", c.client.Addr, "error", pe)
			}
			c.flush()
			return
		}
		if !c.dispatchPipelined(args) {
			c.flush()
			return
		}
		if c.r.TakeLargest() >= largeBuffer || c.w.Len() >= largeBuffer {
			c.s.releaseMemorySoon()
		}
		if c.ob != nil {
			c.refreshScope()
		}
		if h := c.client.Handoff; h != nil {
			if c.ob == nil && c.flush() {
				c.handoff(h)
			}
			return
		}
		if c.client.CloseAfterReply {
			c.flush()
			return
		}
		// Replies wait while the next request is already here (a
		// pipeline answered with one write); before a read that may
		// wait for the client, they go out, and so they do while CLIENT
		// PAUSE lasts, for the next command may wait for its end.
		if !c.r.HasCommand() || c.w.Len() >= flushThreshold || env.Paused() {
			c.yieldToFeeders()
			if !c.flush() {
				return
			}
			// The client sends its next request only once it has this
			// reply, so reading at once would find the socket empty: a
			// read(2) failing with EAGAIN, then a park until the poller
			// sees the request. Letting the other runnable connections
			// go first, the request has often arrived by the time this
			// one reads: with 50 clients on one CPU, 1.4-1.6 reads per
			// request instead of 2, and 5% less CPU per GET (a SET's
			// commit yields already; no change measured there); see
			// docs/performance.md. A lone client only pays for a yield
			// that finds nothing else to run.
			if c.r.Buffered() == 0 {
				runtime.Gosched()
			}
		}
	}
}

// handoff gives the socket to h (a replica's PSYNC stream) until it
// returns. The connection leaves the client list: it is a replica now.
func (c *conn) handoff(h func(net.Conn, func() ([][]byte, error))) {
	c.s.env.Clients.Remove(c.client)
	c.nc.SetReadDeadline(time.Time{})
	c.r.SetAuthRequired(false)
	h(c.nc, c.r.ReadCommand)
}

// read returns the next request: the one read ahead by the last
// pipelined group (or the error that ended its reading), else a new one.
func (c *conn) read() ([][]byte, error) {
	if args, err := c.ahead, c.aheadErr; args != nil || err != nil {
		c.ahead, c.aheadErr = nil, nil
		return args, err
	}
	return c.r.ReadCommand()
}

// dispatchPipelined runs args, together with the requests the client has
// already pipelined behind it when they can share one batch
// (commands.Groupable): a pipeline of writes then costs one commit. While
// CLIENT PAUSE lasts, requests run one by one, so that the replies of
// those before a waiting write go out before it waits. Only
// whole requests already buffered join (a group never waits for the
// client); the first request that cannot join, or a read error, is kept
// for the next read.
func (c *conn) dispatchPipelined(args [][]byte) bool {
	if c.ob != nil || !c.r.HasCommand() || !commands.Groupable(args) || c.s.env.Paused() {
		return c.dispatch(args)
	}
	reqs := [][][]byte{args}
	for len(reqs) < commands.MaxPipelineGroup && c.r.HasCommand() {
		next, err := c.r.ReadCommand()
		if err != nil {
			c.aheadErr = err
			break
		}
		if !commands.Groupable(next) {
			c.ahead = next
			break
		}
		reqs = append(reqs, next)
	}
	if len(reqs) == 1 {
		return c.dispatch(args)
	}
	return c.run(reqs[0][0], func() { c.s.env.DispatchGroup(c.client, c.w, reqs) })
}

// dispatch runs one command. A panic in a handler is a bug: it is logged
// with its stack, the client gets an error and the connection is closed
// (reported as false), and the server keeps serving everyone else. Key
// locks are released by the handlers' deferred unlocks.
func (c *conn) dispatch(args [][]byte) bool {
	return c.run(args[0], func() { c.s.env.Dispatch(c.client, c.w, args) })
}

// run runs the dispatch of command name, turning a panic into an error
// reply and false.
func (c *conn) run(name []byte, dispatch func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			c.s.log.Error("command panicked; closing the connection", "command", string(name),
				"client", c.client.Addr, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			c.w.Error("ERR internal error while executing the command (see the server log)")
			ok = false
		}
	}()
	dispatch()
	return true
}

// yieldToFeeders lets the replication feeders, which a commit of this
// connection has just woken, send the new batches before the replies go
// out, as Redis propagates before it replies: a replica then applies and
// publishes the write while its reply travels, not after.
func (c *conn) yieldToFeeders() {
	if !c.client.Committed {
		return
	}
	c.client.Committed = false
	if repl := c.s.env.Repl; repl != nil && repl.HasReplicas() {
		runtime.Gosched()
	}
}

// flush writes the buffered replies, or queues them once the connection
// has an outbox, and reports success. When the socket's send buffer fills
// (a client that pipelines more than it reads, or reads slowly), the rest
// goes to a new outbox, whose writer waits for the socket from then on
// while this goroutine goes on reading requests, as Redis does: waiting
// here instead would deadlock a client that finishes sending before it
// reads. client-output-buffer-limit normal bounds what such a client may
// leave queued (unbounded by default, as in Redis).
func (c *conn) flush() bool {
	if c.ob != nil {
		c.queueReplies(0)
		return true
	}
	if c.w.Len() == 0 {
		return true
	}
	n, full, err := c.sock.TryWrite(c.w.Bytes())
	c.s.env.Stats.NetOutput.Add(int64(n))
	if full {
		c.startOutbox()
		c.queueReplies(n)
	}
	c.w.Reset()
	return err == nil
}

// queueReplies hands the buffered replies from byte from on to the outbox
// and empties the writer. A large buffer (a GET of a long value) is handed
// over itself, so the writer lets go of it; a small one is copied into the
// outbox's chunks and stays the writer's.
func (c *conn) queueReplies(from int) {
	if c.w.Len()-from >= flushThreshold {
		c.ob.pushReply(c.w.Detach()[from:], true)
		return
	}
	c.ob.pushReply(c.w.Bytes()[from:], false)
	c.w.Reset()
}

// connFD returns the socket's file descriptor number for CLIENT LIST.
func connFD(nc net.Conn) int {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return -1
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	raw.Control(func(f uintptr) { fd = int(f) })
	return fd
}
