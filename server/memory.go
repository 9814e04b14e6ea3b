package server

import (
	"runtime/debug"
	"time"
)

// largeBuffer is the size of a request's arguments or of a reply from
// which the server hands the memory it freed back to the system soon
// after: Go's own scavenger returns it over minutes, so a server that
// received or sent a value of 100 MB kept several times that resident
// while idle.
const largeBuffer = 16 << 20

// releaseDelay is how long after a large request the release waits, so
// that a series of them costs one release a second, not one each.
const releaseDelay = time.Second

// releaseMemorySoon schedules a garbage collection that returns the freed
// memory to the system (debug.FreeOSMemory) releaseDelay from now, unless
// one is already scheduled.
func (s *Server) releaseMemorySoon() {
	if s.releasing.CompareAndSwap(false, true) {
		time.AfterFunc(releaseDelay, func() {
			s.releasing.Store(false)
			debug.FreeOSMemory()
		})
	}
}
