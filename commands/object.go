package commands

import (
	"math"

	"github.com/cairnkv/cairn/storage"
)

func init() {
	key := func(summary string, h Handler) *Spec {
		return &Spec{Arity: 3, Flags: FlagReadOnly, FirstKey: 2, LastKey: 2, Step: 1, KeySpecs: []KeySpec{Key(2, KeyRO)},
			Tips: []string{"nondeterministic_output"}, Since: "2.2.3", Summary: summary, Handler: h}
	}
	since := func(s *Spec, v string) *Spec { s.Since = v; return s }
	register(&Spec{Name: "object", Arity: -2, Group: "generic", Since: "2.2.3",
		Summary: "A container for object introspection commands.",
		Subcommands: map[string]*Spec{
			"encoding": key("Returns the internal encoding Redis would use for a key's value.", cmdObjectEncoding),
			"refcount": key("Returns the reference count Redis would give a key's value.", cmdObjectRefcount),
			"freq":     since(key("Returns the logarithmic access frequency counter of a key (an LFU maxmemory policy only).", cmdObjectFreq), "4.0.0"),
			"idletime": key("Returns the time since the last access to a key; Cairn keeps no access times.", cmdObjectIdletime),
			"help":     {Arity: 2, Flags: FlagLoading | FlagStale, Since: "6.2.0", Summary: "Returns helpful text about the different subcommands.", Handler: cmdObjectHelp},
		}})
}

// sharedIntegers is the number of small integers Redis keeps one shared
// object each for (0 to 9999), which OBJECT REFCOUNT reports with
// sharedRefcount.
const (
	sharedIntegers = 10000
	sharedRefcount = math.MaxInt32
)

// objectEncoding returns the encoding Redis would give m's value (for a
// string, see storage.FlagRawEncoding), and whether it is one of Redis's shared
// integers. An out-of-line value of at most 20 bytes must be loaded.
func objectEncoding(m *storage.Metadata) (encoding string, shared bool) {
	switch {
	case m.Type == storage.TypeHash:
		return hashEncoding(m), false
	case m.Type == storage.TypeSet && m.Flags&storage.FlagHashTable != 0:
		return "hashtable", false
	case m.Type == storage.TypeSet:
		return "intset", false
	case m.Type == storage.TypeList:
		return listEncoding, false
	case m.Type == storage.TypeZSet:
		return zsetEncoding(m), false
	case m.Type == storage.TypeStream:
		return "stream", false
	}
	n := stringLen(m)
	if m.Flags&storage.FlagRawEncoding != 0 {
		return "raw", false
	}
	if m.Flags&storage.FlagPlainEncoding == 0 && n <= 20 {
		if v, ok := parseInt(m.Value); ok {
			return "int", v >= 0 && v < sharedIntegers && m.Flags&storage.FlagUnsharedInt == 0
		}
	}
	if n <= 44 {
		return "embstr", false
	}
	return "raw", false
}

// copiedFlags returns the flags of a COPY of m: Redis duplicates a shared
// integer into an integer object of its own.
func copiedFlags(m *storage.Metadata) byte {
	if _, shared := objectEncoding(m); shared {
		return m.Flags | storage.FlagUnsharedInt
	}
	return m.Flags
}

// makeRaw marks key's live string value raw when it is not, as Redis
// converts a value in place before a bit write that then changes nothing
// (cmd): a quiet write (storage.LogFlagQuiet) that publishes nothing and
// that WATCH and CLIENT TRACKING do not see. Redis also copies a value
// that something else holds (valueHeld), which drops the hold. It reports
// success; on failure it has replied an error.
func (c *Ctx) makeRaw(cmd storage.Command, key []byte, k *keyState) bool {
	held, _ := c.txn.get(c.ns(), key)
	if enc, _ := objectEncoding(&k.m); enc == "raw" && !held.held {
		return true
	}
	m := k.m
	m.Flags = withEncoding(m.Flags, storage.FlagRawEncoding)
	b := c.batchFor(storage.LogData{Type: m.Type, Cmd: cmd, Flags: storage.LogFlagQuiet})
	c.put(b, key, k, m)
	return c.commit(b)
}

