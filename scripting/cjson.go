package scripting

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// This file implements the "cjson" library that Redis exposes to scripts
// (lua-cjson 2.1.0 as bundled with Redis 7.0). The behaviour, including the
// exact error messages, the number formatting and the limits, follows what
// redis-server 7.0.15 does. Object key order follows gopher-lua's table
// iteration order, which cannot match Lua 5.1's.

const (
	cjsonModName           = "cjson"
	cjsonVersion           = "2.1.0"
	cjsonDefaultMaxDepth   = 1000
	cjsonDefaultPrecision  = 14
	cjsonDefaultSparseRate = 2
	cjsonDefaultSparseSafe = 10

	// extlibMaxCStack is Lua 5.1's LUAI_MAXCSTACK: lua_checkstack refuses to
	// grow one C function's stack frame past this many slots. lua-cjson
	// relies on it, so very deep structures fail below the configured depth
	// limits; the slot counting below reproduces that.
	extlibMaxCStack = 8000
)

// cjsonMaxOutput bounds the size of an encoded document, so that a table
// graph that expands enormously (shared sub-tables, sparse arrays under a
// relaxed configuration) fails with a Lua error rather than exhausting the
// process's memory. It matches Redis's default proto-max-bulk-len, the
// largest string a script could return anyway. Tests lower it.
var cjsonMaxOutput = 512 << 20

// Values of cjsonConfig.encodeInvalid, in the order of the option names.
const (
	cjsonInvalidOff = iota
	cjsonInvalidOn
	cjsonInvalidNull
)

var cjsonBoolOptions = []string{"off", "on"}
var cjsonInvalidOptions = []string{"off", "on", "null"}

// cjsonConfig is the per-module configuration changed by the cjson.encode_*
// and cjson.decode_* functions. Each table returned by cjson.new has its own.
type cjsonConfig struct {
	encodeMaxDepth int
	decodeMaxDepth int
	sparseConvert  int
	sparseRatio    int
	sparseSafe     int
	keepBuffer     int
	precision      int
	encodeInvalid  int
	decodeInvalid  int
}

func newCJSONConfig() *cjsonConfig {
	return &cjsonConfig{
		encodeMaxDepth: cjsonDefaultMaxDepth,
		decodeMaxDepth: cjsonDefaultMaxDepth,
		sparseRatio:    cjsonDefaultSparseRate,
		sparseSafe:     cjsonDefaultSparseSafe,
		keepBuffer:     1,
		precision:      cjsonDefaultPrecision,
		encodeInvalid:  cjsonInvalidOff,
		decodeInvalid:  1,
	}
}

// openCJSON registers the global table "cjson" in L, the JSON library that
// Redis scripts use: cjson.encode, cjson.decode, the cjson.null sentinel,
// cjson.new and the configuration functions encode_max_depth,
// decode_max_depth, encode_sparse_array, encode_keep_buffer,
// encode_number_precision, encode_invalid_numbers and
// decode_invalid_numbers. The results and error messages match those of
// Redis 7.0's lua-cjson 2.1.0. The sentinel cjson.null is a userdata value
// shared by every module table created in L; decode returns it for JSON
// null and encode writes null for it. It returns the global module's
// settings, which a state reused by the next script resets (on Redis they
// last for every later script; states in a pool could not promise that).
func openCJSON(L *lua.LState) *cjsonConfig {
	null := L.NewUserData()
	cfg := newCJSONConfig()
	L.SetGlobal(cjsonModName, newCJSONModule(L, null, cfg))
	return cfg
}

