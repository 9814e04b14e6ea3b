package geohash

import (
	"math"
	"math/big"
)

// Redis computes distances with the C library's sin, cos and asin, which
// glibc rounds correctly in all but rare cases, while Go's math package
// may be one unit in the last place off (in a tenth to a quarter of the
// cases here). Distances print to 17 digits in STOREDIST scores and decide
// which members lie within a radius, so this file computes the three
// functions in double-double arithmetic (a value as the unevaluated sum
// of two float64s, about 106 bits) and rounds once at the end.

// dd is a double-double number: hi + lo, with |lo| at most half an ulp of
// hi.
type dd struct{ hi, lo float64 }

// twoSum returns a+b exactly as a rounded sum and its error.
func twoSum(a, b float64) dd {
	s := a + b
	v := s - a
	return dd{s, (a - (s - v)) + (b - v)}
}

// fastTwoSum is twoSum for |a| >= |b|.
func fastTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

// twoProd returns a*b exactly as a rounded product and its error.
func twoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

func (x dd) add(y dd) dd {
	s := twoSum(x.hi, y.hi)
	t := twoSum(x.lo, y.lo)
	s.lo += t.hi
	s = fastTwoSum(s.hi, s.lo)
	s.lo += t.lo
	return fastTwoSum(s.hi, s.lo)
}

func (x dd) neg() dd { return dd{-x.hi, -x.lo} }

func (x dd) mul(y dd) dd {
	p := twoProd(x.hi, y.hi)
	p.lo += x.hi*y.lo + x.lo*y.hi
	return fastTwoSum(p.hi, p.lo)
}

// ddOf rounds f to a double-double.
func ddOf(f *big.Float) dd {
	hi, _ := f.Float64()
	lo, _ := new(big.Float).SetPrec(f.Prec()).Sub(f, new(big.Float).SetFloat64(hi)).Float64()
	return dd{hi, lo}
}

// Constants of the double-double sine and cosine: π/2 in three parts,
// and the Taylor coefficients (-1)^k/(2k+1)! and (-1)^k/(2k)!.
var (
	halfPi1, halfPi2, halfPi3 float64
	sinCoef, cosCoef          [16]dd
)

func init() {
	const prec = 256
	// π to 80 digits, more than three float64s hold.
	pi, _, _ := big.ParseFloat("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899", 10, prec, big.ToNearestEven)
	half := new(big.Float).SetPrec(prec).Quo(pi, big.NewFloat(2))
	rest := new(big.Float).SetPrec(prec).Set(half)
	parts := []*float64{&halfPi1, &halfPi2, &halfPi3}
	for _, p := range parts {
		*p, _ = rest.Float64()
		rest.Sub(rest, new(big.Float).SetFloat64(*p))
	}
	fact := new(big.Float).SetPrec(prec).SetInt64(1)
	for n := 1; n <= 2*len(sinCoef)+1; n++ {
		fact.Mul(fact, new(big.Float).SetInt64(int64(n)))
		c := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1), fact)
		k := n / 2
		if k%2 == 1 {
			c.Neg(c)
		}
		switch {
		case n%2 == 1 && k < len(sinCoef):
			sinCoef[k] = ddOf(c) // n = 2k+1
		case n%2 == 0 && k < len(cosCoef):
			cosCoef[k] = ddOf(c) // n = 2k
		}
	}
	cosCoef[0] = dd{1, 0}
}

// reduce returns r = x - k·π/2 as a double-double, |r| <= π/4, and k
// mod 4.
func reduce(x float64) (dd, int) {
	k := math.Round(x * (2 / math.Pi))
	r := twoSum(x, 0).add(twoProd(k, halfPi1).neg())
	r = r.add(twoProd(k, halfPi2).neg())
	r = r.add(twoProd(k, halfPi3).neg())
	return r, int(int64(k) & 3)
}

// sinCosReduced returns the sine and cosine of a reduced argument r by
// their Taylor series.
func sinCosReduced(r dd) (sin, cos dd) {
	r2 := r.mul(r)
	sin, cos = sinCoef[len(sinCoef)-1], cosCoef[len(cosCoef)-1]
	for k := len(sinCoef) - 2; k >= 0; k-- {
		sin = sin.mul(r2).add(sinCoef[k])
		cos = cos.mul(r2).add(cosCoef[k])
	}
	return sin.mul(r), cos
}

// exactTrigLimit bounds the arguments reduce handles precisely; larger
// ones (only a search of an absurd radius meets them) use package math.
const exactTrigLimit = 1 << 20

// sinCosDD returns the sine and cosine of x as double-doubles.
func sinCosDD(x float64) (sin, cos dd) {
	r, q := reduce(x)
	s, c := sinCosReduced(r)
	switch q {
	case 1:
		return c, s.neg()
	case 2:
		return s.neg(), c.neg()
	case 3:
		return c.neg(), s
	}
	return s, c
}

// sin returns the sine of x, rounded once.
func sin(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > exactTrigLimit {
		return math.Sin(x)
	}
	if x == 0 {
		return x
	}
	s, _ := sinCosDD(x)
	return s.hi + s.lo
}

// cos returns the cosine of x, rounded once.
func cos(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > exactTrigLimit {
		return math.Cos(x)
	}
	_, c := sinCosDD(x)
	return c.hi + c.lo
}

// asin returns the arcsine of x, rounded once: package math's value
// refined by a Newton step in double-double arithmetic.
func asin(x float64) float64 {
	if math.IsNaN(x) || x == 0 || math.Abs(x) >= 1 {
		return math.Asin(x)
	}
	y := math.Asin(x)
	s, c := sinCosDD(y)
	// y + (x - sin y) / cos y
	diff := twoSum(x, 0).add(s.neg())
	step := (diff.hi + diff.lo) / (c.hi + c.lo)
	r := twoSum(y, step)
	return r.hi + r.lo
}
