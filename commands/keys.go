package commands

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/cairnkv/cairn/glob"
	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/storage"
)

func init() {
	k1 := oneKeyCommand("generic")
	register(
		&Spec{Name: "del", Arity: -2, Flags: FlagWrite, FirstKey: 1, LastKey: -1, Step: 1, KeySpecs: []KeySpec{KeyRange(1, -1, 1, KeyRM|KeyDelete)}, Tips: []string{"request_policy:multi_shard", "response_policy:agg_sum"}, Group: "generic", Since: "1.0.0", Summary: "Deletes one or more keys.", Handler: cmdDel},
		&Spec{Name: "unlink", Arity: -2, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: -1, Step: 1, KeySpecs: []KeySpec{KeyRange(1, -1, 1, KeyRM|KeyDelete)}, Tips: []string{"request_policy:multi_shard", "response_policy:agg_sum"}, Group: "generic", Since: "4.0.0", Summary: "Asynchronously deletes one or more keys.", Handler: cmdUnlink},
		&Spec{Name: "exists", Arity: -2, Flags: FlagReadOnly | FlagFast, FirstKey: 1, LastKey: -1, Step: 1, KeySpecs: []KeySpec{KeyRange(1, -1, 1, KeyRO)}, Tips: []string{"request_policy:multi_shard", "response_policy:agg_sum"}, Group: "generic", Since: "1.0.0", Summary: "Determines whether one or more keys exist.", Handler: cmdExists},
		// TOUCH is EXISTS here: Cairn keeps no access times to update.
		&Spec{Name: "touch", Arity: -2, Flags: FlagReadOnly | FlagFast, FirstKey: 1, LastKey: -1, Step: 1, KeySpecs: []KeySpec{KeyRange(1, -1, 1, KeyRO)}, Tips: []string{"request_policy:multi_shard", "response_policy:agg_sum"}, Group: "generic", Since: "3.2.1", Summary: "Counts the given keys that exist (a key named twice counts twice); Cairn keeps no access times to update.", Handler: cmdExists},
		k1("expire", -3, FlagWrite|FlagFast, KeyRW|KeyUpdate, "1.0.0", "Sets the expiration time of a key in seconds.", cmdExpire),
		k1("pexpire", -3, FlagWrite|FlagFast, KeyRW|KeyUpdate, "2.6.0", "Sets the expiration time of a key in milliseconds.", cmdPExpire),
		k1("expireat", -3, FlagWrite|FlagFast, KeyRW|KeyUpdate, "1.2.0", "Sets the expiration time of a key to a Unix timestamp.", cmdExpireAt),
		k1("pexpireat", -3, FlagWrite|FlagFast, KeyRW|KeyUpdate, "2.6.0", "Sets the expiration time of a key to a Unix milliseconds timestamp.", cmdPExpireAt),
		k1("expiretime", 2, FlagReadOnly|FlagFast, KeyRO|KeyAccess, "7.0.0", "Returns the expiration time of a key as a Unix timestamp.", cmdExpireTime),
		k1("pexpiretime", 2, FlagReadOnly|FlagFast, KeyRO|KeyAccess, "7.0.0", "Returns the expiration time of a key as a Unix milliseconds timestamp.", cmdPExpireTime),
		k1("persist", 2, FlagWrite|FlagFast, KeyRW|KeyUpdate, "2.2.0", "Removes the expiration time of a key.", cmdPersist),
		withTips(k1("ttl", 2, FlagReadOnly|FlagFast, KeyRO|KeyAccess, "1.0.0", "Returns the expiration time in seconds of a key.", cmdTTL), "nondeterministic_output"),
		withTips(k1("pttl", 2, FlagReadOnly|FlagFast, KeyRO|KeyAccess, "2.6.0", "Returns the expiration time in milliseconds of a key.", cmdPTTL), "nondeterministic_output"),
		k1("type", 2, FlagReadOnly|FlagFast, KeyRO, "1.0.0", "Determines the type of value stored at a key.", cmdType),
		&Spec{Name: "rename", Arity: 3, Flags: FlagWrite, FirstKey: 1, LastKey: 2, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRW|KeyAccess|KeyDelete), Key(2, KeyOW|KeyUpdate)}, Group: "generic", Since: "1.0.0", Summary: "Renames a key and overwrites the destination.", Handler: cmdRename},
		&Spec{Name: "renamenx", Arity: 3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 2, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRW|KeyAccess|KeyDelete), Key(2, KeyOW|KeyInsert)}, Group: "generic", Since: "1.0.0", Summary: "Renames a key only when the target key name doesn't exist.", Handler: cmdRenameNX},
		&Spec{Name: "copy", Arity: -3, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 2, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRO|KeyAccess), Key(2, KeyOW|KeyUpdate)}, Group: "generic", Since: "6.2.0", Summary: "Copies the value of a key to a new key.", Handler: cmdCopy},
		&Spec{Name: "move", Arity: 3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRW|KeyAccess|KeyUpdate)}, Group: "generic", Since: "1.0.0", Summary: "Moves a key to another database.", Handler: cmdMove},
		&Spec{Name: "swapdb", Arity: 3, Flags: FlagWrite | FlagFast, Group: "server", ACL: []string{"keyspace", "dangerous"}, Since: "4.0.0", Summary: "Swaps two Redis databases.", Handler: cmdSwapDB},
		&Spec{Name: "keys", Arity: 2, Flags: FlagReadOnly, Tips: []string{"request_policy:all_shards", "nondeterministic_output_order"}, Group: "generic", ACL: []string{"keyspace", "dangerous"}, Since: "1.0.0", Summary: "Returns all key names that match a pattern.", Handler: cmdKeys},
		&Spec{Name: "scan", Arity: -2, Flags: FlagReadOnly, Tips: []string{"nondeterministic_output", "request_policy:special"}, Group: "generic", Since: "2.8.0", Summary: "Iterates over the key names in the database.", Handler: cmdScan},
		&Spec{Name: "randomkey", Arity: 1, Flags: FlagReadOnly, Tips: []string{"request_policy:all_shards", "nondeterministic_output"}, Group: "generic", Since: "1.0.0", Summary: "Returns a random key name from the database.", Handler: cmdRandomKey},
		&Spec{Name: "dbsize", Arity: 1, Flags: FlagReadOnly | FlagFast, Tips: []string{"request_policy:all_shards", "response_policy:agg_sum"}, Group: "server", ACL: []string{"keyspace"}, Since: "1.0.0", Summary: "Returns the number of keys in the database.", Handler: cmdDBSize},
		&Spec{Name: "flushdb", Arity: -1, Flags: FlagWrite, Tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"}, Group: "server", ACL: []string{"keyspace", "dangerous"}, Since: "1.0.0", Summary: "Remove all keys from the current database.", Handler: cmdFlushDB},
		&Spec{Name: "flushall", Arity: -1, Flags: FlagWrite, Tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"}, Group: "server", ACL: []string{"keyspace", "dangerous"}, Since: "1.0.0", Summary: "Removes all keys from all databases.", Handler: cmdFlushAll},
	)
}

