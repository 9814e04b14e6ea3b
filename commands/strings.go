package commands

import (
	"math"

	"github.com/cairnkv/cairn/notify"

	"github.com/cairnkv/cairn/storage"
)

func init() {
	register(
		&Spec{Name: "get", Arity: 2, Flags: FlagReadOnly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRO|KeyAccess)}, Group: "string", Since: "1.0.0", Summary: "Returns the string value of a key.", Handler: cmdGet},
		&Spec{Name: "set", Arity: -3, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRW|KeyAccess|KeyUpdate|KeyVariableFlags).Note("RW and ACCESS due to the optional `GET` argument")}, KeyFlagsOf: setKeyFlags, Group: "string", Since: "1.0.0", Summary: "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", Handler: cmdSet},
		&Spec{Name: "setnx", Arity: 3, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyOW|KeyInsert)}, Group: "string", Since: "1.0.0", Summary: "Set the string value of a key only when the key doesn't exist.", Handler: cmdSetNX},
		&Spec{Name: "setex", Arity: 4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyOW|KeyUpdate)}, Group: "string", Since: "2.0.0", Summary: "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.", Handler: cmdSetEX},
		&Spec{Name: "psetex", Arity: 4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyOW|KeyUpdate)}, Group: "string", Since: "2.6.0", Summary: "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.", Handler: cmdPSetEX},
		&Spec{Name: "mget", Arity: -2, Flags: FlagReadOnly | FlagFast, FirstKey: 1, LastKey: -1, Step: 1, KeySpecs: []KeySpec{KeyRange(1, -1, 1, KeyRO|KeyAccess)}, Tips: []string{"request_policy:multi_shard"}, Group: "string", Since: "1.0.0", Summary: "Atomically returns the string values of one or more keys.", Handler: cmdMGet},
		&Spec{Name: "mset", Arity: -3, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: -1, Step: 2, KeySpecs: []KeySpec{KeyRange(1, -1, 2, KeyOW|KeyUpdate)}, Tips: []string{"request_policy:multi_shard", "response_policy:all_succeeded"}, Group: "string", Since: "1.0.1", Summary: "Atomically creates or modifies the string values of one or more keys.", Handler: cmdMSet},
		&Spec{Name: "msetnx", Arity: -3, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: -1, Step: 2, KeySpecs: []KeySpec{KeyRange(1, -1, 2, KeyOW|KeyInsert)}, Tips: []string{"request_policy:multi_shard", "response_policy:agg_min"}, Group: "string", Since: "1.0.1", Summary: "Atomically modifies the string values of one or more keys only when all keys don't exist.", Handler: cmdMSetNX},
		&Spec{Name: "getset", Arity: 3, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRW|KeyAccess|KeyUpdate)}, Group: "string", Since: "1.0.0", Summary: "Returns the previous string value of a key after setting it to a new value.", Handler: cmdGetSet},
		&Spec{Name: "getdel", Arity: 2, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRW|KeyAccess|KeyDelete)}, Group: "string", Since: "6.2.0", Summary: "Returns the string value of a key after deleting the key.", Handler: cmdGetDel},
		&Spec{Name: "getex", Arity: -2, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRW|KeyAccess|KeyUpdate).Note("RW and UPDATE because it changes the TTL")}, Group: "string", Since: "6.2.0", Summary: "Returns the string value of a key after setting its expiration time.", Handler: cmdGetEx},
		&Spec{Name: "append", Arity: 3, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRW|KeyInsert)}, Group: "string", Since: "2.0.0", Summary: "Appends a string to the value of a key. Creates the key if it doesn't exist.", Handler: cmdAppend},
		&Spec{Name: "strlen", Arity: 2, Flags: FlagReadOnly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRO)}, Group: "string", Since: "2.2.0", Summary: "Returns the length of a string value.", Handler: cmdStrlen},
		&Spec{Name: "setrange", Arity: 4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRW|KeyUpdate)}, Group: "string", Since: "2.2.0", Summary: "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.", Handler: cmdSetRange},
		&Spec{Name: "lcs", Arity: -3, Flags: FlagReadOnly, FirstKey: 1, LastKey: 2, Step: 1, KeySpecs: []KeySpec{KeyRange(1, 1, 1, KeyRO|KeyAccess)}, Group: "string", Since: "7.0.0", Summary: "Finds the longest common substring.", Handler: cmdLCS},
		&Spec{Name: "getrange", Arity: 4, Flags: FlagReadOnly, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRO|KeyAccess)}, Group: "string", Since: "2.4.0", Summary: "Returns a substring of the string stored at a key.", Handler: cmdGetRange},
		&Spec{Name: "substr", Arity: 4, Flags: FlagReadOnly, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRO|KeyAccess)}, Group: "string", Since: "1.0.0", Summary: "Returns a substring from a string value.", Handler: cmdGetRange},
		&Spec{Name: "incr", Arity: 2, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRW|KeyAccess|KeyUpdate)}, Group: "string", Since: "1.0.0", Summary: "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", Handler: cmdIncr},
		&Spec{Name: "decr", Arity: 2, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRW|KeyAccess|KeyUpdate)}, Group: "string", Since: "1.0.0", Summary: "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", Handler: cmdDecr},
		&Spec{Name: "incrby", Arity: 3, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRW|KeyAccess|KeyUpdate)}, Group: "string", Since: "1.0.0", Summary: "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.", Handler: cmdIncrBy},
		&Spec{Name: "decrby", Arity: 3, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRW|KeyAccess|KeyUpdate)}, Group: "string", Since: "1.0.0", Summary: "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.", Handler: cmdDecrBy},
		&Spec{Name: "incrbyfloat", Arity: 3, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRW|KeyAccess|KeyUpdate)}, Group: "string", Since: "2.6.0", Summary: "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.", Handler: cmdIncrByFloat},
	)
}

