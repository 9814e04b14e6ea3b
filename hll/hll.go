// Package hll holds Redis's HyperLogLog as Redis 7.0 lays it out in a
// string value, byte for byte: the 16-byte header (magic "HYLL", the
// encoding, three spare bytes, the cached cardinality), the sparse
// run-length encoding that a new sketch starts in and the dense array of
// 16384 six-bit registers it is promoted to, the element hash and the
// cardinality estimator. Commands keep the value as an ordinary string
// and hand its bytes to these functions, which return the bytes Redis
// would hold after the same operation.
//
// Every function takes a value that passed Valid. The register data after
// the header may still be corrupted (a SET or SETRANGE can write anything):
// the functions that must read all of it report ErrCorrupted then, never
// panic, and those that read only part of it (Add, as Redis's sparse
// update) may not notice, as Redis's do not.
package hll

import (
	"encoding/binary"
	"errors"
)

// Layout constants of Redis's HyperLogLog.
const (
	// RegisterBits is the log2 of the number of registers (Redis's P).
	RegisterBits = 14
	// Registers is the number of registers of every sketch.
	Registers = 1 << RegisterBits
	// HeaderLen is the length of the header both encodings begin with.
	HeaderLen = 16
	// DenseLen is the exact length of a dense sketch: the header and
	// 16384 six-bit registers.
	DenseLen = HeaderLen + Registers*6/8
	// DefaultSparseMaxBytes is Redis's default hll-sparse-max-bytes, the
	// longest a sparse sketch may grow before its promotion to dense.
	DefaultSparseMaxBytes = 3000

	// Dense and Sparse are the values of the header's encoding byte.
	Dense  = 0
	Sparse = 1

	// hashBits is the number of hash bits left for the run of zeros
	// after the register index (Redis's Q).
	hashBits = 64 - RegisterBits
	// registerMax is the largest value a dense register holds.
	registerMax = 63
	// encodingByte and cacheByte are the offsets of the encoding and of
	// the cached cardinality's most significant byte, whose top bit marks
	// the cache stale.
	encodingByte = 4
	cacheStart   = 8
	cacheByte    = 15
	staleBit     = 0x80
)

// Opcodes of the sparse encoding. A ZERO byte 00xxxxxx stands for 1 to 64
// zero registers, an XZERO pair 01xxxxxx yyyyyyyy for 1 to 16384, a VAL
// byte 1vvvvvxx for 1 to 4 registers of value 1 to 32.
const (
	opKindMask    = 0xc0
	opXZero       = 0x40
	opVal         = 0x80
	zeroMaxRun    = 64
	valMaxRun     = 4
	valMaxValue   = 32
	sparseMaxScan = 5 // opcodes checked for a merge after an update
)

// ErrCorrupted reports register data that does not decode to exactly
// 16384 registers (Redis's INVALIDOBJ "Corrupted HLL object detected").
var ErrCorrupted = errors.New("hll: corrupted HyperLogLog register data")

// Valid reports whether v is a HyperLogLog as Redis accepts one before
// any operation: at least a header, the magic "HYLL", a known encoding,
// and the exact length of a dense sketch when the header says dense. The
// register data itself is not checked.
func Valid(v []byte) bool {
	if len(v) < HeaderLen || string(v[:4]) != "HYLL" || v[encodingByte] > Sparse {
		return false
	}
	return v[encodingByte] != Dense || len(v) == DenseLen
}

// Encoding returns the encoding byte of a valid sketch (Dense or Sparse).
func Encoding(v []byte) byte { return v[encodingByte] }

// New returns an empty sketch as Redis creates one: sparse, one XZERO
// opcode covering every register, cached cardinality 0.
func New() []byte {
	v := make([]byte, HeaderLen, HeaderLen+2)
	copy(v, "HYLL")
	v[encodingByte] = Sparse
	return appendXZero(v, Registers)
}

// CachedCount returns the cardinality cached in v's header, and false
// when the cache is marked stale.
func CachedCount(v []byte) (uint64, bool) {
	if v[cacheByte]&staleBit != 0 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(v[cacheStart:HeaderLen]), true
}

// SetCachedCount writes n into v's header as its (valid) cached
// cardinality.
func SetCachedCount(v []byte, n uint64) {
	binary.LittleEndian.PutUint64(v[cacheStart:HeaderLen], n)
}