// newCJSONModule builds one cjson module table with the configuration cfg.
func newCJSONModule(L *lua.LState, null *lua.LUserData, cfg *cjsonConfig) *lua.LTable {
	mod := L.NewTable()
	fns := map[string]lua.LGFunction{
		"encode": func(L *lua.LState) int {
			return cjsonEncode(L, cfg, null)
		},
		"decode": func(L *lua.LState) int {
			return cjsonDecode(L, cfg, null)
		},
		"encode_max_depth": func(L *lua.LState) int {
			cjsonArgInit(L, 1)
			return cjsonIntegerOption(L, 1, &cfg.encodeMaxDepth, 1, math.MaxInt32)
		},
		"decode_max_depth": func(L *lua.LState) int {
			cjsonArgInit(L, 1)
			return cjsonIntegerOption(L, 1, &cfg.decodeMaxDepth, 1, math.MaxInt32)
		},
		"encode_sparse_array": func(L *lua.LState) int {
			cjsonArgInit(L, 3)
			cjsonEnumOption(L, 1, &cfg.sparseConvert, cjsonBoolOptions)
			cjsonIntegerOption(L, 2, &cfg.sparseRatio, 0, math.MaxInt32)
			cjsonIntegerOption(L, 3, &cfg.sparseSafe, 0, math.MaxInt32)
			return 3
		},
		"encode_keep_buffer": func(L *lua.LState) int {
			// The buffer is an allocation detail of lua-cjson; only the
			// setting itself is observable.
			cjsonArgInit(L, 1)
			return cjsonEnumOption(L, 1, &cfg.keepBuffer, cjsonBoolOptions)
		},
		"encode_number_precision": func(L *lua.LState) int {
			cjsonArgInit(L, 1)
			return cjsonIntegerOption(L, 1, &cfg.precision, 1, 14)
		},
		"encode_invalid_numbers": func(L *lua.LState) int {
			cjsonArgInit(L, 1)
			return cjsonEnumOption(L, 1, &cfg.encodeInvalid, cjsonInvalidOptions)
		},
		"decode_invalid_numbers": func(L *lua.LState) int {
			cjsonArgInit(L, 1)
			return cjsonEnumOption(L, 1, &cfg.decodeInvalid, cjsonBoolOptions)
		},
		"new": func(L *lua.LState) int {
			L.Push(newCJSONModule(L, null, newCJSONConfig()))
			return 1
		},
	}
	// Sorted, so that pairs(cjson) gives the same order in every state.
	for _, name := range slices.Sorted(maps.Keys(fns)) {
		mod.RawSetString(name, L.NewFunction(fns[name]))
	}
	mod.RawSetString("null", null)
	mod.RawSetString("_NAME", lua.LString(cjsonModName))
	mod.RawSetString("_VERSION", lua.LString(cjsonVersion))
	return mod
}

/* Errors and argument checking shared with bit.go. */

// extlibCallerIsLua reports whether the running Go function was called by
// a Lua function, the case in which Lua 5.1's luaL_error prefixes the
// message with the caller's position.
func extlibCallerIsLua(L *lua.LState) bool {
	dbg, ok := L.GetStack(1)
	if !ok {
		return false
	}
	if _, err := L.GetInfo("S", dbg, lua.LNil); err != nil {
		return false
	}
	return dbg.What != "G"
}

// extlibRaise raises a Lua error the way luaL_error does from a C library
// function: prefixed with the position of the calling Lua code, if any.
// It does not return.
func extlibRaise(L *lua.LState, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if extlibCallerIsLua(L) {
		L.RaiseError("%s", msg)
		return
	}
	L.Error(lua.LString(msg), 0)
}

// extlibFuncName is the name luaL_argerror reports for the running
// function: the name under which a Lua caller called it, or "?".
func extlibFuncName(L *lua.LState) string {
	if !extlibCallerIsLua(L) {
		return "?"
	}
	dbg, ok := L.GetStack(0)
	if !ok {
		return "?"
	}
	if _, err := L.GetInfo("n", dbg, lua.LNil); err != nil {
		return "?"
	}
	name := dbg.Name
	if name == "" || strings.ContainsAny(name, "?<>() ") {
		return "?"
	}
	return name
}

// extlibArgError raises "bad argument #n to 'name' (msg)" like
// luaL_argerror. It does not return.
func extlibArgError(L *lua.LState, n int, msg string) {
	extlibRaise(L, "bad argument #%d to '%s' (%s)", n, extlibFuncName(L), msg)
}

// extlibTypeError raises luaL_typerror's message for argument n.
func extlibTypeError(L *lua.LState, n int, expected string) {
	got := "no value"
	if n <= L.GetTop() {
		got = L.Get(n).Type().String()
	}
	extlibArgError(L, n, expected+" expected, got "+got)
}

