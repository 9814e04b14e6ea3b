package storage

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestRowCache(t *testing.T) {
	c := newRowCache(rowCacheShards * 1024)
	get := func(k string) string {
		v, found := c.get([]byte(k))
		switch {
		case !found:
			return "miss"
		case v == nil:
			return "absent"
		}
		return "=" + string(v)
	}
	check := func(k, want string) {
		t.Helper()
		if got := get(k); got != want {
			t.Errorf("get(%q) = %s, want %s", k, got, want)
		}
	}

	check("a", "miss")
	c.put([]byte("a"), []byte("1"))
	c.put([]byte("b"), nil)
	check("a", "=1")
	check("b", "absent")
	if hits, misses := c.stats(); hits != 2 || misses != 1 {
		t.Errorf("stats() = %d hits, %d misses; want 2, 1", hits, misses)
	}
	c.put([]byte("a"), []byte("22"))
	check("a", "=22")

	// The cache keeps its own copy of what it was given.
	v := []byte("33")
	c.put([]byte("a"), v)
	v[0] = 'x'
	check("a", "=33")

	c.drop([]byte("a"))
	check("a", "miss")
	check("b", "absent")

	// An entry under a key's hash but for another key (a collision) is
	// a miss.
	s, h := c.locate([]byte("c"))
	for i := 0; ; i++ {
		other := fmt.Appendf(nil, "other-%d", i)
		if os, oh := c.locate(other); os == s {
			c.put(other, []byte("1"))
			s.m[h] = s.m[oh]
			break
		}
	}
	check("c", "miss")

	// A value a reader got stays intact after its key is rewritten and
	// its slab evicted.
	c.put([]byte("kept"), []byte("first"))
	held, _ := c.get([]byte("kept"))
	for i := range 2000 {
		c.put([]byte("kept"), fmt.Appendf(nil, "value-%d", i))
	}
	if string(held) != "first" {
		t.Fatalf("a value read earlier changed to %q", held)
	}
	check("kept", "=value-1999")

	c.clear()
	check("b", "miss")

	// Each shard stays within its budget: after many puts the shard of
	// the last key holds at most limit bytes, and the last key is there.
	for i := range 10000 {
		c.put(fmt.Appendf(nil, "key-%d", i), []byte("some value"))
	}
	check("key-9999", "=some value")
	for i := range c.shards {
		sh := &c.shards[i]
		cost := int64(0)
		for _, sl := range sh.slabs {
			cost += sl.cost()
		}
		if sh.cost != cost || cost > c.limit {
			t.Fatalf("shard %d: cost %d (slabs say %d), limit %d", i, sh.cost, cost, c.limit)
		}
		// Every record the map names is in a live slab, and the shard
		// knows what they cost.
		live := int64(0)
		for _, r := range sh.m {
			if r.slab < sh.first || int(r.slab-sh.first) >= len(sh.slabs) {
				t.Fatalf("shard %d: a record in slab %d, live slabs %d..%d", i, r.slab, sh.first, int(sh.first)+len(sh.slabs)-1)
			}
			live += r.cost()
		}
		if sh.live != live {
			t.Fatalf("shard %d: live %d, records say %d", i, sh.live, live)
		}
	}
	// An entry larger than a shard is not cached, and replaces nothing
	// stale.
	c.put([]byte("key-9999"), make([]byte, c.limit+1))
	check("key-9999", "miss")
}

// TestRowCacheKeepsCurrentRecords checks that rewriting a few keys many
// times (each write leaving its old record behind as garbage) does not
// evict the current records of other keys while they fit in half the
// budget, and that every record read back is the last one written.
func TestRowCacheKeepsCurrentRecords(t *testing.T) {
	c := newRowCache(rowCacheShards * 256 << 10) // 4 slabs a shard
	for i := range 1000 {
		c.put(fmt.Appendf(nil, "cold-%d", i), fmt.Appendf(nil, "value-%d", i))
	}
	c.put([]byte("gone"), nil)
	for i := range 200_000 {
		c.put(fmt.Appendf(nil, "hot-%d", i%10), fmt.Appendf(nil, "%032d", i))
	}
	for i := range 1000 {
		v, found := c.get(fmt.Appendf(nil, "cold-%d", i))
		if want := fmt.Sprintf("value-%d", i); !found || string(v) != want {
			t.Fatalf("cold-%d: found %v, %q; want %q", i, found, v, want)
		}
	}
	if v, found := c.get([]byte("gone")); !found || v != nil {
		t.Fatalf("gone: found %v, %q; want known absent", found, v)
	}
	for i := range 10 {
		v, found := c.get(fmt.Appendf(nil, "hot-%d", i))
		if want := fmt.Sprintf("%032d", 199_990+i); !found || string(v) != want {
			t.Fatalf("hot-%d: found %v, %q; want %q", i, found, v, want)
		}
	}

	// More current records than half the budget: records are evicted
	// and every shard stays within its budget.
	for i := range 100_000 {
		c.put(fmt.Appendf(nil, "many-%d", i), fmt.Appendf(nil, "%032d", i))
	}
	for i := range c.shards {
		if sh := &c.shards[i]; sh.cost > c.limit || sh.live > c.limit {
			t.Fatalf("shard %d: cost %d, live %d, limit %d", i, sh.cost, sh.live, c.limit)
		}
	}
	if v, _ := c.get([]byte("many-99999")); string(v) != fmt.Sprintf("%032d", 99_999) {
		t.Fatalf("the last record written: %q", v)
	}
}

// TestRowCacheConcurrent has writers replace records (each key has one
// writer, as the key locks guarantee) while readers read them, with a
// budget small enough that slabs are dropped and records move all the
// time: a reader must only ever see a value its key's writer wrote. Run
// with -race, it also checks the locking.
func TestRowCacheConcurrent(t *testing.T) {
	c := newRowCache(rowCacheShards * 4096)
	const writers, keysPer, rounds = 4, 50, 500
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				for k := range keysPer {
					c.put(fmt.Appendf(nil, "w%d-k%d", w, k), fmt.Appendf(nil, "w%d-k%d-r%d", w, k, r))
				}
			}
		}()
	}
	var bad atomic.Int64
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for w := range writers {
					for k := range keysPer {
						key := fmt.Sprintf("w%d-k%d", w, k)
						if v, found := c.get([]byte(key)); found && !strings.HasPrefix(string(v), key+"-r") {
							bad.Add(1)
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	if n := bad.Load(); n > 0 {
		t.Fatalf("%d reads returned another key's value or garbage", n)
	}
	for w := range writers {
		for k := range keysPer {
			key := fmt.Sprintf("w%d-k%d", w, k)
			if v, found := c.get([]byte(key)); found && string(v) != fmt.Sprintf("%s-r%d", key, rounds-1) {
				t.Fatalf("%s: %q after the last round", key, v)
			}
		}
	}
}
