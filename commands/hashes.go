package commands

import (
	"bytes"
	"math"
	"strconv"

	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/storage"
)

// Hashes keep each field in a record of its own (collections.go).

func init() {
	h := oneKeyCommand("hash")
	register(
		h("hset", -4, FlagWrite|FlagDenyOOM|FlagFast, KeyRW|KeyUpdate, "2.0.0", "Creates or modifies the value of a field in a hash.", cmdHSet),
		h("hmset", -4, FlagWrite|FlagDenyOOM|FlagFast, KeyRW|KeyUpdate, "2.0.0", "Sets the values of multiple fields.", cmdHMSet),
		h("hsetnx", 4, FlagWrite|FlagDenyOOM|FlagFast, KeyRW|KeyInsert, "2.0.0", "Sets the value of a field in a hash only when the field doesn't exist.", cmdHSetNX),
		h("hget", 3, FlagReadOnly|FlagFast, KeyRO|KeyAccess, "2.0.0", "Returns the value of a field in a hash.", cmdHGet),
		h("hmget", -3, FlagReadOnly|FlagFast, KeyRO|KeyAccess, "2.0.0", "Returns the values of all fields in a hash.", cmdHMGet),
		h("hdel", -3, FlagWrite|FlagFast, KeyRW|KeyDelete, "2.0.0", "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.", cmdHDel),
		h("hlen", 2, FlagReadOnly|FlagFast, KeyRO, "2.0.0", "Returns the number of fields in a hash.", cmdHLen),
		h("hstrlen", 3, FlagReadOnly|FlagFast, KeyRO, "3.2.0", "Returns the length of the value of a field.", cmdHStrLen),
		h("hexists", 3, FlagReadOnly|FlagFast, KeyRO, "2.0.0", "Determines whether a field exists in a hash.", cmdHExists),
		h("hincrby", 4, FlagWrite|FlagDenyOOM|FlagFast, KeyRW|KeyAccess|KeyUpdate, "2.0.0", "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist.", cmdHIncrBy),
		h("hincrbyfloat", 4, FlagWrite|FlagDenyOOM|FlagFast, KeyRW|KeyAccess|KeyUpdate, "2.6.0", "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist.", cmdHIncrByFloat),
		withTips(h("hgetall", 2, FlagReadOnly, KeyRO|KeyAccess, "2.0.0", "Returns all fields and values in a hash.", cmdHGetAll), "nondeterministic_output_order"),
		withTips(h("hkeys", 2, FlagReadOnly, KeyRO|KeyAccess, "2.0.0", "Returns all fields in a hash.", cmdHKeys), "nondeterministic_output_order"),
		withTips(h("hvals", 2, FlagReadOnly, KeyRO|KeyAccess, "2.0.0", "Returns all values in a hash.", cmdHVals), "nondeterministic_output_order"),
		withTips(h("hscan", -3, FlagReadOnly, KeyRO|KeyAccess, "2.8.0", "Iterates over fields and values of a hash.", cmdHScan), "nondeterministic_output"),
		withTips(h("hrandfield", -2, FlagReadOnly, KeyRO|KeyAccess, "6.2.0", "Returns one or more random fields from a hash.", cmdHRandField), "nondeterministic_output"),
	)
}

// Redis keeps a hash as a listpack while it has at most
// hash-max-listpack-entries fields, none longer than
// hash-max-listpack-value bytes, nor a value; past either it converts the
// hash to a hash table for good (storage.FlagHashTable), which OBJECT
// ENCODING reports and which decides whether HSCAN returns the whole hash
// at once. Cairn's storage is the same either way.

// hashEncoding returns the OBJECT ENCODING of the hash m.
func hashEncoding(m *storage.Metadata) string {
	if m.Flags&storage.FlagHashTable != 0 {
		return "hashtable"
	}
	return "listpack"
}

// grownHash returns m's flags after a write of a field f with value v
// that leaves m.Size fields: a hash table once a listpack would be too
// long (hash-max-listpack-entries and -value).
func (c *Ctx) grownHash(m *storage.Metadata, f, v []byte) byte {
	s := c.Env.settings()
	maxLen := s.hashMaxListpackValue.Int()
	if int64(len(f)) > maxLen || int64(len(v)) > maxLen || int64(m.Size) > s.hashMaxListpackEntries.Int() {
		return m.Flags | storage.FlagHashTable
	}
	return m.Flags
}

func cmdHSet(c *Ctx) {
	if added, ok := hsetGeneric(c, storage.CmdHSet); ok {
		c.W.Int(added)
	}
}

func cmdHMSet(c *Ctx) {
	if _, ok := hsetGeneric(c, storage.CmdHMSet); ok {
		c.W.OK()
	}
}

