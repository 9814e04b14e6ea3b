package commands

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/cairnkv/cairn/glob"
	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/storage"
)

// Hashes and sets keep each member in a record of its own
// (storage.Batch.PutField; a set member is a field with an empty value),
// so a command reads and writes the members it names, not the whole
// collection. A command holds the key's lock, so that the metadata and
// the members it reads come from the same write, unless it reads one
// member (lookupOf). What follows is shared by the two families, and in
// part by lists (lists.go), whose elements are records named by index.

// readOf returns the state of key, replying WRONGTYPE (and ok=false)
// when it holds a type other than t, or a storage error.
func (c *Ctx) readOf(key []byte, t storage.Type) (k keyState, ok bool) {
	if k, ok = c.read(key); ok && k.live && k.m.Type != t {
		c.W.Error(errWrongType)
		return k, false
	}
	return k, ok
}

// lookupOf is readOf for a command that reads key as Redis's
// lookupKeyRead does: a keyspace hit or miss (and keymiss) before the
// type check. With locked it takes the key's lock, which unlock releases
// (the caller defers it, whatever ok is), for a command that reads
// several members or the metadata and members together. A command that
// reads one member needs none: if the collection it found is replaced
// before it reads the member, the member is gone (deleted with it), and
// a missing key was the state in between.
func (c *Ctx) lookupOf(key []byte, t storage.Type, locked bool) (k keyState, unlock func(), ok bool) {
	unlock = func() {}
	if locked {
		unlock = c.lock(key)
	}
	if k, ok = c.read(key); !ok {
		return k, unlock, false
	}
	c.lookedUp(key, k.live)
	if k.live && k.m.Type != t {
		c.W.Error(errWrongType)
		return k, unlock, false
	}
	return k, unlock, true
}

// lockedOf takes key's lock for a write and returns its state and the
// metadata to write: the live collection's, or a new empty one's of type
// t.
func (c *Ctx) lockedOf(key []byte, t storage.Type) (k keyState, m storage.Metadata, unlock func(), ok bool) {
	unlock = c.lock(key)
	if k, ok = c.readOf(key, t); !ok {
		return k, m, unlock, false
	}
	if k.live {
		return k, k.m, unlock, true
	}
	return k, storage.Metadata{Type: t, Version: storage.NewHashID()}, unlock, true
}

// field returns field f of the collection m (nil, false when it has
// none), reading what the command's transaction wrote first. On a
// storage error it replies and returns ok=false.
func (c *Ctx) field(m *storage.Metadata, f []byte) (v []byte, found, ok bool) {
	v, found, err := c.Env.Store.GetField(c.batch(), c.ns(), m, f)
	if err != nil {
		c.storageError(err)
		return nil, false, false
	}
	return v, found, true
}

// liveField is field for a key that may not hold a collection yet (k:
// its state): a new one has no members.
func (c *Ctx) liveField(k *keyState, m *storage.Metadata, f []byte) (v []byte, found, ok bool) {
	if !k.live {
		return nil, false, true
	}
	return c.field(m, f)
}

// fields calls fn with each field of the collection m and its value, in
// byte order, until it returns false; on a storage error it replies and
// returns false. A sorted set's fields are its members, and their values
// their scores as formatScore prints them.
func (c *Ctx) fields(m *storage.Metadata, fn func(f, v []byte) bool) bool {
	return c.fieldsFrom(m, nil, fn)
}

// zsetInOrder calls fn with the members of the sorted set m in order,
// by score, and their scores as formatScore prints them, until fn
// returns false; on a storage error it replies and returns false. start
// must be nil (it has fieldsFrom's signature).
func (c *Ctx) zsetInOrder(m *storage.Metadata, _ []byte, fn func(f, v []byte) bool) bool {
	if err := c.Env.Store.ScanZSet(c.batch(), c.ns(), m, nil, false, func(member []byte, s float64) bool {
		return fn(member, formatScore(s))
	}); err != nil {
		c.storageError(err)
		return false
	}
	return true
}

// fieldsFrom is fields from field start on.
func (c *Ctx) fieldsFrom(m *storage.Metadata, start []byte, fn func(f, v []byte) bool) bool {
	var err error
	if m.Type == storage.TypeZSet {
		err = c.Env.Store.ScanZMembers(c.batch(), c.ns(), m, start, func(member []byte, s float64) bool {
			return fn(member, formatScore(s))
		})
	} else {
		err = c.Env.Store.ScanFields(c.batch(), c.ns(), m, start, fn)
	}
	if err != nil {
		c.storageError(err)
		return false
	}
	return true
}