func cmdDel(c *Ctx)    { delGeneric(c, storage.CmdDel) }
func cmdUnlink(c *Ctx) { delGeneric(c, storage.CmdUnlink) }

// delGeneric deletes the live keys among the arguments, publishing "del"
// for each. An expired key is reclaimed as it is read, publishing
// "expired", and does not count.
func delGeneric(c *Ctx, cmd storage.Command) {
	keys := c.Args[1:]
	unlock := c.lock(keys...)
	defer unlock()
	seen := make(map[string]bool, len(keys))
	var b *storage.Batch
	deleted := 0
	for _, key := range keys {
		if seen[string(key)] {
			continue
		}
		seen[string(key)] = true
		k, ok := c.read(key)
		if !ok {
			return
		}
		if k.live {
			if b == nil {
				b = c.newBatch(storage.TypeNone, cmd)
			}
			c.del(b, key, &k, notify.CodeDel)
			deleted++
		}
	}
	if b != nil && !c.commit(b) {
		return
	}
	c.W.Int(int64(deleted))
}

// cmdExists counts several keys under their locks, as MGET reads them.
func cmdExists(c *Ctx) {
	if len(c.Args) > 2 {
		defer c.lock(c.Args[1:]...)()
	}
	var n int64
	for _, key := range c.Args[1:] {
		k, ok := c.read(key)
		if !ok {
			return
		}
		c.lookedUp(key, k.live)
		if k.live {
			n++
		}
	}
	c.W.Int(n)
}

func cmdExpire(c *Ctx)    { expireGeneric(c, c.nowMs(), true, storage.CmdExpire) }
func cmdPExpire(c *Ctx)   { expireGeneric(c, c.nowMs(), false, storage.CmdPExpire) }
func cmdExpireAt(c *Ctx)  { expireGeneric(c, 0, true, storage.CmdExpireAt) }
func cmdPExpireAt(c *Ctx) { expireGeneric(c, 0, false, storage.CmdPExpireAt) }

// expireGeneric implements the EXPIRE family as Redis 7.0 does: options
// first, then the time with overflow checks, then NX/XX/GT/LT against the
// current TTL; a time already past deletes the key.
func expireGeneric(c *Ctx, base int64, seconds bool, cmd storage.Command) {
	var nx, xx, gt, lt bool
	for _, a := range c.Args[3:] {
		switch keyword(a) {
		case "nx":
			nx = true
		case "xx":
			xx = true
		case "gt":
			gt = true
		case "lt":
			lt = true
		default:
			// Redis formats the option as a C string and trims the
			// newlines its error replies cannot end with.
			c.W.Error(strings.TrimRight("ERR Unsupported option "+string(cString(a)), "\r\n"))
			return
		}
	}
	if nx && (xx || gt || lt) {
		c.W.Error("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if gt && lt {
		c.W.Error("ERR GT and LT options at the same time are not compatible")
		return
	}
	when, ok := c.intArg(2)
	if !ok {
		return
	}
	if seconds {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			c.errorf("ERR invalid expire time in '%s' command", c.Spec.Name)
			return
		}
		when *= 1000
	}
	if when > math.MaxInt64-base {
		c.errorf("ERR invalid expire time in '%s' command", c.Spec.Name)
		return
	}
	when += base
	key := c.Args[1]
	unlock := c.lock(key)
	defer unlock()
	k, ok := c.read(key)
	if !ok {
		return
	}
	if !k.live {
		c.W.Int(0)
		return
	}
	cur := k.m.ExpireAt
	if (nx && cur != 0) || (xx && cur == 0) || (gt && (cur == 0 || when <= cur)) || (lt && cur != 0 && when >= cur) {
		c.W.Int(0)
		return
	}
	if when <= c.nowMs() {
		ok = c.deleteKey(cmd, key, &k, notify.CodeDel)
	} else {
		m := k.m
		m.ExpireAt = when
		ok = c.putKey(cmd, key, &k, m, notify.CodeExpire)
	}
	if ok {
		c.W.Int(1)
	}
}

func cmdTTL(c *Ctx)         { ttlGeneric(c, false, false) }
func cmdPTTL(c *Ctx)        { ttlGeneric(c, true, false) }
func cmdExpireTime(c *Ctx)  { ttlGeneric(c, false, true) }
func cmdPExpireTime(c *Ctx) { ttlGeneric(c, true, true) }

func ttlGeneric(c *Ctx, ms, abs bool) {
	k, ok := c.read(c.Args[1])
	if !ok {
		return
	}
	c.lookedUp(c.Args[1], k.live)
	switch {
	case !k.live:
		c.W.Int(-2)
	case k.m.ExpireAt == 0:
		c.W.Int(-1)
	default:
		t := k.m.ExpireAt
		if !abs {
			t = max(t-c.nowMs(), 0)
		}
		if !ms {
			// Rounded to seconds in unsigned arithmetic, as Redis's
			// compiled (ttl+500)/1000 behaves for t near MaxInt64.
			t = int64((uint64(t) + 500) / 1000)
		}
		c.W.Int(t)
	}
}

func cmdPersist(c *Ctx) {
	key := c.Args[1]
	unlock := c.lock(key)
	defer unlock()
	k, ok := c.read(key)
	if !ok {
		return
	}
	if !k.live || k.m.ExpireAt == 0 {
		c.W.Int(0)
		return
	}
	m := k.m
	m.ExpireAt = 0
	if c.putKey(storage.CmdPersist, key, &k, m, notify.CodePersist) {
		c.W.Int(1)
	}
}

func cmdType(c *Ctx) {
	k, ok := c.read(c.Args[1])
	if !ok {
		return
	}
	c.lookedUp(c.Args[1], k.live)
	if !k.live {
		c.W.SimpleString("none")
		return
	}
	c.W.SimpleString(k.m.Type.String())
}

func cmdRename(c *Ctx)   { renameGeneric(c, false) }
func cmdRenameNX(c *Ctx) { renameGeneric(c, true) }