func cmdGet(c *Ctx) {
	key := c.Args[1]
	k, unlock, ok := c.readStringMetaForPart(key)
	defer unlock()
	if !ok {
		return
	}
	if !k.live {
		c.W.NullBulk()
		return
	}
	c.replyRange(key, &k, 0, stringLen(&k.m))
}

// setOptions are the parsed options of SET and GETEX.
type setOptions struct {
	nx, xx, get, keepTTL, persist bool
	unit                          string // "ex", "px", "exat", "pxat" or ""
	expireArg                     []byte
}

// parseSetOptions parses args[from:] the way Redis 7.0 parses SET's and
// GETEX's options; forGetEx selects GETEX's option set. It replies with a
// syntax error and returns false on a bad option.
func (c *Ctx) parseSetOptions(from int, forGetEx bool) (setOptions, bool) {
	var o setOptions
	args := c.Args
	for j := from; j < len(args); j++ {
		opt := keyword(args[j])
		hasNext := j+1 < len(args)
		noExpire := o.unit == ""
		switch {
		case opt == "nx" && !o.xx && !forGetEx:
			o.nx = true
		case opt == "xx" && !o.nx && !forGetEx:
			o.xx = true
		case opt == "get" && !forGetEx:
			o.get = true
		case opt == "keepttl" && !o.persist && noExpire && !forGetEx:
			o.keepTTL = true
		case opt == "persist" && forGetEx && noExpire && !o.keepTTL:
			o.persist = true
		case (opt == "ex" || opt == "px" || opt == "exat" || opt == "pxat") && hasNext &&
			!o.keepTTL && !o.persist && (o.unit == "" || o.unit == opt):
			o.unit = opt
			o.expireArg = args[j+1]
			j++
		default:
			c.W.Error(errSyntax)
			return o, false
		}
	}
	return o, true
}

// expireAt converts an expire argument to absolute milliseconds with Redis
// 7.0's validation; it replies and returns false on error.
func (c *Ctx) expireAt(unit string, arg []byte) (int64, bool) {
	n, ok := parseInt(arg)
	if !ok {
		c.W.Error(errNotInt)
		return 0, false
	}
	seconds := unit == "ex" || unit == "exat"
	if n <= 0 || (seconds && n > math.MaxInt64/1000) {
		c.errorf("ERR invalid expire time in '%s' command", c.Spec.FullName())
		return 0, false
	}
	if seconds {
		n *= 1000
	}
	if unit == "ex" || unit == "px" {
		n += c.nowMs()
	}
	if n <= 0 {
		c.errorf("ERR invalid expire time in '%s' command", c.Spec.FullName())
		return 0, false
	}
	return n, true
}

func cmdSet(c *Ctx) {
	o, ok := c.parseSetOptions(3, false)
	if !ok {
		return
	}
	var expire int64
	if o.unit != "" {
		if expire, ok = c.expireAt(o.unit, o.expireArg); !ok {
			return
		}
	}
	key := c.Args[1]
	unlock := c.lock(key)
	defer unlock()
	k, ok := c.read(key)
	if !ok {
		return
	}
	if o.get {
		c.lookedUp(key, k.live) // SET ... GET reads the old value first
	}
	if o.get && k.live && k.m.Type != storage.TypeString {
		c.W.Error(errWrongType)
		return
	}
	mark := -1
	if o.get {
		if mark, ok = c.replyOldValue(key, &k); !ok {
			return
		}
	}
	if (o.nx && k.live) || (o.xx && !k.live) {
		if !o.get {
			c.W.NullBulk()
		}
		return
	}
	m := storage.Metadata{Type: storage.TypeString, Value: c.Args[2], ExpireAt: expire}
	if o.keepTTL && k.live {
		m.ExpireAt = k.m.ExpireAt
	}
	codes := []notify.Code{notify.CodeSet}
	if o.unit != "" {
		codes = append(codes, notify.CodeExpire)
	}
	b := c.newBatch(m.Type, storage.CmdSet)
	c.put(b, key, &k, m, codes...)
	if c.commitReplying(b, mark) && !o.get {
		c.W.OK()
	}
}

// replyOldValue replies with the string value key holds (k: its state as
// read under the key's lock), or a null when there is none: the reply of
// GETSET, GETDEL and SET ... GET, written before their write so that an
// out-of-line value is read straight into the reply (replyRange), one
// copy of it, while it is still there (inside a transaction too, whose
// batch the write changes). It returns where the reply starts, for
// commitReplying, and false when the read failed (the reply is then the
// error).
func (c *Ctx) replyOldValue(key []byte, k *keyState) (mark int, ok bool) {
	mark, errs := c.W.Len(), c.W.Errors
	if !k.live {
		c.W.NullBulk()
		return mark, true
	}
	c.replyRange(key, k, 0, stringLen(&k.m))
	return mark, c.W.Errors == errs
}

// putKey commits cmd's write of m as key's metadata (k is the key's state
// as read under its lock) with the events codes (put adds "new"), and
// reports success. Single-key writes go through it or deleteKey.
func (c *Ctx) putKey(cmd storage.Command, key []byte, k *keyState, m storage.Metadata, codes ...notify.Code) bool {
	b := c.newBatch(m.Type, cmd)
	c.put(b, key, k, m, codes...)
	return c.commit(b)
}

// deleteKey commits cmd's deletion of the live key with the events codes
// and reports success.
func (c *Ctx) deleteKey(cmd storage.Command, key []byte, k *keyState, codes ...notify.Code) bool {
	b := c.newBatch(k.m.Type, cmd)
	c.del(b, key, k, codes...)
	return c.commit(b)
}

func cmdSetNX(c *Ctx) {
	key := c.Args[1]
	unlock := c.lock(key)
	defer unlock()
	k, ok := c.read(key)
	if !ok {
		return
	}
	if k.live {
		c.W.Int(0)
		return
	}
	if c.putKey(storage.CmdSetNX, key, &k, storage.Metadata{Type: storage.TypeString, Value: c.Args[2]}, notify.CodeSet) {
		c.W.Int(1)
	}
}

func cmdSetEX(c *Ctx)  { setWithExpire(c, "ex", storage.CmdSetEX) }
func cmdPSetEX(c *Ctx) { setWithExpire(c, "px", storage.CmdPSetEX) }

func setWithExpire(c *Ctx, unit string, cmd storage.Command) {
	expire, ok := c.expireAt(unit, c.Args[2])
	if !ok {
		return
	}
	key := c.Args[1]
	unlock := c.lock(key)
	defer unlock()
	k, ok := c.read(key)
	if !ok {
		return
	}
	if c.putKey(cmd, key, &k, storage.Metadata{Type: storage.TypeString, Value: c.Args[3], ExpireAt: expire}, notify.CodeSet, notify.CodeExpire) {
		c.W.OK()
	}
}

// cmdMGet reads its keys under their locks, so that it sees all or none
// of a transaction's or a script's writes to them (they commit under
// those locks, and a replica applies a batch under every lock). An
// out-of-line value is read straight into the reply, as GET reads it.
func cmdMGet(c *Ctx) {
	defer c.lock(c.Args[1:]...)()
	c.W.Array(len(c.Args) - 1)
	for _, key := range c.Args[1:] {
		k, err := c.lookup(key)
		if err == nil {
			c.lookedUp(key, k.live)
			if k.live && k.m.Type == storage.TypeString {
				if err = c.bulkRange(key, &k, 0, stringLen(&k.m)); err == nil {
					continue
				}
			}
		}
		if err != nil {
			c.Env.Log.Error("storage error", "command", "mget", "error", err)
		}
		c.W.NullBulk()
	}
}

func cmdMSet(c *Ctx)   { msetGeneric(c, false) }
func cmdMSetNX(c *Ctx) { msetGeneric(c, true) }

func msetGeneric(c *Ctx, nx bool) {
	if len(c.Args)%2 == 0 {
		c.wrongArity()
		return
	}
	keys := c.Spec.Keys(c.Args)
	unlock := c.lock(keys...)
	defer unlock()
	states := make([]keyState, len(keys))
	for i, key := range keys {
		k, ok := c.read(key)
		if !ok {
			return
		}
		if nx && k.live {
			c.W.Int(0)
			return
		}
		states[i] = k
	}
	cmd := storage.CmdMSet
	if nx {
		cmd = storage.CmdMSetNX
	}
	b := c.newBatch(storage.TypeString, cmd)
	// The pairs are written in turn, as Redis sets them one by one: a key
	// given twice is written twice (the later record wins) and publishes
	// its events in argument order, "new" only the first time.
	var written map[string]keyState
	for i, key := range keys {
		k := states[i]
		if prev, ok := written[string(key)]; ok {
			k = prev
		}
		m := c.put(b, key, &k, storage.Metadata{Type: storage.TypeString, Value: c.Args[2+2*i]}, notify.CodeSet)
		if i < len(keys)-1 {
			if written == nil {
				written = map[string]keyState{}
			}
			written[string(key)] = keyState{m: m, raw: true, live: true}
		}
	}
	if !c.commit(b) {
		return
	}
	if nx {
		c.W.Int(1)
	} else {
		c.W.OK()
	}
}

func cmdGetSet(c *Ctx) {
	key := c.Args[1]
	unlock := c.lock(key)
	defer unlock()
	k, ok := c.lookupStringMeta(key)
	if !ok {
		return
	}
	mark, ok := c.replyOldValue(key, &k)
	if !ok {
		return
	}
	b := c.newBatch(storage.TypeString, storage.CmdGetSet)
	c.put(b, key, &k, storage.Metadata{Type: storage.TypeString, Value: c.Args[2]}, notify.CodeSet)
	c.commitReplying(b, mark)
}

func cmdGetDel(c *Ctx) {
	key := c.Args[1]
	unlock := c.lock(key)
	defer unlock()
	k, ok := c.lookupStringMeta(key)
	if !ok {
		return
	}
	if !k.live {
		c.W.NullBulk()
		return
	}
	mark, ok := c.replyOldValue(key, &k)
	if !ok {
		return
	}
	b := c.newBatch(k.m.Type, storage.CmdGetDel)
	c.del(b, key, &k, notify.CodeDel)
	c.commitReplying(b, mark)
}

func cmdGetEx(c *Ctx) {
	o, ok := c.parseSetOptions(2, true)
	if !ok {
		return
	}
	key := c.Args[1]
	unlock := c.lock(key)
	defer unlock()
	k, ok := c.lookupStringMeta(key)
	if !ok {
		return
	}
	if !k.live {
		c.W.NullBulk()
		return
	}
	// Redis validates the time only once it has found the key: GETEX on
	// a missing key replies nil even to "EX 0".
	var expire int64
	if o.unit != "" {
		if expire, ok = c.expireAt(o.unit, o.expireArg); !ok {
			return
		}
	}
	switch {
	case o.unit != "" && expire <= c.nowMs():
		// The reply is the value the deletion drops: read it first.
		if !c.loadValue(key, &k) || !c.deleteKey(storage.CmdGetEx, key, &k, notify.CodeDel) {
			return
		}
	case o.unit != "" || (o.persist && k.m.ExpireAt != 0):
		m := k.m // an out-of-line value stays as it is
		m.ExpireAt = expire
		code := notify.CodeExpire
		if o.persist {
			code = notify.CodePersist
		}
		if !c.putKey(storage.CmdGetEx, key, &k, m, code) {
			return
		}
	}
	c.replyRange(key, &k, 0, stringLen(&k.m))
}

