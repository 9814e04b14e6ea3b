package storage

import (
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
)

// lockStripes is the number of mutexes keys hash onto (768 KB of them
// with their marks).
// A pipelining client holds the stripes of up to 64 keys until its batch
// commits, and a writer that finds one of its stripes taken waits holding
// the others: with 1,024 stripes, 50 clients pipelining 16 SETs held most
// of them, writers queued behind each other and SET -P 16 used 1.3 of 2
// CPUs at 180–186k req/s; with 65,536 it reaches 218–250k
// (docs/performance.md).
const lockStripes = 1 << 16

// KeyLocks is a striped set of key locks. Every write holds the locks of
// its keys across read, commit, replication-log append and publish, so the
// per-key order of events equals commit order. Keys hashing to one stripe
// share a mutex; multi-key commands take their stripes in ascending order,
// so two commands never deadlock.
//
// LockAll excludes every other holder without taking the 65,536 mutexes
// one by one (about a millisecond): it raises a flag that makes every
// later locker let its stripes go and wait, then waits for the stripes
// still held. A locker marks a stripe held after taking its mutex and
// then reads the flag; LockAll raises the flag and then reads the marks.
// With sequentially consistent atomics one of the two sees the other, so
// no locker keeps a stripe LockAll believes free. The holder of LockAll
// must not take stripes itself.
type KeyLocks struct {
	seed      maphash.Seed
	stripes   [lockStripes]stripe
	allMu     sync.Mutex  // held by LockAll's holder, and briefly by lockers waiting for it
	exclusive atomic.Bool // LockAll's flag
}

// stripe is one key lock: its mutex, and whether a locker holds it (set
// after the mutex is taken, cleared before it is released), which LockAll
// reads.
type stripe struct {
	mu   sync.Mutex
	held atomic.Bool
}

// take marks the stripe held by the caller, who has its mutex, and
// reports whether LockAll's flag is down; when it is up the caller must
// let the stripe go (release) and wait (awaitAll).
func (s *stripe) take(l *KeyLocks) bool {
	s.held.Store(true)
	return !l.exclusive.Load()
}

func (s *stripe) release() {
	s.held.Store(false)
	s.mu.Unlock()
}

// awaitAll waits until no LockAll holds the locks.
func (l *KeyLocks) awaitAll() {
	l.allMu.Lock()
	//lint:ignore SA2001 an empty critical section: a wait for LockAll's holder
	l.allMu.Unlock()
}

// NewKeyLocks returns an unlocked set.
func NewKeyLocks() *KeyLocks { return &KeyLocks{seed: maphash.MakeSeed()} }

func (l *KeyLocks) stripe(ns string, key []byte) int {
	var h maphash.Hash
	h.SetSeed(l.seed)
	h.WriteString(ns)
	h.WriteByte(0)
	h.Write(key)
	return int(h.Sum64() % lockStripes)
}

// LockKey takes the lock of key in ns and returns its stripe, for a
// caller that locks one key and keeps its own record of the unlock (Lock
// returns a func, which costs an allocation); UnlockStripe releases it.
func (l *KeyLocks) LockKey(ns string, key []byte) int {
	i := l.stripe(ns, key)
	s := &l.stripes[i]
	for {
		s.mu.Lock()
		if s.take(l) {
			return i
		}
		s.release()
		l.awaitAll()
	}
}

// UnlockStripe releases a stripe LockKey took.
func (l *KeyLocks) UnlockStripe(i int) { l.stripes[i].release() }

// Lock takes the locks of keys in ns and returns the function that
// releases them.
func (l *KeyLocks) Lock(ns string, keys ...[]byte) (unlock func()) {
	if len(keys) == 1 {
		i := l.LockKey(ns, keys[0])
		return func() { l.UnlockStripe(i) }
	}
	idx := make([]int, len(keys))
	for i, k := range keys {
		idx[i] = l.stripe(ns, k)
	}
	idx = l.lockStripes(idx)
	return func() { l.unlockStripes(idx) }
}

// lockStripes takes the stripes of idx (stripe indexes, in any order,
// repeats allowed) in ascending order, so two writers never deadlock, and
// returns them sorted and without repeats, for unlockStripes.
func (l *KeyLocks) lockStripes(idx []int) []int {
	slices.Sort(idx)
	idx = slices.Compact(idx)
	l.LockStripes(idx)
	return idx
}

// unlockStripes releases the stripes lockStripes took, in reverse order.
func (l *KeyLocks) unlockStripes(idx []int) {
	for j := len(idx) - 1; j >= 0; j-- {
		l.stripes[idx[j]].release()
	}
}

// Stripes returns the stripes of keys in ns, sorted and without repeats,
// for TryLockStripes.
func (l *KeyLocks) Stripes(ns string, keys ...[]byte) []int {
	idx := make([]int, len(keys))
	for i, k := range keys {
		idx[i] = l.stripe(ns, k)
	}
	slices.Sort(idx)
	return slices.Compact(idx)
}

// LockStripes takes the stripes of idx, as Stripes returns them (in
// ascending order, so two writers never deadlock), waiting for each, and
// for a LockAll holder to finish. The caller must hold no stripe.
func (l *KeyLocks) LockStripes(idx []int) {
	for {
		free := true
		for _, i := range idx {
			s := &l.stripes[i]
			s.mu.Lock()
			if !s.take(l) {
				free = false
			}
		}
		if free {
			return
		}
		l.unlockStripes(idx)
		l.awaitAll()
	}
}

// TryLockStripes takes every stripe of idx without waiting, or none, and
// reports whether it took them; it takes none while LockAll is held or
// wanted. A holder of other stripes may call it in any order: it never
// waits, so it never deadlocks.
func (l *KeyLocks) TryLockStripes(idx []int) bool {
	for j, i := range idx {
		s := &l.stripes[i]
		if !s.mu.TryLock() {
			l.unlockStripes(idx[:j])
			return false
		}
		if !s.take(l) {
			l.unlockStripes(idx[:j+1])
			return false
		}
	}
	return true
}

// UnlockStripes releases stripes LockStripes or TryLockStripes took.
func (l *KeyLocks) UnlockStripes(idx []int) { l.unlockStripes(idx) }

// LockAll excludes every other holder of key locks (FLUSHDB, FLUSHALL, a
// script that runs alone, a replica's full sync) and returns the function
// that ends it. It waits for the stripes held when it began; lockers that
// come later wait for it. The caller must hold no stripe.
func (l *KeyLocks) LockAll() (unlock func()) {
	l.allMu.Lock()
	l.exclusive.Store(true)
	for i := range l.stripes {
		if s := &l.stripes[i]; s.held.Load() {
			// Wait for its holder; a later locker sees the flag and
			// lets it go.
			s.mu.Lock()
			//lint:ignore SA2001 an empty critical section: a wait for the holder
			s.mu.Unlock()
		}
	}
	return func() {
		l.exclusive.Store(false)
		l.allMu.Unlock()
	}
}
