package glob

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"
)

// matchCases were derived by walking Redis 7's stringmatchlen (src/util.c) by
// hand; the ones that KEYS can express were also confirmed against a live
// redis-server 7.0.15 (see testdata/redis7_keys.txt for the bulk check).
var matchCases = []struct {
	pattern, str string
	nocase       bool
	want         bool
}{
	// Empty pattern and empty string.
	{"", "", false, true},
	{"", "a", false, false},
	{"a", "", false, false},
	{"*", "", false, false}, // Redis 7: the loop never runs on an empty string.
	{"**", "", false, false},
	{"?", "", false, false},
	{"[a]", "", false, false},

	// Literals and escapes outside brackets.
	{"abc", "abc", false, true},
	{"abc", "abd", false, false},
	{"abc", "ab", false, false},
	{"ab", "abc", false, false},
	{"a\\*c", "a*c", false, true},
	{"a\\*c", "abc", false, false},
	{"\\?", "?", false, true},
	{"\\?", "a", false, false},
	{"\\[a]", "[a]", false, true},
	{"\\a", "a", false, true},
	{"\\\\", "\\", false, true},
	{"\\", "\\", false, true}, // A trailing backslash matches itself.
	{"a\\", "a\\", false, true},
	{"a\\", "a", false, false},
	{"*\\", "xx\\", false, true},
	{"\\*", "", false, false},

	// Stars.
	{"*", "a", false, true},
	{"*", "abc", false, true},
	{"***", "abc", false, true},
	{"foo*", "foo", false, true},
	{"foo*", "foobar", false, true},
	{"foo**", "foo", false, true},
	{"*foo", "foo", false, true},
	{"*foo", "xfoo", false, true},
	{"*foo", "foox", false, false},
	{"a*b", "ab", false, true},
	{"a*b", "axxb", false, true},
	{"a*b", "axxbc", false, false},
	{"a*b*c", "abc", false, true},
	{"a*b*c", "aXbYc", false, true},
	{"a*b*c", "aXcYb", false, false},
	{"*a*", "a", false, true},
	{"*a*", "bab", false, true},
	{"*a*", "bbb", false, false},
	{"a*\\*", "ab*", false, true},
	{"a*\\*", "ab", false, false},
	{"*?", "a", false, true},
	{"*??", "a", false, false},
	{"?*", "a", false, true},

	// Question marks.
	{"?", "a", false, true},
	{"?", "ab", false, false},
	{"??", "ab", false, true},
	{"a?c", "abc", false, true},
	{"a?c", "ac", false, false},
	{"?", "\x00", false, true},
	{"?", "\xff", false, true},
	{"?", "é", false, false}, // Byte-wise: "é" is two bytes.
	{"??", "é", false, true},

	// Classes.
	{"[abc]", "a", false, true},
	{"[abc]", "c", false, true},
	{"[abc]", "d", false, false},
	{"[abc]", "ab", false, false},
	{"[^abc]", "d", false, true},
	{"[^abc]", "a", false, false},
	{"[a-c]", "b", false, true},
	{"[a-c]", "d", false, false},
	{"[c-a]", "b", false, true}, // Reversed ranges are swapped.
	{"[z-a]", "m", false, true},
	{"[^a-c]", "b", false, false},
	{"[^c-a]", "d", false, true},
	{"[a-cx-z]", "y", false, true},
	{"[a-cx-z]", "m", false, false},
	{"[]", "a", false, false},   // Empty class.
	{"[]", "]", false, false},   // ']' right after '[' closes it.
	{"[]a]", "]", false, false}, // "[]" then literal "a]".
	{"[]a]", "a", false, false},
	{"[^]", "a", false, true},
	{"[^]", "]", false, true},
	{"[^]a]", "xa]", false, true},
	{"[-a]", "-", false, true}, // Leading '-' is a member.
	{"[-a]", "a", false, true},
	{"[-a]", "b", false, false},
	{"[a-]", "a", false, true}, // Range from 'a' down to ']'.
	{"[a-]", "_", false, true},
	{"[a-]", "]", false, true},
	{"[a-]", "-", false, false},
	{"[a-]", "b", false, false},
	{"[a-]b", "_", false, true}, // ...which then runs on unclosed: 'b' is a member.
	{"[a-]b", "b", false, true},
	{"[a-]b", "_b", false, false},
	{"[a-b-c]", "-", false, true}, // "a-b", then '-', then 'c'.
	{"[a-b-c]", "c", false, true},
	{"[a-b-c]", "b", false, true},
	{"[ab-]", "-", false, false}, // "b-]" is the range ']'..'b'.
	{"[ab-]", "b", false, true},
	{"[[]", "[", false, true},
	{"[*?]", "*", false, true},
	{"[*?]", "a", false, false},
	{"[\\]]", "]", false, true}, // Escapes inside classes.
	{"[\\]]", "\\", false, false},
	{"[\\-a]", "-", false, true},
	{"[\\-a]", "b", false, false},
	{"[\\\\]", "\\", false, true},
	{"[a\\-c]", "b", false, false},
	{"[a\\-c]", "-", false, true},
	{"[\\^a]", "^", false, true},
	{"[\\a-c]", "b", false, false}, // "\a" then "-c" is not a range start.
	{"[\\a-c]", "-", false, true},
	{"[\\a-c]", "c", false, true},
	{"[a-\\]", "b", false, false}, // Range 'a'..'\\' (92..97).
	{"[a-\\]", "^", false, true},
	{"[a-\\]", "\\", false, true},
	{"[a-\\]", "[", false, false},
	{"[^\\", "\\", false, false},
	{"[^\\", "a", false, true},

	// Unclosed classes consume the rest of the pattern.
	{"[", "", false, false},
	{"[", "[", false, false},
	{"[", "a", false, false},
	{"[^", "a", false, true},
	{"[^", "", false, false},
	{"[^", "ab", false, false},
	{"[abc", "a", false, true},
	{"[abc", "c", false, true},
	{"[abc", "d", false, false},
	{"[abc", "ab", false, false},
	{"x[abc", "xb", false, true},
	{"[a*", "*", false, true},
	{"[a*", "ab", false, false},
	{"[a-", "-", false, true},
	{"[a-", "a", false, true},
	{"[a-", "b", false, false},
	{"[\\", "\\", false, true},
	{"[a\\", "\\", false, true},
	{"[a-c", "b", false, true},

	// Signed-char ranges, as on x86-64 Redis.
	{"[a-\xff]", "\x00", false, true}, // Range -1..97.
	{"[a-\xff]", "A", false, true},
	{"[a-\xff]", "\xff", false, true},
	{"[a-\xff]", "\x80", false, false},
	{"[a-\xff]", "b", false, false},
	{"[\x80-\xff]", "\x90", false, true},
	{"[\x80-\xff]", "a", false, false},
	{"[\x01-\xfe]", "\xff", false, true},
	{"[\x01-\xfe]", "a", false, false},
	{"[\x7f-\x80]", "a", false, true},
	{"[\x7f-\x80]", "\xc0", false, true},
	{"[\x00-\x7f]", "\x80", false, false},
	{"\xff", "\xff", false, true},
	{"[\xff]", "\xff", false, true},
	{"[^\xff]", "\xfe", false, true},

	// NUL bytes are ordinary.
	{"a\x00b", "a\x00b", false, true},
	{"*\x00", "abc\x00", false, true},
	{"[\x00]", "\x00", false, true},

	// nocase.
	{"ABC", "abc", true, true},
	{"abc", "ABC", true, true},
	{"abc", "ABC", false, false},
	{"a*C", "AbC", true, true},
	{"[ABC]", "b", true, true},
	{"[abc]", "B", true, true},
	{"[^abc]", "B", true, false},
	{"[a-c]", "B", true, true},
	{"[A-C]", "b", true, true},
	{"[A-z]", "[", false, true},
	{"[A-z]", "[", true, false}, // Bounds are folded after ordering: 'a'..'z'.
	{"[A-z]", "Q", true, true},
	{"[Z-a]", "_", false, true},
	{"[Z-a]", "_", true, false}, // 'z'..'a' after folding: empty.
	{"[Z-a]", "z", true, false},
	{"[\\A]", "a", true, false}, // Escapes in classes ignore nocase.
	{"[\\A]", "A", true, true},
	{"\\A", "a", true, true}, // ...but escapes outside classes do not.
	{"É", "é", true, false},  // Non-ASCII bytes are never folded.
	{"\xc9", "\xe9", true, false},
	{"[\xc0-\xdf]", "\xe9", true, false},
	{"@", "`", true, false},
	{"[", "[", true, false},

	// Case-sensitive fold boundaries.
	{"a", "A", false, false},
	{"[a-z]", "A", false, false},
}

