package commands

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/storage"
)

// Bitmap commands: bits of string values, the most significant bit of the
// first byte being bit 0, as in Redis 7.0. Reading past a string's end
// reads zeros; writing past it grows the string with zero bytes.

func init() {
	register(
		&Spec{Name: "setbit", Arity: 4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRW|KeyAccess|KeyUpdate)}, Group: "bitmap", Since: "2.2.0", Summary: "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.", Handler: cmdSetBit},
		&Spec{Name: "getbit", Arity: 3, Flags: FlagReadOnly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRO|KeyAccess)}, Group: "bitmap", Since: "2.2.0", Summary: "Returns a bit value by offset.", Handler: cmdGetBit},
		&Spec{Name: "bitcount", Arity: -2, Flags: FlagReadOnly, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRO|KeyAccess)}, Group: "bitmap", Since: "2.6.0", Summary: "Counts the number of set bits (population counting) in a string.", Handler: cmdBitCount},
		&Spec{Name: "bitpos", Arity: -3, Flags: FlagReadOnly, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRO|KeyAccess)}, Group: "bitmap", Since: "2.8.7", Summary: "Finds the first set (1) or clear (0) bit in a string.", Handler: cmdBitPos},
		&Spec{Name: "bitop", Arity: -4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 2, LastKey: -1, Step: 1, KeySpecs: []KeySpec{Key(2, KeyOW|KeyUpdate), KeyRange(3, -1, 1, KeyRO|KeyAccess)}, Group: "bitmap", Since: "2.6.0", Summary: "Performs bitwise operations on multiple strings, and stores the result.", Handler: cmdBitOp},
		&Spec{Name: "bitfield", Arity: -2, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRW|KeyAccess|KeyUpdate|KeyVariableFlags).Note("This command allows both access and modification of the key")}, KeyFlagsOf: bitfieldKeyFlags, Group: "bitmap", Since: "3.2.0", Summary: "Performs arbitrary bitfield integer operations on strings.", Handler: cmdBitField},
		&Spec{Name: "bitfield_ro", Arity: -2, Flags: FlagReadOnly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, KeyRO|KeyAccess)}, Group: "bitmap", Since: "6.0.0", Summary: "Performs arbitrary read-only bitfield integer operations on strings.", Handler: cmdBitFieldRO},
	)
}

const (
	errBitOffset   = "ERR bit offset is not an integer or out of range"
	errBitValue    = "ERR bit is not an integer or out of range"
	errBitfieldTyp = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
)

// bitOffset parses a bit offset as Redis does: a non-negative integer
// whose byte lies within proto-max-bulk-len. With width > 0 (BITFIELD) the
// form #N means N*width. It replies with Redis's error and returns false
// otherwise.
func (c *Ctx) bitOffset(arg []byte, width int64) (int64, bool) {
	hash := width > 0 && len(arg) > 0 && arg[0] == '#'
	if hash {
		arg = arg[1:]
	}
	off, ok := parseInt(arg)
	if ok && hash {
		off *= width // wraps on overflow as Redis's does; caught below
	}
	if !ok || off < 0 || off>>3 >= c.maxBulk() {
		c.W.Error(errBitOffset)
		return 0, false
	}
	return off, true
}

// bitAt returns bit off of s (0 past its end).
func bitAt(s []byte, off int64) byte {
	if off>>3 >= int64(len(s)) {
		return 0
	}
	return s[off>>3] >> (7 - off&7) & 1
}

// grownCopy returns a copy of s at least n bytes long, zero-padded: a
// value read from storage or the row cache is never changed in place.
func grownCopy(s []byte, n int64) []byte {
	buf := make([]byte, max(int64(len(s)), n))
	copy(buf, s)
	return buf
}

