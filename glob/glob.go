// Package glob implements the glob-style pattern matching that Redis uses for
// KEYS, SCAN ... MATCH, PSUBSCRIBE and similar commands.
//
// Match reproduces the behaviour of Redis 7's stringmatchlen (src/util.c)
// exactly, including its quirks, because clients observe them through the
// commands above:
//
//   - '*' matches any run of bytes, '?' matches exactly one byte, and '\'
//     makes the byte after it literal, both inside and outside brackets. A
//     backslash that is the last byte of the pattern matches a literal '\'.
//   - '[abc]' matches one byte from a set, '[^abc]' one byte outside it, and
//     '[a-z]' a range. Reversed ranges such as '[z-a]' are swapped. A '-' that
//     has fewer than two pattern bytes after it, or that starts a class, is an
//     ordinary member: '[-a]' holds '-' and 'a', while '[a-]' is the range from
//     'a' to ']' (the ']' is consumed as the range end, so the class then runs
//     on unclosed). '[]' is an empty class that never matches, and '[^]'
//     matches any byte.
//   - A '[' without a closing ']' makes the rest of the pattern the class:
//     '[ab' matches "a" or "b". A lone '[' never matches anything, and a lone
//     '[^' matches any single byte.
//   - Matching is byte-wise, never rune-wise. Range bounds and the byte being
//     tested are compared as C's signed char, as on the x86-64 and most other
//     Linux builds of Redis, so bytes 0x80-0xFF sort below 0x00: '[a-\xff]'
//     is the range -1..97 and matches "\x00" and "A" but not "\x80".
//   - With nocase, ASCII letters are folded to lower case ('A'-'Z' only). A
//     range is folded after its bounds are put in order, so '[A-z]' with
//     nocase matches only 'a'-'z' (and their upper-case forms), and '[Z-a]'
//     with nocase matches nothing. A backslash-escaped byte inside a class is
//     always compared case-sensitively.
//   - An empty str matches only the empty pattern: Match("*", "", ...) is
//     false. This is stringmatchlen itself in Redis 7.0 (its main loop runs
//     only while both pattern and string are non-empty), not its callers;
//     KEYS and SCAN MATCH special-case the exact pattern "*" before calling
//     it, which is why "KEYS *" returns the empty key but "KEYS **" does not,
//     whereas PSUBSCRIBE and PUBSUB CHANNELS call it directly, so the pattern
//     "*" never matches the empty channel name. Redis 6 and older matched the
//     empty string here.
//   - Matching gives up and reports false once '*' recursion nests more than
//     1000 levels deep, as Redis's guard against abusive patterns does, and a
//     failed '*' stops every enclosing '*' from retrying longer matches (the
//     skipLongerMatches optimisation), so patterns such as "*a*a*a*...b"
//     against long strings run in polynomial time.
//
// Match never panics and never allocates.
package glob

// maxNesting is the deepest '*' recursion Match will follow before reporting
// no match, as Redis 7's stringmatchlen_impl does.
const maxNesting = 1000

// Match reports whether str matches the glob pattern, following Redis 7's
// stringmatchlen exactly; the package comment lists the rules and quirks.
// When nocase is set, ASCII letters compare case-insensitively. Neither slice
// is retained or modified.
func Match(pattern, str []byte, nocase bool) bool {
	skipLongerMatches := false
	return match(pattern, str, nocase, &skipLongerMatches, 0)
}

// match is the recursive worker behind Match. skipLongerMatches is shared by
// every level of one Match call: once a '*' has failed against every suffix of
// the string, no enclosing '*' can succeed by consuming more bytes.
func match(pat, str []byte, nocase bool, skipLongerMatches *bool, nesting int) bool {
	if nesting > maxNesting {
		return false
	}
	for len(pat) > 0 && len(str) > 0 {
		switch pat[0] {
		case '*':
			for len(pat) > 1 && pat[1] == '*' {
				pat = pat[1:]
			}
			if len(pat) == 1 {
				return true
			}
			for len(str) > 0 {
				if match(pat[1:], str, nocase, skipLongerMatches, nesting+1) {
					return true
				}
				if *skipLongerMatches {
					return false
				}
				str = str[1:]
			}
			*skipLongerMatches = true
			return false
		case '?':
			// Any byte matches.
		case '[':
			n, ok := matchClass(pat, str[0], nocase)
			if !ok {
				return false
			}
			// Leave pat on the class's last byte; the shared step
			// below moves past it.
			pat = pat[n-1:]
		case '\\':
			if len(pat) >= 2 {
				pat = pat[1:]
			}
			if !equalByte(pat[0], str[0], nocase) {
				return false
			}
		default:
			if !equalByte(pat[0], str[0], nocase) {
				return false
			}
		}
		pat = pat[1:]
		str = str[1:]
		if len(str) == 0 {
			for len(pat) > 0 && pat[0] == '*' {
				pat = pat[1:]
			}
			break
		}
	}
	return len(pat) == 0 && len(str) == 0
}

