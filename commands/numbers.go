package commands

import (
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
	// maxLongDoubleChars is Redis's MAX_LONG_DOUBLE_CHARS.
	maxLongDoubleChars = 5 * 1024
)

func newLongDouble() *big.Float { return new(big.Float).SetPrec(longDoublePrec) }

// parseLongDouble parses b with the rules of Redis's string2ld: no leading
// space, the whole string consumed, NaN refused; decimal, hexadecimal and
// infinity forms accepted as strtold accepts them.
func parseLongDouble(b []byte) (*big.Float, bool) {
	if len(b) == 0 || len(b) > maxLongDoubleChars {
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
	switch lb := strings.ToLower(body); {
	case lb == "inf" || lb == "infinity":
		f.SetInf(strings.HasPrefix(s, "-"))
		return f, true
	case strings.HasPrefix(lb, "0x"):
		if strings.ContainsAny(body, "_") {
			return nil, false
		}
		if _, _, err := f.Parse(s, 0); err != nil {
			return nil, false
		}
	default:
		if !isDecimalFloat(body) {
			return nil, false
		}
		if _, _, err := f.Parse(s, 10); err != nil {
			return nil, false
		}
	}
	if overflowsLongDouble(f) {
		f.SetInf(f.Sign() < 0)
	}
	return f, true
}

// isDecimalFloat reports whether s is digits with an optional point and
// exponent, as strtold reads a decimal number.
func isDecimalFloat(s string) bool {
	digits, i := 0, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i, digits = i+1, digits+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, exp = i+1, exp+1
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

func overflowsLongDouble(f *big.Float) bool {
	return !f.IsInf() && f.Sign() != 0 && f.MantExp(nil) > longDoubleMaxExp
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
