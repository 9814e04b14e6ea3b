package storage

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// TestLockAllExcludesEveryLocker: while LockAll is held no single-key,
// multi-key or try-locker holds a stripe, and every locker gets its
// stripes again once LockAll ends.
func TestLockAllExcludesEveryLocker(t *testing.T) {
	l := NewKeyLocks()
	var inside, all atomic.Int64
	var bad atomic.Value
	check := func(who string) {
		if all.Load() != 0 {
			bad.Store(who + " held a stripe during LockAll")
		}
	}
	const lockers, rounds = 6, 3000
	var wg sync.WaitGroup
	for g := range lockers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				key := []byte(fmt.Sprint("k", (i*7+g)%50))
				switch g % 3 {
				case 0:
					s := l.LockKey("", key)
					inside.Add(1)
					check("LockKey")
					inside.Add(-1)
					l.UnlockStripe(s)
				case 1:
					unlock := l.Lock("", key, []byte(fmt.Sprint("k", i%50)), []byte("shared"))
					inside.Add(1)
					check("Lock")
					inside.Add(-1)
					unlock()
				default:
					idx := l.Stripes("", key, []byte("shared"))
					if l.TryLockStripes(idx) {
						inside.Add(1)
						check("TryLockStripes")
						inside.Add(-1)
						l.UnlockStripes(idx)
					}
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 300 {
			unlock := l.LockAll()
			all.Add(1)
			if n := inside.Load(); n != 0 {
				bad.Store(fmt.Sprintf("LockAll began with %d lockers inside", n))
			}
			all.Add(-1)
			unlock()
		}
	}()
	wg.Wait()
	<-done
	if v := bad.Load(); v != nil {
		t.Fatal(v)
	}
	// Every stripe is free again.
	idx := l.Stripes("", []byte("shared"), []byte("k1"))
	if !l.TryLockStripes(idx) {
		t.Fatal("stripes still held after every locker ended")
	}
	l.UnlockStripes(idx)
}

func BenchmarkLockAll(b *testing.B) {
	l := NewKeyLocks()
	for b.Loop() {
		l.LockAll()()
	}
}
