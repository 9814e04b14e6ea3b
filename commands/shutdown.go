package commands

import (
	"fmt"
	"sync"
	"time"
)

// shutdownState is the shutdown in progress, if any. SHUTDOWN and the
// process's signal handler (PrepareShutdown) wait in it for lagging
// replicas, as Redis 7 does, and SHUTDOWN ABORT ends the wait.
type shutdownState struct {
	mu   sync.Mutex
	wait *shutdownWait // the wait begun, nil when none is
}

// shutdownWait is one wait for replicas. done is closed when it ends,
// aborted set before that when SHUTDOWN ABORT ended it; abort is closed by
// SHUTDOWN ABORT, hurry by a second signal or SHUTDOWN NOW, which end the
// wait at once and shut down.
type shutdownWait struct {
	done, abort, hurry chan struct{}
	hurried            sync.Once
	aborted            bool
}

// PrepareShutdown is the first step of every shutdown (SHUTDOWN, SIGTERM,
// SIGINT). While replicas are connected, unless now or shutdown-timeout
// is 0, it holds writes back as CLIENT PAUSE WRITE does and waits up to
// shutdown-timeout seconds for every replica to acknowledge all the node
// wrote, so that a clean shutdown loses nothing on them; reads go on
// meanwhile. At the timeout it logs the replicas still behind and lets
// the shutdown go on. It returns false when SHUTDOWN ABORT ended the wait:
// writes then go on and the node does not stop. A call while a wait is
// under way joins it (with now, it ends it).
func (e *Env) PrepareShutdown(now bool) bool {
	s := &e.shutdown
	s.mu.Lock()
	if w := s.wait; w != nil {
		s.mu.Unlock()
		if now {
			w.end()
		}
		<-w.done
		return !w.aborted
	}
	timeout := time.Duration(e.Config.Int("shutdown-timeout")) * time.Second
	if now || timeout == 0 || e.Repl == nil || !e.Repl.HasReplicas() {
		s.mu.Unlock()
		return true
	}
	w := &shutdownWait{done: make(chan struct{}), abort: make(chan struct{}), hurry: make(chan struct{})}
	s.wait = w
	s.mu.Unlock()

	e.Log.Info("waiting for replicas before shutting down; writes are held back", "shutdown-timeout", timeout)
	e.pause.hold()
	deadline := time.Now().Add(timeout)
	stop := make(chan struct{})
	timer := time.AfterFunc(timeout, func() { w.end() })
	defer timer.Stop()
	go func() {
		select {
		case <-w.abort:
		case <-w.hurry:
		}
		close(stop)
	}()
	// Writes that passed the gate before the hold finish first; then the
	// offset no longer moves, and every replica must acknowledge it.
	var offset uint64
	lagging, caughtUp := e.Repl.Replicas(), false
	if e.pause.drainBefore(deadline) {
		offset = e.Store.Offset()
		lagging, caughtUp = e.Repl.WaitAllAcked(offset, stop)
	}
	w.end() // the goroutine above returns

	s.mu.Lock()
	select {
	case <-w.abort:
		w.aborted = true
		s.wait = nil // a later SHUTDOWN waits anew
	default:
	}
	close(w.done)
	s.mu.Unlock()
	switch {
	case w.aborted:
		e.pause.release()
		e.Log.Warn("shutdown aborted by SHUTDOWN ABORT; writes go on")
		return false
	case caughtUp:
		e.Log.Info("replicas caught up; shutting down", "offset", offset)
	default:
		for _, r := range lagging {
			e.Log.Warn("shutting down before a lagging replica caught up", "replica", fmt.Sprintf("%s:%d", r.Addr, r.Port),
				"state", r.State, "acked", r.Offset, "offset", offset)
		}
	}
	return true // writes stay held back: the server stops
}

// end ends the wait without aborting it (timeout, a second signal, NOW).
func (w *shutdownWait) end() { w.hurried.Do(func() { close(w.hurry) }) }

// HurryShutdown ends a wait for replicas at once, the shutdown going on;
// the signal handler calls it on a second SIGTERM or SIGINT.
func (e *Env) HurryShutdown() {
	s := &e.shutdown
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wait != nil {
		s.wait.end()
	}
}

// abortShutdown ends a wait for replicas, the shutdown cancelled, and
// reports whether one was under way.
func (e *Env) abortShutdown() bool {
	s := &e.shutdown
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.wait
	if w == nil {
		return false
	}
	select {
	case <-w.done: // over: the server is stopping
		return false
	case <-w.abort: // aborted already
		return false
	default:
	}
	close(w.abort)
	return true
}

// cmdShutdown is SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]. Cairn has
// nothing to save (its data is on disk as it is written), so SAVE,
// NOSAVE and FORCE change nothing; NOW skips the wait for lagging
// replicas, and ABORT ends one (PrepareShutdown).
func cmdShutdown(c *Ctx) {
	if !c.requireAdmin() {
		return
	}
	var save, nosave, now, abort bool
	for _, a := range c.Args[1:] {
		switch lower(a) {
		case "nosave":
			nosave = true
		case "save":
			save = true
		case "now":
			now = true
		case "force":
		case "abort":
			abort = true
		default:
			c.W.Error(errSyntax)
			return
		}
	}
	if abort && len(c.Args) > 2 || save && nosave {
		c.W.Error(errSyntax)
		return
	}
	if abort {
		if !c.Env.abortShutdown() {
			c.W.Error("ERR No shutdown in progress.")
			return
		}
		c.W.OK()
		return
	}
	c.Env.Log.Warn("user requested shutdown", "client", c.Client.Addr)
	if !c.Env.PrepareShutdown(now) {
		c.W.Error("ERR Errors trying to SHUTDOWN. Check logs.")
		return
	}
	c.Client.CloseAfterReply = true
	c.Env.Host.Shutdown()
}