// extlibToNumber converts v as lua_tonumber does in Lua 5.1: numbers as
// they are, strings holding a number (decimal, hexadecimal, inf, nan,
// surrounded by white space) converted, anything else refused.
func extlibToNumber(v lua.LValue) (float64, bool) {
	switch x := v.(type) {
	case lua.LNumber:
		return float64(x), true
	case lua.LString:
		s := string(x)
		if i := strings.IndexByte(s, 0); i >= 0 {
			s = s[:i] // Lua converts the C string, which ends at NUL.
		}
		start := 0
		for start < len(s) && extlibIsSpace(s[start]) {
			start++
		}
		f, n := extlibStrtod(s, start)
		if n == 0 {
			return 0, false
		}
		for i := start + n; i < len(s); i++ {
			if !extlibIsSpace(s[i]) {
				return 0, false
			}
		}
		return f, true
	}
	return 0, false
}

// extlibToString converts v as lua_tolstring does: strings as they are and
// numbers formatted with "%.14g".
func extlibToString(v lua.LValue) (string, bool) {
	switch x := v.(type) {
	case lua.LString:
		return string(x), true
	case lua.LNumber:
		return extlibFormatG(float64(x), 14), true
	}
	return "", false
}

func extlibIsSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}

func extlibIsDigit(c byte) bool { return c >= '0' && c <= '9' }

func extlibIsHexDigit(c byte) bool {
	return extlibIsDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f')
}

func extlibHasPrefixFold(s string, i int, prefix string) bool {
	return len(s)-i >= len(prefix) && strings.EqualFold(s[i:i+len(prefix)], prefix)
}

// extlibStrtod parses a number at s[i:] as glibc's strtod does (without
// skipping leading white space): an optional sign, then "inf", "infinity",
// "nan", "nan(chars)", a hexadecimal number with an optional binary
// exponent, or a decimal number with an optional exponent. It returns the
// value and the number of bytes used, 0 when there is no number.
func extlibStrtod(s string, i int) (float64, int) {
	at := func(j int) byte {
		if j < len(s) {
			return s[j]
		}
		return 0
	}
	start := i
	neg := false
	if c := at(i); c == '+' || c == '-' {
		neg = c == '-'
		i++
	}
	switch {
	case extlibHasPrefixFold(s, i, "inf"):
		i += 3
		if extlibHasPrefixFold(s, i, "inity") {
			i += 5
		}
		if neg {
			return math.Inf(-1), i - start
		}
		return math.Inf(1), i - start
	case extlibHasPrefixFold(s, i, "nan"):
		i += 3
		if at(i) == '(' {
			j := i + 1
			for c := at(j); extlibIsDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z') || c == '_'; c = at(j) {
				j++
			}
			if at(j) == ')' {
				i = j + 1
			}
		}
		return math.NaN(), i - start
	}
	if at(i) == '0' && at(i+1)|0x20 == 'x' {
		if f, n := extlibStrtodHex(s, i+2, neg); n > 0 {
			return f, i + 2 + n - start
		}
		// "0x" without hex digits: only the "0" is a number.
	}
	j := i
	digits := 0
	for extlibIsDigit(at(j)) {
		j++
		digits++
	}
	if at(j) == '.' {
		j++
		for extlibIsDigit(at(j)) {
			j++
			digits++
		}
	}
	if digits == 0 {
		return 0, 0
	}
	if at(j)|0x20 == 'e' {
		k := j + 1
		if c := at(k); c == '+' || c == '-' {
			k++
		}
		if extlibIsDigit(at(k)) {
			for extlibIsDigit(at(k)) {
				k++
			}
			j = k
		}
	}
	f, err := strconv.ParseFloat(s[start:j], 64)
	if err != nil && !isRangeError(err) {
		// Not reachable for the syntax accepted above; refuse rather
		// than guess.
		return 0, 0
	}
	return f, j - start
}

