// Package server is Cairn's network layer: it accepts connections, reads
// requests with Redis's limits, dispatches them to the command table and
// writes the replies, and it runs the primary's background expiry.
package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cairnkv/cairn/commands"
	"github.com/cairnkv/cairn/glob"
	"github.com/cairnkv/cairn/pubsub"
)

// Server owns the listeners and every connection. Create it with New,
// start it with Listen and Serve, stop it with Shutdown.
type Server struct {
	env *commands.Env
	log hclog.Logger

	listeners []net.Listener
	conns     sync.WaitGroup
	closing   atomic.Bool
	done      chan struct{} // closed by Shutdown
	stopOnce  sync.Once

	mu   sync.Mutex
	live map[*conn]struct{}

	// releasing is set while a release of freed memory is scheduled
	// (releaseMemorySoon).
	releasing atomic.Bool

	// shutdownRequested is signalled by the SHUTDOWN command.
	shutdownRequested chan struct{}
	requestOnce       sync.Once
}

// New returns a server for env. It sets env.Host to itself.
func New(env *commands.Env) *Server {
	s := &Server{env: env, log: env.Log, done: make(chan struct{}), live: map[*conn]struct{}{}, shutdownRequested: make(chan struct{})}
	env.Host = s
	return s
}

// Listen binds every address of the bind option on the port option. As in
// Redis, "*" stands for every IPv4 address and "::*" for every IPv6 one,
// and a leading "-" makes an address optional: one the host does not have
// is skipped with a warning instead of failing start-up.
func (s *Server) Listen() error {
	port := strconv.FormatInt(s.env.Config.Int("port"), 10)
	for _, entry := range strings.Fields(s.env.Config.String("bind")) {
		network, host, optional := bindAddr(entry)
		addr := net.JoinHostPort(host, port)
		l, err := net.Listen(network, addr)
		if optional && errors.Is(err, syscall.EADDRNOTAVAIL) {
			s.log.Warn("skipping an optional bind address this host does not have", "bind", entry)
			continue
		}
		if err != nil {
			s.closeListeners()
			return fmt.Errorf("server: bind %s: %w", entry, err)
		}
		s.listeners = append(s.listeners, l)
		s.log.Info("listening", "addr", l.Addr().String())
	}
	if len(s.listeners) == 0 {
		return errors.New("server: no address of the bind option could be bound")
	}
	return nil
}

// bindAddr reads one address of the bind option: the network to listen on
// (IPv4 or IPv6 only for a literal, so that "*" and "::*" can both be
// bound), the host, and whether the address is optional ("-" prefix).
func bindAddr(entry string) (network, host string, optional bool) {
	host, optional = strings.CutPrefix(entry, "-")
	switch {
	case host == "*":
		return "tcp4", "0.0.0.0", optional
	case host == "::*":
		return "tcp6", "::", optional
	case strings.Contains(host, ":"):
		return "tcp6", host, optional
	case net.ParseIP(host) != nil:
		return "tcp4", host, optional
	}
	return "tcp", host, optional
}

// Addrs returns the bound addresses.
func (s *Server) Addrs() []net.Addr {
	out := make([]net.Addr, len(s.listeners))
	for i, l := range s.listeners {
		out[i] = l.Addr()
	}
	return out
}

// Serve accepts connections until Shutdown, and runs the expiry cycle.
func (s *Server) Serve() {
	var wg sync.WaitGroup
	for _, l := range s.listeners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.acceptLoop(l)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.expireLoop()
	}()
	wg.Wait()
}

// ShutdownRequested is closed when a client runs SHUTDOWN.
func (s *Server) ShutdownRequested() <-chan struct{} { return s.shutdownRequested }

// Shutdown implements commands.Host: it asks the process to stop.
func (s *Server) Shutdown() {
	s.requestOnce.Do(func() { close(s.shutdownRequested) })
}

// Stop stops accepting, lets every connection finish the command it is
// running, closes them, and waits until ctx ends for them to go.
func (s *Server) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() {
		s.closing.Store(true)
		close(s.done)
		s.env.StopClientPause()
		s.env.StopScripts()
		s.closeListeners()
		s.mu.Lock()
		for c := range s.live {
			c.interrupt()
		}
		s.mu.Unlock()
	})
	finished := make(chan struct{})
	go func() {
		s.conns.Wait()
		close(finished)
	}()
	select {
	case <-finished:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("server: connections still open at shutdown: %w", ctx.Err())
	}
}

