package storage

import (
	"hash/maphash"
	"math"
	"sync"
	"sync/atomic"
)

// rowCacheShards is the number of independently locked parts of the cache.
const rowCacheShards = 64

// rowSlabBytes is the size of the slabs records are appended to, or a
// quarter of a shard's budget when that is smaller: a shard must hold a few
// slabs, or dropping its oldest takes what was just written with it.
const rowSlabBytes = 64 << 10

// rowRefOverhead approximates what a record costs beyond its bytes in a
// slab: its slot in the shard's map.
const rowRefOverhead = 32

// rowCache keeps the encoded metadata records of recently used keys (for a
// string, its value too) above Pebble, so hot reads and the read that
// every write does first skip Pebble's memtable and table lookups, as
// RocksDB's row cache does for Kvrocks. A nil value records a key known to
// be absent.
//
// Consistency rests on the key locks: entries change only while the key's
// lock is held (writers update the cache inside Commit, under the locks
// their command holds; readers fill a miss while holding the key's lock),
// so a reader that finds an entry sees the last committed state. The
// engine's second cache, of collection members, is filled by readers that
// hold no lock: a fill is refused when a writer changed the shard since
// the reader looked (epochOf, fill), and writers only update the records
// it holds (update).
//
// Records live in large append-only byte slabs, found through maps that
// hold no pointers, so the garbage collector has almost nothing to mark
// however many records the cache holds (with one allocation per record,
// a full cache made each collection's mark phase last tens of
// milliseconds). A slab is never written again below its length, so a
// value handed to a reader stays intact after the record is replaced or
// evicted. A shard over its budget drops its oldest slab; the records in
// it that are still current move to the newest slab while they take at
// most half the budget (writes replace records, so under a steady stream
// of writes most of an old slab is garbage, and dropping the current
// records with it would send their next reads and writes to Pebble).
type rowCache struct {
	seed   maphash.Seed
	limit  int64 // bytes per shard
	shards [rowCacheShards]rowCacheShard
}

// rowCacheShard maps the 64-bit hash of a key to where its record is. Keying
// by the hash rather than the key keeps a lookup to the map's own memory
// and one slab; the record holds the key, so a (vanishingly rare)
// collision is a miss, and a put replaces the colliding entry.
type rowCacheShard struct {
	mu    sync.RWMutex
	m     map[uint64]rowRef
	slabs []rowSlab // oldest first; slabs[i] has the id first+i
	first uint32
	cost  int64 // of all slabs, in the budget's terms (rowSlab.cost)
	live  int64 // of the records the map names, in the same terms

	hits, misses atomic.Uint64 // lookups that found a record, and not
	// epoch counts the shard's changes by writers (put, update, drop,
	// clear, a commit's start and end), for fill: a lock-free reader's
	// fill is refused when a writer changed the shard since the reader
	// looked.
	epoch atomic.Uint64
	// writing counts the commits under way that write records of the
	// shard (beginWrites): until they are in the cache too, readers of
	// the shard go to Pebble, which may have them already.
	writing atomic.Int32
}

// rowSlab is a slab of records, each a key followed by its value.
type rowSlab struct {
	b    []byte
	refs int64 // records appended, whether or not still referenced
}

// cost is what the slab counts against its shard's budget: its capacity
// and the map slots of its records.
func (s rowSlab) cost() int64 { return int64(cap(s.b)) + s.refs*rowRefOverhead }

// rowRef locates a record: the slab's id, the record's offset in it, and
// the lengths of its key and value (absentLen: the key is known absent).
type rowRef struct {
	slab, off, klen, vlen uint32
}

// cost is what the record counts against its shard's budget.
func (r rowRef) cost() int64 {
	n := int64(r.klen) + rowRefOverhead
	if r.vlen != absentLen {
		n += int64(r.vlen)
	}
	return n
}

const absentLen = math.MaxUint32