// maxBulk returns proto-max-bulk-len, the largest string value allowed.
func (c *Ctx) maxBulk() int64 { return c.Env.settings().protoMaxBulkLen.Int() }

// lockedString takes key's lock, released by the returned func (which
// the caller defers, whatever ok is), and reads the key for a
// read-modify-write of its string value: m is its metadata, or a new
// string's when the key is missing. It replies and returns ok=false when
// the key cannot be read.
func (c *Ctx) lockedString(key []byte) (k keyState, m storage.Metadata, unlock func(), ok bool) {
	if k, m, unlock, ok = c.lockedStringMeta(key); ok {
		ok = c.loadValue(key, &k)
		m.Value = k.m.Value
	}
	return k, m, unlock, ok
}

// lockedStringMeta is lockedString without loading an out-of-line value
// (for a write of part of it, putRange).
func (c *Ctx) lockedStringMeta(key []byte) (k keyState, m storage.Metadata, unlock func(), ok bool) {
	unlock = c.lock(key)
	if k, ok = c.readStringMeta(key); !ok {
		return k, m, unlock, false
	}
	m = storage.Metadata{Type: storage.TypeString}
	if k.live {
		m = k.m
	}
	return k, m, unlock, true
}

// editString commits cmd's write of data at offset off of the string key
// (k, m: from lockedStringMeta), which grows to n bytes, with the events
// codes: by putRange when the result is kept in chunks, else by rewriting
// the loaded value. A live value is changed in place (raw encoding).
func (c *Ctx) editString(cmd storage.Command, key []byte, k *keyState, m storage.Metadata, off int64, data []byte, n int64, codes ...notify.Code) bool {
	if k.live {
		m.Flags = withEncoding(m.Flags, storage.FlagRawEncoding)
	}
	if c.chunked(n) {
		return c.putRange(cmd, key, k, m, off, data, codes...)
	}
	if !c.loadValue(key, k) {
		return false
	}
	var old []byte
	if k.live {
		old = k.m.Value
	}
	m.Value = grownCopy(old, n)
	copy(m.Value[off:], data)
	return c.putKey(cmd, key, k, m, codes...)
}

func cmdAppend(c *Ctx) {
	key := c.Args[1]
	k, m, unlock, ok := c.lockedStringMeta(key)
	defer unlock()
	if !ok {
		return
	}
	n := int64(0)
	if k.live {
		n = stringLen(&k.m)
	}
	if n+int64(len(c.Args[2])) > c.maxBulk() {
		c.W.Error(errTooBig)
		return
	}
	if c.editString(storage.CmdAppend, key, &k, m, n, c.Args[2], n+int64(len(c.Args[2])), notify.CodeAppend) {
		c.W.Int(n + int64(len(c.Args[2])))
	}
}

func cmdStrlen(c *Ctx) {
	// The length of an out-of-line value is in its metadata: no need to
	// read the value.
	k, ok := c.lookupStringMeta(c.Args[1])
	if !ok {
		return
	}
	if !k.live {
		c.W.Int(0)
		return
	}
	c.W.Int(stringLen(&k.m))
}

func cmdSetRange(c *Ctx) {
	offset, ok := c.intArg(2)
	if !ok {
		return
	}
	if offset < 0 {
		c.W.Error("ERR offset is out of range")
		return
	}
	val := c.Args[3]
	key := c.Args[1]
	k, m, unlock, ok := c.lockedStringMeta(key)
	defer unlock()
	if !ok {
		return
	}
	n := int64(0)
	if k.live {
		n = stringLen(&k.m)
	}
	if len(val) == 0 {
		c.W.Int(n)
		return
	}
	if offset > c.maxBulk()-int64(len(val)) { // offset+len, without overflow
		c.W.Error(errTooBig)
		return
	}
	n = max(n, offset+int64(len(val)))
	m.Flags = withEncoding(m.Flags, storage.FlagRawEncoding) // a new key's too
	if c.editString(storage.CmdSetRange, key, &k, m, offset, val, n, notify.CodeSetRange) {
		c.W.Int(n)
	}
}