func TestMatch(t *testing.T) {
	for _, tc := range matchCases {
		if got := Match([]byte(tc.pattern), []byte(tc.str), tc.nocase); got != tc.want {
			t.Errorf("Match(%q, %q, nocase=%v) = %v, want %v", tc.pattern, tc.str, tc.nocase, got, tc.want)
		}
		if tc.nocase {
			continue
		}
		if got := refMatch([]byte(tc.pattern), []byte(tc.str), false); got != tc.want {
			t.Errorf("refMatch(%q, %q) = %v, want %v (reference disagrees with table)", tc.pattern, tc.str, got, tc.want)
		}
	}
}

// TestMatchRedisKeys replays testdata/redis7_keys.txt, which was recorded from
// KEYS on a live redis-server 7.0.15 over random patterns and keys.
func TestMatchRedisKeys(t *testing.T) {
	f, err := os.Open("testdata/redis7_keys.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	decode := func(s string) []byte {
		if s == "-" {
			return nil
		}
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatalf("bad hex %q: %v", s, err)
		}
		return b
	}
	var keys [][]byte
	patterns := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch fields[0] {
		case "k":
			keys = append(keys, decode(fields[1]))
		case "p":
			pattern := decode(fields[1])
			bits, ok := new(big.Int).SetString(fields[2], 16)
			if !ok {
				t.Fatalf("bad bitmap %q", fields[2])
			}
			for i, key := range keys {
				want := bits.Bit(len(keys)-1-i) == 1
				if got := Match(pattern, key, false); got != want {
					t.Errorf("Match(%q, %q) = %v, Redis says %v", pattern, key, got, want)
				}
			}
			patterns++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if patterns < 1000 || len(keys) < 100 {
		t.Fatalf("testdata too small: %d patterns, %d keys", patterns, len(keys))
	}
}