// extlibStrtodHex parses the hexadecimal digits, optional point and
// optional binary exponent that follow "0x" at s[i:]. It returns the value
// and the number of bytes used, 0 when there is no hex digit.
func extlibStrtodHex(s string, i int, neg bool) (float64, int) {
	at := func(j int) byte {
		if j < len(s) {
			return s[j]
		}
		return 0
	}
	j := i
	digits := 0
	for extlibIsHexDigit(at(j)) {
		j++
		digits++
	}
	mantEnd := j
	if at(j) == '.' {
		j++
		for extlibIsHexDigit(at(j)) {
			j++
			digits++
		}
		mantEnd = j
	}
	if digits == 0 {
		return 0, 0
	}
	exp := "p0"
	if at(j)|0x20 == 'p' {
		k := j + 1
		if c := at(k); c == '+' || c == '-' {
			k++
		}
		if extlibIsDigit(at(k)) {
			for extlibIsDigit(at(k)) {
				k++
			}
			exp = s[j:k]
			j = k
		}
	}
	mant := s[i:mantEnd]
	if mant[0] == '.' {
		mant = "0" + mant
	}
	if mant[len(mant)-1] == '.' {
		mant += "0"
	}
	lit := "0x" + mant + exp
	if neg {
		lit = "-" + lit
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !isRangeError(err) {
		return 0, 0
	}
	return f, j - i
}

func isRangeError(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// extlibFormatG formats f as C's printf("%.<prec>g") does.
func extlibFormatG(f float64, prec int) string {
	switch {
	case math.IsNaN(f):
		if math.Signbit(f) {
			return "-nan"
		}
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	if prec < 1 {
		prec = 1
	}
	e := strconv.FormatFloat(f, 'e', prec-1, 64)
	epos := strings.LastIndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[epos+1:])
	if exp < -4 || exp >= prec {
		mant := extlibTrimZeros(e[:epos])
		sign := "+"
		if exp < 0 {
			sign = "-"
			exp = -exp
		}
		es := strconv.Itoa(exp)
		if len(es) < 2 {
			es = "0" + es
		}
		return mant + "e" + sign + es
	}
	return extlibTrimZeros(strconv.FormatFloat(f, 'f', prec-1-exp, 64))
}

// extlibTrimZeros drops trailing zeros after a decimal point, and the
// point itself when nothing follows it.
func extlibTrimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

/* Configuration functions. */

// cjsonArgInit refuses more than n arguments and pads missing ones with
// nil, as json_arg_init does, so that the results pushed afterwards do not
// take the place of arguments.
func cjsonArgInit(L *lua.LState, n int) {
	if L.GetTop() > n {
		extlibArgError(L, n+1, "found too many arguments")
	}
	for L.GetTop() < n {
		L.Push(lua.LNil)
	}
}

// cjsonCheckInteger is luaL_checkinteger followed by the conversion to a C
// int: truncation towards zero to 64 bits (values out of range and NaN
// become the x86 "integer indefinite" value), then the low 32 bits.
func cjsonCheckInteger(L *lua.LState, idx int) int {
	f, ok := extlibToNumber(L.Get(idx))
	if !ok {
		extlibTypeError(L, idx, "number")
	}
	var i64 int64
	if math.IsNaN(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		i64 = math.MinInt64
	} else {
		i64 = int64(f)
	}
	return int(int32(i64))
}

// cjsonIntegerOption implements an integer setting: a non-nil argument at
// idx must be an integer within [min, max] (an out-of-range value is
// reported against argument 1, as lua-cjson does). It pushes the setting.
func cjsonIntegerOption(L *lua.LState, idx int, setting *int, min, max int) int {
	if L.Get(idx) != lua.LNil {
		v := cjsonCheckInteger(L, idx)
		if v < min || v > max {
			extlibArgError(L, 1, fmt.Sprintf("expected integer between %d and %d", min, max))
		}
		*setting = v
	}
	L.Push(lua.LNumber(*setting))
	return 1
}

// cjsonEnumOption implements an on/off setting (options "off", "on",
// possibly more): a boolean selects off or on, a string selects by name.
// It pushes the setting as a boolean for off and on, otherwise as its name.
func cjsonEnumOption(L *lua.LState, idx int, setting *int, options []string) int {
	switch v := L.Get(idx).(type) {
	case *lua.LNilType:
	case lua.LBool:
		*setting = 0
		if v {
			*setting = 1
		}
	default:
		s, ok := extlibToString(v)
		if !ok {
			extlibTypeError(L, idx, "string")
		}
		found := false
		for i, o := range options {
			if o == s {
				*setting = i
				found = true
				break
			}
		}
		if !found {
			extlibArgError(L, idx, fmt.Sprintf("invalid option '%s'", s))
		}
	}
	if *setting <= 1 {
		L.Push(lua.LBool(*setting == 1))
	} else {
		L.Push(lua.LString(options[*setting]))
	}
	return 1
}

/* Encoding. */

type cjsonEncoder struct {
	L    *lua.LState
	cfg  *cjsonConfig
	null *lua.LUserData
	buf  []byte
}

func cjsonEncode(L *lua.LState, cfg *cjsonConfig, null *lua.LUserData) int {
	if L.GetTop() != 1 {
		extlibArgError(L, 1, "expected 1 argument")
	}
	e := &cjsonEncoder{L: L, cfg: cfg, null: null}
	// One stack slot holds the argument; see extlibMaxCStack.
	e.value(L.Get(1), 0, 1)
	L.Push(lua.LString(e.buf))
	return 1
}

func (e *cjsonEncoder) fail(v lua.LValue, reason string) {
	extlibRaise(e.L, "Cannot serialise %s: %s", v.Type().String(), reason)
}

// value appends the JSON text for v. depth counts the tables enclosing v;
// slots counts the Lua stack slots lua-cjson would be using at this point.
func (e *cjsonEncoder) value(v lua.LValue, depth, slots int) {
	switch x := v.(type) {
	case *lua.LNilType:
		e.buf = append(e.buf, "null"...)
	case lua.LBool:
		if x {
			e.buf = append(e.buf, "true"...)
		} else {
			e.buf = append(e.buf, "false"...)
		}
	case lua.LNumber:
		e.number(x)
	case lua.LString:
		e.string(string(x))
	case *lua.LTable:
		depth++
		if depth > e.cfg.encodeMaxDepth || slots+3 > extlibMaxCStack {
			extlibRaise(e.L, "Cannot serialise, excessive nesting (%d)", depth)
		}
		if n := e.arrayLength(x); n > 0 {
			e.array(x, n, depth, slots)
		} else {
			e.object(x, depth, slots)
		}
	case *lua.LUserData:
		if x != e.null {
			e.fail(v, "type not supported")
		}
		e.buf = append(e.buf, "null"...)
	default:
		e.fail(v, "type not supported")
	}
	if len(e.buf) > cjsonMaxOutput {
		extlibRaise(e.L, "Cannot serialise, output too large (over %d bytes)", cjsonMaxOutput)
	}
}

func (e *cjsonEncoder) number(n lua.LNumber) {
	f := float64(n)
	bad := math.IsNaN(f) || math.IsInf(f, 0)
	switch e.cfg.encodeInvalid {
	case cjsonInvalidOff:
		if bad {
			e.fail(n, "must not be NaN or Inf")
		}
	case cjsonInvalidOn:
		if math.IsNaN(f) {
			e.buf = append(e.buf, "nan"...)
			return
		}
	default:
		if bad {
			e.buf = append(e.buf, "null"...)
			return
		}
	}
	e.buf = append(e.buf, extlibFormatG(f, e.cfg.precision)...)
}

const cjsonHex = "0123456789abcdef"

func (e *cjsonEncoder) string(s string) {
	e.buf = append(e.buf, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			e.buf = append(e.buf, '\\', '"')
		case c == '\\':
			e.buf = append(e.buf, '\\', '\\')
		case c == '/':
			e.buf = append(e.buf, '\\', '/')
		case c == '\b':
			e.buf = append(e.buf, '\\', 'b')
		case c == '\t':
			e.buf = append(e.buf, '\\', 't')
		case c == '\n':
			e.buf = append(e.buf, '\\', 'n')
		case c == '\f':
			e.buf = append(e.buf, '\\', 'f')
		case c == '\r':
			e.buf = append(e.buf, '\\', 'r')
		case c < 0x20 || c == 0x7f:
			e.buf = append(e.buf, '\\', 'u', '0', '0', cjsonHex[c>>4], cjsonHex[c&15])
		default:
			e.buf = append(e.buf, c)
		}
	}
	e.buf = append(e.buf, '"')
}

// arrayLength decides whether t is encoded as an array: it returns the
// array length, or a value <= 0 for an object. Like lua-cjson, it tracks
// the largest key in a C int, so a key above 2^31-1 resets it to INT_MIN
// and the outcome then depends on the iteration order.
func (e *cjsonEncoder) arrayLength(t *lua.LTable) int {
	var max, items int32
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n, ok := k.(lua.LNumber)
		f := float64(n)
		if !ok || f == 0 || math.Floor(f) != f || f < 1 {
			return -1
		}
		if f > float64(max) {
			if f >= 2147483648.0 {
				max = math.MinInt32
			} else {
				max = int32(f)
			}
		}
		items++
	}
	ratio := int32(e.cfg.sparseRatio)
	if ratio > 0 && max > items*ratio && max > int32(e.cfg.sparseSafe) {
		if e.cfg.sparseConvert == 0 {
			e.fail(t, "excessively sparse array")
		}
		return -1
	}
	return int(max)
}