// clampRange resolves Redis's inclusive range [start, end] over n items:
// a negative index counts from the end, and both are then clamped to
// [0, n-1]. The range is empty when start > end afterwards.
func clampRange(n, start, end int64) (int64, int64) {
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	return max(start, 0), min(max(end, 0), n-1)
}

func cmdGetRange(c *Ctx) {
	start, ok := parseInt(c.Args[2])
	end, ok2 := parseInt(c.Args[3])
	if !ok || !ok2 {
		c.W.Error(errNotInt)
		return
	}
	// Of an out-of-line value only the range is read.
	key := c.Args[1]
	k, unlock, ok := c.readStringMetaForPart(key)
	defer unlock()
	if !ok {
		return
	}
	n := int64(0)
	if k.live {
		n = stringLen(&k.m)
	}
	if start < 0 && end < 0 && start > end {
		c.W.BulkString("")
		return
	}
	start, end = clampRange(n, start, end)
	if start > end {
		c.W.BulkString("")
		return
	}
	c.replyRange(key, &k, start, end+1)
}

func cmdIncr(c *Ctx) { incrBy(c, 1, storage.CmdIncr) }
func cmdDecr(c *Ctx) { incrBy(c, -1, storage.CmdDecr) }

func cmdIncrBy(c *Ctx) {
	if n, ok := c.intArg(2); ok {
		incrBy(c, n, storage.CmdIncrBy)
	}
}

func cmdDecrBy(c *Ctx) {
	n, ok := c.intArg(2)
	if !ok {
		return
	}
	if n == math.MinInt64 {
		c.W.Error("ERR decrement would overflow")
		return
	}
	incrBy(c, -n, storage.CmdDecrBy)
}

func incrBy(c *Ctx, delta int64, cmd storage.Command) {
	key := c.Args[1]
	k, m, unlock, ok := c.lockedString(key)
	defer unlock()
	if !ok {
		return
	}
	var cur int64
	if k.live {
		if cur, ok = parseInt(k.m.Value); !ok {
			c.W.Error(errNotInt)
			return
		}
	}
	if (delta < 0 && cur < 0 && delta < math.MinInt64-cur) || (delta > 0 && cur > 0 && delta > math.MaxInt64-cur) {
		c.W.Error(errOverflow)
		return
	}
	cur += delta
	m.Value = appendInt(nil, cur)
	m.Flags = withEncoding(m.Flags, 0)
	if c.putKey(cmd, key, &k, m, notify.CodeIncrBy) {
		c.W.Int(cur)
	}
}

func cmdIncrByFloat(c *Ctx) {
	key := c.Args[1]
	// Redis checks the key's type, then its value, then the increment.
	k, m, unlock, ok := c.lockedString(key)
	defer unlock()
	if !ok {
		return
	}
	cur := newLongDouble()
	if k.live {
		if cur, ok = parseLongDouble(k.m.Value); !ok {
			c.W.Error(errNotFloat)
			return
		}
	}
	incr, ok := parseLongDouble(c.Args[2])
	if !ok {
		c.W.Error(errNotFloat)
		return
	}
	sum, ok := addLongDouble(cur, incr)
	if !ok {
		c.W.Error("ERR increment would produce NaN or Infinity")
		return
	}
	m.Value = formatLongDouble(sum)
	m.Flags = withEncoding(m.Flags, storage.FlagPlainEncoding)
	if c.putKey(storage.CmdIncrByFloat, key, &k, m, notify.CodeIncrByFloat) {
		c.W.Bulk(m.Value)
	}
}

