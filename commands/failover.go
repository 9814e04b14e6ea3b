package commands

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cairnkv/cairn/replication"
)

func init() {
	register(&Spec{Name: "failover", Arity: -1, Flags: FlagAdmin | FlagNoScript | FlagStale, Group: "server", Since: "6.2.0",
		Summary: "Starts a coordinated failover from a server to one of its replicas.", Handler: cmdFailover})
}

// The states of a failover, as INFO replication's master_failover_state
// names them.
const (
	failoverNone       = "no-failover"
	failoverWaiting    = "waiting-for-sync"
	failoverInProgress = "failover-in-progress"
)

// failover is the state of a coordinated failover (FAILOVER) on this node.
// One runs at a time, in its own goroutine: it holds writes back, waits
// for a replica to acknowledge everything written, makes this node a
// replica of it with a PSYNC that asks it to take over, and releases the
// writes, which then meet a replica. It rolls back (the node stays or
// becomes a primary again) when the replica does not catch up in time or
// refuses, or on FAILOVER ABORT.
type failover struct {
	mu    sync.Mutex
	state string        // failoverNone when "" too
	abort chan struct{} // closed by FAILOVER ABORT
}

// State returns master_failover_state.
func (f *failover) State() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.state == "" {
		return failoverNone
	}
	return f.state
}

func (f *failover) setState(s string) {
	f.mu.Lock()
	f.state = s
	f.mu.Unlock()
}

// failoverRequest is a parsed FAILOVER command.
type failoverRequest struct {
	host    string
	port    int
	to      bool
	force   bool
	abort   bool
	timeout time.Duration // 0: none
}

// targets reports whether the request may fail over to replica rp: any
// replica without TO.
func (r failoverRequest) targets(rp replication.ReplicaState) bool {
	return !r.to || (rp.Addr == r.host && rp.Port == r.port)
}

// target names the request's target for the log.
func (r failoverRequest) target() string {
	if !r.to {
		return "any replica"
	}
	return fmt.Sprintf("%s:%d", r.host, r.port)
}

// parseFailover parses FAILOVER's arguments, replying with Redis's error
// when they are wrong.
func parseFailover(c *Ctx) (failoverRequest, bool) {
	var r failoverRequest
	for j := 1; j < len(c.Args); j++ {
		switch opt := keyword(c.Args[j]); {
		case opt == "to" && !r.to && j+2 < len(c.Args):
			port, ok := c.intArg(j + 2)
			if !ok {
				return r, false
			}
			r.to, r.host, r.port = true, string(c.Args[j+1]), int(port)
			j += 2
		case opt == "force" && !r.force:
			r.force = true
		case opt == "abort" && !r.abort:
			r.abort = true
		case opt == "timeout" && r.timeout == 0 && j+1 < len(c.Args):
			ms, ok := c.intArg(j + 1)
			if !ok {
				return r, false
			}
			if ms <= 0 {
				c.W.Error("ERR FAILOVER timeout must be greater than 0")
				return r, false
			}
			r.timeout = time.Duration(ms) * time.Millisecond
			j++
		default:
			c.W.Error(errSyntax)
			return r, false
		}
	}
	if r.abort && (r.to || r.force || r.timeout > 0) {
		c.W.Error(errSyntax)
		return r, false
	}
	return r, true
}

