//go:build linux

package main

import (
	"fmt"
	"syscall"
	"time"
)

// setRcvBuf sets the SO_RCVBUF of the socket behind rc to n bytes (Linux
// doubles the value and enforces a minimum).
func setRcvBuf(rc syscall.RawConn, n int) error {
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
	}); err != nil {
		return fmt.Errorf("setting SO_RCVBUF: %w", err)
	}
	if serr != nil {
		return fmt.Errorf("setting SO_RCVBUF to %d: %w", n, serr)
	}
	return nil
}

// sleepUntil returns at t or a little after. time.Sleep rounds short
// sleeps up to about a millisecond (the runtime's poller waits in whole
// milliseconds), too coarse to pace thousands of commands a second, so it
// sleeps in nanosleep(2), which blocks only this thread, until about 70µs
// before t and spins the rest.
func sleepUntil(t time.Time) {
	const slack = 70 * time.Microsecond
	for {
		d := time.Until(t)
		if d <= 0 {
			return
		}
		if d <= slack {
			for time.Now().Before(t) {
			}
			return
		}
		ts := syscall.NsecToTimespec(int64(d - slack))
		// An interrupted sleep (EINTR) just goes round the loop again.
		_ = syscall.Nanosleep(&ts, nil)
	}
}
