package commands

import "time"

// errUnblocked is the reply of a blocked command that CLIENT UNBLOCK ...
// ERROR ends, as in Redis.
const errUnblocked = "UNBLOCKED client unblocked via CLIENT UNBLOCK"

// block runs wait, the waiting part of a blocking command (WAIT's), the
// way Redis blocks a client: meanwhile CLIENT LIST shows the client with
// flag b, INFO counts it in blocked_clients, and CLIENT UNBLOCK can end
// it. wait must return soon after its stop channel is closed, which
// happens when the connection is closed (CLIENT KILL), when the client has
// left (checked every peerCheckEvery, as a paused command checks), when
// the server stops, or on CLIENT UNBLOCK. The time it takes is left out of
// the command's duration. block reports whether CLIENT
// UNBLOCK ... ERROR asked for the wait to end with an error.
func (c *Ctx) block(wait func(stop <-chan struct{})) (unblockedWithError bool) {
	cl := c.Client
	reason := make(chan bool, 1) // CLIENT UNBLOCK's: true for ERROR
	cl.unblock.Store(&reason)
	cl.blocked.Store(true)
	c.Env.blocked.Add(1)
	defer func() {
		cl.unblock.Store(nil)
		cl.blocked.Store(false)
		c.Env.blocked.Add(-1)
	}()

	start := time.Now()
	defer func() { c.blockedFor += time.Since(start) }()
	stop, done := make(chan struct{}), make(chan struct{})
	var withError bool
	go func() {
		defer close(stop)
		check := time.NewTicker(peerCheckEvery)
		defer check.Stop()
		for {
			select {
			case <-done:
				return
			case <-cl.Closed: // nil, so never, for clients without one
				return
			case withError = <-reason:
				return
			case <-check.C:
				if (cl.PeerGone != nil && cl.PeerGone()) || c.Env.pause.state().stopped {
					return
				}
			}
		}
	}()
	wait(stop)
	close(done)
	<-stop // the watcher has returned: withError is settled
	return withError
}

// unblockClient is CLIENT UNBLOCK's action: it ends the blocking command
// cl runs, if any, with an error or as if it had timed out, and reports
// whether there was one.
func unblockClient(cl *Client, withError bool) bool {
	p := cl.unblock.Load()
	if p == nil {
		return false
	}
	select {
	case *p <- withError:
		return true
	default:
		return false // already asked
	}
}
