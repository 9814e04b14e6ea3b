package commands

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Redis keeps INCRBYFLOAT values as C long doubles (x86's 80-bit extended
// precision: a 64-bit mantissa and a 15-bit exponent) and prints them with
// "%.17Lf" before cutting trailing zeros. Cairn emulates that with
// big.Float at 64 bits of precision, so replies match byte for byte.

const (
	longDoublePrec = 64
	// longDoubleMaxExp is the binary exponent past which an 80-bit long
	// double overflows to infinity.
	longDoubleMaxExp = 16384
	// longDoubleUnderflowExp is the MantExp exponent of 2^-16446 (that
	// is 0.5 * 2^-16445), half the smallest subnormal long double and
	// the largest magnitude that rounds to zero.
	longDoubleUnderflowExp = -16445
	// maxLongDoubleChars is Redis's MAX_LONG_DOUBLE_CHARS.
	maxLongDoubleChars = 5 * 1024
)

func newLongDouble() *big.Float { return new(big.Float).SetPrec(longDoublePrec) }

// parseLongDouble parses b with the rules of Redis's string2ld: no leading
// space, the whole string consumed, NaN refused; decimal, hexadecimal and
// infinity forms accepted as strtold accepts them.
func parseLongDouble(b []byte) (*big.Float, bool) {
	// string2ld copies the string into a MAX_LONG_DOUBLE_CHARS buffer
	// with its terminating NUL, so the longest accepted is one less.
	if len(b) == 0 || len(b) >= maxLongDoubleChars {
		return nil, false
	}
	switch b[0] {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return nil, false
	}
	s := string(b)
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 {
		return nil, false
	}
	f := newLongDouble()
	var err error
	switch lb := strings.ToLower(body); {
	case lb == "inf" || lb == "infinity":
		f.SetInf(strings.HasPrefix(s, "-"))
		return f, true
	case strings.HasPrefix(lb, "0x"):
		if !isHexFloat(lb) {
			return nil, false
		}
		_, _, err = f.Parse(s, 0)
	default:
		if !isDecimalFloat(body) {
			return nil, false
		}
		_, _, err = f.Parse(s, 10)
	}
	// The syntax is checked: Parse fails only on some exponents past
	// big.Float's range (others come back without an error, below). A
	// zero mantissa is zero whatever its exponent
	// (strtold reports no ERANGE for it); another overflows or underflows.
	zero := zeroMantissa(body)
	switch {
	case zero && err != nil:
		f.SetInt64(0)
		if strings.HasPrefix(s, "-") {
			f.Neg(f)
		}
	case err != nil:
		return nil, false
	}
	// strtold reports ERANGE for a result that overflows to HUGE_VALL or
	// underflows to zero, and string2ld refuses both. (A subnormal result
	// is accepted; it prints as 0 anyway.) A decimal exponent past
	// big.Float's own range makes Parse return an infinity or a zero
	// without an error: the spelled-out infinities returned above, so an
	// infinity here overflowed, and a zero from a non-zero mantissa
	// underflowed.
	if overflowsLongDouble(f) || underflowsLongDouble(f) || (f.Sign() == 0 && !zero) {
		return nil, false
	}
	return f, true
}

// zeroMantissa reports whether the digits of a decimal or hexadecimal
// number (without its sign) before its exponent are all zeros, at least
// one.
func zeroMantissa(body string) bool {
	m, exp := strings.ToLower(body), "e"
	if rest, ok := strings.CutPrefix(m, "0x"); ok {
		m, exp = rest, "p"
	}
	m, _, _ = strings.Cut(m, exp)
	digits := 0
	for _, c := range m {
		switch c {
		case '0':
			digits++
		case '.':
		default:
			return false
		}
	}
	return digits > 0
}

// isDecimalFloat reports whether s is digits with an optional point and
// exponent, as strtold reads a decimal number.
func isDecimalFloat(s string) bool {
	return isFloat(s, 0, func(c byte) bool { return c >= '0' && c <= '9' }, 'e')
}

// isHexFloat reports whether lowercase s is "0x" and hexadecimal digits
// with an optional point and binary exponent ("p" and decimal digits), as
// strtold reads a hexadecimal number.
func isHexFloat(s string) bool {
	return strings.HasPrefix(s, "0x") && isFloat(s, 2, func(c byte) bool {
		return c >= '0' && c <= '9' || c >= 'a' && c <= 'f'
	}, 'p')
}

// isFloat reports whether s from i on is digits (as isDigit says) with an
// optional point, at least one digit, and an optional exponent: the letter
// exp (either case), a sign and decimal digits.
func isFloat(s string, i int, isDigit func(byte) bool, exp byte) bool {
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i, digits = i+1, digits+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == exp || s[i] == exp-'a'+'A') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		expDigits := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, expDigits = i+1, expDigits+1
		}
		if expDigits == 0 {
			return false
		}
	}
	return i == len(s)
}

