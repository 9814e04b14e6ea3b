package commands

import (
	"bytes"
	"errors"

	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/rdb"
	"github.com/cairnkv/cairn/storage"
)

// DUMP and RESTORE move a key's value between servers in Redis's
// serialization (package rdb): a payload from Redis's DUMP restores in
// Cairn and one from Cairn's in Redis, so MIGRATE and migration tools
// that copy keys with DUMP/RESTORE work in both directions for strings,
// hashes, sets, lists and sorted sets.

func init() {
	register(
		&Spec{Name: "dump", Arity: 2, Flags: FlagReadOnly, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRO|KeyAccess)}, Tips: []string{"nondeterministic_output"}, Group: "generic", Since: "2.6.0", Summary: "Returns a serialized representation of the value stored at a key.", Handler: cmdDump},
		&Spec{Name: "restore", Arity: -4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyOW|KeyUpdate)}, Group: "generic", ACL: []string{"keyspace", "dangerous"}, Since: "2.6.0", Summary: "Creates a key from the serialized representation of a value.", Handler: cmdRestore},
	)
}

func cmdDump(c *Ctx) {
	key := c.Args[1]
	unlock := c.lock(key)
	defer unlock()
	k, ok := c.read(key)
	if !ok {
		return
	}
	c.lookedUp(key, k.live)
	switch {
	case !k.live:
		c.W.NullBulk()
	case k.m.Type == storage.TypeHash:
		var pairs [][2][]byte
		if c.fields(&k.m, func(f, v []byte) bool {
			pairs = append(pairs, [2][]byte{bytes.Clone(f), bytes.Clone(v)})
			return true
		}) {
			c.W.Bulk(rdb.EncodeHash(pairs))
		}
	case k.m.Type == storage.TypeSet:
		if members, ok := c.members(&k.m); ok {
			c.W.Bulk(rdb.EncodeSet(members))
		}
	case k.m.Type == storage.TypeList:
		if elems, ok := c.elements(&k.m, 0, k.m.Size); ok {
			c.W.Bulk(rdb.EncodeList(elems))
		}
	case k.m.Type == storage.TypeZSet:
		if es, ok := c.zends(&k.m, false, -1); ok {
			members := make([]rdb.ZMember, len(es))
			for i, e := range es {
				members[i] = rdb.ZMember{Member: e.member, Score: e.score}
			}
			c.W.Bulk(rdb.EncodeZSet(members))
		}
	case k.m.Type == storage.TypeStream:
		if s, ok := c.dumpStream(&k.m); ok {
			c.W.Bulk(rdb.EncodeStream(s))
		}
	default:
		if c.loadValue(key, &k) {
			c.W.Bulk(rdb.EncodeString(k.m.Value))
		}
	}
}

