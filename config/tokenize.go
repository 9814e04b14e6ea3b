package config

import (
	"fmt"
	"strings"
)

// Tokenize splits one line of a configuration file into tokens with the
// rules redis.conf uses:
//
//   - tokens are separated by spaces, tabs, carriage returns or newlines;
//     whitespace before the first token is skipped;
//   - a double-quoted part understands the escapes \n \r \t \b \a \xHH and
//     a backslash before any other character stands for that character;
//   - a single-quoted part understands only \' ;
//   - a quoted part may start in the middle of a token (ab"cd" is the
//     token abcd), but its closing quote must be followed by whitespace or
//     the end of the line ("ab"cd is an error);
//   - an empty pair of quotes, double or single, is an empty token.
//
// A NUL byte ends the line, as it does for Redis. Tokenize returns
// ErrUnbalancedQuotes when a quote is not closed or a closing quote is
// followed by something else. It never fails otherwise; a line holding only
// whitespace yields no tokens. Comment lines are the caller's business: a
// '#' is an ordinary character here.
func Tokenize(line string) ([]string, error) {
	if i := strings.IndexByte(line, 0); i >= 0 {
		line = line[:i]
	}
	n := len(line)
	at := func(i int) byte {
		if i < n {
			return line[i]
		}
		return 0
	}
	var args []string
	p := 0
	for {
		for p < n && isCSpace(line[p]) {
			p++
		}
		if p >= n {
			return args, nil
		}
		var cur []byte
		inDouble, inSingle, done := false, false, false
		for !done {
			c := at(p)
			switch {
			case inDouble:
				switch {
				case c == '\\' && at(p+1) == 'x' && isHex(at(p+2)) && isHex(at(p+3)):
					cur = append(cur, unhex(at(p+2))<<4|unhex(at(p+3)))
					p += 3
				case c == '\\' && at(p+1) != 0:
					p++
					cur = append(cur, unescape(at(p)))
				case c == '"':
					if next := at(p + 1); next != 0 && !isCSpace(next) {
						return nil, ErrUnbalancedQuotes
					}
					done = true
				case c == 0:
					return nil, ErrUnbalancedQuotes
				default:
					cur = append(cur, c)
				}
			case inSingle:
				switch {
				case c == '\\' && at(p+1) == '\'':
					p++
					cur = append(cur, '\'')
				case c == '\'':
					if next := at(p + 1); next != 0 && !isCSpace(next) {
						return nil, ErrUnbalancedQuotes
					}
					done = true
				case c == 0:
					return nil, ErrUnbalancedQuotes
				default:
					cur = append(cur, c)
				}
			default:
				switch c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inDouble = true
				case '\'':
					inSingle = true
				default:
					cur = append(cur, c)
				}
			}
			if p < n {
				p++
			}
		}
		args = append(args, string(cur))
	}
}

// isCSpace reports whether c is whitespace for C's isspace in the C locale.
func isCSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

// quoteToken renders s so that Tokenize reads it back as the single token s:
// as is when it is non-empty and made only of printable ASCII other than
// quotes and backslashes, otherwise double-quoted with escapes.
func quoteToken(s string) string {
	plain := s != ""
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		plain = c > ' ' && c < 0x7f && c != '"' && c != '\'' && c != '\\'
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		default:
			if c >= ' ' && c < 0x7f {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