func cmdSetBit(c *Ctx) {
	off, ok := c.bitOffset(c.Args[2], 0)
	if !ok {
		return
	}
	on, ok := parseInt(c.Args[3])
	if !ok || on&^1 != 0 {
		c.W.Error(errBitValue)
		return
	}
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
	var cur byte // the byte holding the bit
	if off>>3 < n {
		b, err := c.valueRange(key, &k, off>>3, off>>3+1)
		if err != nil {
			c.storageError(err)
			return
		}
		cur = b[0]
	}
	old := bitAt([]byte{cur}, off&7)
	// As in Redis, a bit set to what it was, within the string, writes
	// nothing and publishes nothing.
	if grown := off>>3 >= n; !grown && int64(old) == on {
		if c.makeRaw(storage.CmdSetBit, key, &k) {
			c.W.Int(int64(old))
		}
		return
	}
	mask := byte(1) << (7 - off&7)
	if on == 1 {
		cur |= mask
	} else {
		cur &^= mask
	}
	m.Flags = withEncoding(m.Flags, storage.FlagRawEncoding) // a new key's too
	if c.editString(storage.CmdSetBit, key, &k, m, off>>3, []byte{cur}, max(n, off>>3+1), notify.CodeSetBit) {
		c.W.Int(int64(old))
	}
}

func cmdGetBit(c *Ctx) {
	off, ok := c.bitOffset(c.Args[2], 0)
	if !ok {
		return
	}
	// Only the byte holding the bit is read of an out-of-line value.
	key := c.Args[1]
	_, b, ok := c.readStringBytes(key, off>>3, off>>3+1)
	if !ok {
		return
	}
	c.W.Int(int64(bitAt(b, off&7)))
}

// bitRange resolves a BITCOUNT or BITPOS range over a string of n bytes as
// Redis does: start and end count in bytes, or in bits with inBits;
// negative ones from the end; both are clamped to the string. It returns
// the range as bits [from, to], empty when from > to.
func bitRange(n, start, end int64, inBits bool) (from, to int64) {
	total := n
	if inBits {
		total = n << 3
	}
	if start, end = clampRange(total, start, end); start > end {
		return 1, 0 // empty; start may be too large to convert to bits
	}
	if inBits {
		return start, end
	}
	return start << 3, end<<3 + 7
}

// rangeUnit parses the BYTE|BIT argument of BITCOUNT and BITPOS.
func (c *Ctx) rangeUnit(arg []byte) (inBits, ok bool) {
	switch keyword(arg) {
	case "bit":
		return true, true
	case "byte":
		return false, true
	}
	c.W.Error(errSyntax)
	return false, false
}

func cmdBitCount(c *Ctx) {
	// As in Redis 7.0, the key is looked up before the range is parsed: a
	// missing key counts 0 whatever follows it.
	key := c.Args[1]
	k, unlock, ok := c.readStringMetaForPart(key)
	defer unlock()
	if !ok {
		return
	}
	if !k.live {
		c.W.Int(0)
		return
	}
	n := stringLen(&k.m)
	from, to := int64(0), n<<3-1
	switch len(c.Args) {
	case 2:
	case 4, 5:
		start, ok1 := parseInt(c.Args[2])
		end, ok2 := parseInt(c.Args[3])
		if !ok1 || !ok2 {
			c.W.Error(errNotInt)
			return
		}
		if start < 0 && end < 0 && start > end {
			c.W.Int(0) // before the unit is parsed, as in Redis
			return
		}
		inBits := false
		if len(c.Args) == 5 {
			if inBits, ok = c.rangeUnit(c.Args[4]); !ok {
				return
			}
		}
		from, to = bitRange(n, start, end, inBits)
	default:
		c.W.Error(errSyntax)
		return
	}
	count := int64(0)
	if from <= to {
		err := c.walkValue(key, &k, from>>3, to>>3+1, func(off int64, s []byte) bool {
			count += countBits(s, max(from-off<<3, 0), min(to-off<<3, int64(len(s))<<3-1))
			return true
		})
		if err != nil {
			c.storageError(err)
			return
		}
	}
	c.W.Int(count)
}

// valueWindow is how much of an out-of-line value walkValue reads at a
// time.
const valueWindow = 1 << 20