// cmdRestore follows Redis 7.0's order: options, the existing key, the
// TTL, then the payload. IDLETIME and FREQ are checked and ignored: Cairn
// keeps no access times or frequencies.
func cmdRestore(c *Ctx) {
	var replace, absTTL, idle, freq bool
	for j := 4; j < len(c.Args); j++ {
		more := len(c.Args) - j - 1
		switch kw := keyword(c.Args[j]); {
		case kw == "replace":
			replace = true
		case kw == "absttl":
			absTTL = true
		case kw == "idletime" && more >= 1 && !freq:
			v, ok := c.intArg(j + 1)
			if !ok {
				return
			}
			if v < 0 {
				c.W.Error("ERR Invalid IDLETIME value, must be >= 0")
				return
			}
			idle = true
			j++
		case kw == "freq" && more >= 1 && !idle:
			v, ok := c.intArg(j + 1)
			if !ok {
				return
			}
			if v < 0 || v > 255 {
				c.W.Error("ERR Invalid FREQ value, must be >= 0 and <= 255")
				return
			}
			freq = true
			j++
		default:
			c.W.Error(errSyntax)
			return
		}
	}
	key := c.Args[1]
	unlock := c.lock(key)
	defer unlock()
	var k keyState
	if replace {
		// Redis deletes the old key without looking at its TTL.
		var err error
		if k, err = c.lookupRaw(key); err != nil {
			c.storageError(err)
			return
		}
	} else {
		var ok bool
		if k, ok = c.read(key); !ok {
			return
		}
		if k.live {
			c.W.Error("BUSYKEY Target key name already exists.")
			return
		}
	}
	ttl, ok := c.intArg(2)
	if !ok {
		return
	}
	if ttl < 0 {
		c.W.Error("ERR Invalid TTL value, must be >= 0")
		return
	}
	value, err := rdb.Decode(c.Args[3], c.maxBulk())
	switch {
	case errors.Is(err, rdb.ErrChecksum):
		c.W.Error("ERR DUMP payload version or checksum are wrong")
		return
	case errors.Is(err, rdb.ErrUnsupportedType):
		c.W.Error("ERR Bad data format: Cairn restores strings, hashes, sets, lists and sorted sets only")
		return
	case err != nil:
		c.W.Error("ERR Bad data format")
		return
	}
	if ttl != 0 && !absTTL {
		ttl += c.nowMs() // wraps on overflow as Redis's does: then already expired
	}
	if ttl != 0 && ttl <= c.nowMs() {
		// Already expired: nothing is created; a replaced key is deleted.
		if replace && k.raw && !c.deleteKey(storage.CmdRestore, key, &k, notify.CodeDel) {
			return
		}
		c.W.OK()
		return
	}
	k.live = false // a replaced key is deleted first: the new one publishes "new"
	switch value.Type {
	case rdb.TypeHash:
		if c.restoreHash(key, &k, value.Hash, ttl) {
			c.W.OK()
		}
		return
	case rdb.TypeSet:
		if c.restoreSet(key, &k, value.Set, ttl) {
			c.W.OK()
		}
		return
	case rdb.TypeList:
		m := newList()
		m.ExpireAt = ttl
		b := c.newBatch(storage.TypeList, storage.CmdRestore)
		c.pushElements(b, &m, false, value.List...)
		c.put(b, key, &k, m, notify.CodeRestore)
		if c.commit(b) {
			c.W.OK()
		}
		return
	case rdb.TypeStream:
		if c.restoreStream(key, &k, value.Stream, ttl) {
			c.W.OK()
		}
		return
	case rdb.TypeZSet:
		es := make([]zentry, len(value.ZSet))
		for i, x := range value.ZSet {
			es[i] = zentry{x.Member, x.Score}
		}
		b := c.newBatch(storage.TypeZSet, storage.CmdRestore)
		c.put(b, key, &k, c.newZSet(b, es, ttl), notify.CodeRestore)
		if c.commit(b) {
			c.W.OK()
		}
		return
	}
	if c.putKey(storage.CmdRestore, key, &k, storage.Metadata{Type: storage.TypeString, Value: value.String, ExpireAt: ttl}, notify.CodeRestore) {
		c.W.OK()
	}
}

// restoreHash commits RESTORE's write of a new hash of the field-value
// pairs at key (k: its state, made not live), expiring at ttl (0: never).
// Its encoding follows its contents, as Redis's loading does.
func (c *Ctx) restoreHash(key []byte, k *keyState, pairs [][2][]byte, ttl int64) bool {
	m := storage.Metadata{Type: storage.TypeHash, Version: storage.NewHashID(), ExpireAt: ttl, Size: uint64(len(pairs))}
	b := c.newBatch(storage.TypeHash, storage.CmdRestore)
	for _, p := range pairs {
		v := p[1]
		if v == nil {
			v = []byte{} // an empty value, not a deletion
		}
		b.PutField(c.ns(), m.Version, p[0], v)
		m.Flags = c.grownHash(&m, p[0], v)
	}
	c.put(b, key, k, m, notify.CodeRestore)
	return c.commit(b)
}

// restoreSet commits RESTORE's write of a new set of members at key (k:
// its state, made not live), expiring at ttl (0: never). Its encoding
// follows its members, as Redis's loading does.
func (c *Ctx) restoreSet(key []byte, k *keyState, members [][]byte, ttl int64) bool {
	m := storage.Metadata{Type: storage.TypeSet, Version: storage.NewHashID(), ExpireAt: ttl, Size: uint64(len(members))}
	if !c.setIntset(m.Size, members...) {
		m.Flags |= storage.FlagHashTable
	}
	b := c.newBatch(storage.TypeSet, storage.CmdRestore)
	for _, x := range members {
		b.PutField(c.ns(), m.Version, x, empty)
	}
	c.put(b, key, k, m, notify.CodeRestore)
	return c.commit(b)
}