func (e *cjsonEncoder) array(t *lua.LTable, n, depth, slots int) {
	e.buf = append(e.buf, '[')
	for i := 1; i <= n; i++ {
		if i > 1 {
			e.buf = append(e.buf, ',')
		}
		// lua_rawgeti pushes the element: one more slot.
		e.value(t.RawGetInt(i), depth, slots+1)
	}
	e.buf = append(e.buf, ']')
}

func (e *cjsonEncoder) object(t *lua.LTable, depth, slots int) {
	e.buf = append(e.buf, '{')
	first := true
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		if !first {
			e.buf = append(e.buf, ',')
		}
		first = false
		switch key := k.(type) {
		case lua.LNumber:
			e.buf = append(e.buf, '"')
			e.number(key)
			e.buf = append(e.buf, '"', ':')
		case lua.LString:
			e.string(string(key))
			e.buf = append(e.buf, ':')
		default:
			e.fail(k, "table key must be a number or string")
		}
		// lua_next pushes the key and the value: two more slots.
		e.value(v, depth, slots+2)
	}
	e.buf = append(e.buf, '}')
}

/* Decoding. */

type cjsonTokenType int

const (
	tokObjBegin cjsonTokenType = iota
	tokObjEnd
	tokArrBegin
	tokArrEnd
	tokString
	tokNumber
	tokBoolean
	tokNull
	tokColon
	tokComma
	tokEnd
	tokError
)

