//go:build !linux

package main

import (
	"syscall"
	"time"
)

// setRcvBuf does nothing where the tool does not know how to set SO_RCVBUF;
// the stalled subscriber of the stall mode then fills more slowly.
func setRcvBuf(syscall.RawConn, int) error { return nil }

// sleepUntil returns at t or after; off Linux it is only as precise as
// time.Sleep.
func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }
