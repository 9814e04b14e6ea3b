package commands

import (
	"bytes"

	"github.com/cairnkv/cairn/hll"
	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/storage"
)

// A HyperLogLog is a string value in Redis's own layout (package hll):
// TYPE says string, GET returns its bytes, DUMP, RESTORE and replication
// carry it as any string. The PF commands read the whole value under the
// key's lock, let package hll change a copy as Redis changes its value in
// place, and commit the result through the usual write path, PFCOUNT's
// refreshed cache included (a write that publishes no event, as in
// Redis, and that a replica, which cannot write, leaves undone).

// Error replies of the HyperLogLog commands, with Redis 7.0's texts.
const (
	errNotHLL     = "WRONGTYPE Key is not a valid HyperLogLog string value."
	errCorruptHLL = "INVALIDOBJ Corrupted HLL object detected"
)

func init() {
	pf := func(name string, arity int, flags Flag, summary string, handler Handler) *Spec {
		return &Spec{Name: name, Arity: arity, Flags: flags, Group: "hyperloglog", Since: "2.8.9", Summary: summary, Handler: handler}
	}
	withKeys := func(s *Spec, first, last int, specs ...KeySpec) *Spec {
		s.FirstKey, s.LastKey, s.Step, s.KeySpecs = first, last, 1, specs
		return s
	}
	register(
		withKeys(pf("pfadd", -2, FlagWrite|FlagDenyOOM|FlagFast, "Adds elements to a HyperLogLog key. Creates the key if it doesn't exist.", cmdPFAdd),
			1, 1, Key(1, KeyRW|KeyInsert)),
		// PFCOUNT may write the key (its cache): CLIENT PAUSE WRITE holds
		// it back, as Redis's may_replicate flag does.
		withKeys(pf("pfcount", -2, FlagReadOnly|FlagMayReplicate, "Returns the approximated cardinality of the set(s) observed by the HyperLogLog key(s).", cmdPFCount),
			1, -1, KeyRange(1, -1, 1, KeyRW|KeyAccess).Note("RW because it may change the internal representation of the key, and propagate to replicas")),
		withKeys(pf("pfmerge", -2, FlagWrite|FlagDenyOOM, "Merges one or more HyperLogLog values into a single key.", cmdPFMerge),
			1, -1, Key(1, KeyRW|KeyAccess|KeyInsert), KeyRange(2, -1, 1, KeyRO|KeyAccess)),
		withKeys(pf("pfdebug", 3, FlagWrite|FlagDenyOOM|FlagAdmin, "Internal commands for debugging HyperLogLog values.", cmdPFDebug),
			2, 2, Key(2, KeyRW|KeyAccess)),
		pf("pfselftest", 1, FlagAdmin, "An internal command for testing HyperLogLog values.", cmdPFSelfTest),
	)
}

// hllSparseMax returns hll-sparse-max-bytes, the longest a sparse
// HyperLogLog grows before it is made dense.
func (c *Ctx) hllSparseMax() int { return int(c.Env.settings().hllSparseMaxBytes.Int()) }

// readHLL reads key, whose lock the command holds, as a HyperLogLog: its
// state and a copy of its bytes, which the caller may change (nil for a
// missing key). With lookup set the read counts as Redis's lookupKeyRead
// (a keyspace hit or miss, keymiss), else as its lookupKeyWrite. It
// replies WRONGTYPE, for another type or a string that is no
// HyperLogLog, or a storage error, and returns ok=false.
func (c *Ctx) readHLL(key []byte, lookup bool) (k keyState, v []byte, ok bool) {
	if lookup {
		k, ok = c.lookupStringMeta(key)
	} else {
		k, ok = c.readStringMeta(key)
	}
	if !ok || !k.live || !c.loadValue(key, &k) {
		return k, nil, ok && !k.live
	}
	if !hll.Valid(k.m.Value) {
		c.W.Error(errNotHLL)
		return k, nil, false
	}
	return k, bytes.Clone(k.m.Value), true
}