// membersWhere returns the distinct members among args that the
// collection k (m: its metadata, a new one's when k is not live) has, or
// lacks when has is false, in argument order; on a storage error it
// replies and returns ok=false.
func (c *Ctx) membersWhere(k *keyState, m *storage.Metadata, args [][]byte, has bool) (out [][]byte, ok bool) {
	seen := make(map[string]bool, len(args))
	for _, x := range args {
		if seen[string(x)] {
			continue
		}
		seen[string(x)] = true
		_, found, ok := c.liveField(k, m, x)
		if !ok {
			return nil, false
		}
		if found == has {
			out = append(out, x)
		}
	}
	return out, true
}

// removeMembers adds to b the removal of gone (members of the live
// collection key, k: its state) with the event code, and deletes the key
// with its last members ("del" after code), as Redis does.
func (c *Ctx) removeMembers(b *storage.Batch, key []byte, k *keyState, gone [][]byte, code notify.Code) {
	if uint64(len(gone)) >= k.m.Size {
		c.del(b, key, k, code, notify.CodeDel)
		return
	}
	for _, x := range gone {
		b.PutField(c.ns(), k.m.Version, x, nil)
	}
	m := k.m
	m.Size -= uint64(len(gone))
	c.put(b, key, k, m, code)
}

// removeCommand is HDEL and SREM (Args: name, key, members...) of
// collections of type t: it removes the members the key has, with cmd's
// LogData and the event code, and replies how many.
func removeCommand(c *Ctx, t storage.Type, cmd storage.Command, code notify.Code) {
	key := c.Args[1]
	defer c.lock(key)()
	k, ok := c.readOf(key, t)
	if !ok {
		return
	}
	var gone [][]byte
	if k.live {
		if gone, ok = c.membersWhere(&k, &k.m, c.Args[2:], true); !ok {
			return
		}
	}
	if len(gone) == 0 {
		c.W.Int(0)
		return
	}
	b := c.newBatch(t, cmd)
	c.removeMembers(b, key, &k, gone, code)
	if c.commit(b) {
		c.W.Int(int64(len(gone)))
	}
}

// storeNothing is the empty result of cmd, a command that stores a
// collection at dst (SINTERSTORE and the like, SORT ... STORE): Redis
// deletes dst as it finds it, expired or not, publishing "del" (never
// "expired", nor counting it in expired_keys), and replies 0.
func (c *Ctx) storeNothing(cmd storage.Command, dst []byte) {
	d, err := c.lookupRaw(dst)
	if err != nil {
		c.storageError(err)
		return
	}
	if !d.raw || c.deleteKey(cmd, dst, &d, notify.CodeDel) {
		c.W.Int(0)
	}
}

// cardinality is HLEN and SCARD: the member count of the collection of
// type t at Args[1], 0 for none, from its metadata alone.
func cardinality(c *Ctx, t storage.Type) {
	k, unlock, ok := c.lookupOf(c.Args[1], t, false)
	defer unlock()
	switch {
	case !ok:
	case k.live:
		c.W.Int(int64(k.m.Size))
	default:
		c.W.Int(0)
	}
}

// memberExists is HEXISTS and SISMEMBER: 1 when the collection of type
// t at Args[1] has the member Args[2], else 0.
func memberExists(c *Ctx, t storage.Type) {
	k, unlock, ok := c.lookupOf(c.Args[1], t, false)
	defer unlock()
	if !ok {
		return
	}
	_, found, ok := c.liveField(&k, &k.m, c.Args[2])
	switch {
	case !ok:
	case found:
		c.W.Int(1)
	default:
		c.W.Int(0)
	}
}

// discard drops b after a failed read, unless it is the shared batch of
// EXEC or a pipelined group.
func (c *Ctx) discard(b *storage.Batch) {
	if c.txn == nil {
		b.Discard()
	}
}

// errInconsistent answers a read that finds fewer member records than
// the collection's metadata counts (DEBUG CHECK-VALUES tells more).
const errInconsistent = "ERR collection members missing: the database is inconsistent"

// memberScanScope is the scope of HSCAN and SSCAN cursors of key in ns,
// kept apart from SCAN's in the server's cursor table.
func memberScanScope(ns string, key []byte) string { return ns + "\x00members\x00" + string(key) }