// cjsonTokenNames are the names lua-cjson prints for unexpected tokens.
var cjsonTokenNames = [...]string{
	tokObjBegin: "T_OBJ_BEGIN",
	tokObjEnd:   "T_OBJ_END",
	tokArrBegin: "T_ARR_BEGIN",
	tokArrEnd:   "T_ARR_END",
	tokString:   "T_STRING",
	tokNumber:   "T_NUMBER",
	tokBoolean:  "T_BOOLEAN",
	tokNull:     "T_NULL",
	tokColon:    "T_COLON",
	tokComma:    "T_COMMA",
	tokEnd:      "T_END",
	tokError:    "T_ERROR",
}

type cjsonToken struct {
	typ   cjsonTokenType
	index int    // byte offset of the token, or of the error
	str   string // string value, or error message for tokError
	num   float64
	b     bool
}

type cjsonDecoder struct {
	L     *lua.LState
	cfg   *cjsonConfig
	null  *lua.LUserData
	data  string
	pos   int
	depth int
	tmp   []byte
}

func cjsonDecode(L *lua.LState, cfg *cjsonConfig, null *lua.LUserData) int {
	if L.GetTop() != 1 {
		extlibArgError(L, 1, "expected 1 argument")
	}
	data, ok := extlibToString(L.Get(1))
	if !ok {
		extlibTypeError(L, 1, "string")
	}
	if len(data) >= 2 && (data[0] == 0 || data[1] == 0) {
		extlibRaise(L, "JSON parser does not support UTF-16 or UTF-32")
	}
	// lua-cjson parses a C string: input stops at the first NUL.
	if i := strings.IndexByte(data, 0); i >= 0 {
		data = data[:i]
	}
	d := &cjsonDecoder{L: L, cfg: cfg, null: null, data: data}
	var tok cjsonToken
	d.next(&tok)
	// One stack slot holds the argument; see extlibMaxCStack.
	v := d.value(&tok, 1)
	d.next(&tok)
	if tok.typ != tokEnd {
		d.parseError("the end", &tok)
	}
	L.Push(v)
	return 1
}