// InvalidateCache marks the cached cardinality of v stale, as PFADD
// does after it changed a register.
func InvalidateCache(v []byte) { v[cacheByte] |= staleBit }

// byteAt returns v[i], or 0 past v's end: Redis reads the terminating
// NUL of its strings there (the second byte of a truncated XZERO, the
// byte after the last dense register).
func byteAt(v []byte, i int) byte {
	if i < len(v) {
		return v[i]
	}
	return 0
}

// denseRegister returns register r of the dense register data regs.
func denseRegister(regs []byte, r int) uint8 {
	at, shift := r*6/8, uint(r*6&7)
	b0, b1 := uint(regs[at]), uint(byteAt(regs, at+1))
	return uint8((b0>>shift | b1<<(8-shift)) & registerMax)
}

// setDenseRegister sets register r of the dense register data regs to
// val (at most 63).
func setDenseRegister(regs []byte, r int, val uint8) {
	at, shift := r*6/8, uint(r*6&7)
	x := uint(val)
	regs[at] = byte(uint(regs[at])&^(registerMax<<shift) | x<<shift)
	if at+1 < len(regs) {
		regs[at+1] = byte(uint(regs[at+1])&^(registerMax>>(8-shift)) | x>>(8-shift))
	}
}

// sparseRun decodes the opcode at v[p]: the number of registers it
// covers, their value, and its length in bytes.
func sparseRun(v []byte, p int) (run, val, oplen int) {
	op := v[p]
	switch {
	case op&opKindMask == 0:
		return int(op&0x3f) + 1, 0, 1
	case op&opKindMask == opXZero:
		return (int(op&0x3f)<<8 | int(byteAt(v, p+1))) + 1, 0, 2
	default:
		return int(op&3) + 1, int(op>>2&0x1f) + 1, 1
	}
}

// isVal reports whether b is a VAL opcode.
func isVal(b byte) bool { return b&opVal != 0 }

// valOp returns the VAL opcode of run registers of value val.
func valOp(val, run int) byte { return byte((val-1)<<2|(run-1)) | opVal }

// appendZeros appends the shortest opcode for run zero registers (at most
// 16384), as Redis writes them when it splits a run: ZERO up to 64, XZERO
// beyond.
func appendZeros(b []byte, run int) []byte {
	if run > zeroMaxRun {
		return appendXZero(b, run)
	}
	return append(b, byte(run-1))
}

// appendXZero appends an XZERO opcode for run zero registers.
func appendXZero(b []byte, run int) []byte {
	return append(b, byte((run-1)>>8)|opXZero, byte(run-1))
}

// walkSparse calls fn for every run of v's sparse register data, in
// order, with the index of its first register. It returns ErrCorrupted
// unless the runs cover exactly 16384 registers; fn is never called for
// a run that would end past the last register.
func walkSparse(v []byte, fn func(first, run, val int)) error {
	idx := 0
	for p := HeaderLen; p < len(v); {
		run, val, oplen := sparseRun(v, p)
		if idx+run > Registers {
			return ErrCorrupted
		}
		fn(idx, run, val)
		idx += run
		p += oplen
	}
	if idx != Registers {
		return ErrCorrupted
	}
	return nil
}

// ToDense returns v in the dense encoding: v itself when it is dense
// already, else a new value whose header is v's (cached cardinality and
// spare bytes included) with the encoding byte changed. A sparse v that
// does not decode yields ErrCorrupted.
func ToDense(v []byte) ([]byte, error) {
	if v[encodingByte] == Dense {
		return v, nil
	}
	d := make([]byte, DenseLen)
	copy(d, v[:HeaderLen])
	d[encodingByte] = Dense
	regs := d[HeaderLen:]
	err := walkSparse(v, func(first, run, val int) {
		if val == 0 {
			return
		}
		for r := first; r < first+run; r++ {
			setDenseRegister(regs, r, uint8(val))
		}
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// RegisterValues returns the 16384 register values of v (sparse or
// dense), or ErrCorrupted for sparse data that does not decode.
func RegisterValues(v []byte) ([]uint8, error) {
	out := make([]uint8, Registers)
	if err := MergeMax(out, v); err != nil {
		return nil, err
	}
	return out, nil
}