func renameGeneric(c *Ctx, nx bool) {
	src, dst := c.Args[1], c.Args[2]
	unlock := c.lock(src, dst)
	defer unlock()
	s, ok := c.read(src)
	if !ok {
		return
	}
	if !s.live {
		c.W.Error(errNoSuchKey)
		return
	}
	if string(src) == string(dst) {
		if nx {
			c.W.Int(0)
		} else {
			c.W.OK()
		}
		return
	}
	d, ok := c.read(dst)
	if !ok {
		return
	}
	if nx && d.live {
		c.W.Int(0)
		return
	}
	// A chunked value or a collection's members stay where they are: the
	// destination's metadata names them. Any other value is read and
	// written again under the new name.
	move := (s.m.Chunked() && s.m.Value == nil) || s.m.HasMembers()
	if !move && !c.loadValue(src, &s) {
		return
	}
	cmd := storage.CmdRename
	if nx {
		cmd = storage.CmdRenameNX
	}
	b := c.newBatch(s.m.Type, cmd)
	// Redis adds the destination ("new", even when it existed: it is
	// replaced), deletes the source, then publishes rename_from and
	// rename_to.
	held, _ := c.txn.get(c.ns(), src)
	c.announce(b, dst, notify.CodeNew)
	if move {
		c.moveFrom(b, src, &s, notify.CodeRenameFrom)
	} else {
		c.del(b, src, &s, notify.CodeRenameFrom)
	}
	d.live = true // announced
	c.put(b, dst, &d, s.m, notify.CodeRenameTo)
	if held.held {
		c.txn.hold(c.ns(), dst) // the value moved, still held
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

func cmdCopy(c *Ctx) {
	src, dst := c.Args[1], c.Args[2]
	replace := false
	for j := 3; j < len(c.Args); j++ {
		switch keyword(c.Args[j]) {
		case "replace":
			replace = true
		case "db":
			if j+1 >= len(c.Args) {
				c.W.Error(errSyntax)
				return
			}
			db, ok := c.dbIndex(c.Args[j+1], "")
			if !ok {
				return
			}
			// Cairn has database 0 only.
			if db != 0 {
				c.W.Error("ERR DB index is out of range")
				return
			}
			j++
		default:
			c.W.Error(errSyntax)
			return
		}
	}
	if string(src) == string(dst) {
		c.W.Error("ERR source and destination objects are the same")
		return
	}
	unlock := c.lock(src, dst)
	defer unlock()
	s, ok := c.read(src)
	if !ok {
		return
	}
	c.lookedUp(src, s.live)
	if !s.live {
		c.W.Int(0)
		return
	}
	d, ok := c.read(dst)
	if !ok {
		return
	}
	if d.live && !replace {
		c.W.Int(0)
		return
	}
	if !c.loadValue(src, &s) {
		return
	}
	b := c.newBatch(s.m.Type, storage.CmdCopy)
	d.live = false // a replaced destination is new again, as in Redis
	m := s.m
	m.Flags = copiedFlags(&m)
	if m.HasMembers() {
		m.Version = storage.NewHashID()
		if _, err := c.Env.Store.CopyFields(b, c.ns(), &s.m, m.Version); err != nil {
			c.discard(b)
			c.storageError(err)
			return
		}
	}
	c.put(b, dst, &d, m, notify.CodeCopyTo)
	if c.commit(b) {
		c.W.Int(1)
	}
}

func cmdKeys(c *Ctx) {
	pattern := c.Args[1]
	all := len(pattern) == 1 && pattern[0] == '*'
	prefix := glob.LiteralPrefix(pattern)
	now := c.nowMs()
	var keys [][]byte
	err := c.scanKeys(prefix, func(key []byte, m storage.Metadata) bool {
		if len(key) < len(prefix) || string(key[:len(prefix)]) != string(prefix) {
			return false
		}
		if !m.Expired(now) && (all || glob.Match(pattern, key, false)) {
			keys = append(keys, append([]byte(nil), key...))
		}
		return true
	})
	if err != nil {
		c.storageError(err)
		return
	}
	c.W.Array(len(keys))
	for _, k := range keys {
		c.W.Bulk(k)
	}
}

// parseCursor reads a SCAN cursor as Redis's strtoul-based parser does
// (on a C string: a NUL byte ends it).
func parseCursor(b []byte) (uint64, bool) {
	s := string(cString(b))
	if s == "" {
		return 0, true
	}
	neg := false
	switch s[0] {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return 0, false
	case '-':
		neg, s = true, s[1:]
	case '+':
		s = s[1:]
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

func cmdScan(c *Ctx) {
	cursor, ok := parseCursor(c.Args[1])
	if !ok {
		c.W.Error("ERR invalid cursor")
		return
	}
	count, pattern, typeName, ok := c.scanOptions(2, true)
	if !ok {
		return
	}
	var start []byte
	if cursor != 0 {
		start = c.Env.cursors.resume(c.ns(), cursor)
	}
	now := c.nowMs()
	var keys, expired [][]byte
	var last []byte
	examined := int64(0)
	more := false
	err := c.scanKeys(start, func(key []byte, m storage.Metadata) bool {
		if examined == count {
			more = true
			return false
		}
		examined++
		last = append(last[:0], key...)
		if pattern != nil && !glob.Match(pattern, key, false) {
			return true
		}
		if m.Expired(now) {
			expired = append(expired, append([]byte(nil), key...))
			return true
		}
		if typeName != "" {
			c.lookedUp(key, true)
		}
		if typeName == "" || m.Type.String() == typeName {
			keys = append(keys, append([]byte(nil), key...))
		}
		return true
	})
	if err != nil {
		c.storageError(err)
		return
	}
	if !c.reclaimAll(expired) {
		return
	}
	if typeName != "" {
		// Redis 7.0 reads each key to learn its type: an expired one is a
		// miss (and a keymiss event, after its expired event).
		for _, k := range expired {
			c.lookedUp(k, false)
		}
	}
	next := uint64(0)
	if more {
		next = c.Env.cursors.save(c.ns(), append(last, 0))
	}
	c.W.Array(2)
	c.W.BulkString(strconv.FormatUint(next, 10))
	c.W.Array(len(keys))
	for _, k := range keys {
		c.W.Bulk(k)
	}
}

// scanOptions parses the options of SCAN (withType) or of HSCAN and
// SSCAN from argument from on, as Redis does: COUNT (default 10, at
// least 1), MATCH (nil for "*") and TYPE (lower-cased). It replies with
// Redis's error and returns ok=false on a bad option.
func (c *Ctx) scanOptions(from int, withType bool) (count int64, pattern []byte, typeName string, ok bool) {
	count = 10
	for i := from; i < len(c.Args); i += 2 {
		rest := len(c.Args) - i
		switch opt := keyword(c.Args[i]); {
		case opt == "count" && rest >= 2:
			n, ok := c.intArg(i + 1)
			if !ok {
				return 0, nil, "", false
			}
			if n < 1 {
				c.W.Error(errSyntax)
				return 0, nil, "", false
			}
			count = n
		case opt == "match" && rest >= 2:
			pattern = c.Args[i+1]
			if len(pattern) == 1 && pattern[0] == '*' {
				pattern = nil
			}
		case opt == "type" && rest >= 2 && withType:
			typeName = keyword(c.Args[i+1])
		default:
			c.W.Error(errSyntax)
			return 0, nil, "", false
		}
	}
	return count, pattern, typeName, true
}

// scanKeys calls fn for each key of the connection's namespace at or after
// start, in key order, until fn returns false, as Engine.ScanKeys does
// (expired keys included). Inside EXEC, the keys are those the
// transaction's earlier commands left: what they wrote replaces what the
// database holds.
func (c *Ctx) scanKeys(start []byte, fn func(key []byte, m storage.Metadata) bool) error {
	t := c.txn
	if t == nil || (len(t.overlay) == 0 && !t.flushed) {
		return c.Env.Store.ScanKeys(c.ns(), start, fn)
	}
	written := t.written(c.ns(), start)
	// emit passes fn the written keys that sort before key (all of them
	// when last), and reports whether fn wants more.
	emit := func(key []byte, last bool) bool {
		for len(written) > 0 && (last || written[0].key < string(key)) {
			w := written[0]
			written = written[1:]
			if w.exists && !fn([]byte(w.key), w.m) {
				return false
			}
		}
		return true
	}
	stopped := false
	if !t.flushed {
		err := c.Env.Store.ScanKeys(c.ns(), start, func(key []byte, m storage.Metadata) bool {
			if !emit(key, false) {
				stopped = true
				return false
			}
			if len(written) > 0 && written[0].key == string(key) {
				w := written[0]
				written = written[1:]
				if !w.exists {
					return true
				}
				m = w.m
			}
			if !fn(key, m) {
				stopped = true
				return false
			}
			return true
		})
		if err != nil {
			return err
		}
	}
	if !stopped {
		emit(nil, true)
	}
	return nil
}

// reclaimAll reclaims the expired keys a SCAN or RANDOMKEY passed over, as
// Redis's do (publishing "expired"); it replies and returns false on a
// storage error. Inside EXEC, it may: EXEC holds every key lock when it
// runs a command that calls this (reclaimsExpired). Elsewhere in a batch
// of several commands, whose locks do not cover them, it leaves them to
// the expiry cycle.
func (c *Ctx) reclaimAll(keys [][]byte) bool {
	if c.txn != nil && !c.txn.allLocked {
		return true
	}
	for _, key := range keys {
		if _, ok := c.read(key); !ok {
			return false
		}
	}
	return true
}

func cmdRandomKey(c *Ctx) {
	now := c.nowMs()
	// Seek to a random point and take the first live key at or after it,
	// wrapping around once; keys are ordered bytes, so a random 8-byte
	// start lands anywhere in the keyspace.
	var seed [8]byte
	for i := range seed {
		seed[i] = byte(rand.IntN(256))
	}
	var found []byte
	var expired [][]byte
	ok := false // found may be the empty key
	pick := func(key []byte, m storage.Metadata) bool {
		if m.Expired(now) {
			expired = append(expired, append([]byte(nil), key...))
			return true
		}
		found, ok = append([]byte(nil), key...), true
		return false
	}
	for _, start := range [][]byte{seed[:], nil} {
		if err := c.scanKeys(start, pick); err != nil {
			c.storageError(err)
			return
		}
		if !c.reclaimAll(expired) {
			return
		}
		expired = expired[:0]
		if ok {
			c.W.Bulk(found)
			return
		}
	}
	c.W.NullBulk()
}

func cmdDBSize(c *Ctx) {
	n := c.Env.Store.DBSize(c.ns())
	if c.txn != nil { // count the transaction's writes so far
		delta, flushed := c.txn.b.KeyDelta(c.ns())
		if flushed {
			n = 0
		}
		n += delta
	}
	c.W.Int(n)
}

// flushArgs checks FLUSHDB/FLUSHALL's optional ASYNC|SYNC argument.
func (c *Ctx) flushArgs() bool {
	if len(c.Args) > 2 || (len(c.Args) == 2 && keyword(c.Args[1]) != "sync" && keyword(c.Args[1]) != "async") {
		c.W.Error(errSyntax)
		return false
	}
	return true
}

func cmdFlushDB(c *Ctx) {
	if !c.flushArgs() {
		return
	}
	unlock := c.lockAll()
	defer unlock()
	b := c.newBatch(storage.TypeNone, storage.CmdFlushDB)
	c.flush(b, c.ns())
	if c.commit(b) {
		c.W.OK()
	}
}

func cmdFlushAll(c *Ctx) {
	if !c.flushArgs() {
		return
	}
	if !c.Client.Admin {
		c.W.Error(errNotAdminCmd)
		return
	}
	unlock := c.lockAll()
	defer unlock()
	all := map[string]bool{"": true}
	for ns := range c.Env.Store.Namespaces() {
		all[ns] = true
	}
	for ns := range c.Env.Store.KeyCounts() {
		all[ns] = true
	}
	b := c.newBatch(storage.TypeNone, storage.CmdFlushAll)
	for ns := range all {
		c.flush(b, ns)
	}
	if c.commit(b) {
		c.W.OK()
	}
}

// Cairn has one database (databases 1), so MOVE and SWAPDB answer as
// Redis does when started with databases 1.

// dbIndex parses a database index as Redis's getIntFromObjectOrReply: a
// 32-bit integer, else the error msg (Redis's generic ones when empty).
func (c *Ctx) dbIndex(arg []byte, msg string) (int64, bool) {
	n, ok := parseInt(arg)
	switch {
	case !ok && msg == "":
		msg = errNotInt
	case (n < math.MinInt32 || n > math.MaxInt32) && msg == "":
		msg = "ERR value is out of range, value must between -2147483648 and 2147483647"
	case ok && n >= math.MinInt32 && n <= math.MaxInt32:
		return n, true
	}
	c.W.Error(msg)
	return 0, false
}

func cmdMove(c *Ctx) {
	db, ok := c.dbIndex(c.Args[2], "")
	if !ok {
		return
	}
	if db != 0 {
		c.W.Error("ERR DB index is out of range")
		return
	}
	c.W.Error("ERR source and destination objects are the same")
}

func cmdSwapDB(c *Ctx) {
	a, ok := c.dbIndex(c.Args[1], "ERR invalid first DB index")
	if !ok {
		return
	}
	b, ok := c.dbIndex(c.Args[2], "ERR invalid second DB index")
	if !ok {
		return
	}
	if a != 0 || b != 0 {
		c.W.Error("ERR DB index is out of range")
		return
	}
	c.W.OK() // swapping database 0 with itself changes nothing
}
