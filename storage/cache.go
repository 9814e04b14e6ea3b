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

// rowCacheShard maps the 64-bit hash of a key to its entry. Keying by the
// hash rather than the key keeps a lookup to the map's own memory and one
// entry buffer; the entry holds the key, so a (vanishingly rare) collision
// is a miss, and a put replaces the colliding entry.
type rowCacheShard struct {
	mu    sync.RWMutex
	m     map[uint64]rowEntry
	bytes int64
}

// rowEntry is one cached record: kv holds the key followed by the value.
type rowEntry struct {
	kv     []byte
	klen   int32
	absent bool // the key is known not to exist
}

func (e rowEntry) cost() int64 { return int64(len(e.kv) + rowEntryOverhead) }

// newRowCache returns a cache of about capacity bytes, or nil (no cache)
// for a capacity of zero.
func newRowCache(capacity int64) *rowCache {
	if capacity <= 0 {
		return nil
	}
	c := &rowCache{seed: maphash.MakeSeed(), limit: max(capacity/rowCacheShards, 1)}
	for i := range c.shards {
		c.shards[i].m = map[uint64]rowEntry{}
	}
	return c
}

func (c *rowCache) locate(k []byte) (*rowCacheShard, uint64) {
	h := maphash.Bytes(c.seed, k)
	return &c.shards[h%rowCacheShards], h
}

// get returns the cached record of metadata key k: found reports a cache
// hit, and v is nil when the key is known to be absent. v must not be
// modified.
func (c *rowCache) get(k []byte) (v []byte, found bool) {
	if c == nil {
		return nil, false
	}
	s, h := c.locate(k)
	s.mu.RLock()
	e, ok := s.m[h]
	s.mu.RUnlock()
	if !ok || string(e.kv[:e.klen]) != string(k) {
		return nil, false
	}
	if e.absent {
		return nil, true
	}
	return e.kv[e.klen:len(e.kv):len(e.kv)], true
}

// put records v (nil for absent) as the current record of k, evicting
// other entries to stay within the shard's budget. The caller holds k's
// key lock; the cache keeps its own copy of k and v.
func (c *rowCache) put(k, v []byte) {
	if c == nil {
		return
	}
	kv := make([]byte, 0, len(k)+len(v))
	c.putKV(append(append(kv, k...), v...), len(k), v == nil)
}

// putKV is put for a record the caller hands over: kv holds the key (its
// first klen bytes) followed by the value, and belongs to the cache from
// now on; absent records a key known not to exist (kv is then the key).
func (c *rowCache) putKV(kv []byte, klen int, absent bool) {
	if c == nil {
		return
	}
	k := kv[:klen]
	s, h := c.locate(k)
	e := rowEntry{kv: kv, klen: int32(klen), absent: absent}
	cost := e.cost()
	if cost > c.limit {
		c.drop(k)
		return
	}
	s.mu.Lock()
	if old, ok := s.m[h]; ok {
		s.bytes -= old.cost()
	}
	// Evict arbitrary entries (map order is random) until it fits; the
	// check comes first, as starting a map iteration is not free.
	if s.bytes+cost > c.limit {
		for eh, ev := range s.m {
			s.bytes -= ev.cost()
			delete(s.m, eh)
			if s.bytes+cost <= c.limit {
				break
			}
		}
	}
	s.m[h] = e
	s.bytes += cost
	s.mu.Unlock()
}

// drop forgets k.
func (c *rowCache) drop(k []byte) {
	if c == nil {
		return
	}
	s, h := c.locate(k)
	s.mu.Lock()
	if old, ok := s.m[h]; ok {
		s.bytes -= old.cost()
		delete(s.m, h)
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
		s.m = map[uint64]rowEntry{}
		s.bytes = 0
		s.mu.Unlock()
	}
}