// hsetGeneric sets the field-value pairs of HSET and HMSET and returns how
// many fields it added.
func hsetGeneric(c *Ctx, cmd storage.Command) (int64, bool) {
	if len(c.Args)%2 == 1 {
		c.wrongArity()
		return 0, false
	}
	key := c.Args[1]
	k, m, unlock, ok := c.lockedOf(key, storage.TypeHash)
	defer unlock()
	if !ok {
		return 0, false
	}
	fields := make([][]byte, 0, len(c.Args)/2)
	for i := 2; i < len(c.Args); i += 2 {
		fields = append(fields, c.Args[i])
	}
	added, ok := c.membersWhere(&k, &m, fields, false)
	if !ok {
		return 0, false
	}
	m.Size += uint64(len(added))
	b := c.newBatch(storage.TypeHash, cmd)
	for i := 2; i < len(c.Args); i += 2 {
		b.PutField(c.ns(), m.Version, c.Args[i], c.Args[i+1])
		m.Flags = c.grownHash(&m, c.Args[i], c.Args[i+1])
	}
	c.put(b, key, &k, m, notify.CodeHSet)
	return int64(len(added)), c.commit(b)
}

func cmdHSetNX(c *Ctx) {
	key, f, v := c.Args[1], c.Args[2], c.Args[3]
	k, m, _, found, unlock, ok := c.lockedField(key, f)
	defer unlock()
	switch {
	case !ok:
	case found:
		c.W.Int(0)
	case c.putField(storage.CmdHSetNX, key, &k, m, f, v, false, notify.CodeHSet):
		c.W.Int(1)
	}
}

func cmdHGet(c *Ctx) {
	k, unlock, ok := c.lookupOf(c.Args[1], storage.TypeHash, false)
	defer unlock()
	if !ok {
		return
	}
	if !k.live {
		c.W.NullBulk()
		return
	}
	v, found, ok := c.field(&k.m, c.Args[2])
	switch {
	case !ok:
	case found:
		c.W.Bulk(v)
	default:
		c.W.NullBulk()
	}
}

func cmdHMGet(c *Ctx) {
	k, unlock, ok := c.lookupOf(c.Args[1], storage.TypeHash, true)
	defer unlock()
	if !ok {
		return
	}
	vals := make([][]byte, len(c.Args)-2)
	if k.live {
		for i, f := range c.Args[2:] {
			v, found, ok := c.field(&k.m, f)
			if !ok {
				return
			}
			if found {
				vals[i] = v
			}
		}
	}
	c.W.Array(len(vals))
	for _, v := range vals {
		if v == nil {
			c.W.NullBulk()
		} else {
			c.W.Bulk(v)
		}
	}
}

func cmdHDel(c *Ctx) { removeCommand(c, storage.TypeHash, storage.CmdHDel, notify.CodeHDel) }

func cmdHLen(c *Ctx) { cardinality(c, storage.TypeHash) }

func cmdHStrLen(c *Ctx) {
	k, unlock, ok := c.lookupOf(c.Args[1], storage.TypeHash, false)
	defer unlock()
	if !ok {
		return
	}
	v, _, ok := c.liveField(&k, &k.m, c.Args[2])
	if ok {
		c.W.Int(int64(len(v)))
	}
}

func cmdHExists(c *Ctx) { memberExists(c, storage.TypeHash) }

func cmdHIncrBy(c *Ctx) {
	key, f := c.Args[1], c.Args[2]
	incr, ok := c.intArg(3)
	if !ok {
		return
	}
	k, m, v, found, unlock, ok := c.lockedField(key, f)
	defer unlock()
	if !ok {
		return
	}
	cur := int64(0)
	if found {
		if cur, ok = parseInt(v); !ok {
			c.W.Error("ERR hash value is not an integer")
			return
		}
	}
	if (incr < 0 && cur < 0 && incr < math.MinInt64-cur) || (incr > 0 && cur > 0 && incr > math.MaxInt64-cur) {
		c.W.Error("ERR increment or decrement would overflow")
		return
	}
	sum := cur + incr
	if c.putField(storage.CmdHIncrBy, key, &k, m, f, strconv.AppendInt(nil, sum, 10), found, notify.CodeHIncrBy) {
		c.W.Int(sum)
	}
}

func cmdHIncrByFloat(c *Ctx) {
	key, f := c.Args[1], c.Args[2]
	incr, ok := parseLongDouble(c.Args[3])
	if !ok {
		c.W.Error(errNotFloat)
		return
	}
	if incr.IsInf() {
		c.W.Error("ERR value is NaN or Infinity")
		return
	}
	k, m, v, found, unlock, ok := c.lockedField(key, f)
	defer unlock()
	if !ok {
		return
	}
	cur := newLongDouble()
	if found {
		if cur, ok = parseLongDouble(v); !ok {
			c.W.Error("ERR hash value is not a float")
			return
		}
	}
	sum, ok := addLongDouble(cur, incr)
	if !ok {
		c.W.Error("ERR increment would produce NaN or Infinity")
		return
	}
	v = formatLongDouble(sum)
	if c.putField(storage.CmdHIncrByFloat, key, &k, m, f, v, found, notify.CodeHIncrByFloat) {
		c.W.Bulk(v)
	}
}

