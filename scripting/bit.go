package scripting

import (
	"maps"
	"math"
	"math/bits"
	"slices"

	lua "github.com/yuin/gopher-lua"
)

// This file implements the "bit" library that Redis exposes to scripts
// (LuaBitOp 1.0.2 for Lua 5.1). Every operation works on 32-bit integers
// and returns a signed 32-bit result as a Lua number.

// openBit registers the global table "bit" in L with LuaBitOp's functions:
// tobit, tohex, bnot, band, bor, bxor, lshift, rshift, arshift, rol, ror and
// bswap. Arguments are numbers, or strings convertible to numbers, reduced
// modulo 2^32 (non-integral values rounded to the nearest integer, ties to
// even) and read as signed 32-bit integers, exactly as on Redis 7.0.
func openBit(L *lua.LState) {
	mod := L.NewTable()
	fns := map[string]lua.LGFunction{
		"tobit": func(L *lua.LState) int {
			return bitReturn(L, bitArg(L, 1))
		},
		"bnot": func(L *lua.LState) int {
			return bitReturn(L, ^bitArg(L, 1))
		},
		"band": func(L *lua.LState) int {
			return bitFold(L, func(a, b uint32) uint32 { return a & b })
		},
		"bor": func(L *lua.LState) int {
			return bitFold(L, func(a, b uint32) uint32 { return a | b })
		},
		"bxor": func(L *lua.LState) int {
			return bitFold(L, func(a, b uint32) uint32 { return a ^ b })
		},
		"lshift": func(L *lua.LState) int {
			return bitShift(L, func(b uint32, n uint) uint32 { return b << n })
		},
		"rshift": func(L *lua.LState) int {
			return bitShift(L, func(b uint32, n uint) uint32 { return b >> n })
		},
		"arshift": func(L *lua.LState) int {
			return bitShift(L, func(b uint32, n uint) uint32 { return uint32(int32(b) >> n) })
		},
		"rol": func(L *lua.LState) int {
			return bitShift(L, func(b uint32, n uint) uint32 { return bits.RotateLeft32(b, int(n)) })
		},
		"ror": func(L *lua.LState) int {
			return bitShift(L, func(b uint32, n uint) uint32 { return bits.RotateLeft32(b, -int(n)) })
		},
		"bswap": func(L *lua.LState) int {
			return bitReturn(L, bits.ReverseBytes32(bitArg(L, 1)))
		},
		"tohex": bitToHex,
	}
	// Sorted, so that pairs(bit) gives the same order in every state.
	for _, name := range slices.Sorted(maps.Keys(fns)) {
		mod.RawSetString(name, L.NewFunction(fns[name]))
	}
	L.SetGlobal("bit", mod)
}

// bitArg converts argument idx to a 32-bit value the way LuaBitOp does:
// adding 2^52+2^51 to the number puts its integer part, rounded to nearest
// even, into the low 32 bits of the double's representation. Integers
// beyond 2^51 in magnitude, infinities and NaN give what that computation
// gives on x86-64 (NaN gives 0).
func bitArg(L *lua.LState, idx int) uint32 {
	f, ok := extlibToNumber(L.Get(idx))
	if !ok {
		extlibTypeError(L, idx, "number")
	}
	if math.IsNaN(f) {
		return 0
	}
	return uint32(math.Float64bits(f + 6755399441055744.0))
}

func bitReturn(L *lua.LState, b uint32) int {
	L.Push(lua.LNumber(int32(b)))
	return 1
}

// bitFold implements band, bor and bxor. Like LuaBitOp it converts the
// first argument, then the others from the last one down, so a bad
// argument reported is the first bad one from the end.
func bitFold(L *lua.LState, op func(a, b uint32) uint32) int {
	b := bitArg(L, 1)
	for i := L.GetTop(); i > 1; i-- {
		b = op(b, bitArg(L, i))
	}
	return bitReturn(L, b)
}

// bitShift implements the shifts and rotations: the count is the second
// argument modulo 32.
func bitShift(L *lua.LState, op func(b uint32, n uint) uint32) int {
	b := bitArg(L, 1)
	n := uint(bitArg(L, 2) & 31)
	return bitReturn(L, op(b, n))
}

// bitToHex implements bit.tohex(x [, n]): the low |n| hex digits of x
// (at most 8, default 8), in upper case when n is negative.
func bitToHex(L *lua.LState) int {
	b := bitArg(L, 1)
	n := int32(8)
	if L.GetTop() >= 2 {
		n = int32(bitArg(L, 2))
	}
	digits := "0123456789abcdef"
	switch {
	case n == math.MinInt32:
		// -n overflows in LuaBitOp's C code; the Redis 7.0 build on
		// x86-64 then prints eight lower-case digits.
		n = 8
	case n < 0:
		n = -n
		digits = "0123456789ABCDEF"
	}
	if n > 8 {
		n = 8
	}
	buf := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		buf[i] = digits[b&15]
		b >>= 4
	}
	L.Push(lua.LString(buf))
	return 1
}