// walkValue calls fn with the bytes [from, to) of the live string key (k:
// its state, read under the key's lock if its value is out of line), in
// order, until fn returns false: an out-of-line value a window at a time
// (fn's s is then reused by the next call), so that a long value is never
// loaded whole. off is the position of s[0] in the value.
func (c *Ctx) walkValue(key []byte, k *keyState, from, to int64, fn func(off int64, s []byte) bool) error {
	if !k.m.External() || k.m.Value != nil {
		fn(from, k.m.Value[from:to])
		return nil
	}
	buf := make([]byte, min(to-from, valueWindow))
	for off := from; off < to; off += valueWindow {
		s := buf[:min(to-off, valueWindow)]
		if err := c.Env.Store.ReadValueAt(c.batch(), c.ns(), key, &k.m, s, off); err != nil {
			return err
		}
		if !fn(off, s) {
			break
		}
	}
	return nil
}

// countBits counts the set bits of s in bits [from, to] (within s).
func countBits(s []byte, from, to int64) int64 {
	if from > to {
		return 0
	}
	first, last := from>>3, to>>3
	head := s[first] & (0xff >> (from & 7))
	if first == last {
		return int64(bits.OnesCount8(head & (0xff << (7 - to&7))))
	}
	n := bits.OnesCount8(head) + bits.OnesCount8(s[last]&(0xff<<(7-to&7)))
	mid := s[first+1 : last]
	for ; len(mid) >= 8; mid = mid[8:] {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(mid))
	}
	for _, b := range mid {
		n += bits.OnesCount8(b)
	}
	return int64(n)
}

// findBit returns the first bit of s in bits [from, to] (within s) that
// is bit (0 or 1), or -1: bytes and words holding none are skipped whole.
func findBit(s []byte, from, to int64, bit int64) int64 {
	skip := byte(0) // a byte holding no bit sought
	if bit == 0 {
		skip = 0xff
	}
	for i := from; i <= to; {
		if i&7 == 0 && i+63 <= to && i>>3+8 <= int64(len(s)) {
			if w := binary.LittleEndian.Uint64(s[i>>3:]); w == uint64(skip)*0x0101010101010101 {
				i += 64
				continue
			}
		}
		if i&7 == 0 && i+7 <= to && s[i>>3] == skip {
			i += 8
			continue
		}
		if int64(bitAt(s, i)) == bit {
			return i
		}
		i++
	}
	return -1
}

func cmdBitPos(c *Ctx) {
	bit, ok := parseInt(c.Args[2])
	if !ok {
		c.W.Error(errNotInt)
		return
	}
	if bit != 0 && bit != 1 {
		c.W.Error("ERR The bit argument must be 1 or 0.")
		return
	}
	key := c.Args[1]
	k, unlock, ok := c.readStringMetaForPart(key)
	defer unlock()
	if !ok {
		return
	}
	if !k.live {
		// A missing key is an endless run of zeros.
		c.W.Int(-bit)
		return
	}
	n := stringLen(&k.m)
	from, to, endGiven := int64(0), n<<3-1, false
	switch len(c.Args) {
	case 3:
	case 4, 5, 6:
		start, ok := parseInt(c.Args[3])
		if !ok {
			c.W.Error(errNotInt)
			return
		}
		inBits := false
		if len(c.Args) == 6 {
			if inBits, ok = c.rangeUnit(c.Args[5]); !ok {
				return
			}
		}
		end := n - 1
		if inBits {
			end = n<<3 - 1
		}
		if len(c.Args) >= 5 {
			if end, ok = parseInt(c.Args[4]); !ok {
				c.W.Error(errNotInt)
				return
			}
			endGiven = true
		}
		from, to = bitRange(n, start, end, inBits)
	default:
		c.W.Error(errSyntax)
		return
	}
	if from > to {
		c.W.Int(-1)
		return
	}
	found := int64(-1)
	err := c.walkValue(key, &k, from>>3, to>>3+1, func(off int64, s []byte) bool {
		if i := findBit(s, max(from-off<<3, 0), min(to-off<<3, int64(len(s))<<3-1), bit); i >= 0 {
			found = off<<3 + i
		}
		return found < 0
	})
	if err != nil {
		c.storageError(err)
		return
	}
	if found >= 0 {
		c.W.Int(found)
		return
	}
	// No clear bit in the range: without an explicit end the string is
	// taken as followed by zeros.
	if bit == 0 && !endGiven {
		c.W.Int(to + 1)
		return
	}
	c.W.Int(-1)
}