// valueHeld reports whether, inside EXEC, the value a command writes to
// key stays referenced by the command's own arguments until EXEC ends, so
// that Redis's OBJECT REFCOUNT in the same transaction counts 2: the
// value given to SET and its kin and to APPEND of a new key, and
// INCRBYFLOAT's result (written back into its arguments for propagation),
// unless a Lua script runs the command (its arguments are copies).
// A write that keeps the value (EXPIRE, GETEX...) keeps the mark; RENAME
// moves it (renameGeneric).
func (c *Ctx) valueHeld(key []byte, k *keyState) bool {
	if !c.inExec() {
		return false
	}
	switch c.Spec.Name {
	case "set", "setnx", "setex", "psetex", "getset", "mset", "msetnx", "incrbyfloat":
		return !c.scripted // a script's arguments are copies
	case "append":
		return !k.live && !c.scripted
	case "expire", "pexpire", "expireat", "pexpireat", "persist", "getex":
		prev, _ := c.txn.get(c.ns(), key)
		return prev.held
	}
	return false
}

// withEncoding returns flags with the encoding flags replaced by enc.
func withEncoding(flags, enc byte) byte { return flags&^storage.FlagsEncoding | enc }

// objectLookup reads the key OBJECT names as Redis does (a keyspace hit or
// miss, no keymiss event) and replies a null when it is missing.
func objectLookup(c *Ctx) (keyState, bool) {
	k, ok := c.read(c.Args[2])
	if !ok {
		return k, false
	}
	if !k.live {
		c.Env.Stats.KeyspaceMisses.Add(1)
		c.W.NullBulk()
		return k, false
	}
	c.Env.Stats.KeyspaceHits.Add(1)
	// An integer has at most 20 bytes: a value that short kept out of line
	// (a small string-value-inline-max) is read to tell.
	if k.m.External() && k.m.Size <= 20 && !c.loadValue(c.Args[2], &k) {
		return k, false
	}
	return k, true
}

func cmdObjectEncoding(c *Ctx) {
	k, ok := objectLookup(c)
	if !ok {
		return
	}
	enc, _ := objectEncoding(&k.m)
	c.W.BulkString(enc)
}

func cmdObjectRefcount(c *Ctx) {
	k, ok := objectLookup(c)
	if !ok {
		return
	}
	if _, shared := objectEncoding(&k.m); shared {
		c.W.Int(sharedRefcount)
		return
	}
	if st, ok := c.txn.get(c.ns(), c.Args[2]); ok && st.held {
		c.W.Int(2)
		return
	}
	c.W.Int(1)
}

// cmdObjectFreq answers as Redis does without an LFU maxmemory policy,
// which Cairn never has.
func cmdObjectFreq(c *Ctx) {
	if _, ok := objectLookup(c); !ok {
		return
	}
	c.W.Error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
}

func cmdObjectIdletime(c *Ctx) {
	if _, ok := objectLookup(c); !ok {
		return
	}
	c.W.Error("ERR Cairn keeps no access times: OBJECT IDLETIME is not supported")
}

func cmdObjectHelp(c *Ctx) {
	help(c, "OBJECT", []string{
		"ENCODING <key>", "    Return the kind of internal representation Redis would use to store the value",
		"    associated with a <key>.",
		"FREQ <key>", "    Return the access frequency index of the <key> (only with an LFU maxmemory policy,",
		"    which Cairn does not have: an error).",
		"IDLETIME <key>", "    Not supported: Cairn keeps no access times.",
		"REFCOUNT <key>", "    Return the number of references Redis would hold to the value of the <key>.",
	})
}
