package storage

import (
	"fmt"
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
	s.m[h] = rowEntry{kv: []byte("zz1"), klen: 2}
	check("c", "miss")

	c.clear()
	check("b", "miss")

	// Each shard stays within its budget: after many puts the shard of
	// the last key holds at most limit bytes, and the last key is there.
	for i := range 10000 {
		c.put(fmt.Appendf(nil, "key-%d", i), []byte("some value"))
	}
	check("key-9999", "=some value")
	for i := range c.shards {
		if c.shards[i].bytes > c.limit {
			t.Fatalf("shard %d holds %d bytes, limit %d", i, c.shards[i].bytes, c.limit)
		}
	}
	// An entry larger than a shard is not cached, and replaces nothing
	// stale.
	c.put([]byte("key-9999"), make([]byte, c.limit+1))
	check("key-9999", "miss")
}