// scanMembers is HSCAN, SSCAN and ZSCAN (Args: name, key, cursor,
// options) of collections of type t, replying with fields and values (a
// sorted set's scores) when withValues is set, with members alone
// otherwise. A collection Redis would hold as a listpack or an intset
// comes whole with cursor 0, as in Redis; a larger one COUNT members at a
// time, in byte order.
func scanMembers(c *Ctx, t storage.Type, withValues bool) {
	cursor, ok := parseCursor(c.Args[2])
	if !ok {
		c.W.Error("ERR invalid cursor")
		return
	}
	key := c.Args[1]
	k, unlock, ok := c.lookupOf(key, t, true)
	defer unlock()
	if !ok {
		return
	}
	if !k.live { // before the options, as in Redis
		c.W.Array(2)
		c.W.BulkString("0")
		c.W.Array(0)
		return
	}
	count, pattern, _, ok := c.scanOptions(3, false)
	if !ok {
		return
	}
	whole := k.m.Flags&storage.FlagHashTable == 0
	var start []byte
	if cursor != 0 && !whole {
		start = c.Env.cursors.resume(memberScanScope(c.ns(), key), cursor)
	}
	var out [][]byte
	examined := int64(0)
	var last []byte
	more := false
	walk := c.fieldsFrom
	if whole && t == storage.TypeZSet {
		walk = c.zsetInOrder // a listpack's order
	}
	if !walk(&k.m, start, func(f, v []byte) bool {
		if !whole && examined == count {
			more = true
			return false
		}
		examined++
		last = append(last[:0], f...)
		if pattern == nil || glob.Match(pattern, f, false) {
			out = append(out, bytes.Clone(f))
			if withValues {
				out = append(out, bytes.Clone(v))
			}
		}
		return true
	}) {
		return
	}
	next := uint64(0)
	if more {
		next = c.Env.cursors.save(memberScanScope(c.ns(), key), append(last, 0))
	}
	c.W.Array(2)
	c.W.BulkString(strconv.FormatUint(next, 10))
	c.W.Array(len(out))
	for _, p := range out {
		c.W.Bulk(p)
	}
}

// maxRandomMembers bounds the negative count of HRANDFIELD and
// SRANDMEMBER, which Redis does not bound: a count of -10^18 would
// otherwise build a reply of that many members in memory.
const maxRandomMembers = 1 << 24

// randomMembers picks members (with their values) of the live collection
// k for HRANDFIELD and SRANDMEMBER, in random order: one without a count
// (hasCount false); up to count distinct ones for a positive count; -count
// with repeats for a negative one. One pass over the members picks them,
// at positions drawn beforehand or as a reservoir, holding only those it
// picks. It replies an error and returns ok=false on a storage error, a
// count below -maxRandomMembers, or members missing.
func (c *Ctx) randomMembers(k *keyState, count int64, hasCount bool) (picked [][2][]byte, ok bool) {
	size := int64(k.m.Size)
	switch {
	case count < -maxRandomMembers:
		c.errorf("ERR count is out of range: Cairn returns at most %d repeated members", int64(maxRandomMembers))
		return nil, false
	case size <= 0:
		c.W.Error(errInconsistent)
		return nil, false
	}
	var draws []int64
	switch {
	case !hasCount:
		draws = []int64{rand.Int64N(size)}
	case count < 0:
		draws = make([]int64, -count)
		for i := range draws {
			draws[i] = rand.Int64N(size)
		}
		slices.Sort(draws)
	}
	reservoir := hasCount && count > 0 && count < size
	pos := int64(0)
	if !c.fields(&k.m, func(f, v []byte) bool {
		defer func() { pos++ }()
		switch {
		case draws != nil:
			if len(draws) > 0 && draws[0] == pos {
				p := [2][]byte{bytes.Clone(f), bytes.Clone(v)}
				for len(draws) > 0 && draws[0] == pos {
					picked = append(picked, p)
					draws = draws[1:]
				}
			}
			return len(draws) > 0
		case !reservoir || int64(len(picked)) < count:
			picked = append(picked, [2][]byte{bytes.Clone(f), bytes.Clone(v)})
		default:
			if j := rand.Int64N(pos + 1); j < count {
				picked[j] = [2][]byte{bytes.Clone(f), bytes.Clone(v)}
			}
		}
		return true
	}) {
		return nil, false
	}
	if len(draws) > 0 || len(picked) == 0 {
		c.W.Error(errInconsistent)
		return nil, false
	}
	rand.Shuffle(len(picked), func(i, j int) { picked[i], picked[j] = picked[j], picked[i] })
	return picked, true
}