// newRowCache returns a cache of about capacity bytes, or nil (no cache)
// for a capacity of zero.
func newRowCache(capacity int64) *rowCache {
	if capacity <= 0 {
		return nil
	}
	c := &rowCache{seed: maphash.MakeSeed(), limit: max(capacity/rowCacheShards, 1)}
	for i := range c.shards {
		c.shards[i].m = map[uint64]rowRef{}
	}
	return c
}

func (c *rowCache) locate(k []byte) (*rowCacheShard, uint64) {
	h := maphash.Bytes(c.seed, k)
	return &c.shards[h%rowCacheShards], h
}

// get returns the cached record of key k: found reports a cache
// hit, and v is nil when the key is known to be absent. v must not be
// modified; it stays valid after the record changes.
func (c *rowCache) get(k []byte) (v []byte, found bool) {
	if c == nil {
		return nil, false
	}
	s, h := c.locate(k)
	s.mu.RLock()
	r, ok := s.m[h]
	var slab []byte
	if ok {
		slab = s.slabs[r.slab-s.first].b
	}
	s.mu.RUnlock()
	// The record's bytes were written before its ref was published under
	// the lock, and are never written again.
	if !ok || string(slab[r.off:r.off+r.klen]) != string(k) {
		s.misses.Add(1)
		return nil, false
	}
	s.hits.Add(1)
	if r.vlen == absentLen {
		return nil, true
	}
	start := r.off + r.klen
	return slab[start : start+r.vlen : start+r.vlen], true
}