func cmdBitOp(c *Ctx) {
	op := keyword(c.Args[1])
	switch op {
	case "and", "or", "xor", "not":
	default:
		c.W.Error(errSyntax)
		return
	}
	if op == "not" && len(c.Args) != 4 {
		c.W.Error("ERR BITOP NOT must be called with a single source key.")
		return
	}
	dst, srcKeys := c.Args[2], c.Args[3:]
	unlock := c.lock(c.Args[2:]...)
	defer unlock()
	srcs := make([][]byte, len(srcKeys))
	maxLen := 0
	for i, key := range srcKeys {
		k, ok := c.lookupString(key)
		if !ok {
			return
		}
		if k.live {
			srcs[i] = k.m.Value
			maxLen = max(maxLen, len(k.m.Value))
		}
	}
	if maxLen == 0 {
		// An empty result deletes the destination, as in Redis, whose
		// dbDelete does not look at the TTL: a destination that expired
		// unnoticed is deleted with "del", not reclaimed with "expired".
		d, err := c.lookupRaw(dst)
		if err != nil {
			c.storageError(err)
			return
		}
		if d.raw && !c.deleteKey(storage.CmdBitOp, dst, &d, notify.CodeDel) {
			return
		}
		c.W.Int(0)
		return
	}
	d, ok := c.read(dst)
	if !ok {
		return
	}
	res := make([]byte, maxLen)
	copy(res, srcs[0])
	switch op {
	case "not":
		for i := range res {
			res[i] = ^res[i]
		}
	case "and":
		for _, s := range srcs[1:] {
			for i := range res {
				if i < len(s) {
					res[i] &= s[i]
				} else {
					res[i] = 0
				}
			}
		}
	case "or":
		for _, s := range srcs[1:] {
			for i := range s {
				res[i] |= s[i]
			}
		}
	case "xor":
		for _, s := range srcs[1:] {
			for i := range s {
				res[i] ^= s[i]
			}
		}
	}
	// The destination is replaced, its TTL dropped, as SET does.
	if c.putKey(storage.CmdBitOp, dst, &d, storage.Metadata{Type: storage.TypeString, Flags: storage.FlagRawEncoding, Value: res}, notify.CodeSet) {
		c.W.Int(int64(maxLen))
	}
}

// bitfieldOp is one parsed GET, SET or INCRBY of BITFIELD.
type bitfieldOp struct {
	write    bool // SET or INCRBY
	incr     bool // INCRBY
	signed   bool
	width    int64
	offset   int64
	value    int64
	overflow string // "wrap", "sat" or "fail", as set before the op
}

func cmdBitField(c *Ctx)   { bitfield(c, false) }
func cmdBitFieldRO(c *Ctx) { bitfield(c, true) }

