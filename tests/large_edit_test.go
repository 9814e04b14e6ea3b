package tests

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The large-value edit tests pin down the replies of the commands that
// edit or read part of a string longer than the inline maximum (64 KiB):
// APPEND, SETRANGE, SETBIT, GETRANGE, GETBIT, BITCOUNT, BITPOS, across the
// 4 KiB chunk boundaries of the chunked layout, across the inline
// threshold, with sparse writes far past a value's end, in pipelines,
// transactions, on a replica and after a restart. Re-run a failure with
// the seed and length from its message:
//
//	CAIRN_LARGE_SEED=S CAIRN_LARGE_N=N CAIRN_BIN=$PWD/bin/cairn go test -count=1 -run 'TestLargeValueEditsMatchRedis/MODE$' ./tests/

const (
	leChunk     = 4 << 10   // the chunk size of the chunked layout (storage.chunkSize)
	leInlineMax = 64 << 10  // storage.DefaultInlineValueMax
	leMaxLen    = 4 << 20   // the longest value the random stream builds
	leMaxSet    = 1 << 20   // the longest value it SETs whole
	leMaxBulk   = 512 << 20 // proto-max-bulk-len: longer writes are errors
	// leDefaultSeed and leDefaultN are the random stream's defaults
	// ($CAIRN_LARGE_SEED, $CAIRN_LARGE_N): N commands in each mode, after
	// the fixed ones of leGen.prelude.
	leDefaultSeed = 20260901
	leDefaultN    = 600
	// leHistory is how many earlier commands a failure message shows.
	leHistory = 8
)

// leDebug starts a Cairn with DEBUG CHECK-VALUES, which the tests call to
// prove that no chunk record outlives its value.
var leDebug = []string{"CAIRN_DEBUG_FAULTS=1"}

// leCheckValues fails t unless DEBUG CHECK-VALUES finds every chunk
// record of the node in a value and within it.
func leCheckValues(t *testing.T, where string, c *redis.Client) {
	t.Helper()
	if n, err := c.Do(ctx(t), "DEBUG", "CHECK-VALUES").Int64(); err != nil {
		t.Fatalf("%s: DEBUG CHECK-VALUES: %d, %v", where, n, err)
	}
}

// leKeys is the random stream's key space.
var leKeys = []string{"le:a", "le:b", "le:c", "le:d", "le:e", "le:f"}

func leSettings(t *testing.T) (seed int64, n int) {
	return envInt(t, "CAIRN_LARGE_SEED", leDefaultSeed), int(envInt(t, "CAIRN_LARGE_N", leDefaultN))
}

// leModes are the ways the stream is sent: one command at a time, in
// pipelines of 1 to 20 requests, in MULTI/EXEC blocks of 2 to 6.
var leModes = []struct {
	name     string
	min, max int
	multi    bool
}{
	{name: "single", min: 1, max: 1},
	{name: "pipeline", min: 1, max: 20},
	{name: "multi", min: 2, max: 6, multi: true},
}

// TestLargeValueEditsMatchRedis sends a seeded random stream of string
// commands over six keys holding values from empty to 4 MB to Cairn and
// to redis-server 7.0 and compares every reply byte for byte: SET (of
// lengths around the inline maximum and the chunk multiples too), APPEND,
// SETRANGE (inside, at and just past the end, at chunk boundaries, far
// past the end, empty), GETRANGE, STRLEN, GET, SETBIT, GETBIT, BITCOUNT,
// BITPOS, BITFIELD, GETDEL, GETSET, DEL, EXISTS, RENAME, COPY and INCR. A fixed
// prelude of boundary cases comes first. It does so in three subtests,
// each against fresh servers and with a stream of its own: one command at
// a time, in pipelines, in MULTI/EXEC blocks; each ends comparing every
// key's value, and checking it against the test's own model of the
// stream (which proves the stream built the values it meant to).
func TestLargeValueEditsMatchRedis(t *testing.T) {
	seed, n := leSettings(t)
	for i, mode := range leModes {
		t.Run(mode.name, func(t *testing.T) {
			start := time.Now()
			cairnNode, redisNode := StartCairnEnv(t, leDebug), StartRedis(t)
			r := &leRunner{t: t, mode: mode.name, seed: seed, n: n, cairn: cairnNode.Raw(), redis: redisNode.Raw(), cairnNode: cairnNode}
			g := newLeGen(seed, uint64(i))
			queue := g.prelude()
			total := len(queue) + n
			groups, longest, sentBytes := 0, 0, 0
			for sent := 0; sent < total; {
				size := mode.min + g.rng.IntN(mode.max-mode.min+1)
				var cmds [][]string
				for len(cmds) < size && sent < total {
					var args []string
					if len(queue) > 0 {
						args, queue = queue[0], queue[1:]
					} else {
						args = g.next()
					}
					g.model.apply(args)
					for _, v := range g.model {
						longest = max(longest, len(v))
					}
					for _, a := range args {
						sentBytes += len(a)
					}
					cmds = append(cmds, args)
					sent++
				}
				r.group(cmds, mode.multi)
				groups++
				// The model does not run BITFIELD: it takes Redis's value.
				for _, args := range cmds {
					if strings.EqualFold(args[0], "BITFIELD") {
						var wire bytes.Buffer
						leWire(&wire, []string{"GET", args[1]})
						if v := diffParse(leRoundTrip(r.redis, wire.Bytes(), 1)[0]); v.null {
							delete(g.model, args[1])
						} else {
							g.model[args[1]] = []byte(v.str)
						}
					}
				}
			}
			r.compareKeyspace(g.model)
			t.Logf("seed %d: %d commands (%d fixed) in %d groups, %.1f MB of arguments, longest value %d bytes, error replies %v, in %v",
				seed, total, total-n, groups, float64(sentBytes)/(1<<20), longest, r.errors, time.Since(start).Round(time.Millisecond))
		})
	}
}

// ---- the model ----

// leModel is what the keys hold after the commands applied to it, as
// Redis 7.0 runs them (a missing key has no entry). The generator picks
// offsets and lengths from it, and the end of each mode checks it against
// Redis, so that a stream that did not build what it meant to is noticed.
type leModel map[string][]byte

// apply runs one command of the stream on m. Commands that fail in Redis
// change nothing.
func (m leModel) apply(args []string) {
	k := ""
	if len(args) > 1 {
		k = args[1]
	}
	switch strings.ToUpper(args[0]) {
	case "SET", "GETSET":
		m[k] = []byte(args[2])
	case "APPEND":
		m[k] = append(m[k], args[2]...)
	case "SETRANGE":
		off, ok := leParseInt(args[2])
		v := args[3]
		cur := m[k]
		if !ok || off < 0 || v == "" || off > int64(leMaxBulk-len(v)) {
			return
		}
		need := int(off) + len(v)
		if need > len(cur) {
			cur = append(cur, make([]byte, need-len(cur))...)
		}
		copy(cur[off:], v)
		m[k] = cur
	case "SETBIT":
		off, ok := leParseInt(args[2])
		if !ok || off < 0 || off>>3 >= leMaxBulk || args[3] != "0" && args[3] != "1" {
			return
		}
		cur := m[k]
		if i := int(off >> 3); i >= len(cur) {
			cur = append(cur, make([]byte, i+1-len(cur))...)
		}
		mask := byte(1) << (7 - off&7)
		if args[3] == "1" {
			cur[off>>3] |= mask
		} else {
			cur[off>>3] &^= mask
		}
		m[k] = cur
	case "GETDEL":
		delete(m, k)
	case "DEL":
		for _, d := range args[1:] {
			delete(m, d)
		}
	case "RENAME":
		if v, ok := m[k]; ok {
			delete(m, k)
			m[args[2]] = v
		}
	case "COPY":
		dst := args[2]
		v, ok := m[k]
		_, taken := m[dst]
		if ok && k != dst && (!taken || len(args) > 3) {
			m[dst] = bytes.Clone(v)
		}
	case "INCR":
		cur, ok := m[k]
		if !ok {
			m[k] = []byte("1")
			return
		}
		if n, ok := leParseInt(string(cur)); ok && n != math.MaxInt64 {
			m[k] = strconv.AppendInt(nil, n+1, 10)
		}
	}
}