// put records v (nil for absent) as the current record of k, evicting
// the shard's oldest slabs to stay within its budget. The caller holds k's
// key lock; the cache keeps its own copy of k and v.
func (c *rowCache) put(k, v []byte) {
	if c == nil {
		return
	}
	need := len(k) + len(v)
	if int64(need)+rowRefOverhead > c.limit || need >= absentLen {
		c.drop(k)
		return
	}
	s, h := c.locate(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch.Add(1)
	c.putLocked(s, h, k, v)
}

// putLocked is put for a caller that holds the shard's lock.
func (c *rowCache) putLocked(s *rowCacheShard, h uint64, k, v []byte) {
	if old, ok := s.m[h]; ok {
		s.live -= old.cost()
	}
	r := s.append(c.limit, k, v)
	s.m[h] = r
	s.live += r.cost()
	// Each slab may be dropped once with its current records moving on;
	// after that, records go with their slab, so the loop ends even when
	// the moved records fill slabs again.
	for moves := len(s.slabs); s.cost > c.limit && len(s.slabs) > 1; moves-- {
		s.dropOldest(c.limit, moves > 0)
	}
}

// shardOf returns the index of k's shard.
func (c *rowCache) shardOf(k []byte) int {
	return int(maphash.Bytes(c.seed, k) % rowCacheShards)
}

// beginWrites marks the shards of mask (bit i: shard i) as written by a
// commit under way, before it reaches Pebble; endWrites ends that once its
// records are in the cache.
func (c *rowCache) beginWrites(mask uint64) { c.markWrites(mask, 1) }

// endWrites ends what beginWrites began.
func (c *rowCache) endWrites(mask uint64) { c.markWrites(mask, -1) }

func (c *rowCache) markWrites(mask uint64, d int32) {
	if c == nil {
		return
	}
	for i := range rowCacheShards {
		if mask&(1<<i) != 0 {
			s := &c.shards[i]
			s.mu.Lock()
			s.writing.Add(d)
			s.epoch.Add(1)
			s.mu.Unlock()
		}
	}
}

// getSettled is get for a reader that holds no key lock: it misses while
// a commit writing k's shard is under way, whose records Pebble may
// already have and the cache not yet.
func (c *rowCache) getSettled(k []byte) (v []byte, found bool) {
	if c == nil || c.shards[c.shardOf(k)].writing.Load() != 0 {
		return nil, false
	}
	return c.get(k)
}

// epochOf returns the change count of k's shard, for fill.
func (c *rowCache) epochOf(k []byte) uint64 {
	if c == nil {
		return 0
	}
	s, _ := c.locate(k)
	return s.epoch.Load()
}

// fill records v (nil for absent) as the record of k that a reader found
// in Pebble, unless a writer changed k's shard since epochOf returned
// epoch, or a commit writing the shard is under way: the reader's v may
// then be older than the writer's. Readers that
// hold no key lock fill the member cache this way.
func (c *rowCache) fill(k, v []byte, epoch uint64) {
	if c == nil || int64(len(k)+len(v))+rowRefOverhead > c.limit || len(k)+len(v) >= absentLen {
		return
	}
	s, h := c.locate(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epoch.Load() == epoch && s.writing.Load() == 0 {
		c.putLocked(s, h, k, v)
	}
}

// update records v (nil for absent) as the record of k if the cache holds
// one, for a writer that must not add records (the member cache takes
// only records its readers asked for), and refuses the fills of readers
// that looked before.
func (c *rowCache) update(k, v []byte) {
	if c == nil {
		return
	}
	s, h := c.locate(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch.Add(1)
	r, ok := s.m[h]
	if !ok || string(s.slabs[r.slab-s.first].b[r.off:r.off+r.klen]) != string(k) {
		return
	}
	if int64(len(k)+len(v))+rowRefOverhead > c.limit || len(k)+len(v) >= absentLen {
		s.live -= r.cost()
		delete(s.m, h)
		return
	}
	c.putLocked(s, h, k, v)
}

// append writes the record of k (v nil: known absent) after the shard's
// last record and returns where it is, starting a new slab when the record
// does not fit in the last one or would take that slab alone past limit;
// the caller holds the shard's lock and publishes the ref.
func (s *rowCacheShard) append(limit int64, k, v []byte) rowRef {
	need := len(k) + len(v)
	last := len(s.slabs) - 1
	if last < 0 || cap(s.slabs[last].b)-len(s.slabs[last].b) < need || s.slabs[last].cost()+rowRefOverhead > limit {
		size := max(min(rowSlabBytes, limit/4), int64(need))
		s.slabs = append(s.slabs, rowSlab{b: make([]byte, 0, size)})
		s.cost += size
		last++
	}
	cur := &s.slabs[last]
	r := rowRef{slab: s.first + uint32(last), off: uint32(len(cur.b)), klen: uint32(len(k)), vlen: uint32(len(v))}
	if v == nil {
		r.vlen = absentLen
	}
	cur.b = append(append(cur.b, k...), v...)
	cur.refs++
	s.cost += rowRefOverhead
	return r
}

// dropOldest drops the shard's oldest slab. The records in it that are
// still current move to the newest slab when move is set and they take at
// most half of limit; the others are evicted. The caller holds the shard's
// lock.
func (s *rowCacheShard) dropOldest(limit int64, move bool) {
	gone := s.first
	old := s.slabs[0]
	s.cost -= old.cost()
	s.slabs[0] = rowSlab{}
	s.slabs = s.slabs[1:]
	s.first++
	for h, r := range s.m {
		if r.slab != gone {
			continue
		}
		if move && s.live <= limit/2 {
			rec := old.b[r.off : r.off+r.klen]
			var v []byte
			if r.vlen != absentLen {
				v = old.b[r.off+r.klen : r.off+r.klen+r.vlen]
			}
			s.m[h] = s.append(limit, rec, v)
			continue
		}
		s.live -= r.cost()
		delete(s.m, h)
	}
}

// stats returns how many lookups found a record (a value or known
// absence) and how many did not, since the cache was made.
func (c *rowCache) stats() (hits, misses uint64) {
	if c == nil {
		return 0, 0
	}
	for i := range c.shards {
		hits += c.shards[i].hits.Load()
		misses += c.shards[i].misses.Load()
	}
	return hits, misses
}

// drop forgets k.
func (c *rowCache) drop(k []byte) {
	if c == nil {
		return
	}
	s, h := c.locate(k)
	s.mu.Lock()
	s.epoch.Add(1)
	if r, ok := s.m[h]; ok {
		s.live -= r.cost()
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
		s.epoch.Add(1)
		s.m = map[uint64]rowRef{}
		s.first += uint32(len(s.slabs))
		s.slabs, s.cost, s.live = nil, 0, 0
		s.mu.Unlock()
	}
}