func (s *Server) closeListeners() {
	for _, l := range s.listeners {
		l.Close()
	}
}

func (s *Server) acceptLoop(l net.Listener) {
	var delay time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.closing.Load() {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed; retrying", "error", err, "delay", delay)
				time.Sleep(delay)
				continue
			}
			s.log.Error("accept failed", "error", err)
			return
		}
		delay = 0
		s.env.Stats.Connections.Add(1)
		if max := s.env.Config.Int("maxclients"); int64(s.env.Clients.Len()) >= max {
			s.env.Stats.Rejected.Add(1)
			nc.Write([]byte("-ERR max number of clients reached\r\n"))
			nc.Close()
			continue
		}
		c := newConn(s, nc)
		s.mu.Lock()
		if s.closing.Load() {
			s.mu.Unlock()
			nc.Close()
			return
		}
		s.live[c] = struct{}{}
		s.conns.Add(1)
		s.mu.Unlock()
		go c.serve()
	}
}

func isTemporary(err error) bool {
	return errors.Is(err, syscallEMFILE) || errors.Is(err, syscallENFILE)
}

func (s *Server) forget(c *conn) {
	s.mu.Lock()
	delete(s.live, c)
	s.mu.Unlock()
	s.conns.Done()
}

// DisconnectKeyspaceSubscribers closes every connection subscribed to
// keyspace-notification channels (or to patterns that can match them).
// A replica calls it after installing a full sync: no event describes
// what changed, so those clients must drop their caches.
func (s *Server) DisconnectKeyspaceSubscribers() {
	n := 0
	for _, cl := range s.env.Clients.List() {
		if cl.Subscriber == nil {
			continue
		}
		if keyspaceSubscriber(s.env.PubSub.Names(cl.Subscriber, pubsub.KindChannel), s.env.PubSub.Names(cl.Subscriber, pubsub.KindPattern)) && cl.Kill != nil {
			cl.Kill()
			n++
		}
	}
	if n > 0 {
		s.log.Info("full sync installed: disconnected keyspace-notification subscribers", "clients", n)
	}
}

// keyspaceSubscriber reports whether subscriptions can receive keyspace
// notifications.
func keyspaceSubscriber(channels, patterns []string) bool {
	for _, c := range channels {
		if strings.HasPrefix(c, "__keyspace@") || strings.HasPrefix(c, "__keyevent@") {
			return true
		}
	}
	for _, p := range patterns {
		for _, probe := range []string{"__keyspace@0__:k", "__keyevent@0__:set", "__keyspace@ns:a__:k", "__keyevent@ns:a__:del"} {
			if strings.HasPrefix(p, "__key") || glob.Match([]byte(p), []byte(probe), false) {
				return true
			}
		}
	}
	return false
}

// expireLoop runs the active expiry cycle hz times a second, spending at
// most a quarter of each period, in slices small enough never to stall
// clients for long. It also samples the counters behind INFO's
// instantaneous_* rates and trims CLIENT TRACKING's table, as Redis's
// cron does.
func (s *Server) expireLoop() {
	for {
		hz := max(s.env.Config.Int("hz"), 1)
		period := time.Second / time.Duration(hz)
		select {
		case <-s.done:
			return
		case <-time.After(period):
		}
		s.env.Stats.Sample(time.Now())
		s.env.TrimTracking()
		if s.env.Repl != nil && s.env.Repl.IsReplica() {
			continue // replicas wait for their primary's deletes
		}
		if s.env.Paused() {
			continue // CLIENT PAUSE stops expiry, as in Redis
		}
		deadline := time.Now().Add(period / 4)
		for time.Now().Before(deadline) {
			_, more, err := s.env.ExpireSlice(time.Now().UnixMilli(), 20)
			if err != nil {
				s.log.Error("expiry cycle failed", "error", err)
				break
			}
			if !more {
				break
			}
		}
	}
}