// putHLL commits cmd's write of the HyperLogLog v as key's value (k: its
// state, read under its lock; an existing key keeps its expiry) with the
// events codes, and reports success. Redis holds every value a PF command
// wrote as a raw string. A quiet write (storage.LogFlagQuiet) is not
// seen by WATCH and CLIENT TRACKING, as Redis signals no change for it.
func (c *Ctx) putHLL(cmd storage.Command, key []byte, k *keyState, v []byte, quiet bool, codes ...notify.Code) bool {
	m := storage.Metadata{Type: storage.TypeString}
	if k.live {
		m = k.m
	}
	m.Value = v
	m.Flags = withEncoding(m.Flags, storage.FlagRawEncoding)
	var b *storage.Batch
	if quiet {
		b = c.batchFor(storage.LogData{Type: m.Type, Cmd: cmd, Flags: storage.LogFlagQuiet})
	} else {
		b = c.newBatch(m.Type, cmd)
	}
	c.put(b, key, k, m, codes...)
	return c.commit(b)
}

// keepRawHLL marks the live HyperLogLog key raw where Redis would
// convert it before using it (an embstr written by SET), and reports
// success; a replica leaves it.
func (c *Ctx) keepRawHLL(cmd storage.Command, key []byte, k *keyState) bool {
	return c.replica() || c.makeRaw(cmd, key, k)
}

// cmdPFAdd adds elements to a HyperLogLog, creating it (sparse) when the
// key is missing. It replies 1 and publishes "pfadd" when a register
// changed or the key was created, else 0. A corrupted sparse value fails
// with INVALIDOBJ, keeping (quietly, as Redis keeps them in memory
// without signalling) the changes of the elements before.
func cmdPFAdd(c *Ctx) {
	key := c.Args[1]
	defer c.lock(key)()
	k, v, ok := c.readHLL(key, false)
	if !ok {
		return
	}
	// orig is what an error leaves, if no element changed v; only a
	// sparse sketch's update can fail (hll.Add).
	var orig []byte
	changed := !k.live
	switch {
	case !k.live:
		v = hll.New()
	case hll.Encoding(v) != hll.Dense:
		orig = bytes.Clone(v)
	}
	sparseMax := c.hllSparseMax()
	for _, elem := range c.Args[2:] {
		var updated bool
		var err error
		if v, updated, err = hll.Add(v, elem, sparseMax); err != nil {
			if bytes.Equal(v, orig) {
				ok = c.keepRawHLL(storage.CmdPFAdd, key, &k)
			} else {
				ok = c.putHLL(storage.CmdPFAdd, key, &k, v, true)
			}
			if ok {
				c.W.Error(errCorruptHLL)
			}
			return
		}
		changed = changed || updated
	}
	if !changed {
		if c.keepRawHLL(storage.CmdPFAdd, key, &k) {
			c.W.Int(0)
		}
		return
	}
	hll.InvalidateCache(v)
	if c.putHLL(storage.CmdPFAdd, key, &k, v, false, notify.CodePFAdd) {
		c.W.Int(1)
	}
}

// cmdPFCount replies the estimated cardinality of one HyperLogLog, or of
// the union of several. For one key it replies the cached cardinality
// when it is valid, else computes it and writes it back into the value's
// header, as Redis does (a write without event); several keys are merged
// into a scratch sketch and nothing is written.
func cmdPFCount(c *Ctx) {
	keys := c.Args[1:]
	defer c.lock(keys...)()
	if len(keys) > 1 {
		union := make([]uint8, hll.Registers)
		for _, key := range keys {
			k, v, ok := c.readHLL(key, true)
			if !ok {
				return
			}
			if !k.live {
				continue
			}
			if hll.MergeMax(union, v) != nil {
				c.W.Error(errCorruptHLL)
				return
			}
		}
		c.W.Int(int64(hll.CountMax(union)))
		return
	}
	key := keys[0]
	k, v, ok := c.readHLL(key, true)
	if !ok {
		return
	}
	if !k.live {
		c.W.Int(0)
		return
	}
	if n, ok := hll.CachedCount(v); ok {
		if c.keepRawHLL(storage.CmdPFCount, key, &k) {
			c.W.Int(int64(n))
		}
		return
	}
	n, err := hll.Count(v)
	if err != nil {
		if c.keepRawHLL(storage.CmdPFCount, key, &k) {
			c.W.Error(errCorruptHLL)
		}
		return
	}
	hll.SetCachedCount(v, n)
	if c.replica() || c.putHLL(storage.CmdPFCount, key, &k, v, false) {
		c.W.Int(int64(n))
	}
}