// bitfield runs BITFIELD (or BITFIELD_RO with readOnly). Every operation
// is parsed, and any error replied, before the key is read; the writes of
// one call commit as one batch with one "setbit" event.
func bitfield(c *Ctx, readOnly bool) {
	var ops []bitfieldOp
	overflow := "wrap"
	highest := int64(-1) // the last bit a write reaches
	args := c.Args
	for j := 2; j < len(args); j++ {
		rest := len(args) - j - 1
		var op bitfieldOp
		switch name := keyword(args[j]); {
		case name == "get" && rest >= 2:
		case name == "set" && rest >= 3:
			op.write = true
		case name == "incrby" && rest >= 3:
			op.write, op.incr = true, true
		case name == "overflow" && rest >= 1:
			j++
			switch t := keyword(args[j]); t {
			case "wrap", "sat", "fail":
				overflow = t
			default:
				c.W.Error("ERR Invalid OVERFLOW type specified")
				return
			}
			continue
		default:
			c.W.Error(errSyntax)
			return
		}
		var ok bool
		if op.signed, op.width, ok = bitfieldType(args[j+1]); !ok {
			c.W.Error(errBitfieldTyp)
			return
		}
		if op.offset, ok = c.bitOffset(args[j+2], op.width); !ok {
			return
		}
		if op.write {
			if op.value, ok = c.intArg(j + 3); !ok {
				return
			}
			highest = max(highest, op.offset+op.width-1)
			j++
		}
		j += 2
		op.overflow = overflow
		ops = append(ops, op)
	}

	if highest >= 0 && readOnly {
		// Refused only once every operation parsed, as in Redis.
		c.W.Error("ERR BITFIELD_RO only supports the GET subcommand")
		return
	}
	// Of an out-of-line value only the bytes the fields span are read
	// (and written): [lo, hi), and ops then count from lo.
	key := c.Args[1]
	lo, hi := int64(math.MaxInt64), int64(0)
	for _, op := range ops {
		lo, hi = min(lo, op.offset>>3), max(hi, (op.offset+op.width-1)>>3+1)
	}
	for i := range ops {
		ops[i].offset -= lo << 3
	}
	if highest < 0 {
		k, unlock, ok := c.readStringMetaForPart(key)
		defer unlock()
		if !ok {
			return
		}
		var s []byte
		if n := stringLen(&k.m); k.live && lo < n {
			var err error
			if s, err = c.valueRange(key, &k, lo, min(hi, n)); err != nil {
				c.storageError(err)
				return
			}
		}
		c.W.Array(len(ops))
		for _, op := range ops {
			c.W.Int(op.get(s))
		}
		return
	}
	k, m, unlock, ok := c.lockedStringMeta(key)
	defer unlock()
	if !ok {
		return
	}
	// As in Redis, the string grows to the last bit a write reaches (and
	// a missing key is created) even when OVERFLOW FAIL refuses every
	// write; "setbit" is published only when a write changes a field or
	// the string grew.
	n := int64(0)
	if k.live {
		n = stringLen(&k.m)
	}
	grown := n <= highest>>3
	var cur []byte
	if lo < n {
		var err error
		if cur, err = c.valueRange(key, &k, lo, min(hi, n)); err != nil {
			c.storageError(err)
			return
		}
	}
	buf := grownCopy(cur, hi-lo)
	changed := false
	replies := make([]*int64, len(ops))
	for i, op := range ops {
		v := op.get(buf)
		if !op.write {
			replies[i] = &v
			continue
		}
		nv, ok := op.apply(v)
		if !ok {
			continue // OVERFLOW FAIL: a null reply, nothing written
		}
		setBitfield(buf, op.offset, op.width, uint64(nv))
		changed = changed || grown || nv != v
		reply := v
		if op.incr {
			reply = nv
		}
		replies[i] = &reply
	}
	var codes []notify.Code
	if changed {
		codes = append(codes, notify.CodeSetBit)
	}
	m.Flags = withEncoding(m.Flags, storage.FlagRawEncoding)
	switch end := max(n, highest>>3+1); {
	case grown || changed:
		if !c.editString(storage.CmdBitField, key, &k, m, lo, buf[:min(hi, end)-lo], end, codes...) {
			return
		}
	case !c.makeRaw(storage.CmdBitField, key, &k):
		return
	}
	c.W.Array(len(ops))
	for _, r := range replies {
		if r == nil {
			c.W.NullBulk()
		} else {
			c.W.Int(*r)
		}
	}
}

// bitfieldType parses i1..i64 or u1..u63 (a C string, as Redis reads it).
func bitfieldType(arg []byte) (signed bool, width int64, ok bool) {
	arg = cString(arg)
	if len(arg) == 0 || (arg[0] != 'i' && arg[0] != 'u') {
		return false, 0, false
	}
	signed = arg[0] == 'i'
	width, ok = parseInt(arg[1:])
	limit := int64(63)
	if signed {
		limit = 64
	}
	if !ok || width < 1 || width > limit {
		return false, 0, false
	}
	return signed, width, true
}