// lockedField takes the lock of the hash key for a write of its field f
// and returns the key's state, the metadata to write (lockedOf) and the
// field's value, if it has one. On WRONGTYPE or a storage error it
// replies and returns ok=false; unlock is to be deferred either way.
func (c *Ctx) lockedField(key, f []byte) (k keyState, m storage.Metadata, v []byte, found bool, unlock func(), ok bool) {
	if k, m, unlock, ok = c.lockedOf(key, storage.TypeHash); ok {
		v, found, ok = c.liveField(&k, &m, f)
	}
	return k, m, v, found, unlock, ok
}

// putField commits cmd's write of field f of the hash key (k: its state;
// m: its metadata, a new hash's if none) as v, with the event code;
// existed tells whether the field was there.
func (c *Ctx) putField(cmd storage.Command, key []byte, k *keyState, m storage.Metadata, f, v []byte, existed bool, code notify.Code) bool {
	if !existed {
		m.Size++
	}
	m.Flags = c.grownHash(&m, f, v)
	b := c.newBatch(storage.TypeHash, cmd)
	b.PutField(c.ns(), m.Version, f, v)
	c.put(b, key, k, m, code)
	return c.commit(b)
}

func cmdHGetAll(c *Ctx) { replyHash(c, true, true) }
func cmdHKeys(c *Ctx)   { replyHash(c, true, false) }
func cmdHVals(c *Ctx)   { replyHash(c, false, true) }

// replyHash replies with the hash's fields, values or both (a map in
// RESP3), in field order.
func replyHash(c *Ctx, fields, values bool) {
	k, unlock, ok := c.lookupOf(c.Args[1], storage.TypeHash, true)
	defer unlock()
	if !ok {
		return
	}
	var pairs [][]byte
	if k.live {
		pairs = make([][]byte, 0, 2*k.m.Size)
		if !c.fields(&k.m, func(f, v []byte) bool {
			pairs = append(pairs, bytes.Clone(f), bytes.Clone(v))
			return true
		}) {
			return
		}
	}
	n := len(pairs) / 2
	switch {
	case fields && values:
		c.W.Map(n)
	default:
		c.W.Array(n)
	}
	for i := 0; i < len(pairs); i += 2 {
		if fields {
			c.W.Bulk(pairs[i])
		}
		if values {
			c.W.Bulk(pairs[i+1])
		}
	}
}

// cmdHRandField follows Redis 7.0: without a count, one field (or a
// null); with a positive count, that many distinct fields at most; with a
// negative one, that many fields, repeats allowed (randomMembers).
func cmdHScan(c *Ctx) { scanMembers(c, storage.TypeHash, true) }

func cmdHRandField(c *Ctx) { randomFieldsCommand(c, storage.TypeHash, "withvalues") }

// randomFieldsCommand is HRANDFIELD and ZRANDMEMBER (Args: name, key
// [count [with]]) of collections of type t, whose values (a sorted set's
// scores) the option with adds, following Redis 7.0.
func randomFieldsCommand(c *Ctx, t storage.Type, with string) {
	withValues, hasCount := false, len(c.Args) >= 3
	var count int64
	if hasCount {
		n, ok := parseInt(c.Args[2])
		if !ok {
			c.W.Error(errNotInt)
			return
		}
		if n == math.MinInt64 {
			c.errorf("ERR value is out of range, value must between %d and %d", -math.MaxInt64, int64(math.MaxInt64))
			return
		}
		count = n
		if len(c.Args) > 4 || (len(c.Args) == 4 && keyword(c.Args[3]) != with) {
			c.W.Error(errSyntax)
			return
		}
		if len(c.Args) == 4 {
			withValues = true
			if count < -math.MaxInt64/2 || count > math.MaxInt64/2 {
				c.W.Error("ERR value is out of range")
				return
			}
		}
	}
	k, unlock, ok := c.lookupOf(c.Args[1], t, true)
	defer unlock()
	if !ok {
		return
	}
	if !k.live {
		if hasCount {
			c.W.Array(0)
		} else {
			c.W.NullBulk()
		}
		return
	}
	if hasCount && count == 0 {
		c.W.Array(0)
		return
	}
	picked, ok := c.randomMembers(&k, count, hasCount)
	if !ok {
		return
	}
	if !hasCount {
		c.W.Bulk(picked[0][0])
		return
	}
	c.replyFieldPairs(picked, withValues, t == storage.TypeZSet)
}

// replyFieldPairs replies with the fields of pairs, and with withValues
// their values: flat in RESP2, as pairs in RESP3, as Redis's HRANDFIELD;
// with scores, the values are a sorted set's scores (formatScore), which
// RESP3 sends as doubles.
func (c *Ctx) replyFieldPairs(pairs [][2][]byte, withValues, scores bool) {
	switch {
	case !withValues:
		c.W.Array(len(pairs))
	case c.Client.Proto() >= 3:
		c.W.Array(len(pairs))
	default:
		c.W.Array(2 * len(pairs))
	}
	for _, p := range pairs {
		if withValues && c.Client.Proto() >= 3 {
			c.W.Array(2)
		}
		c.W.Bulk(p[0])
		switch {
		case withValues && scores:
			c.W.Double(parseFormattedScore(p[1]))
		case withValues:
			c.W.Bulk(p[1])
		}
	}
}