func (d *cjsonDecoder) at(i int) byte {
	if i < len(d.data) {
		return d.data[i]
	}
	return 0
}

func (d *cjsonDecoder) parseError(expected string, tok *cjsonToken) {
	found := cjsonTokenNames[tok.typ]
	if tok.typ == tokError {
		found = tok.str
	}
	extlibRaise(d.L, "Expected %s but found %s at character %d", expected, found, tok.index+1)
}

func (d *cjsonDecoder) tokenError(tok *cjsonToken, msg string) {
	tok.typ = tokError
	tok.index = d.pos
	tok.str = msg
}

// isInvalidNumber reports whether the text at the current position is a
// number that JSON does not allow but strtod reads: a leading '+', hex, a
// leading zero, inf or nan.
func (d *cjsonDecoder) isInvalidNumber() bool {
	p := d.pos
	if d.at(p) == '+' {
		return true
	}
	if d.at(p) == '-' {
		p++
	}
	c := d.at(p)
	if c == '0' {
		c2 := d.at(p + 1)
		return c2|0x20 == 'x' || extlibIsDigit(c2)
	}
	if c <= '9' {
		return false
	}
	return extlibHasPrefixFold(d.data, p, "inf") || extlibHasPrefixFold(d.data, p, "nan")
}

func (d *cjsonDecoder) next(tok *cjsonToken) {
	for {
		c := d.at(d.pos)
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			break
		}
		d.pos++
	}
	*tok = cjsonToken{index: d.pos}
	c := d.at(d.pos)
	single := func(t cjsonTokenType) {
		tok.typ = t
		d.pos++
	}
	switch c {
	case 0:
		tok.typ = tokEnd
	case '{':
		single(tokObjBegin)
	case '}':
		single(tokObjEnd)
	case '[':
		single(tokArrBegin)
	case ']':
		single(tokArrEnd)
	case ',':
		single(tokComma)
	case ':':
		single(tokColon)
	case '"':
		d.stringToken(tok)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if d.cfg.decodeInvalid == 0 && d.isInvalidNumber() {
			d.tokenError(tok, "invalid number")
			return
		}
		d.numberToken(tok)
	case 't', 'f', 'n', 'i', 'I', 'N', '+':
		rest := d.data[d.pos:]
		switch {
		case strings.HasPrefix(rest, "true"):
			tok.typ, tok.b = tokBoolean, true
			d.pos += 4
		case strings.HasPrefix(rest, "false"):
			tok.typ, tok.b = tokBoolean, false
			d.pos += 5
		case strings.HasPrefix(rest, "null"):
			tok.typ = tokNull
			d.pos += 4
		case d.cfg.decodeInvalid != 0 && d.isInvalidNumber():
			d.numberToken(tok)
		default:
			d.tokenError(tok, "invalid token")
		}
	default:
		d.tokenError(tok, "invalid token")
	}
}

func (d *cjsonDecoder) numberToken(tok *cjsonToken) {
	f, n := extlibStrtod(d.data, d.pos)
	if n == 0 {
		d.tokenError(tok, "invalid number")
		return
	}
	tok.typ = tokNumber
	tok.num = f
	d.pos += n
}

func (d *cjsonDecoder) hex4(i int) int {
	v := 0
	for j := i; j < i+4; j++ {
		c := d.at(j)
		switch {
		case extlibIsDigit(c):
			v = v<<4 | int(c-'0')
		case c|0x20 >= 'a' && c|0x20 <= 'f':
			v = v<<4 | int(c|0x20-'a'+10)
		default:
			return -1
		}
	}
	return v
}

