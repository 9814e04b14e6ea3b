package commands

import (
	"sync"
	"sync/atomic"
	"time"
)

// clientPause is the state of CLIENT PAUSE. While a pause lasts, commands
// of client connections that it holds back (every command in ALL mode,
// those that write in WRITE mode) wait before they run, and the node
// neither expires keys actively nor reclaims the expired keys reads meet,
// as in Redis: a failover can then compare replication offsets that no
// longer move. Replication links never pass through it.
//
// CLIENT PAUSE must not return while a write that passed the gate is still
// running, or that write would commit after the pause began: writers count
// themselves in inflight before they look at active, and the pauser sets
// active before it waits for inflight to drain (both sequentially
// consistent atomics, so one of them sees the other).
type clientPause struct {
	active   atomic.Bool  // a pause may be in effect (until has the final say)
	stopped  atomic.Bool  // the server is stopping: nobody waits any more
	inflight atomic.Int64 // commands past the gate that a WRITE pause holds back
	waiting  atomic.Int64 // commands waiting at the gate, for INFO blocked_clients

	mu      sync.Mutex
	until   time.Time
	all     bool          // ALL mode; WRITE otherwise
	holds   int           // a failover and a shutdown hold writes back (hold) until release, whatever CLIENT PAUSE does
	changed chan struct{} // closed and replaced when the pause changes
}

// heldFor stands for the end of a hold, which has none: a
// waiter wakes when release signals the change.
const heldFor = time.Hour

// pauseHolds reports whether a WRITE pause holds back command line args
// (spec's) for cl (an ALL pause holds back every command): a write or
// PUBLISH (FCALL as its function's flags tell, see commandFlags), or EXEC
// with one of them queued.
func (e *Env) pauseHolds(spec *Spec, args [][]byte, cl *Client) bool {
	const held = FlagWrite | FlagMayReplicate
	if e.commandFlags(spec, args)&held != 0 {
		return true
	}
	return spec.Name == "exec" && cl.multi != nil && cl.multi.flags(e)&held != 0
}

// pauseState is a snapshot of the pause: in effect or not (ok), until
// when and in which mode, the channel that its next change closes, and
// whether the server is stopping.
type pauseState struct {
	until   time.Time
	all     bool
	ok      bool
	stopped bool
	changed chan struct{}
}

// state returns the pause in effect (an expired one is ended here).
func (p *clientPause) state() pauseState {
	if p.stopped.Load() {
		return pauseState{stopped: true}
	}
	if !p.active.Load() {
		return pauseState{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	timed := now.Before(p.until)
	switch {
	case timed && p.holds == 0:
		return pauseState{until: p.until, all: p.all, ok: true, changed: p.changed}
	case p.holds > 0:
		return pauseState{until: now.Add(heldFor), all: timed && p.all, ok: true, changed: p.changed}
	}
	p.endLocked()
	return pauseState{}
}

// paused reports whether a pause is in effect: expiry waits while it is.
func (p *clientPause) paused() bool {
	return p.state().ok
}

// pause starts or extends a pause: as in Redis, the later end and the
// stricter mode of the current pause and the new one win. It returns once
// no command that the pause holds back is still running, except self,
// the command issuing the pause when it counts as one (inside EXEC).
func (p *clientPause) pause(until time.Time, all, self bool) {
	p.mu.Lock()
	if !p.active.Load() || !time.Now().Before(p.until) {
		p.until, p.all = until, all
	} else {
		if until.After(p.until) {
			p.until = until
		}
		p.all = p.all || all
	}
	p.active.Store(true)
	p.signalLocked()
	p.mu.Unlock()
	var own int64
	if self {
		own = 1
	}
	for p.inflight.Load() > own && time.Now().Before(until) {
		time.Sleep(20 * time.Microsecond)
	}
}

// unpause ends the pause at once (CLIENT UNPAUSE); a failover's or a
// shutdown's hold stays.
func (p *clientPause) unpause() {
	p.mu.Lock()
	p.until, p.all = time.Time{}, false
	if p.holds > 0 {
		p.signalLocked()
	} else {
		p.endLocked()
	}
	p.mu.Unlock()
}

// hold holds writes back as a WRITE pause does, from now until its
// release (holds nest: a failover's and a shutdown's); CLIENT UNPAUSE
// does not end it. Writes that passed the gate before may
// still be running: drain waits for them.
func (p *clientPause) hold() {
	p.mu.Lock()
	p.holds++
	p.active.Store(true)
	p.signalLocked()
	p.mu.Unlock()
}

// drain returns once no write that passed the gate is still running:
// under a hold, the node's replication offset then no longer moves.
func (p *clientPause) drain() { p.drainBefore(time.Time{}) }

// drainBefore is drain giving up at deadline (zero: never); it reports
// whether the writes drained.
func (p *clientPause) drainBefore(deadline time.Time) bool {
	for p.inflight.Load() > 0 {
		if !deadline.IsZero() && time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Microsecond)
	}
	return true
}

// release ends what one hold began; a CLIENT PAUSE in effect, and
// another hold, go on.
func (p *clientPause) release() {
	p.mu.Lock()
	p.holds--
	if p.holds > 0 || time.Now().Before(p.until) {
		p.signalLocked()
	} else {
		p.endLocked()
	}
	p.mu.Unlock()
}

// stop ends pausing for good: the server is shutting down. The commands
// still waiting are dropped (enter returns false); later CLIENT PAUSEs
// hold nothing back.
func (p *clientPause) stop() {
	p.mu.Lock()
	p.stopped.Store(true)
	p.endLocked()
	p.mu.Unlock()
}

func (p *clientPause) endLocked() {
	if p.active.Load() {
		p.active.Store(false)
		p.signalLocked()
	}
}

// signalLocked wakes the waiters so they look at the pause again.
func (p *clientPause) signalLocked() {
	if p.changed != nil {
		close(p.changed)
	}
	p.changed = make(chan struct{})
}

// enter lets a command of cl through the gate; write says whether a
// WRITE pause holds it back (pauseHolds). While a pause holds it back it
// waits, flagged as blocked for CLIENT LIST, until the pause ends (waited
// is then true), or until the client is closed or the server stops (ok is
// then false, and the command must not run). Once the server stops there
// are no pauses: a command that did not wait goes through. A write it
// lets through is counted in flight until leave.
func (p *clientPause) enter(cl *Client, write bool) (ok, waited bool) {
	if write {
		p.inflight.Add(1)
	}
	for {
		st := p.state()
		if st.stopped && waited {
			break // woken by the shutdown: dropped
		}
		if !st.ok || !(st.all || write) {
			cl.passedGate = write
			return true, waited
		}
		if write {
			p.inflight.Add(-1)
		}
		if !p.wait(cl, st) {
			return false, waited
		}
		waited = true
		if write {
			p.inflight.Add(1)
		}
	}
	if write {
		p.inflight.Add(-1)
	}
	return false, waited
}

// leave ends what enter counted for cl's command.
func (p *clientPause) leave(cl *Client) {
	if cl.passedGate {
		cl.passedGate = false
		p.inflight.Add(-1)
	}
}

// peerCheckEvery is how often a waiting command checks whether its
// client has left.
const peerCheckEvery = 100 * time.Millisecond

// wait blocks cl until the pause st changes or ends; it reports false
// when the client is closed or has left.
func (p *clientPause) wait(cl *Client, st pauseState) bool {
	p.waiting.Add(1)
	cl.blocked.Store(true)
	defer func() {
		cl.blocked.Store(false)
		p.waiting.Add(-1)
	}()
	t := time.NewTimer(time.Until(st.until))
	defer t.Stop()
	check := time.NewTicker(peerCheckEvery)
	defer check.Stop()
	for {
		select {
		case <-st.changed:
			return true
		case <-t.C:
			return true
		case <-cl.Closed:
			return false
		case <-check.C:
			if cl.PeerGone != nil && cl.PeerGone() {
				return false
			}
		}
	}
}