// cmdFailover implements FAILOVER [TO host port [FORCE]] [ABORT]
// [TIMEOUT ms], with Redis's checks, errors and order. It replies at once;
// the failover runs on (Env.runFailover) and INFO replication shows its
// state.
func cmdFailover(c *Ctx) {
	if !c.requireAdmin() {
		return
	}
	r, ok := parseFailover(c)
	if !ok {
		return
	}
	f := &c.Env.failover
	f.mu.Lock()
	defer f.mu.Unlock()
	running := f.state != "" && f.state != failoverNone
	if r.abort {
		if !running {
			c.W.Error("ERR No failover in progress.")
			return
		}
		select {
		case <-f.abort:
		default:
			close(f.abort)
		}
		c.W.OK()
		return
	}
	if c.Env.Repl.IsReplica() {
		c.W.Error("ERR FAILOVER is not valid when server is a replica.")
		return
	}
	if running {
		c.W.Error("ERR FAILOVER already in progress.")
		return
	}
	reps := c.Env.Repl.Replicas()
	if len(reps) == 0 {
		c.W.Error("ERR FAILOVER requires connected replicas.")
		return
	}
	if r.force && (!r.to || r.timeout == 0) {
		c.W.Error("ERR FAILOVER with force option requires both a timeout and target HOST and IP.")
		return
	}
	if r.to {
		i := slices.IndexFunc(reps, r.targets)
		if i < 0 {
			c.W.Error("ERR FAILOVER target HOST and PORT is not a replica.")
			return
		}
		if reps[i].State != "online" {
			c.W.Error("ERR FAILOVER target replica is not online.")
			return
		}
	}
	f.state, f.abort = failoverWaiting, make(chan struct{})
	c.Env.Log.Info("FAILOVER requested", "target", r.target())
	// Writes are held from the reply on, as in Redis; the failover waits
	// for those already running (runFailover).
	c.Env.pause.hold()
	go c.Env.runFailover(r, f.abort)
	c.W.OK()
}

// runFailover carries out the failover cmdFailover started.
func (e *Env) runFailover(r failoverRequest, abort <-chan struct{}) {
	f := &e.failover
	target := r.target()
	// The hold (cmdFailover's) ends before the state does: a FAILOVER
	// that starts once the state is failoverNone holds writes again.
	defer f.setState(failoverNone)
	defer e.pause.release()
	e.pause.drain()
	// Nothing moves the offset now (writes are held back, and so is
	// expiry): the replica must acknowledge all of it.
	offset := e.Store.Offset()
	stop, done := make(chan struct{}), make(chan struct{})
	defer close(done)
	timedOut := false
	go func() {
		var expired <-chan time.Time
		if r.timeout > 0 {
			t := time.NewTimer(r.timeout)
			defer t.Stop()
			expired = t.C
		}
		select {
		case <-abort:
		case <-expired:
			timedOut = true
		case <-done:
		}
		close(stop)
	}()
	rp, ok := e.Repl.WaitReplicaAck(offset, r.targets, stop)
	switch {
	case ok:
		e.Log.Info("FAILOVER target is synced, failing over", "target", fmt.Sprintf("%s:%d", rp.Addr, rp.Port), "offset", offset)
	case timedOut && r.force:
		rp = replication.ReplicaState{Addr: r.host, Port: r.port}
		e.Log.Warn("FAILOVER target did not catch up before the timeout; failing over anyway (FORCE)", "target", target, "offset", offset)
	case timedOut:
		e.Log.Warn("FAILOVER aborted: the replica did not catch up before the timeout", "target", target, "offset", offset)
		return
	default:
		e.Log.Warn("FAILOVER aborted by FAILOVER ABORT", "target", target)
		return
	}
	f.setState(failoverInProgress)
	addr := fmt.Sprintf("%s %d", rp.Addr, rp.Port)
	e.recordRole(addr)
	select {
	case err := <-e.Repl.ReplicaOfForFailover(rp.Addr, rp.Port):
		if err == nil {
			e.Log.Info("FAILOVER completed: now a replica", "primary", addr)
			return
		}
		e.Log.Warn("FAILOVER aborted: the target refused or could not be reached; primary again", "target", addr, "error", err)
	case <-abort:
		e.Log.Warn("FAILOVER aborted by FAILOVER ABORT; primary again", "target", addr)
	}
	e.Repl.Promote()
	e.recordRole("")
}

// failoverPSync handles PSYNC's FAILOVER argument on the failover's
// target: the primary asks this replica to become a primary before it
// continues from it. It replies with Redis's error and returns false when
// the node cannot.
func failoverPSync(c *Ctx, replID string) bool {
	switch err := c.Env.Repl.PromoteForFailover(replID); {
	case errors.Is(err, replication.ErrFailoverToPrimary):
		c.W.Error("ERR PSYNC FAILOVER can't be sent to a master.")
		return false
	case err != nil:
		c.W.Error("ERR PSYNC FAILOVER replid must match my replid.")
		return false
	}
	c.Env.recordRole("")
	c.Env.Log.Info("MASTER MODE enabled (failover request from the primary)", "client", c.Client.Addr,
		"replid", replID)
	return true
}
