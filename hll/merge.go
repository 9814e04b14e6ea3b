package hll

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// ApplyMax writes the union registers max (16384 bytes, as MergeMax
// fills them) into the sketch v, as PFMERGE writes into its destination:
// v is converted to dense first when dense is set (PFMERGE does when any
// sketch merged was dense), then every non-zero register of max is raised
// in v in register order, a sparse v growing, or being promoted, as Add
// would, and the cached cardinality is marked stale. v must be a sketch
// MergeMax accepted (its data decodes).
func ApplyMax(v []byte, max []uint8, dense bool, sparseMax int) ([]byte, error) {
	if dense {
		d, err := ToDense(v)
		if err != nil {
			return v, err
		}
		v = d
	}
	for r, x := range max[:Registers] {
		if x == 0 {
			continue
		}
		// v decodes, so the sparse update cannot fail; Redis does not
		// look at its result here either.
		v, _, _ = setRegister(v, r, x, sparseMax)
	}
	InvalidateCache(v)
	return v, nil
}

// Describe returns the opcodes of the sparse sketch v in PFDEBUG
// DECODE's notation: "z:<run>" for ZERO, "Z:<run>" for XZERO and
// "v:<value>,<run>" for VAL, separated by spaces. Like Redis's, it
// decodes whatever the bytes hold, corrupted or not.
func Describe(v []byte) string {
	var b strings.Builder
	for p := HeaderLen; p < len(v); {
		run, val, oplen := sparseRun(v, p)
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		switch {
		case val != 0:
			b.WriteString("v:" + strconv.Itoa(val) + "," + strconv.Itoa(run))
		case oplen == 2:
			b.WriteString("Z:" + strconv.Itoa(run))
		default:
			b.WriteString("z:" + strconv.Itoa(run))
		}
		p += oplen
	}
	return b.String()
}

// SelfTest checks the register access and the estimator as PFSELFTEST
// does: every register of a dense sketch set to random values and read
// back, then up to ten million distinct elements added to a dense and to
// a sparse sketch, which must agree, and whose estimates must stay
// within five standard errors of the truth at every power of ten. It
// returns nil on success, else an error naming the check that failed.
func SelfTest(sparseMax int) error {
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	dense := make([]byte, DenseLen)
	copy(dense, "HYLL")
	regs := dense[HeaderLen:]
	want := make([]uint8, Registers)
	for range 1000 {
		for r := range Registers {
			want[r] = uint8(rng.IntN(registerMax + 1))
			setDenseRegister(regs, r, want[r])
		}
		for r := range Registers {
			if got := denseRegister(regs, r); got != want[r] {
				return fmt.Errorf("TESTFAILED Register error at %d: %d instead of %d", r, got, want[r])
			}
		}
	}
	clear(regs)
	sparse := New()
	relErr := 1.04 / math.Sqrt(Registers)
	seed := rng.Uint64()
	var elem [8]byte
	checkpoint := uint64(1)
	for j := uint64(1); j <= 10_000_000; j++ {
		binary.LittleEndian.PutUint64(elem[:], j^seed)
		r, count := position(elem[:])
		raiseDense(regs, r, count)
		var err error
		if sparse, _, err = Add(sparse, elem[:], sparseMax); err != nil {
			return fmt.Errorf("TESTFAILED sparse update: %w", err)
		}
		if j != checkpoint {
			continue
		}
		if j < uint64(sparseMax)/2 && Encoding(sparse) != Sparse {
			return fmt.Errorf("TESTFAILED sparse encoding not used")
		}
		got, _ := Count(dense)
		if other, err := Count(sparse); err != nil || other != got {
			return fmt.Errorf("TESTFAILED dense/sparse disagree")
		}
		maxErr := max(float64(j)*relErr*5, 1)
		if math.Abs(float64(got)-float64(j)) > maxErr {
			return fmt.Errorf("TESTFAILED Too big error. card:%d abserr:%f", j, math.Abs(float64(got)-float64(j)))
		}
		checkpoint *= 10
	}
	return nil
}
