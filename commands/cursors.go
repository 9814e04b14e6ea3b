package commands

import (
	"math/rand/v2"
	"sync"
)

// cursorSlots bounds how many SCAN positions the server remembers.
const cursorSlots = 16384

// cursorTable maps the opaque unsigned 64-bit SCAN cursors handed to
// clients to the key a scan resumes at. Pebble keys do not fit in a
// number, so the table remembers the last cursorSlots positions; an older
// or unknown cursor restarts the scan from the beginning, which SCAN's
// guarantees allow (a key may be returned more than once).
type cursorTable struct {
	mu    sync.Mutex
	next  uint64
	slots [cursorSlots]cursorEntry
}

type cursorEntry struct {
	cursor uint64
	ns     string
	key    []byte
}

// maxCursor bounds the cursors handed out: JavaScript clients (node-redis
// among them) turn a cursor into a float64 number, exact only up to 2^53.
// Redis's own cursors are far smaller.
const maxCursor = 1<<53 - 1

// save remembers key as the resume point of a new cursor and returns it.
// Cursors start at a random point below 2^52, so that a cursor from
// before a restart rarely means anything to the new process, and count up
// from there.
func (t *cursorTable) save(ns string, key []byte) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.next == 0 || t.next >= maxCursor {
		t.next = rand.Uint64N(1<<52/cursorSlots) * cursorSlots
	}
	t.next++
	if t.next%cursorSlots == 0 {
		t.next++ // keep slot 0's first cursor from being 0 after a wrap
	}
	c := t.next
	t.slots[c%cursorSlots] = cursorEntry{cursor: c, ns: ns, key: append([]byte(nil), key...)}
	return c
}

// resume returns the key a cursor resumes at, or nil to start over.
func (t *cursorTable) resume(ns string, cursor uint64) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.slots[cursor%cursorSlots]
	if e.cursor != cursor || e.ns != ns {
		return nil
	}
	return e.key
}