func TestMatchNesting(t *testing.T) {
	// Every "*a" pair nests one level deeper; level 1001 is refused.
	for _, n := range []int{999, 1000} {
		p, s := strings.Repeat("*a", n), strings.Repeat("a", n)
		if !Match([]byte(p), []byte(s), false) {
			t.Errorf("%d nested stars: got no match, want match", n)
		}
	}
	for _, n := range []int{1001, 1500} {
		p, s := strings.Repeat("*a", n), strings.Repeat("a", n)
		if Match([]byte(p), []byte(s), false) {
			t.Errorf("%d nested stars: got match, want the nesting guard to refuse", n)
		}
	}
	// Runs of stars collapse and do not count as nesting.
	p := strings.Repeat("*", 5000) + "a"
	if !Match([]byte(p), []byte("xxa"), false) {
		t.Errorf("collapsed star run: got no match")
	}
}

func TestMatchPathological(t *testing.T) {
	cases := []struct{ pattern, str string }{
		{strings.Repeat("*a", 30) + "b", strings.Repeat("a", 5000)},
		{strings.Repeat("a*", 200) + "b", strings.Repeat("a", 20000)},
		{strings.Repeat("*?", 100) + "b", strings.Repeat("a", 5000)},
		{"*" + strings.Repeat("[ab]*", 100) + "c", strings.Repeat("ab", 5000)},
	}
	for _, tc := range cases {
		start := time.Now()
		if Match([]byte(tc.pattern), []byte(tc.str), false) {
			t.Errorf("Match(%.20q..., %.20q...) = true, want false", tc.pattern, tc.str)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Match(%.20q...) took %v", tc.pattern, d)
		}
	}
}

