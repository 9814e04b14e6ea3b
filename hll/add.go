package hll

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// hashSeed is the seed Redis hashes HyperLogLog elements with.
const hashSeed = 0xadc83b19

// Hash returns the 64-bit MurmurHash2 (MurmurHash64A) of b with Redis's
// seed, reading eight-byte blocks little endian as Redis does on every
// platform.
func Hash(b []byte) uint64 {
	const mul = 0xc6a4a7935bd1e995
	const shift = 47
	h := uint64(hashSeed) ^ uint64(len(b))*mul
	blocks := len(b) &^ 7
	for i := 0; i < blocks; i += 8 {
		k := binary.LittleEndian.Uint64(b[i:])
		k *= mul
		k ^= k >> shift
		k *= mul
		h ^= k
		h *= mul
	}
	if tail := b[blocks:]; len(tail) > 0 {
		for i := len(tail) - 1; i >= 0; i-- {
			h ^= uint64(tail[i]) << (8 * uint(i))
		}
		h *= mul
	}
	h ^= h >> shift
	h *= mul
	h ^= h >> shift
	return h
}

// position returns the register an element falls in and the value it
// offers that register: 1 plus the number of zero bits above the index
// bits of its hash, at most 51.
func position(elem []byte) (register int, count uint8) {
	h := Hash(elem)
	register = int(h & (Registers - 1))
	rest := h>>RegisterBits | 1<<hashBits // a stop bit bounds the count
	return register, uint8(bits.TrailingZeros64(rest) + 1)
}

// Add adds elem to the sketch v, as PFADD adds one element, and returns
// the sketch as it now is (v's array changed in place, or a new one
// after a growth or a promotion to dense) and whether a register
// changed. A sparse sketch that grows past sparseMax bytes, or needs a
// register value above 32, is promoted to dense first. An update of a
// sparse sketch marks its cached cardinality stale; the caller marks it
// for a dense one (PFADD does once, after every element). ErrCorrupted
// reports sparse data the update could not walk or promote; the sketch
// returned then is v as the elements before left it.
func Add(v []byte, elem []byte, sparseMax int) ([]byte, bool, error) {
	r, count := position(elem)
	return setRegister(v, r, count, sparseMax)
}

// setRegister raises register r of v to count when it is lower.
func setRegister(v []byte, r int, count uint8, sparseMax int) ([]byte, bool, error) {
	if v[encodingByte] == Dense {
		return v, raiseDense(v[HeaderLen:], r, count), nil
	}
	return raiseSparse(v, r, count, sparseMax)
}

// raiseDense raises register r of the dense register data regs to count
// when it is lower, and reports whether it did.
func raiseDense(regs []byte, r int, count uint8) bool {
	if denseRegister(regs, r) >= count {
		return false
	}
	setDenseRegister(regs, r, count)
	return true
}

// raiseSparse raises register r of the sparse sketch v to count, as
// Redis's sparse update does, opcode for opcode: it finds the opcode
// covering r, replaces it by at most three opcodes (the registers before
// r, r itself, those after), merges equal VAL opcodes next to the change,
// and promotes the sketch to dense when the value does not fit a VAL
// opcode or the sketch would outgrow sparseMax.
func raiseSparse(v []byte, r int, count uint8, sparseMax int) ([]byte, bool, error) {
	if count > valMaxValue {
		return promote(v, r, count)
	}
	// Find the opcode covering r: it starts at p and covers registers
	// [first, first+run); prev is the opcode before it, if any.
	p, prev, first, run, val, oplen := HeaderLen, -1, 0, 0, 0, 0
	for p < len(v) {
		run, val, oplen = sparseRun(v, p)
		if r <= first+run-1 {
			break
		}
		prev = p
		p += oplen
		first += run
	}
	if run == 0 || p >= len(v) {
		return v, false, ErrCorrupted
	}
	isZero := val == 0
	newVal := int(count)
	switch {
	case !isZero && val >= newVal:
		return v, false, nil
	case run == 1 && oplen == 1:
		// A VAL or ZERO opcode for r alone becomes r's VAL opcode.
		v[p] = valOp(newVal, 1)
		return finishSparse(v, prev), true, nil
	}
	// Split the opcode: what comes before r, r, what comes after.
	var seqBuf [5]byte
	seq := seqBuf[:0]
	last := first + run - 1
	if isZero {
		if r != first {
			seq = appendZeros(seq, r-first)
		}
		seq = append(seq, valOp(newVal, 1))
		if r != last {
			seq = appendZeros(seq, last-r)
		}
	} else {
		if r != first {
			seq = append(seq, valOp(val, r-first))
		}
		seq = append(seq, valOp(newVal, 1))
		if r != last {
			seq = append(seq, valOp(val, last-r))
		}
	}
	grow := len(seq) - oplen
	newLen := len(v) + grow
	if grow > 0 && newLen > sparseMax {
		return promote(v, r, count)
	}
	if p+oplen > len(v) {
		// An XZERO cut short by the end of the value (its second byte
		// is Redis's terminating NUL) leaves the value grow bytes longer
		// than it was, so the end of seq falls off, as it does in Redis.
		v = append(v[:p], seq...)
		return finishSparse(v[:newLen], prev), true, nil
	}
	// Move what follows the opcode by grow bytes, in place, then write
	// seq where the opcode was.
	oldLen := len(v)
	v = slices.Grow(v, max(grow, 0))[:max(newLen, oldLen)]
	copy(v[p+len(seq):], v[p+oplen:oldLen])
	copy(v[p:], seq)
	return finishSparse(v[:newLen], prev), true, nil
}

// finishSparse merges adjacent VAL opcodes of equal value whose runs fit
// one opcode, scanning at most five opcodes from prev (the opcode before
// the one just changed, or the first), as Redis does after an update,
// and marks the cached cardinality stale.
func finishSparse(v []byte, prev int) []byte {
	p := prev
	if p < 0 {
		p = HeaderLen
	}
	for scan := sparseMaxScan; p < len(v) && scan > 0; scan-- {
		op := v[p]
		switch {
		case op&opKindMask == opXZero:
			p += 2
			continue
		case op&opKindMask == 0:
			p++
			continue
		}
		if p+1 < len(v) && isVal(v[p+1]) {
			run1, val1, _ := sparseRun(v, p)
			run2, val2, _ := sparseRun(v, p+1)
			if val1 == val2 && run1+run2 <= valMaxRun {
				v[p+1] = valOp(val1, run1+run2)
				v = append(v[:p], v[p+1:]...)
				continue // try the merged opcode with the next one
			}
		}
		p++
	}
	InvalidateCache(v)
	return v
}

// promote converts the sparse sketch v to dense and raises register r to
// count there.
func promote(v []byte, r int, count uint8) ([]byte, bool, error) {
	d, err := ToDense(v)
	if err != nil {
		return v, false, err
	}
	return d, raiseDense(d[HeaderLen:], r, count), nil
}
