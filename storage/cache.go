package storage

import (
	"hash/maphash"
	"sync"
)

// rowCacheShards is the number of independently locked parts of the cache.
const rowCacheShards = 64

// rowEntryOverhead approximates the bytes a cache entry costs beyond its
// key and value (map slot, string and slice headers).
const rowEntryOverhead = 64

// rowCache keeps the encoded metadata records of recently used keys (for a
// string, its value too) above Pebble, so hot reads and the read that
// every write does first skip Pebble's memtable and table lookups, as
// RocksDB's row cache does for Kvrocks. A nil value records a key known to
// be absent.
//
// Consistency rests on the key locks: entries change only while the key's
// lock is held (writers update the cache inside Commit, under the locks
// their command holds; readers fill a miss while holding the key's lock),
// so a reader that finds an entry sees the last committed state.
type rowCache struct {
	seed   maphash.Seed
	limit  int64 // bytes per shard
	shards [rowCacheShards]rowCacheShard
}

type rowCacheShard struct {
	mu    sync.RWMutex
	m     map[string][]byte
	bytes int64
}

// newRowCache returns a cache of about capacity bytes, or nil (no cache)
// for a capacity of zero.
func newRowCache(capacity int64) *rowCache {
	if capacity <= 0 {
		return nil
	}
	c := &rowCache{seed: maphash.MakeSeed(), limit: max(capacity/rowCacheShards, 1)}
	for i := range c.shards {
		c.shards[i].m = map[string][]byte{}
	}
	return c
}

func (c *rowCache) shard(k []byte) *rowCacheShard {
	return &c.shards[maphash.Bytes(c.seed, k)%rowCacheShards]
}

// get returns the cached record of metadata key k: found reports a cache
// hit, and v is nil when the key is known to be absent. v must not be
// modified.
func (c *rowCache) get(k []byte) (v []byte, found bool) {
	if c == nil {
		return nil, false
	}
	s := c.shard(k)
	s.mu.RLock()
	v, found = s.m[string(k)]
	s.mu.RUnlock()
	return v, found
}

// put records v (nil for absent) as the current record of k, evicting
// other entries to stay within the shard's budget. The caller holds k's
// key lock and gives up ownership of v.
func (c *rowCache) put(k, v []byte) {
	if c == nil {
		return
	}
	s := c.shard(k)
	cost := int64(len(k) + len(v) + rowEntryOverhead)
	if cost > c.limit {
		c.drop(k)
		return
	}
	s.mu.Lock()
	if old, ok := s.m[string(k)]; ok {
		s.bytes -= int64(len(k) + len(old) + rowEntryOverhead)
	}
	// Evict arbitrary entries (map order is random) until it fits; the
	// check comes first, as starting a map iteration is not free.
	if s.bytes+cost > c.limit {
		for ek, ev := range s.m {
			s.bytes -= int64(len(ek) + len(ev) + rowEntryOverhead)
			delete(s.m, ek)
			if s.bytes+cost <= c.limit {
				break
			}
		}
	}
	s.m[string(k)] = v
	s.bytes += cost
	s.mu.Unlock()
}

// drop forgets k.
func (c *rowCache) drop(k []byte) {
	if c == nil {
		return
	}
	s := c.shard(k)
	s.mu.Lock()
	if old, ok := s.m[string(k)]; ok {
		s.bytes -= int64(len(k) + len(old) + rowEntryOverhead)
		delete(s.m, string(k))
	}
	s.mu.Unlock()
}

// clear forgets everything (FLUSHDB, FLUSHALL, a full sync).
func (c *rowCache) clear() {
	if c == nil {
		return
	}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		s.m = map[string][]byte{}
		s.bytes = 0
		s.mu.Unlock()
	}
}