func TestIsLiteral(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		want    bool
	}{
		{"", true},
		{"abc", true},
		{"a]b^c-d", true},
		{"user:1000", true},
		{"\x00\xff", true},
		{"a*", false},
		{"a?", false},
		{"a[b]", false},
		{"a\\b", false},
		{"\\", false},
	} {
		if got := IsLiteral([]byte(tc.pattern)); got != tc.want {
			t.Errorf("IsLiteral(%q) = %v, want %v", tc.pattern, got, tc.want)
		}
	}
}

func TestLiteralPrefix(t *testing.T) {
	for _, tc := range []struct{ pattern, want string }{
		{"", ""},
		{"*", ""},
		{"abc", "abc"},
		{"user:*", "user:"},
		{"user:?", "user:"},
		{"user:[ab]", "user:"},
		{"a\\*b*", "a*b"},
		{"a\\*b", "a*b"},
		{"\\\\x*", "\\x"},
		{"ab\\", "ab\\"},
		{"a\\?\\[c?d", "a?[c"},
		{"]^-", "]^-"},
		{"[", ""},
	} {
		p := []byte(tc.pattern)
		got := LiteralPrefix(p)
		if string(got) != tc.want {
			t.Errorf("LiteralPrefix(%q) = %q, want %q", tc.pattern, got, tc.want)
		}
		// Appending must never write into the pattern.
		_ = append(got, 'Z')
		if string(p) != tc.pattern {
			t.Errorf("LiteralPrefix(%q): append to result modified pattern to %q", tc.pattern, p)
		}
	}
}

// refMatch is an independent reference for Match, used by the tests and the
// fuzzer. It compiles the pattern into tokens (a star, or the set of bytes a
// single position accepts) and then runs the textbook dynamic program, with
// no recursion, no skipLongerMatches and no nesting limit. The only Redis
// quirk that lives outside tokenisation is handled up front: an empty string
// matches only the empty pattern.
func refMatch(pattern, str []byte, nocase bool) bool {
	if len(str) == 0 {
		return len(pattern) == 0
	}
	toks := refCompile(pattern, nocase)
	// dp[j] reports whether toks[i:] matches str[j:], computed for i from
	// the end.
	dp := make([]bool, len(str)+1)
	dp[len(str)] = true
	for i := len(toks) - 1; i >= 0; i-- {
		next := make([]bool, len(str)+1)
		tok := toks[i]
		for j := len(str); j >= 0; j-- {
			if tok.star {
				next[j] = dp[j] || (j < len(str) && next[j+1])
			} else {
				next[j] = j < len(str) && tok.set[str[j]] && dp[j+1]
			}
		}
		dp = next
	}
	return dp[0]
}

type refToken struct {
	star bool
	set  [256]bool
}

