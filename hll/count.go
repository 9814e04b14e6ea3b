package hll

import "math"

// histogram counts registers by value. Dense registers hold up to 63,
// though the estimator only reads values up to 51 (the longest run a
// hash can give): larger ones, which only a hand-written value holds,
// are counted and then ignored, as in Redis.
type histogram [registerMax + 1]int

// Count returns the estimated cardinality of the sketch v, computed from
// its registers (the cache is neither read nor written: see CachedCount
// and SetCachedCount). Sparse data that does not decode to 16384
// registers yields ErrCorrupted.
func Count(v []byte) (uint64, error) {
	var h histogram
	if v[encodingByte] == Dense {
		regs := v[HeaderLen:]
		for r := range Registers {
			h[denseRegister(regs, r)]++
		}
	} else {
		err := walkSparse(v, func(_, run, val int) { h[val] += run })
		if err != nil {
			return 0, err
		}
	}
	return h.estimate(), nil
}

// CountMax returns the estimated cardinality of the registers max (one
// byte per register, 16384 of them, as MergeMax fills them): the
// cardinality of the union of the sketches merged into it.
func CountMax(max []uint8) uint64 {
	var h histogram
	for _, x := range max[:Registers] {
		h[x&registerMax]++
	}
	return h.estimate()
}

// MergeMax raises every register of max (16384 bytes, one per register)
// to the value of the same register of the sketch v where v's is
// higher. Sparse data that does not decode yields ErrCorrupted; max may
// then hold some of v's registers.
func MergeMax(max []uint8, v []byte) error {
	if v[encodingByte] == Dense {
		regs := v[HeaderLen:]
		for r := range Registers {
			if x := denseRegister(regs, r); x > max[r] {
				max[r] = x
			}
		}
		return nil
	}
	return walkSparse(v, func(first, run, val int) {
		for r := first; r < first+run; r++ {
			if uint8(val) > max[r] {
				max[r] = uint8(val)
			}
		}
	})
}

// estimate computes the cardinality from the register histogram with
// Otmar Ertl's improved estimator ("New cardinality estimation algorithms
// for HyperLogLog sketches", 2017), the one Redis has used since 5.0, in
// the same order of floating-point operations, so that the rounded result
// is Redis's to the unit. The explicit float64 conversions keep the
// compiler from fusing a multiplication and an addition.
func (h *histogram) estimate() uint64 {
	m := float64(Registers)
	z := float64(m * tau((m-float64(h[hashBits+1]))/m))
	for j := hashBits; j >= 1; j-- {
		z += float64(h[j])
		z *= 0.5
	}
	z += float64(m * sigma(float64(h[0])/m))
	alpha := 0.721347520444481703680 // 1/(2 ln 2), the limit of alpha_m
	return uint64(math.Round(float64(alpha*m) * m / z))
}

// sigma is the series sigma(x) = x + sum over k >= 1 of x^(2^k) 2^(k-1)
// of Ertl's estimator, summed until it stops changing; +Inf at x = 1.
func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		prev := z
		z += float64(x * y)
		y += y
		if z == prev {
			return z
		}
	}
}

// tau is the series tau(x) = (1 - x - sum over k >= 1 of
// (1 - x^(2^-k))^2 2^-k) / 3 of Ertl's estimator, summed until it stops
// changing; 0 at x = 0 and x = 1.
func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		d := 1 - x
		z -= float64(float64(d*d) * y)
		if z == prev {
			return z / 3
		}
	}
}
