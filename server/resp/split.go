package resp

// inlineArgvCap is the argument capacity allocated up front for an inline
// request; longer requests grow it.
const inlineArgvCap = 8

// splitArgs splits an inline request line into arguments exactly as Redis's
// sdssplitargs (src/sds.c) does, and reports false where sdssplitargs fails
// on unbalanced quotes. The line holds no NUL byte (the line search stops at
// one), so the end of the line plays the part of C's terminating NUL.
//
// Arguments are separated by runs of white space (C's isspace: space, \t, \n,
// \v, \f, \r), although an unquoted argument ends only at a space, \t, \n or
// \r. A double quote may open mid-argument ("a"b" is an error but a"b" is
// "ab"); inside double quotes \xHH, \n, \r, \t, \b and \a are decoded and a
// backslash makes any other byte literal; inside single quotes only \' is an
// escape. A closing quote must be followed by white space or the end of the
// line.
//
// All arguments share one backing array of len(line) bytes, which cannot
// overflow since no argument byte is produced without consuming one.
func splitArgs(line []byte) ([][]byte, bool) {
	at := func(i int) byte {
		if i < len(line) {
			return line[i]
		}
		return 0
	}
	var argv [][]byte
	var store []byte
	p := 0
	for {
		for p < len(line) && isSpace(line[p]) {
			p++
		}
		if p == len(line) {
			return argv, true
		}
		if store == nil {
			store = make([]byte, 0, len(line)-p)
			argv = make([][]byte, 0, inlineArgvCap)
		}
		start := len(store)
		inq, insq, done := false, false, false
		for !done {
			c := at(p)
			switch {
			case inq:
				switch {
				case c == '\\' && at(p+1) == 'x' && isHexDigit(at(p+2)) && isHexDigit(at(p+3)):
					store = append(store, hexValue(at(p+2))<<4|hexValue(at(p+3)))
					p += 3
				case c == '\\' && at(p+1) != 0:
					p++
					store = append(store, unescape(line[p]))
				case c == '"':
					if n := at(p + 1); n != 0 && !isSpace(n) {
						return nil, false
					}
					done = true
				case c == 0:
					return nil, false
				default:
					store = append(store, c)
				}
			case insq:
				switch {
				case c == '\\' && at(p+1) == '\'':
					p++
					store = append(store, '\'')
				case c == '\'':
					if n := at(p + 1); n != 0 && !isSpace(n) {
						return nil, false
					}
					done = true
				case c == 0:
					return nil, false
				default:
					store = append(store, c)
				}
			default:
				switch c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					store = append(store, c)
				}
			}
			if p < len(line) {
				p++
			}
		}
		end := len(store)
		argv = append(argv, store[start:end:end])
	}
}

// isSpace reports whether c is white space in C's "C" locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// isHexDigit reports whether c is an ASCII hexadecimal digit.
func isHexDigit(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// hexValue returns the value of the hexadecimal digit c.
func hexValue(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// unescape returns the byte a backslash escape inside double quotes stands
// for.
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
	default:
		return c
	}
}
