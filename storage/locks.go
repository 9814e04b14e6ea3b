package storage

import (
	"hash/maphash"
	"slices"
	"sync"
)

// lockStripes is the number of mutexes keys hash onto (512 KB of them).
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
type KeyLocks struct {
	seed    maphash.Seed
	stripes [lockStripes]sync.Mutex
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

// KeyLock returns the mutex that guards key in ns, for a caller that locks
// one key and keeps its own record of the unlock (Lock returns a func,
// which costs an allocation).
func (l *KeyLocks) KeyLock(ns string, key []byte) *sync.Mutex {
	return &l.stripes[l.stripe(ns, key)]
}

// Lock takes the locks of keys in ns and returns the function that
// releases them.
func (l *KeyLocks) Lock(ns string, keys ...[]byte) (unlock func()) {
	if len(keys) == 1 {
		m := &l.stripes[l.stripe(ns, keys[0])]
		m.Lock()
		return m.Unlock
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
	for _, i := range idx {
		l.stripes[i].Lock()
	}
	return idx
}

// unlockStripes releases the stripes lockStripes took, in reverse order.
func (l *KeyLocks) unlockStripes(idx []int) {
	for j := len(idx) - 1; j >= 0; j-- {
		l.stripes[idx[j]].Unlock()
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
// ascending order, so two writers never deadlock), waiting for each.
func (l *KeyLocks) LockStripes(idx []int) {
	for _, i := range idx {
		l.stripes[i].Lock()
	}
}

// TryLockStripes takes every stripe of idx without waiting, or none, and
// reports whether it took them. A holder of other stripes may call it in
// any order: it never waits, so it never deadlocks.
func (l *KeyLocks) TryLockStripes(idx []int) bool {
	for j, i := range idx {
		if !l.stripes[i].TryLock() {
			l.unlockStripes(idx[:j])
			return false
		}
	}
	return true
}

// UnlockStripes releases stripes LockStripes or TryLockStripes took.
func (l *KeyLocks) UnlockStripes(idx []int) { l.unlockStripes(idx) }

// LockAll takes every stripe, excluding all other writers (FLUSHDB,
// FLUSHALL), and returns the function that releases them.
func (l *KeyLocks) LockAll() (unlock func()) {
	for i := range l.stripes {
		l.stripes[i].Lock()
	}
	return func() {
		for i := len(l.stripes) - 1; i >= 0; i-- {
			l.stripes[i].Unlock()
		}
	}
}