// leParseInt parses s as Redis's string2ll does: an optional minus, no
// leading zeros, no plus, no spaces, at most 20 characters.
func leParseInt(s string) (int64, bool) {
	if s == "" || len(s) > 20 {
		return 0, false
	}
	d := strings.TrimPrefix(s, "-")
	if d == "" || d[0] == '0' && s != "0" {
		return 0, false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// ---- the generator ----

type leGen struct {
	rng   *rand.Rand
	pool  []byte // random bytes that values are cut from
	model leModel
}

func newLeGen(seed int64, stream uint64) *leGen {
	g := &leGen{rng: rand.New(rand.NewPCG(uint64(seed), 0x1a76e+stream)), model: leModel{}}
	g.pool = make([]byte, 2<<20)
	for i := 0; i < len(g.pool); i += 8 {
		v := g.rng.Uint64()
		for j := 0; j < 8; j++ {
			g.pool[i+j] = byte(v >> (8 * j))
		}
	}
	return g
}

func (g *leGen) key() string               { return leKeys[g.rng.IntN(len(leKeys))] }
func (g *leGen) pick(list []string) string { return list[g.rng.IntN(len(list))] }
func (g *leGen) chance(p float64) bool     { return g.rng.Float64() < p }

// value returns n bytes: mostly random ones cut from the pool, sometimes
// one byte repeated (long runs of zero or one bits for BITPOS).
func (g *leGen) value(n int) string {
	if g.chance(0.15) {
		return strings.Repeat(g.pick([]string{"\x00", "\xff", "a"}), n)
	}
	off := g.rng.IntN(len(g.pool) - n + 1)
	return string(g.pool[off : off+n])
}

// size returns the length of a value to SET: small, medium, at a
// boundary, or large (up to leMaxSet).
func (g *leGen) size() int {
	switch x := g.rng.IntN(20); {
	case x < 6:
		return g.rng.IntN(65)
	case x < 9:
		return 1 + g.rng.IntN(leInlineMax)
	case x < 13:
		return g.boundary()
	default:
		return leInlineMax + 1 + g.rng.IntN(leMaxSet-leInlineMax)
	}
}

// boundary returns 65535, 65536 or 65537, or a multiple of the chunk
// size (up to leMaxSet), or one less or more.
func (g *leGen) boundary() int {
	if g.chance(0.3) {
		return leInlineMax - 1 + g.rng.IntN(3)
	}
	return (1+g.rng.IntN(leMaxSet/leChunk))*leChunk - 1 + g.rng.IntN(3)
}

// chunkEdge returns a byte offset at a chunk boundary up to limit, or one
// before or after it.
func (g *leGen) chunkEdge(limit int) int {
	return max(0, g.rng.IntN(limit/leChunk+1)*leChunk-1+g.rng.IntN(3))
}

// writeOffset returns where a SETRANGE into a value of length l writes.
func (g *leGen) writeOffset(l int) int {
	switch x := g.rng.IntN(20); {
	case x < 5 && l > 0:
		return g.rng.IntN(l) // inside
	case x < 7:
		return l // at the end
	case x < 9:
		return l + 1 + g.rng.IntN(100) // just past the end
	case x < 14:
		return g.chunkEdge(l + 2*leChunk)
	case x < 16:
		return l + 1 + g.rng.IntN(3<<20) // far past the end: a hole
	case x < 17:
		return leInlineMax - 1 + g.rng.IntN(3)
	default:
		return g.rng.IntN(l + 1)
	}
}

// rangeIdx returns the start and end of a GETRANGE, BITCOUNT or BITPOS
// over a value of l bytes, in bytes (unit 1) or bits (unit 8).
func (g *leGen) rangeIdx(l, unit int) (string, string) {
	it := strconv.Itoa
	n := l * unit
	switch g.rng.IntN(11) {
	case 0:
		return "0", "-1"
	case 1: // across a chunk boundary
		b := g.chunkEdge(l+leChunk) * unit
		return it(max(0, b-g.rng.IntN(300*unit))), it(b + g.rng.IntN(300*unit))
	case 2: // one whole chunk
		k := g.rng.IntN(l/leChunk + 2)
		return it(k * leChunk * unit), it((k+1)*leChunk*unit - 1)
	case 3: // from the end
		a, b := -1-g.rng.IntN(n+20), -1-g.rng.IntN(n+20)
		return it(min(a, b)), it(max(a, b))
	case 4: // past the end
		a := n + g.rng.IntN(100)
		return it(a), it(a + g.rng.IntN(1000))
	case 5:
		p := [][2]string{
			{"0", "9223372036854775807"}, {"-9223372036854775808", "-1"}, {"-9223372036854775808", "9223372036854775807"},
			{"9223372036854775807", "9223372036854775807"}, {"-1", "-9223372036854775808"}, {"-1", "-1"}, {"0", "0"},
		}[g.rng.IntN(7)]
		return p[0], p[1]
	case 6: // around the inline maximum
		return it(leInlineMax*unit - g.rng.IntN(20*unit)), it(leInlineMax*unit + g.rng.IntN(20*unit))
	case 7: // reversed
		a, b := g.rng.IntN(n+10), g.rng.IntN(n+10)
		return it(max(a, b)), it(min(a, b))
	default:
		return it(g.rng.IntN(2*n+41) - n - 20), it(g.rng.IntN(2*n+41) - n - 20)
	}
}

// bitOffset returns a SETBIT or GETBIT offset into a value of l bytes:
// inside, just past the end, at a chunk boundary or the inline maximum,
// far past the end, or (rarely) invalid. A write never grows a value
// beyond leMaxLen.
func (g *leGen) bitOffset(l int, write bool) string {
	var off int
	switch x := g.rng.IntN(20); {
	case x < 6 && l > 0:
		off = g.rng.IntN(8 * l)
	case x < 9:
		off = 8*l + g.rng.IntN(64)
	case x < 13:
		off = 8*g.chunkEdge(l+2*leChunk) + g.rng.IntN(8)
	case x < 15:
		off = 8*(leInlineMax-1+g.rng.IntN(3)) + g.rng.IntN(8)
	case x < 17:
		off = 8*l + g.rng.IntN(8*(3<<20))
	case x < 19 && !write:
		return g.pick([]string{"4294967295", "33554432", "0", "-0"})
	default:
		return g.pick([]string{"-1", "4294967296", "abc", "9223372036854775807", ""})
	}
	if write && off>>3 >= leMaxLen {
		off = g.rng.IntN(8 * max(l, 1))
	}
	return strconv.Itoa(off)
}

// unit returns BITCOUNT's or BITPOS's optional unit and its size.
func (g *leGen) unit() (string, int) {
	switch g.rng.IntN(4) {
	case 0:
		return "", 1
	case 1:
		return g.pick([]string{"BYTE", "byte"}), 1
	default:
		return g.pick([]string{"BIT", "bit"}), 8
	}
}

// bitfield returns a BITFIELD (or BITFIELD_RO) of one to three fields at
// offsets around the value's end, its chunk boundaries and the inline
// maximum.
func (g *leGen) bitfield(k string, l int) []string {
	args := []string{"BITFIELD", k}
	ro := g.chance(0.2)
	if ro {
		args[0] = "BITFIELD_RO"
	}
	for range 1 + g.rng.IntN(3) {
		typ := g.pick([]string{"u1", "u8", "i8", "u16", "i32", "u63", "i64"})
		op := "GET"
		if !ro {
			op = g.pick([]string{"GET", "SET", "INCRBY"})
		}
		off := g.bitOffset(l, op != "GET")
		if g.chance(0.1) {
			off = "#" + strconv.Itoa(g.rng.IntN(8*l/64+2))
		}
		args = append(args, op, typ, off)
		if op != "GET" {
			args = append(args, strconv.FormatInt(g.rng.Int64N(1<<40)-1<<39, 10))
		}
		if g.chance(0.2) {
			args = append(args, "OVERFLOW", g.pick([]string{"WRAP", "SAT", "FAIL"}))
		}
	}
	return args
}

// next returns a random command, its arguments chosen from the model.
func (g *leGen) next() []string {
	k := g.key()
	l := len(g.model[k])
	it := strconv.Itoa
	switch w := g.rng.IntN(100); {
	case w < 9:
		return []string{"SET", k, g.value(g.size())}
	case w < 22:
		var n int
		switch x := g.rng.IntN(20); {
		case x < 7:
			n = g.rng.IntN(51)
		case x < 17:
			n = 16<<10 + g.rng.IntN(24<<10+1)
		default: // up to the next chunk boundary or the inline maximum, ±1
			edge := (l/leChunk + 1) * leChunk
			if l < leInlineMax && g.chance(0.5) {
				edge = leInlineMax
			}
			n = max(0, edge-l-1+g.rng.IntN(3))
		}
		n = min(n, leMaxLen-l)
		return []string{"APPEND", k, g.value(n)}
	case w < 36:
		if g.chance(0.04) {
			bad := g.pick([]string{"-1", "abc", "536870912", "9223372036854775807", "1.5", ""})
			return []string{"SETRANGE", k, bad, g.value(g.rng.IntN(3))}
		}
		var n int
		switch x := g.rng.IntN(25); {
		case x < 2:
			n = 0
		case x < 13:
			n = 1 + g.rng.IntN(20)
		case x < 21:
			n = 1 + g.rng.IntN(40<<10)
		default:
			n = []int{leChunk - 1, leChunk, leChunk + 1, 2 * leChunk}[g.rng.IntN(4)]
		}
		off := g.writeOffset(l)
		if off+n > leMaxLen {
			off = g.rng.IntN(min(l, leMaxLen-n) + 1)
		}
		return []string{"SETRANGE", k, it(off), g.value(n)}
	case w < 48:
		s, e := g.rangeIdx(l, 1)
		return []string{"GETRANGE", k, s, e}
	case w < 51:
		return []string{"STRLEN", k}
	case w < 54:
		return []string{"GET", k}
	case w < 61:
		bit := g.pick([]string{"0", "1"})
		if g.chance(0.03) {
			bit = g.pick([]string{"2", "-1", "x"})
		}
		return []string{"SETBIT", k, g.bitOffset(l, true), bit}
	case w < 67:
		return []string{"GETBIT", k, g.bitOffset(l, false)}
	case w < 72:
		switch x := g.rng.IntN(10); {
		case x < 3:
			return []string{"BITCOUNT", k}
		case x < 9:
			unit, u := g.unit()
			s, e := g.rangeIdx(l, u)
			if unit == "" {
				return []string{"BITCOUNT", k, s, e}
			}
			return []string{"BITCOUNT", k, s, e, unit}
		default:
			return g.pickArgs([][]string{{"BITCOUNT", k, "0"}, {"BITCOUNT", k, "0", "1", "BOTH"}, {"BITCOUNT", k, "a", "1"}})
		}
	case w < 77:
		bit := g.pick([]string{"0", "1"})
		if g.chance(0.03) {
			bit = "2"
		}
		unit, u := g.unit()
		s, e := g.rangeIdx(l, u)
		switch g.rng.IntN(4) {
		case 0:
			return []string{"BITPOS", k, bit}
		case 1:
			return []string{"BITPOS", k, bit, s}
		case 2:
			return []string{"BITPOS", k, bit, s, e}
		default:
			if unit == "" {
				unit = "BYTE"
			}
			return []string{"BITPOS", k, bit, s, e, unit}
		}
	case w < 79:
		return []string{"GETDEL", k}
	case w < 81:
		return []string{"GETSET", k, g.value(g.size())}
	case w < 83:
		return append([]string{"DEL", k}, leKeys[:g.rng.IntN(2)]...)
	case w < 85:
		return []string{"EXISTS", k, g.key(), g.key()}
	case w < 88:
		return []string{"RENAME", k, g.key()}
	case w < 91:
		if g.chance(0.5) {
			return []string{"COPY", k, g.key(), "REPLACE"}
		}
		return []string{"COPY", k, g.key()}
	case w < 94:
		return []string{"INCR", k}
	case w < 96:
		return []string{"SET", k, g.value(g.size()), "GET"}
	case w < 98:
		return g.bitfield(k, l)
	default:
		return []string{"SET", k, it(g.rng.IntN(2001) - 1000)}
	}
}

func (g *leGen) pickArgs(list [][]string) []string { return list[g.rng.IntN(len(list))] }

// prelude returns fixed cases at the boundaries the random stream may
// miss: values crossing the inline maximum by APPEND and SETRANGE, and
// the edited values' (one chunk) by APPEND, SETRANGE and SETBIT, edits
// spanning a chunk boundary or covering one chunk exactly, keys created
// sparse by SETRANGE and SETBIT, a large value shrunk by SET, and the
// errors and no-ops of SETRANGE and SETBIT.
func (g *leGen) prelude() [][]string {
	a, b, c, d, e, f := leKeys[0], leKeys[1], leKeys[2], leKeys[3], leKeys[4], leKeys[5]
	v, it := g.value, strconv.Itoa
	return [][]string{
		{"SET", a, v(leInlineMax)}, // the inline maximum exactly
		{"STRLEN", a},
		{"APPEND", a, "x"}, // one byte more
		{"GETRANGE", a, "65530", "-1"},
		{"SETRANGE", a, "65538", "yz"}, // one byte past the end
		{"GETRANGE", a, "65535", "65545"},
		{"GETBIT", a, it(8*65537 + 7)},
		{"SET", a, v(leInlineMax - 1)},
		{"APPEND", a, "y"}, // up to the inline maximum
		{"APPEND", a, ""},
		{"SETRANGE", a, "65536", "z"}, // past it by SETRANGE
		{"SETBIT", a, it(8 * 65537), "1"},
		{"GETRANGE", a, "-3", "-1"},
		{"SET", a, v(leChunk - 1)}, // an edit keeps up to a chunk inline
		{"APPEND", a, "x"},         // a chunk exactly
		{"APPEND", a, "y"},         // one byte more: an edit moves it to chunks
		{"GETRANGE", a, "4090", "-1"},
		{"SET", a, v(10000)},      // a whole write keeps it inline
		{"SETRANGE", a, "0", "z"}, // an edit moves it to chunks
		{"GET", a},
		{"SETBIT", a, it(8*10000 + 3), "1"},
		{"GETRANGE", a, "9995", "-1"},
		{"SET", a, v(9000)}, // inline again: its chunks go
		{"STRLEN", a},

		{"SET", b, v(leChunk - 1)},
		{"APPEND", b, v(30000)},
		{"APPEND", b, v(40000)},
		{"APPEND", b, v(16385)},
		{"SETRANGE", b, "16383", "AB"},       // across the first chunk boundary
		{"SETRANGE", b, "32768", v(leChunk)}, // the third chunk exactly
		{"GETRANGE", b, "16380", "16390"},
		{"GETRANGE", b, "32767", "49152"},
		{"GETBIT", b, "131071"},
		{"GETBIT", b, "131072"},
		{"SETBIT", b, "131071", "1"},
		{"SETBIT", b, "131072", "0"},
		{"BITCOUNT", b},
		{"BITCOUNT", b, "16383", "16384"},
		{"BITCOUNT", b, "131000", "131100", "BIT"},
		{"BITPOS", b, "0", "16383", "16384"},
		{"STRLEN", b},
		{"SETRANGE", b, "500000", "far past the end"}, // a hole in a large value
		{"GETRANGE", b, "102760", "102800"},
		{"GETRANGE", b, "114687", "114689"},
		{"BITCOUNT", b, "102768", "-1"},
		{"BITPOS", b, "1", "102768"},
		{"SETBIT", b, it(8*900_000 + 1), "1"}, // another one, by SETBIT
		{"GETRANGE", b, "499990", "500100"},
		{"BITPOS", b, "1", "500016", "-1"},
		{"GETBIT", b, it(8*900_000 + 1)},
		{"STRLEN", b},

		{"SETRANGE", c, "3000000", "tail"}, // a new key, a 3 MB hole
		{"STRLEN", c},
		{"GETRANGE", c, "16383", "16385"},
		{"GETRANGE", c, "2999990", "-1"},
		{"BITPOS", c, "1"},
		{"BITPOS", c, "0"},
		{"BITCOUNT", c},
		{"BITPOS", c, "1", "100", "-1"},
		{"BITPOS", c, "1", "-10", "-1", "BYTE"},
		{"BITPOS", c, "1", "0", "-1", "BIT"},
		{"SETRANGE", c, "1500000", v(leChunk + 1)}, // into the hole
		{"GETRANGE", c, "1499999", "1516385"},
		{"SETRANGE", c, "2000000", ""}, // nothing: the length

		{"SETBIT", d, "13107207", "1"}, // a new key: a 1.6 MB hole then one bit
		{"STRLEN", d},
		{"GETBIT", d, "13107207"},
		{"GETBIT", d, "13107206"},
		{"GETBIT", d, "4294967295"},
		{"BITPOS", d, "1"},
		{"BITPOS", d, "0", "1638400"},
		{"BITCOUNT", d, "0", "-1", "BIT"},
		{"SETBIT", d, "4294967296", "1"},
		{"SETBIT", d, "0", "2"},

		{"SET", e, v(1 << 20)},
		{"INCR", e},
		{"GETRANGE", e, "-16385", "-16383"},
		{"SET", e, "small"}, // shrunk back to an inline value
		{"GET", e},
		{"STRLEN", e},
		{"APPEND", e, v(70000)},
		{"SETRANGE", e, "536870912", "x"},
		{"SETRANGE", e, "536870912", ""},
		{"SETRANGE", e, "-1", "x"},

		{"SETRANGE", f, "0", ""}, // nothing: no key
		{"EXISTS", f},
		{"SETRANGE", f, "536870912", ""},
		{"COPY", b, f},
		{"COPY", b, f},
		{"COPY", c, f, "REPLACE"},
		{"GETRANGE", f, "2999999", "3000010"},
		{"RENAME", d, a},
		{"GETBIT", a, "13107207"},
		{"GETDEL", b},
		{"GETSET", c, "tiny"},
		{"SET", f, "41"},
		{"INCR", f},
		{"APPEND", f, v(leInlineMax)},
		{"INCR", f},
		{"DEL", a, e},
		{"EXISTS", a, b, c, d, e, f},
	}
}

// ---- sending and comparing ----

type leEntry struct {
	index        int
	args         []string
	cairn, redis string
}

type leRunner struct {
	t            *testing.T
	mode         string
	seed         int64
	n            int
	cairn, redis *RawConn
	cairnNode    *Node
	index        int // of the next command of the stream
	groups       int
	hist         []leEntry
	errors       map[string]int // error replies by command, for the log
	failed       bool           // fail stopped the test
}

// leWire appends args to b as a RESP multibulk.
func leWire(b *bytes.Buffer, args []string) {
	fmt.Fprintf(b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(b, "$%d\r\n", len(a))
		b.WriteString(a)
		b.WriteString("\r\n")
	}
}

// leRoundTrip writes wire to c while reading n replies, so that neither
// side can block on a full socket buffer with megabytes going both ways.
func leRoundTrip(c *RawConn, wire []byte, n int) []string {
	c.t.Helper()
	done := make(chan error, 1)
	go func() {
		c.c.SetWriteDeadline(time.Now().Add(60 * time.Second))
		_, err := c.c.Write(wire)
		done <- err
	}()
	out := make([]string, n)
	for i := range out {
		out[i] = c.Reply()
	}
	if err := <-done; err != nil {
		c.t.Fatalf("write: %v", err)
	}
	return out
}

// group sends cmds to both servers in one write (a pipeline; wrapped in
// MULTI and EXEC when multi) and compares every reply.
func (r *leRunner) group(cmds [][]string, multi bool) {
	r.t.Helper()
	finished := false
	defer func() {
		if !finished && !r.failed {
			// A connection failed (RawConn stops the test): say where.
			log := r.cairnNode.Log.Tail(4000)
			var b strings.Builder
			for j, args := range cmds {
				fmt.Fprintf(&b, "\n    #%d %s", r.index+j, diffShow(args))
			}
			r.t.Logf("stopped (seed %d, mode %s) in group %d:%s\ncairn log tail:\n%s", r.seed, r.mode, r.groups, b.String(), log)
		}
	}()
	sent := cmds
	if multi {
		sent = slices.Concat([][]string{{"MULTI"}}, cmds, [][]string{{"EXEC"}})
	}
	var wire bytes.Buffer
	for _, a := range sent {
		leWire(&wire, a)
	}
	cr := leRoundTrip(r.cairn, wire.Bytes(), len(sent))
	rr := leRoundTrip(r.redis, wire.Bytes(), len(sent))
	where := func(i int) string {
		if len(sent) == 1 {
			return ""
		}
		what := "pipeline"
		if multi {
			what = "MULTI/EXEC block"
		}
		return fmt.Sprintf("request %d of %d of %s %d", i+1, len(sent), what, r.groups)
	}
	idx := r.index
	for i, args := range sent {
		if multi && i == len(sent)-1 && cr[i] != rr[i] {
			// EXEC: name the command whose reply differs.
			cv, rv := diffParse(cr[i]), diffParse(rr[i])
			if cv.kind == '*' && rv.kind == '*' && len(cv.elems) == len(cmds) && len(rv.elems) == len(cmds) {
				for j := range cmds {
					if ce, re := diffRender(cv.elems[j]), diffRender(rv.elems[j]); ce != re {
						r.fail(r.index+j, cmds[j], ce, re, fmt.Sprintf("EXEC's reply %d of %d (%s)", j+1, len(cmds), where(i)))
					}
				}
			}
		}
		if cr[i] != rr[i] {
			r.fail(idx, args, cr[i], rr[i], where(i))
		}
		r.remember(idx, args, cr[i], rr[i])
		r.countErrors(args, rr[i], cmds)
		if !multi || i > 0 && i < len(sent)-1 {
			idx++
		}
	}
	r.index += len(cmds)
	r.groups++
	finished = true
}

// countErrors counts Redis's error replies by command for the log,
// those in EXEC's reply by the command queued.
func (r *leRunner) countErrors(args []string, reply string, queued [][]string) {
	if r.errors == nil {
		r.errors = map[string]int{}
	}
	if strings.EqualFold(args[0], "EXEC") {
		for j, e := range diffParse(reply).elems {
			if e.kind == '-' && j < len(queued) {
				r.errors[strings.ToUpper(queued[j][0])]++
			}
		}
	} else if strings.HasPrefix(reply, "-") {
		r.errors[strings.ToUpper(args[0])]++
	}
}

func (r *leRunner) remember(idx int, args []string, cairn, redis string) {
	r.hist = append(r.hist, leEntry{index: idx, args: args, cairn: cairn, redis: redis})
	if len(r.hist) > leHistory {
		r.hist = r.hist[1:]
	}
}

// fail stops the test with the command, both replies (a long one by
// length and hash, with where the two first differ), the key's state on
// both servers now, the commands before, and how to reproduce.
func (r *leRunner) fail(idx int, args []string, cairn, redis, where string) {
	r.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "large-value mismatch (seed %d, mode %s, command #%d", r.seed, r.mode, idx)
	if where != "" {
		fmt.Fprintf(&b, ", %s", where)
	}
	fmt.Fprintf(&b, ")\n  command: %s\n  cairn:   %s\n  redis:   %s\n", diffShow(args), leDescribe(cairn), leDescribe(redis))
	if d := leBulkDiff(cairn, redis); d != "" {
		fmt.Fprintf(&b, "  %s\n", d)
	}
	if len(args) > 1 && !strings.EqualFold(args[0], "MULTI") && !strings.EqualFold(args[0], "EXEC") {
		k := args[1]
		cs, rs := r.cairn.Do("STRLEN", k), r.redis.Do("STRLEN", k)
		cv, rv := r.cairn.Do("GET", k), r.redis.Do("GET", k)
		fmt.Fprintf(&b, "  now (after the whole group): STRLEN %s -> cairn %s, redis %s; GET -> cairn %s, redis %s\n",
			k, strings.TrimSpace(cs), strings.TrimSpace(rs), leDescribe(cv), leDescribe(rv))
		if d := leBulkDiff(cv, rv); d != "" {
			fmt.Fprintf(&b, "  values now: %s\n", d)
		}
	}
	if len(r.hist) > 0 {
		b.WriteString("  previous commands (oldest first):\n")
		for _, h := range r.hist {
			fmt.Fprintf(&b, "    #%d %s\n      cairn %s\n      redis %s\n", h.index, diffShow(h.args), leDescribe(h.cairn), leDescribe(h.redis))
		}
	}
	fmt.Fprintf(&b, "  reproduce: CAIRN_LARGE_SEED=%d CAIRN_LARGE_N=%d go test -count=1 -run 'TestLargeValueEditsMatchRedis/%s$' ./tests/",
		r.seed, r.n, r.mode)
	r.failed = true
	r.t.Fatal(b.String())
}

// leDescribe renders a raw reply, a long one by its length, hash and
// first bytes.
func leDescribe(raw string) string {
	if len(raw) <= 120 {
		return strconv.Quote(raw)
	}
	if v := diffParse(raw); v.kind == '$' && !v.null {
		sum := sha256.Sum256([]byte(v.str))
		return fmt.Sprintf("bulk string of %d bytes, sha256 %x, starting %q", len(v.str), sum[:8], v.str[:24])
	}
	sum := sha256.Sum256([]byte(raw))
	return fmt.Sprintf("reply of %d bytes, sha256 %x, starting %q", len(raw), sum[:8], raw[:48])
}

// leBulkDiff says where two different bulk string replies first differ,
// or returns "".
func leBulkDiff(a, b string) string {
	av, bv := diffParse(a), diffParse(b)
	if a == b || av.kind != '$' || bv.kind != '$' || av.null || bv.null {
		return ""
	}
	i := leFirstDiff([]byte(av.str), []byte(bv.str))
	return fmt.Sprintf("bulk strings of %d (cairn) and %d (redis) bytes first differ at byte %d (chunk %d, +%d): cairn %q, redis %q",
		len(av.str), len(bv.str), i, i/leChunk, i%leChunk, leAt(av.str, i), leAt(bv.str, i))
}

// leFirstDiff returns the first offset where a and b differ (the shorter
// one's length if it is a prefix of the other), or -1.
func leFirstDiff(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// leAt returns up to 16 bytes of s from i.
func leAt[S ~string | ~[]byte](s S, i int) string {
	if i >= len(s) {
		return ""
	}
	return string(s[i:min(len(s), i+16)])
}

// compareKeyspace compares every key's length and value on both servers,
// checks Redis's against the model, and compares DBSIZE.
func (r *leRunner) compareKeyspace(model leModel) {
	r.t.Helper()
	for _, k := range leKeys {
		for _, cmd := range [][]string{{"EXISTS", k}, {"STRLEN", k}, {"GET", k}} {
			cr, rr := r.cairn.Do(cmd...), r.redis.Do(cmd...)
			if cr != rr {
				r.fail(r.index, cmd, cr, rr, "the final comparison")
			}
			if cmd[0] != "GET" {
				continue
			}
			want, ok := model[k]
			if rv := diffParse(rr); rv.null == ok || rv.str != string(want) {
				i := leFirstDiff([]byte(rv.str), want)
				r.t.Fatalf("the test's model of %s (%d bytes, present %v) is not what Redis holds (%s): first difference at byte %d, redis %q, model %q; a bug in the test's model",
					k, len(want), ok, leDescribe(rr), i, leAt(rv.str, i), leAt(want, i))
			}
		}
	}
	cr, rr := r.cairn.Do("DBSIZE"), r.redis.Do("DBSIZE")
	if cr != rr || rr != fmt.Sprintf(":%d\r\n", len(model)) {
		r.fail(r.index, []string{"DBSIZE"}, cr, rr, fmt.Sprintf("the final comparison; the model has %d keys", len(model)))
	}
	if reply := r.cairn.Do("DEBUG", "CHECK-VALUES"); !strings.HasPrefix(reply, ":") {
		r.t.Fatalf("after the stream, DEBUG CHECK-VALUES: %q", reply)
	}
}

// ---- a replica and a restart ----

// leEdits sends edits to a Cairn primary and keeps the test's own model
// of what each key must hold, checking each write's reply against it.
type leEdits struct {
	t     *testing.T
	c     *redis.Client
	model map[string][]byte
	gone  []string // keys deleted or overwritten away
	pool  []byte
	next  int // of pool
}

// bytes returns n bytes of the pool, each call a different stretch.
func (e *leEdits) bytes(n int) []byte {
	if e.next+n > len(e.pool) {
		e.next = 0
	}
	b := slices.Clone(e.pool[e.next : e.next+n])
	e.next += n/3 + 7
	return b
}

// set is SET without options: it drops a TTL as Redis's SET does.
func (e *leEdits) set(k string, v []byte) {
	e.t.Helper()
	if err := e.c.Set(ctx(e.t), k, v, 0).Err(); err != nil {
		e.t.Fatalf("SET %s (%d bytes): %v", k, len(v), err)
	}
	e.model[k] = slices.Clone(v)
}

func (e *leEdits) append(k string, v []byte) {
	e.t.Helper()
	e.model[k] = append(e.model[k], v...)
	got, err := e.c.Append(ctx(e.t), k, string(v)).Result()
	if err != nil || got != int64(len(e.model[k])) {
		e.t.Fatalf("APPEND %s (%d bytes): %d, %v; want %d", k, len(v), got, err, len(e.model[k]))
	}
}

func (e *leEdits) setRange(k string, off int, v []byte) {
	e.t.Helper()
	cur := e.model[k]
	if need := off + len(v); need > len(cur) {
		cur = append(cur, make([]byte, need-len(cur))...)
	}
	copy(cur[off:], v)
	e.model[k] = cur
	got, err := e.c.SetRange(ctx(e.t), k, int64(off), string(v)).Result()
	if err != nil || got != int64(len(cur)) {
		e.t.Fatalf("SETRANGE %s %d (%d bytes): %d, %v; want %d", k, off, len(v), got, err, len(cur))
	}
}

func (e *leEdits) setBit(k string, off int, bit int) {
	e.t.Helper()
	cur := e.model[k]
	if i := off >> 3; i >= len(cur) {
		cur = append(cur, make([]byte, i+1-len(cur))...)
	}
	mask := byte(1) << (7 - off&7)
	old := 0
	if cur[off>>3]&mask != 0 {
		old = 1
	}
	if bit == 1 {
		cur[off>>3] |= mask
	} else {
		cur[off>>3] &^= mask
	}
	e.model[k] = cur
	got, err := e.c.SetBit(ctx(e.t), k, int64(off), bit).Result()
	if err != nil || got != int64(old) {
		e.t.Fatalf("SETBIT %s %d %d: %d, %v; want %d", k, off, bit, got, err, old)
	}
}

func (e *leEdits) del(k string) {
	e.t.Helper()
	if got, err := e.c.Del(ctx(e.t), k).Result(); err != nil || got != 1 {
		e.t.Fatalf("DEL %s: %d, %v; want 1", k, got, err)
	}
	delete(e.model, k)
	e.gone = append(e.gone, k)
}

func (e *leEdits) copyTo(src, dst string) {
	e.t.Helper()
	if got, err := e.c.Copy(ctx(e.t), src, dst, 0, false).Result(); err != nil || got != 1 {
		e.t.Fatalf("COPY %s %s: %d, %v; want 1", src, dst, got, err)
	}
	e.model[dst] = slices.Clone(e.model[src])
}

// leGetRange is GETRANGE of Redis 7.0 over v.
func leGetRange(v []byte, start, end int) []byte {
	n := len(v)
	if start < 0 && end < 0 && start > end {
		return nil
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	end = min(end, n-1)
	if n == 0 || start > end {
		return nil
	}
	return v[start : end+1]
}

// leSpots returns the GETRANGE ranges checked over a value of n bytes:
// every chunk boundary, the inline maximum, the ends, from the end, past
// the end.
func leSpots(n int) [][2]int {
	out := [][2]int{{0, 0}, {-1, -1}, {-16385, -16383}, {-100, -1}, {n - 10, n + 10}, {n, n + 5}, {65530, 65545}, {5, 2}, {-5, -9}}
	for b := leChunk; b <= n+leChunk; b += leChunk {
		out = append(out, [2]int{b - 2, b + 1})
	}
	for b := 0; b < n; b += 5 * leChunk {
		out = append(out, [2]int{b + 100, b + 3*leChunk + 50}) // across chunks
	}
	return out
}

// check compares everything the client c reads with the model: DBSIZE,
// each key's GET, STRLEN and GETRANGEs, the deleted keys, the TTL.
func (e *leEdits) check(where string, c *redis.Client) {
	e.t.Helper()
	cx := ctx(e.t)
	leCheckValues(e.t, where, c)
	if n, err := c.DBSize(cx).Result(); err != nil || n != int64(len(e.model)) {
		e.t.Fatalf("%s: DBSIZE = %d, %v; want %d", where, n, err, len(e.model))
	}
	keys := make([]string, 0, len(e.model))
	for k := range e.model {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		want := e.model[k]
		got, err := c.Get(cx, k).Result()
		if err != nil {
			e.t.Fatalf("%s: GET %s: %v; want %d bytes", where, k, err, len(want))
		}
		if i := leFirstDiff([]byte(got), want); i >= 0 {
			e.t.Fatalf("%s: GET %s: %d bytes, want %d; first difference at byte %d (chunk %d, +%d): got %q, want %q",
				where, k, len(got), len(want), i, i/leChunk, i%leChunk, leAt(got, i), leAt(want, i))
		}
		if n, err := c.StrLen(cx, k).Result(); err != nil || n != int64(len(want)) {
			e.t.Fatalf("%s: STRLEN %s = %d, %v; want %d", where, k, n, err, len(want))
		}
		for _, s := range leSpots(len(want)) {
			got, err := c.GetRange(cx, k, int64(s[0]), int64(s[1])).Result()
			if w := leGetRange(want, s[0], s[1]); err != nil || got != string(w) {
				e.t.Fatalf("%s: GETRANGE %s %d %d = %q (%d bytes), %v; want %q (%d bytes)", where, k, s[0], s[1], leAt(got, 0), len(got), err, leAt(w, 0), len(w))
			}
		}
	}
	for _, k := range e.gone {
		if _, ok := e.model[k]; ok {
			continue
		}
		if n, err := c.Exists(cx, k).Result(); err != nil || n != 0 {
			e.t.Fatalf("%s: EXISTS %s (deleted) = %d, %v", where, k, n, err)
		}
		if got, err := c.Get(cx, k).Result(); err != redis.Nil {
			e.t.Fatalf("%s: GET %s (deleted) = %d bytes, %v; want nil", where, k, len(got), err)
		}
	}
	if ttl, err := c.PTTL(cx, "ttl").Result(); err != nil || ttl <= 0 || ttl > time.Hour {
		e.t.Fatalf("%s: PTTL ttl = %v, %v; want (0, 1h]", where, ttl, err)
	}
	for _, k := range keys {
		if k == "ttl" {
			continue
		}
		if ttl, err := c.PTTL(cx, k).Result(); err != nil || ttl != -1 {
			e.t.Fatalf("%s: PTTL %s = %v, %v; want none (-1)", where, k, ttl, err)
		}
	}
}

// TestLargeValueEditsOnReplicaAndRestart applies a fixed series of edits
// to large values on a Cairn primary with a replica: a value growing from
// inline through the inline maximum to many chunks by APPEND, holes made
// by SETRANGE and SETBIT far past the end and filled in part, edits
// across chunk boundaries and inside chunks, keys created sparse, a key
// at the inline maximum exactly, one shrunk back to a small value by SET,
// one deleted, one with a TTL edited, one copied, one written twice by
// one MSET, one replaced by RENAME. It checks GET, STRLEN,
// GETRANGE at every chunk boundary, DBSIZE and the TTLs against the
// test's own model on the primary, on the replica once caught up, on the
// primary after a restart, and on both after more edits after it; and
// each time, with DEBUG CHECK-VALUES, that no chunk record outlived its
// value.
func TestLargeValueEditsOnReplicaAndRestart(t *testing.T) {
	p := StartCairnEnv(t, leDebug)
	r := StartCairnEnv(t, leDebug, "--slaveof", "127.0.0.1 "+strconv.Itoa(p.Port))
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	rng := rand.New(rand.NewPCG(7, 11))
	pool := make([]byte, 3<<20)
	for i := range pool {
		pool[i] = byte(rng.Uint32())
	}
	e := &leEdits{t: t, c: pc, model: map[string][]byte{}, pool: pool}

	// grow: inline, then past the inline maximum and over many chunks.
	e.set("grow", e.bytes(40000))
	for i := 0; i < 8; i++ {
		e.append("grow", e.bytes(16000+3000*i))
	}
	e.setRange("grow", 1_000_000, []byte("end of the first hole")) // a hole from 252000
	e.setBit("grow", 8*1_400_000+3, 1)                             // another one
	e.setRange("grow", 5*leChunk-3, []byte("across a boundary"))
	e.setRange("grow", 10*leChunk+100, []byte("inside a chunk"))
	e.setBit("grow", 8*(3*leChunk+5)+2, 1)
	e.setBit("grow", 8*(3*leChunk+5)+2, 0)
	e.setBit("grow", 8*(4*leChunk)-1, 1)             // the last bit of a chunk
	e.setRange("grow", 600_000, e.bytes(3*leChunk))  // into the first hole, over whole chunks
	e.setRange("grow", 62*leChunk, e.bytes(leChunk)) // one chunk of the hole exactly
	e.setBit("grow", 8*700_000, 1)
	e.append("grow", e.bytes(30000)) // after the second hole
	e.setRange("grow", 0, []byte("head"))
	e.copyTo("grow", "copy")
	e.setRange("copy", 1_000_000, []byte("the copy's own")) // the copy apart

	// ttl: a large value with a TTL, edited after the EXPIRE (which the
	// edits keep).
	e.set("ttl", e.bytes(200_000))
	if ok, err := pc.Expire(cx, "ttl", time.Hour).Result(); err != nil || !ok {
		t.Fatalf("EXPIRE ttl: %v, %v", ok, err)
	}
	e.append("ttl", e.bytes(20_000))
	e.setRange("ttl", 500_000, []byte("x"))
	e.setBit("ttl", 8*100, 1)

	// shrink: large, then a small value by SET.
	e.set("shrink", e.bytes(300_000))
	e.append("shrink", e.bytes(20_000))
	e.setRange("shrink", 400_000, []byte("y"))
	e.set("shrink", []byte("tiny"))

	// back: past the inline maximum by APPEND, then the inline maximum
	// exactly by SET.
	e.set("back", e.bytes(100))
	for len(e.model["back"]) < 200_000 {
		e.append("back", e.bytes(25_000))
	}
	e.set("back", e.bytes(leInlineMax))
	e.append("back", nil)

	// gone: large and sparse, then deleted.
	e.set("gone", e.bytes(500_000))
	e.setRange("gone", 800_000, []byte("z"))
	e.del("gone")

	// Keys created sparse, by SETBIT and by SETRANGE, then edited in the
	// hole.
	e.setBit("bits", 8*2_000_000+5, 1)
	e.setBit("bits", 8*leChunk-1, 1)
	e.setRange("sparse", 2_500_000, []byte("end"))
	e.setRange("sparse", 3*leChunk-1, []byte("ab"))

	// edge: the inline maximum, then one byte more by APPEND, then a
	// SETRANGE at the old end.
	e.set("edge", e.bytes(leInlineMax))
	e.append("edge", []byte("!"))
	e.setRange("edge", leInlineMax, []byte("?"))

	e.set("small", []byte("v"))

	// dup: one MSET names the key twice, both values long (the second
	// write replaces the first's chunks).
	v1, v2 := e.bytes(150_000), e.bytes(90_000)
	must(t, pc.MSet(cx, "dup", v1, "dup", v2).Err())
	e.model["dup"] = v2
	// moved: RENAME of a chunked value onto a key holding another.
	e.set("moved", e.bytes(120_000))
	must(t, pc.Rename(cx, "copy", "moved").Err())
	e.model["moved"] = e.model["copy"]
	delete(e.model, "copy")
	e.gone = append(e.gone, "copy")

	e.check("primary", pc)
	waitCaughtUp(t, pc, rc)
	e.check("replica", rc)

	p.Stop()
	p.Restart()
	pc = p.Client()
	e.c = pc
	e.check("primary after a restart", pc)

	// More edits after the restart, to values the restart reloaded.
	e.append("back", []byte("1")) // one byte past the inline maximum
	e.setRange("grow", 1_200_000, e.bytes(leChunk+2))
	e.setRange("grow", 300_000, []byte("in the hole"))
	e.setBit("bits", 8*3_000_000, 1)
	e.del("sparse")
	e.append("ttl", e.bytes(17_000))
	e.set("shrink", e.bytes(100_000)) // large again
	e.setRange("shrink", 2*leChunk, []byte("mid"))
	e.set("edge", []byte("small again"))
	e.check("primary, edits after the restart", pc)
	waitCaughtUp(t, pc, rc)
	e.check("replica, edits after the primary's restart", rc)
}