// unicodeEscape decodes the \uXXXX escape (or surrogate pair) at the
// current position into d.tmp, and reports whether it was valid.
func (d *cjsonDecoder) unicodeEscape() bool {
	cp := d.hex4(d.pos + 2)
	if cp < 0 {
		return false
	}
	length := 6
	if cp&0xF800 == 0xD800 {
		if cp&0x400 != 0 {
			return false // a low surrogate cannot come first
		}
		if d.at(d.pos+6) != '\\' || d.at(d.pos+7) != 'u' {
			return false
		}
		low := d.hex4(d.pos + 8)
		if low < 0 || low&0xFC00 != 0xDC00 {
			return false
		}
		cp = ((cp&0x3FF)<<10 | low&0x3FF) + 0x10000
		length = 12
	}
	switch {
	case cp < 0x80:
		d.tmp = append(d.tmp, byte(cp))
	case cp < 0x800:
		d.tmp = append(d.tmp, byte(0xC0|cp>>6), byte(0x80|cp&0x3F))
	case cp < 0x10000:
		d.tmp = append(d.tmp, byte(0xE0|cp>>12), byte(0x80|(cp>>6)&0x3F), byte(0x80|cp&0x3F))
	default:
		d.tmp = append(d.tmp, byte(0xF0|cp>>18), byte(0x80|(cp>>12)&0x3F), byte(0x80|(cp>>6)&0x3F), byte(0x80|cp&0x3F))
	}
	d.pos += length
	return true
}

func (d *cjsonDecoder) stringToken(tok *cjsonToken) {
	d.pos++ // opening quote
	d.tmp = d.tmp[:0]
	for {
		c := d.at(d.pos)
		if c == '"' {
			break
		}
		if c == 0 {
			d.tokenError(tok, "unexpected end of string")
			return
		}
		if c == '\\' {
			switch d.at(d.pos + 1) {
			case '"':
				c = '"'
			case '\\':
				c = '\\'
			case '/':
				c = '/'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'u':
				if !d.unicodeEscape() {
					d.tokenError(tok, "invalid unicode escape code")
					return
				}
				continue
			default:
				d.tokenError(tok, "invalid escape code")
				return
			}
			d.pos++
		}
		d.tmp = append(d.tmp, c)
		d.pos++
	}
	d.pos++ // closing quote
	tok.typ = tokString
	tok.str = string(d.tmp)
}

// descend enters an array or object. need is the number of stack slots
// lua-cjson checks for at this level (2 for an array, 3 for an object).
func (d *cjsonDecoder) descend(slots, need int) {
	d.depth++
	if d.depth > d.cfg.decodeMaxDepth || slots+need > extlibMaxCStack {
		extlibRaise(d.L, "Found too many nested data structures (%d) at character %d", d.depth, d.pos)
	}
}

// value converts the value starting with tok. slots counts the Lua stack
// slots lua-cjson would be using at this point.
func (d *cjsonDecoder) value(tok *cjsonToken, slots int) lua.LValue {
	switch tok.typ {
	case tokString:
		return lua.LString(tok.str)
	case tokNumber:
		return lua.LNumber(tok.num)
	case tokBoolean:
		return lua.LBool(tok.b)
	case tokNull:
		return d.null
	case tokObjBegin:
		return d.object(slots)
	case tokArrBegin:
		return d.array(slots)
	}
	d.parseError("value", tok)
	return lua.LNil
}

func (d *cjsonDecoder) array(slots int) lua.LValue {
	d.descend(slots, 2)
	t := d.L.NewTable()
	var tok cjsonToken
	d.next(&tok)
	if tok.typ == tokArrEnd {
		d.depth--
		return t
	}
	for i := 1; ; i++ {
		// The table occupies one more slot while its elements are parsed.
		t.RawSetInt(i, d.value(&tok, slots+1))
		d.next(&tok)
		if tok.typ == tokArrEnd {
			d.depth--
			return t
		}
		if tok.typ != tokComma {
			d.parseError("comma or array end", &tok)
		}
		d.next(&tok)
	}
}

func (d *cjsonDecoder) object(slots int) lua.LValue {
	d.descend(slots, 3)
	t := d.L.NewTable()
	var tok cjsonToken
	d.next(&tok)
	if tok.typ == tokObjEnd {
		d.depth--
		return t
	}
	for {
		if tok.typ != tokString {
			d.parseError("object key string", &tok)
		}
		key := tok.str
		d.next(&tok)
		if tok.typ != tokColon {
			d.parseError("colon", &tok)
		}
		d.next(&tok)
		// The table and the key occupy two more slots.
		t.RawSetString(key, d.value(&tok, slots+2))
		d.next(&tok)
		if tok.typ == tokObjEnd {
			d.depth--
			return t
		}
		if tok.typ != tokComma {
			d.parseError("comma or object end", &tok)
		}
		d.next(&tok)
	}
}