// matchClass matches c against the bracket expression that starts at pat[0]
// (which is '['). It returns how many pattern bytes the class occupies,
// including the closing ']' when there is one, and whether c matched. The
// count is at least one and at most len(pat).
func matchClass(pat []byte, c byte, nocase bool) (int, bool) {
	i := 1
	not := i < len(pat) && pat[i] == '^'
	if not {
		i++
	}
	matched := false
	for {
		if i+1 < len(pat) && pat[i] == '\\' {
			// An escaped byte is compared exactly, even with nocase.
			i++
			if pat[i] == c {
				matched = true
			}
		} else if i < len(pat) && pat[i] == ']' {
			break
		} else if i == len(pat) {
			// Unclosed class: it extends to the end of the pattern.
			i--
			break
		} else if i+2 < len(pat) && pat[i+1] == '-' {
			start, end, v := signedChar(pat[i]), signedChar(pat[i+2]), signedChar(c)
			if start > end {
				start, end = end, start
			}
			if nocase {
				start, end, v = lowerInt(start), lowerInt(end), lowerInt(v)
			}
			i += 2
			if v >= start && v <= end {
				matched = true
			}
		} else if equalByte(pat[i], c, nocase) {
			matched = true
		}
		i++
	}
	if not {
		matched = !matched
	}
	return i + 1, matched
}

// signedChar returns b as C's signed char sees it.
func signedChar(b byte) int { return int(int8(b)) }

// lowerInt is C's tolower in the "C" locale applied to a signed char value.
func lowerInt(v int) int {
	if v >= 'A' && v <= 'Z' {
		return v + ('a' - 'A')
	}
	return v
}

// lower folds an ASCII upper-case letter to lower case.
func lower(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + ('a' - 'A')
	}
	return b
}

// equalByte compares two bytes, folding ASCII case when nocase is set.
func equalByte(a, b byte, nocase bool) bool {
	if nocase {
		return lower(a) == lower(b)
	}
	return a == b
}

// isSpecial reports whether b has a meaning of its own outside a bracket
// expression.
func isSpecial(b byte) bool {
	return b == '*' || b == '?' || b == '[' || b == '\\'
}

// IsLiteral reports whether pattern contains none of the bytes '*', '?', '['
// and '\'. For such a pattern, Match(pattern, s, false) reports exactly
// whether s equals pattern, so a caller may replace a scan by a point lookup.
// A pattern whose only special bytes are escapes is not reported as literal;
// use LiteralPrefix to resolve them.
func IsLiteral(pattern []byte) bool {
	for _, b := range pattern {
		if isSpecial(b) {
			return false
		}
	}
	return true
}

// LiteralPrefix returns the bytes that every string matching pattern (with
// nocase false) must start with: the pattern up to its first unescaped '*',
// '?' or '[', with backslash escapes resolved. KEYS and SCAN can seek to the
// prefix instead of visiting every key. When nocase is true the prefix holds
// only up to ASCII case.
//
// The result may share memory with pattern when the prefix contains no
// escapes; its capacity is clipped so that appending to it never overwrites
// pattern. The caller must not modify it while it needs pattern unchanged.
func LiteralPrefix(pattern []byte) []byte {
	i := 0
	for i < len(pattern) && !isSpecial(pattern[i]) {
		i++
	}
	if i == len(pattern) || pattern[i] != '\\' {
		return pattern[:i:i]
	}
	prefix := make([]byte, i, len(pattern))
	copy(prefix, pattern)
	for i < len(pattern) {
		b := pattern[i]
		switch {
		case b == '\\':
			// A trailing backslash matches itself.
			if i+1 < len(pattern) {
				i++
			}
			prefix = append(prefix, pattern[i])
		case isSpecial(b):
			return prefix
		default:
			prefix = append(prefix, b)
		}
		i++
	}
	return prefix
}