// cmdLCS finds the longest common subsequence of two string values, as
// Redis 7.0 does: the same table, the same walk back through it and so
// the same subsequence and IDX ranges (a match that does not continue the
// current range closes it without starting a new one, as in Redis). Both
// keys are read before the options are parsed; a missing key is "".
func cmdLCS(c *Ctx) {
	var vals [2][]byte
	var ks [2]keyState
	for i, key := range c.Args[1:3] {
		k, ok := c.read(key)
		if !ok {
			return
		}
		c.lookedUp(key, k.live)
		ks[i] = k
	}
	for i, key := range c.Args[1:3] {
		if ks[i].live && ks[i].m.Type != storage.TypeString {
			c.W.Error("ERR The specified keys must contain string values")
			return
		}
		if !c.loadValue(key, &ks[i]) {
			return
		}
		vals[i] = ks[i].m.Value
	}
	var getLen, getIdx, withMatchLen bool
	minMatchLen := int64(0)
	for j := 3; j < len(c.Args); j++ {
		switch kw := keyword(c.Args[j]); {
		case kw == "idx":
			getIdx = true
		case kw == "len":
			getLen = true
		case kw == "withmatchlen":
			withMatchLen = true
		case kw == "minmatchlen" && j+1 < len(c.Args):
			n, ok := c.intArg(j + 1)
			if !ok {
				return
			}
			minMatchLen = max(n, 0)
			j++
		default:
			c.W.Error(errSyntax)
			return
		}
	}
	if getIdx && getLen {
		c.W.Error("ERR If you want both the length and indexes, please just use IDX.")
		return
	}
	a, b := vals[0], vals[1]
	alen, blen := len(a), len(b)
	if cells := int64(alen+1) * int64(blen+1); cells*4 > c.maxBulk() {
		c.W.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
		return
	}
	w := blen + 1
	dp := make([]uint32, (alen+1)*w) // dp[i*w+j]: LCS length of a[:i] and b[:j]
	for i := 1; i <= alen; i++ {
		for j := 1; j <= blen; j++ {
			if a[i-1] == b[j-1] {
				dp[i*w+j] = dp[(i-1)*w+j-1] + 1
			} else {
				dp[i*w+j] = max(dp[(i-1)*w+j], dp[i*w+j-1])
			}
		}
	}
	total := int(dp[alen*w+blen])
	if getLen {
		c.W.Int(int64(total))
		return
	}
	type match struct{ aStart, aEnd, bStart, bEnd int }
	var matches []match
	result := make([]byte, total)
	idx := total
	unset := alen // aStart == alen: no range open
	cur := match{aStart: unset}
	for i, j := alen, blen; i > 0 && j > 0; {
		emit := false
		if a[i-1] == b[j-1] {
			result[idx-1] = a[i-1]
			switch {
			case cur.aStart == unset:
				cur = match{i - 1, i - 1, j - 1, j - 1}
			case cur.aStart == i && cur.bStart == j:
				cur.aStart--
				cur.bStart--
			default:
				emit = true
			}
			if cur.aStart == 0 || cur.bStart == 0 {
				emit = true
			}
			idx, i, j = idx-1, i-1, j-1
		} else {
			if dp[(i-1)*w+j] > dp[i*w+j-1] {
				i--
			} else {
				j--
			}
			emit = cur.aStart != unset
		}
		if emit {
			if n := int64(cur.aEnd - cur.aStart + 1); minMatchLen == 0 || n >= minMatchLen {
				matches = append(matches, cur)
			}
			cur.aStart = unset
		}
	}
	if !getIdx {
		c.W.Bulk(result)
		return
	}
	c.W.Map(2)
	c.W.BulkString("matches")
	c.W.Array(len(matches))
	for _, m := range matches {
		if withMatchLen {
			c.W.Array(3)
		} else {
			c.W.Array(2)
		}
		c.W.Array(2)
		c.W.Int(int64(m.aStart))
		c.W.Int(int64(m.aEnd))
		c.W.Array(2)
		c.W.Int(int64(m.bStart))
		c.W.Int(int64(m.bEnd))
		if withMatchLen {
			c.W.Int(int64(m.aEnd - m.aStart + 1))
		}
	}
	c.W.BulkString("len")
	c.W.Int(int64(total))
}

// setKeyFlags gives the flags of SET's key in one command line: a GET
// argument after the value makes SET read the key as well as overwrite it.
func setKeyFlags(args [][]byte) KeyFlag {
	for i := 3; i < len(args); i++ {
		if lower(args[i]) == "get" {
			return KeyRW | KeyAccess | KeyUpdate
		}
	}
	return KeyOW | KeyUpdate
}