// refCompile splits a pattern into tokens the way stringmatchlen walks it.
// Whether a byte belongs to a class is decided by evaluating every class item
// against every byte value, spelled out separately from matchClass.
func refCompile(p []byte, nocase bool) []refToken {
	fold := func(v int) int {
		if nocase && v >= 'A' && v <= 'Z' {
			return v + 32
		}
		return v
	}
	literal := func(b byte) refToken {
		var t refToken
		for c := 0; c < 256; c++ {
			t.set[c] = fold(c) == fold(int(b))
		}
		return t
	}
	var toks []refToken
	for len(p) > 0 {
		switch p[0] {
		case '*':
			if len(toks) == 0 || !toks[len(toks)-1].star {
				toks = append(toks, refToken{star: true})
			}
			p = p[1:]
		case '?':
			var t refToken
			for c := range t.set {
				t.set[c] = true
			}
			toks = append(toks, t)
			p = p[1:]
		case '\\':
			if len(p) == 1 {
				toks = append(toks, literal('\\'))
				p = p[1:]
			} else {
				toks = append(toks, literal(p[1]))
				p = p[2:]
			}
		case '[':
			body := p[1:]
			negate := len(body) > 0 && body[0] == '^'
			if negate {
				body = body[1:]
			}
			type item struct {
				lo, hi  int // signed-char bounds, lo <= hi before folding
				exact   bool
				isRange bool
			}
			var items []item
			closed := false
			for len(body) > 0 {
				switch {
				case body[0] == '\\' && len(body) >= 2:
					items = append(items, item{lo: int(body[1]), exact: true})
					body = body[2:]
					continue
				case body[0] == ']':
					closed = true
				case len(body) >= 3 && body[1] == '-':
					lo, hi := int(int8(body[0])), int(int8(body[2]))
					if lo > hi {
						lo, hi = hi, lo
					}
					items = append(items, item{lo: lo, hi: hi, isRange: true})
					body = body[3:]
					continue
				default:
					items = append(items, item{lo: int(body[0])})
					body = body[1:]
					continue
				}
				break
			}
			var t refToken
			for c := 0; c < 256; c++ {
				in := false
				for _, it := range items {
					switch {
					case it.exact:
						in = in || c == it.lo
					case it.isRange:
						v := fold(int(int8(c)))
						in = in || (v >= fold(it.lo) && v <= fold(it.hi))
					default:
						in = in || fold(c) == fold(it.lo)
					}
				}
				t.set[c] = in != negate
			}
			toks = append(toks, t)
			if closed {
				p = body[1:]
			} else {
				p = nil
			}
		default:
			toks = append(toks, literal(p[0]))
			p = p[1:]
		}
	}
	return toks
}

func TestRefMatchAgreesOnRedisData(t *testing.T) {
	// The reference must itself agree with the live-server data; otherwise
	// the fuzzer would be checking against the wrong thing.
	for _, tc := range matchCases {
		if got := refMatch([]byte(tc.pattern), []byte(tc.str), tc.nocase); got != tc.want {
			t.Errorf("refMatch(%q, %q, nocase=%v) = %v, want %v", tc.pattern, tc.str, tc.nocase, got, tc.want)
		}
	}
}

func FuzzMatch(f *testing.F) {
	for _, tc := range matchCases {
		f.Add([]byte(tc.pattern), []byte(tc.str), tc.nocase)
	}
	f.Fuzz(func(t *testing.T, pattern, str []byte, nocase bool) {
		if len(pattern) > 512 || len(str) > 512 {
			return // Keep the exhaustive reference cheap.
		}
		got := Match(pattern, str, nocase)
		if bytes.Count(pattern, []byte("*")) > maxNesting {
			return // The nesting guard may legitimately refuse.
		}
		if want := refMatch(pattern, str, nocase); got != want {
			t.Fatalf("Match(%q, %q, nocase=%v) = %v, reference says %v", pattern, str, nocase, got, want)
		}
		if !nocase {
			prefix := LiteralPrefix(pattern)
			if got && !bytes.HasPrefix(str, prefix) {
				t.Fatalf("Match(%q, %q) but str lacks LiteralPrefix %q", pattern, str, prefix)
			}
			if IsLiteral(pattern) && got != bytes.Equal(pattern, str) {
				t.Fatalf("literal pattern %q vs %q: Match = %v", pattern, str, got)
			}
		}
	})
}

func BenchmarkMatch(b *testing.B) {
	for _, bm := range []struct {
		name, pattern, str string
	}{
		{"literal", "user:1000:session", "user:1000:session"},
		{"prefix", "user:*", "user:1000:session"},
		{"suffix", "*:session", "user:1000:session"},
		{"class", "user:[0-9][0-9][0-9][0-9]:*", "user:1000:session"},
		{"miss", "order:*", "user:1000:session"},
		{"pathological", strings.Repeat("*a", 20) + "b", strings.Repeat("a", 1000)},
	} {
		p, s := []byte(bm.pattern), []byte(bm.str)
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Match(p, s, false)
			}
		})
	}
}