// get reads the op's field of s (zeros past its end): sign-extended for a
// signed type.
func (op bitfieldOp) get(s []byte) int64 {
	var u uint64
	for i := int64(0); i < op.width; i++ {
		u = u<<1 | uint64(bitAt(s, op.offset+i))
	}
	if op.signed && op.width < 64 && u&(1<<(op.width-1)) != 0 {
		u |= math.MaxUint64 << op.width
	}
	return int64(u)
}

// setBitfield writes the low width bits of v at bit off of s, which is
// long enough.
func setBitfield(s []byte, off, width int64, v uint64) {
	for i := int64(0); i < width; i++ {
		p := off + i
		mask := byte(1) << (7 - p&7)
		if v>>(width-1-i)&1 == 1 {
			s[p>>3] |= mask
		} else {
			s[p>>3] &^= mask
		}
	}
}

// apply computes the value a SET or INCRBY writes over the field's current
// value old, under the op's OVERFLOW policy; ok is false when FAIL
// refuses the write.
func (op bitfieldOp) apply(old int64) (int64, bool) {
	value, incr := op.value, int64(0)
	if op.incr {
		value, incr = old, op.value
	}
	var overflowed bool
	var limited int64
	if op.signed {
		overflowed, limited = signedOverflow(value, incr, op.width, op.overflow)
	} else {
		overflowed, limited = unsignedOverflow(uint64(value), incr, op.width, op.overflow)
	}
	switch {
	case !overflowed:
		return value + incr, true
	case op.overflow == "fail":
		return 0, false
	default:
		return limited, true
	}
}

// unsignedOverflow reports whether value+incr leaves the range of a
// width-bit unsigned field, and the value WRAP or SAT gives then.
func unsignedOverflow(value uint64, incr, width int64, policy string) (bool, int64) {
	maxV := uint64(1)<<width - 1
	maxIncr := int64(maxV - value)
	minIncr := -int64(value)
	wrap := func() (bool, int64) { return true, int64((value + uint64(incr)) & maxV) }
	switch {
	case value > maxV || (incr > 0 && incr > maxIncr):
		if policy == "wrap" {
			return wrap()
		}
		return true, int64(maxV)
	case incr < 0 && incr < minIncr:
		if policy == "wrap" {
			return wrap()
		}
		return true, 0
	}
	return false, 0
}

// signedOverflow is unsignedOverflow for a width-bit two's complement
// field. The bound arithmetic wraps as Redis's does; it is only used once
// value is known to be in range.
func signedOverflow(value, incr, width int64, policy string) (bool, int64) {
	maxV := int64(math.MaxInt64)
	if width < 64 {
		maxV = int64(1)<<(width-1) - 1
	}
	minV := -maxV - 1
	maxIncr := int64(uint64(maxV) - uint64(value))
	minIncr := minV - value
	wrap := func() (bool, int64) {
		v := uint64(value) + uint64(incr)
		if width < 64 {
			mask := uint64(math.MaxUint64) << width
			if v&(1<<(width-1)) != 0 {
				v |= mask
			} else {
				v &^= mask
			}
		}
		return true, int64(v)
	}
	switch {
	case value > maxV || (width != 64 && incr > maxIncr) || (value >= 0 && incr > 0 && incr > maxIncr):
		if policy == "wrap" {
			return wrap()
		}
		return true, maxV
	case value < minV || (width != 64 && incr < minIncr) || (value < 0 && incr < 0 && incr < minIncr):
		if policy == "wrap" {
			return wrap()
		}
		return true, minV
	}
	return false, 0
}

// bitfieldKeyFlags gives the flags of BITFIELD's key in one command line:
// read-only when it has only complete GET and OVERFLOW operations, else
// read and write (SET, INCRBY, or a syntax error, taken as a write).
func bitfieldKeyFlags(args [][]byte) KeyFlag {
	for i := 2; i < len(args); i++ {
		rest := len(args) - i - 1
		switch op := lower(args[i]); {
		case op == "get" && rest >= 2:
			i += 2
		case op == "overflow" && rest >= 1:
			i++
		default:
			return KeyRW | KeyAccess | KeyUpdate
		}
	}
	return KeyRO | KeyAccess
}