// cmdPFMerge merges the HyperLogLogs of the source keys and of the
// destination itself into the destination (created when missing): dense
// when any of them is, else sparse as long as it fits. It always
// publishes "pfadd" for the destination, as Redis does.
func cmdPFMerge(c *Ctx) {
	keys := c.Args[1:]
	defer c.lock(keys...)()
	union := make([]uint8, hll.Registers)
	dense := false
	var dst keyState
	var dv []byte
	for i, key := range keys {
		k, v, ok := c.readHLL(key, true)
		if !ok {
			return
		}
		if i == 0 {
			dst, dv = k, v
		}
		if !k.live {
			continue
		}
		dense = dense || hll.Encoding(v) == hll.Dense
		if hll.MergeMax(union, v) != nil {
			c.W.Error(errCorruptHLL)
			return
		}
	}
	if !dst.live {
		dv = hll.New()
	}
	dv, err := hll.ApplyMax(dv, union, dense, c.hllSparseMax())
	if err != nil {
		c.W.Error(errCorruptHLL)
		return
	}
	if c.putHLL(storage.CmdPFMerge, keys[0], &dst, dv, false, notify.CodePFAdd) {
		c.W.OK()
	}
}

// cmdPFDebug runs PFDEBUG's subcommands on a HyperLogLog key: GETREG
// (the registers, after making a sparse value dense), DECODE (a sparse
// value's opcodes), ENCODING, and TODENSE (1 when it converted). The key
// is checked before the subcommand, as in Redis. The conversions publish
// no event and are quiet writes.
func cmdPFDebug(c *Ctx) {
	key := c.Args[2]
	defer c.lock(key)()
	k, v, ok := c.readHLL(key, false)
	if !ok {
		return
	}
	if !k.live {
		c.W.Error("ERR The specified key does not exist")
		return
	}
	sparse := hll.Encoding(v) == hll.Sparse
	sub := keyword(c.Args[1])
	if (sub == "getreg" || sub == "todense") && sparse {
		d, err := hll.ToDense(v)
		if err != nil {
			if c.keepRawHLL(storage.CmdPFDebug, key, &k) {
				c.W.Error(errCorruptHLL)
			}
			return
		}
		// Redis converts without signalling a change: WATCH and CLIENT
		// TRACKING do not hear of it.
		if !c.putHLL(storage.CmdPFDebug, key, &k, d, true) {
			return
		}
		v = d
	} else if !c.keepRawHLL(storage.CmdPFDebug, key, &k) {
		return
	}
	switch sub {
	case "getreg":
		regs, err := hll.RegisterValues(v)
		if err != nil {
			c.W.Error(errCorruptHLL)
			return
		}
		c.W.Array(len(regs))
		for _, r := range regs {
			c.W.Int(int64(r))
		}
	case "decode":
		if !sparse {
			c.W.Error("ERR HLL encoding is not sparse")
			return
		}
		c.W.BulkString(hll.Describe(v))
	case "encoding":
		if sparse {
			c.W.SimpleString("sparse")
		} else {
			c.W.SimpleString("dense")
		}
	case "todense":
		if sparse {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
	default:
		c.errorf("ERR Unknown PFDEBUG subcommand '%s'", cString(c.Args[1]))
	}
}

// cmdPFSelfTest runs package hll's self test (hll.SelfTest): OK, or the
// failed check's TESTFAILED error.
func cmdPFSelfTest(c *Ctx) {
	if err := hll.SelfTest(c.hllSparseMax()); err != nil {
		c.W.Error(err.Error())
		return
	}
	c.W.OK()
}