// underflowsLongDouble reports whether a non-zero f rounds to zero as a
// long double: at most half the smallest subnormal, 2^-16445.
func underflowsLongDouble(f *big.Float) bool {
	if f.IsInf() || f.Sign() == 0 {
		return false
	}
	mant := newLongDouble()
	exp := f.MantExp(mant) // |f| = |mant| * 2^exp, 0.5 <= |mant| < 1
	return exp < longDoubleUnderflowExp || (exp == longDoubleUnderflowExp && mant.Abs(mant).Cmp(big.NewFloat(0.5)) == 0)
}

// overflowsLongDouble reports whether f lies beyond a long double's
// finite range: an infinity, or a binary exponent past longDoubleMaxExp.
func overflowsLongDouble(f *big.Float) bool {
	return f.IsInf() || f.Sign() != 0 && f.MantExp(nil) > longDoubleMaxExp
}

// addLongDouble returns a+b rounded to long double precision, or false when
// the result is infinite (Redis refuses NaN and infinity results).
func addLongDouble(a, b *big.Float) (*big.Float, bool) {
	if a.IsInf() || b.IsInf() {
		return nil, false
	}
	sum := newLongDouble().Add(a, b)
	if overflowsLongDouble(sum) {
		return nil, false
	}
	return sum, true
}

// formatLongDouble prints f as Redis's ld2string in human mode.
func formatLongDouble(f *big.Float) []byte {
	if f.IsInf() {
		if f.Sign() < 0 {
			return []byte("-inf")
		}
		return []byte("inf")
	}
	s := f.Text('f', 17)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return []byte(s)
}

// appendInt appends n in decimal.
func appendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// lower returns b as a lower-case string, for option keywords.
func lower(b []byte) string { return strings.ToLower(string(b)) }

// keyword returns an option keyword as Redis compares it (strcasecmp, or
// byte tests up to a NUL): lower-cased and cut at its first NUL byte, so
// "nx\x00junk" is NX, as it is for Redis.
func keyword(b []byte) string { return strings.ToLower(string(cString(b))) }

// cString returns b up to its first NUL byte, as C's "%s" prints it and
// C's string functions see it.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// strtod parses s whole as C's strtod does: decimal or hexadecimal, with
// an optional sign, "inf", "infinity" and "nan" in any case. erange
// reports a value out of double's range, as strtod's ERANGE: an overflow
// (f is then infinite), or an underflow to zero or to a subnormal.
func strtod(s string) (f float64, erange, ok bool) {
	if s == "" || strings.ContainsRune(s, '_') {
		return 0, false, false
	}
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 {
		return 0, false, false
	}
	hex := len(body) > 2 && (body[:2] == "0x" || body[:2] == "0X")
	mantissa := body
	if hex {
		if !strings.ContainsAny(body, "pP") {
			s += "p0"
		}
		mantissa = body[2:strings.IndexAny(body+"p", "pP")]
	} else if i := strings.IndexAny(body, "eE"); i >= 0 {
		mantissa = body[:i]
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0, false, false
	case err != nil:
		return f, true, true // overflow
	case math.IsInf(f, 0) || math.IsNaN(f):
		return f, false, true
	case f == 0 && strings.ContainsAny(mantissa, "123456789abcdefABCDEF"):
		return f, true, true // underflow to zero
	case f != 0 && math.Abs(f) < 0x1p-1022:
		return f, true, true // underflow to a subnormal
	}
	return f, false, true
}

// parseScore parses a score or an increment as Redis's string2d does: the
// whole argument, no leading white space, and neither NaN nor a value
// that overflows or underflows to zero (a subnormal is accepted).
func parseScore(b []byte) (float64, bool) {
	if len(b) == 0 || isCSpace(b[0]) {
		return 0, false
	}
	f, erange, ok := strtod(string(b))
	if !ok || math.IsNaN(f) || erange && (math.IsInf(f, 0) || f == 0) {
		return 0, false
	}
	return f, true
}

// parseRangeScore parses a bound of a score range after its "(" as
// Redis's zslParseRange does with strtod: leading white space skipped,
// read up to a NUL, an empty bound 0, out-of-range values as strtod
// rounds them; NaN is an error.
func parseRangeScore(b []byte) (float64, bool) {
	s := strings.TrimLeft(string(cString(b)), " \t\n\v\f\r")
	if s == "" {
		return 0, len(cString(b)) == 0
	}
	f, _, ok := strtod(s)
	return f, ok && !math.IsNaN(f)
}

// isCSpace reports whether c is white space to C's isspace.
func isCSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }
