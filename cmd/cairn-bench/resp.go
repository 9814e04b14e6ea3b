package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// This file holds the tool's own RESP code: a writer of commands (arrays of
// bulk strings) and a parser of reply frames. The parser understands RESP2
// and the RESP3 types a server may send (null, boolean, double, big number,
// blob error, verbatim string, map, set, push); attributes ('|') are refused.

// Limits of the parser. They bound the memory one frame can make the tool
// allocate, whatever a server sends.
const (
	// maxBulkLen is the largest bulk string (or blob error, verbatim string)
	// accepted.
	maxBulkLen = 64 << 20
	// maxAggregateLen is the largest element count of an array, set, push
	// or map (counting a map's keys and values).
	maxAggregateLen = 1 << 24
	// maxDepth is the deepest nesting of aggregates accepted.
	maxDepth = 32
	// maxLineLen is the longest header or simple-type line accepted,
	// CRLF included.
	maxLineLen = 64 << 10
	// maxFrameLen is the largest frame the Reader buffers.
	maxFrameLen = maxBulkLen + maxLineLen
)

// errIncomplete reports that a buffer holds the beginning of a frame but not
// all of it. It is never returned by Reader.ReadFrame.
var errIncomplete = errors.New("resp: incomplete frame")

// ProtocolError reports bytes that are not a valid RESP frame. Offset is the
// position, within the bytes given to the parser, where the problem was
// found.
type ProtocolError struct {
	Offset int
	Msg    string
}

// Error implements error.
func (e *ProtocolError) Error() string {
	return fmt.Sprintf("resp: protocol error at byte %d: %s", e.Offset, e.Msg)
}

// ServerError is an error reply ('-' or '!') of the server, such as
// "ERR unknown command 'publish'".
type ServerError struct {
	Msg string
}

// Error implements error.
func (e *ServerError) Error() string { return "server error: " + e.Msg }

// Value is one parsed RESP frame. Kind is the frame's type byte ('+', '-',
// ':', '$', '*', '_', '#', ',', '(', '!', '=', '%', '~' or '>').
//
// Str holds the text of simple strings, errors, bulk strings, blob errors,
// verbatim strings (with their "txt:" prefix), doubles and big numbers, as
// sent. Int holds the value of an integer, and 1 or 0 for a boolean. Elems
// holds the elements of an array, set or push, and the keys and values of a
// map, alternating. Null is set for "$-1", "*-1" and "_".
//
// A Value returned by a Reader aliases the Reader's buffers and is valid
// only until the Reader's next call; one returned by ParseFrame aliases the
// bytes given to it.
type Value struct {
	Kind  byte
	Null  bool
	Str   []byte
	Int   int64
	Elems []Value
}

// ServerErr returns the Value as a *ServerError if it is an error reply,
// and nil otherwise.
func (v Value) ServerErr() error {
	if v.Kind == '-' || v.Kind == '!' {
		return &ServerError{Msg: string(v.Str)}
	}
	return nil
}

// Equal reports whether v and w are the same frame.
func (v Value) Equal(w Value) bool {
	if v.Kind != w.Kind || v.Null != w.Null || v.Int != w.Int ||
		!bytes.Equal(v.Str, w.Str) || len(v.Elems) != len(w.Elems) {
		return false
	}
	for i := range v.Elems {
		if !v.Elems[i].Equal(w.Elems[i]) {
			return false
		}
	}
	return true
}

// String renders v on one line for tests and error messages, such as
// `array[2]{bulk "a", int 1}`.
func (v Value) String() string {
	return string(v.appendText(nil))
}

func (v Value) appendText(b []byte) []byte {
	switch v.Kind {
	case '+':
		return strconv.AppendQuote(append(b, "simple "...), string(v.Str))
	case '-':
		return strconv.AppendQuote(append(b, "error "...), string(v.Str))
	case '!':
		return strconv.AppendQuote(append(b, "bloberror "...), string(v.Str))
	case '=':
		return strconv.AppendQuote(append(b, "verbatim "...), string(v.Str))
	case ',':
		return append(append(b, "double "...), v.Str...)
	case '(':
		return append(append(b, "bignum "...), v.Str...)
	case ':':
		return strconv.AppendInt(append(b, "int "...), v.Int, 10)
	case '#':
		return strconv.AppendBool(append(b, "bool "...), v.Int != 0)
	case '_':
		return append(b, "null"...)
	case '$':
		if v.Null {
			return append(b, "bulk nil"...)
		}
		return strconv.AppendQuote(append(b, "bulk "...), string(v.Str))
	}
	name := map[byte]string{'*': "array", '~': "set", '>': "push", '%': "map"}[v.Kind]
	if name == "" {
		return fmt.Appendf(b, "kind %q", v.Kind)
	}
	if v.Null {
		return append(append(b, name...), " nil"...)
	}
	n := len(v.Elems)
	if v.Kind == '%' {
		n /= 2 // pairs
	}
	b = fmt.Appendf(b, "%s[%d]{", name, n)
	for i, e := range v.Elems {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = e.appendText(b)
	}
	return append(b, '}')
}

// AppendFrame appends v's RESP encoding to b. It is the inverse of the
// parser for every Value the parser returns.
func AppendFrame(b []byte, v Value) []byte {
	switch v.Kind {
	case '+', '-', ',', '(':
		b = append(b, v.Kind)
		b = append(b, v.Str...)
		return append(b, '\r', '\n')
	case ':':
		b = strconv.AppendInt(append(b, ':'), v.Int, 10)
		return append(b, '\r', '\n')
	case '#':
		if v.Int != 0 {
			return append(b, "#t\r\n"...)
		}
		return append(b, "#f\r\n"...)
	case '_':
		return append(b, "_\r\n"...)
	case '$', '!', '=':
		if v.Null {
			return append(b, "$-1\r\n"...)
		}
		b = strconv.AppendInt(append(b, v.Kind), int64(len(v.Str)), 10)
		b = append(b, '\r', '\n')
		b = append(b, v.Str...)
		return append(b, '\r', '\n')
	}
	if v.Null {
		return append(b, "*-1\r\n"...)
	}
	n := len(v.Elems)
	if v.Kind == '%' {
		n /= 2
	}
	b = strconv.AppendInt(append(b, v.Kind), int64(n), 10)
	b = append(b, '\r', '\n')
	for _, e := range v.Elems {
		b = AppendFrame(b, e)
	}
	return b
}

// AppendCommand appends a command, an array of bulk strings, to b.
func AppendCommand(b []byte, args ...string) []byte {
	b = strconv.AppendInt(append(b, '*'), int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = strconv.AppendInt(append(b, '$'), int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// ParseFrame parses the first frame of b. It returns the frame and the
// number of bytes it takes, errIncomplete if b holds only the beginning of
// a frame, or a *ProtocolError. The Value aliases b.
func ParseFrame(b []byte) (Value, int, error) {
	var p parser
	return p.parse(b)
}

// parser parses frames. Its element pool is reused from one frame to the
// next, so that parsing a stream of frames allocates nothing once the pool
// is large enough; the Elems of a frame are therefore valid only until the
// next parse.
type parser struct {
	pool []Value
}

// parse parses the first frame of b; see ParseFrame.
func (p *parser) parse(b []byte) (Value, int, error) {
	p.pool = p.pool[:0]
	return p.value(b, 0, 0)
}

// value parses the frame that starts at b[pos], at nesting depth depth, and
// returns it with the position just past it.
func (p *parser) value(b []byte, pos, depth int) (Value, int, error) {
	if pos >= len(b) {
		return Value{}, pos, errIncomplete
	}
	kind := b[pos]
	line, next, err := readLine(b, pos+1)
	if err != nil {
		return Value{}, pos, err
	}
	v := Value{Kind: kind}
	switch kind {
	case '+', '-':
		v.Str = line
		return v, next, nil
	case ':':
		n, ok := parseInt(line)
		if !ok {
			return Value{}, pos, protoErr(pos+1, "invalid integer %q", line)
		}
		v.Int = n
		return v, next, nil
	case '_':
		if len(line) != 0 {
			return Value{}, pos, protoErr(pos+1, "invalid null %q", line)
		}
		v.Null = true
		return v, next, nil
	case '#':
		switch string(line) {
		case "t":
			v.Int = 1
		case "f":
		default:
			return Value{}, pos, protoErr(pos+1, "invalid boolean %q", line)
		}
		return v, next, nil
	case ',':
		if _, err := strconv.ParseFloat(string(line), 64); err != nil && !errors.Is(err, strconv.ErrRange) {
			return Value{}, pos, protoErr(pos+1, "invalid double %q", line)
		}
		v.Str = line
		return v, next, nil
	case '(':
		digits := line
		if len(digits) > 0 && (digits[0] == '-' || digits[0] == '+') {
			digits = digits[1:]
		}
		if len(digits) == 0 || !allDigits(digits) {
			return Value{}, pos, protoErr(pos+1, "invalid big number %q", line)
		}
		v.Str = line
		return v, next, nil
	case '$', '!', '=':
		n, ok := parseInt(line)
		if !ok || n < -1 || (n == -1 && kind != '$') {
			return Value{}, pos, protoErr(pos+1, "invalid length %q", line)
		}
		if n == -1 {
			v.Null = true
			return v, next, nil
		}
		if n > maxBulkLen {
			return Value{}, pos, protoErr(pos+1, "length %d exceeds the limit of %d", n, maxBulkLen)
		}
		end := next + int(n)
		if end+2 > len(b) {
			return Value{}, pos, errIncomplete
		}
		if b[end] != '\r' || b[end+1] != '\n' {
			return Value{}, pos, protoErr(end, "bulk string not followed by CRLF")
		}
		if kind == '=' && (n < 4 || b[next+3] != ':') {
			return Value{}, pos, protoErr(next, "verbatim string without a format prefix")
		}
		v.Str = b[next:end]
		return v, end + 2, nil
	case '*', '~', '>', '%':
		n, ok := parseInt(line)
		if !ok || n < -1 || (n == -1 && kind != '*') {
			return Value{}, pos, protoErr(pos+1, "invalid length %q", line)
		}
		if n == -1 {
			v.Null = true
			return v, next, nil
		}
		if kind == '%' {
			if n > maxAggregateLen/2 {
				return Value{}, pos, protoErr(pos+1, "length %d exceeds the limit", n)
			}
			n *= 2
		}
		if n > maxAggregateLen {
			return Value{}, pos, protoErr(pos+1, "length %d exceeds the limit of %d", n, maxAggregateLen)
		}
		if depth+1 > maxDepth {
			return Value{}, pos, protoErr(pos, "nesting deeper than %d", maxDepth)
		}
		// Every element takes at least 3 bytes ("_\r\n"), so a count the
		// buffer cannot hold is incomplete before anything is allocated.
		if int(n) > (len(b)-next)/3 {
			return Value{}, pos, errIncomplete
		}
		elems := p.alloc(int(n))
		for i := range elems {
			var e Value
			e, next, err = p.value(b, next, depth+1)
			if err != nil {
				return Value{}, pos, err
			}
			elems[i] = e
		}
		v.Elems = elems
		return v, next, nil
	case '|':
		return Value{}, pos, protoErr(pos, "attributes are not supported")
	default:
		return Value{}, pos, protoErr(pos, "unknown type byte %q", kind)
	}
}

// alloc returns n zeroed Values from the pool. A slice handed out earlier
// stays valid if the pool grows: it keeps the old backing array.
func (p *parser) alloc(n int) []Value {
	if len(p.pool)+n > cap(p.pool) {
		p.pool = make([]Value, 0, max(2*cap(p.pool), n, 64))
	}
	s := p.pool[len(p.pool) : len(p.pool)+n : len(p.pool)+n]
	p.pool = p.pool[:len(p.pool)+n]
	clear(s)
	return s
}

// readLine returns the bytes from b[pos] up to the next CRLF and the
// position after the CRLF. A line may not contain CR or LF.
func readLine(b []byte, pos int) ([]byte, int, error) {
	limit := min(len(b), pos+maxLineLen)
	i := bytes.IndexByte(b[pos:limit], '\n')
	if i < 0 {
		if limit-pos >= maxLineLen {
			return nil, pos, protoErr(pos, "line longer than %d bytes", maxLineLen)
		}
		// A lone CR can only be the start of the terminating CRLF.
		if j := bytes.IndexByte(b[pos:limit], '\r'); j >= 0 && pos+j != limit-1 {
			return nil, pos, protoErr(pos+j, "CR not followed by LF")
		}
		return nil, pos, errIncomplete
	}
	if i == 0 || b[pos+i-1] != '\r' {
		return nil, pos, protoErr(pos+i, "LF not preceded by CR")
	}
	line := b[pos : pos+i-1]
	if j := bytes.IndexByte(line, '\r'); j >= 0 {
		return nil, pos, protoErr(pos+j, "CR not followed by LF")
	}
	return line, pos + i + 1, nil
}

// parseInt parses a decimal int64 with an optional sign and no other
// characters.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	neg := false
	digits := b
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		digits = b[1:]
	}
	if len(digits) == 0 || !allDigits(digits) {
		return 0, false
	}
	var n uint64
	for _, c := range digits {
		d := uint64(c - '0')
		if n > (1<<63)/10 || n*10 > 1<<63-d {
			return 0, false
		}
		n = n*10 + d
	}
	if neg {
		if n == 1<<63 {
			return -1 << 63, true
		}
		return -int64(n), true
	}
	if n > 1<<63-1 {
		return 0, false
	}
	return int64(n), true
}

// allDigits reports whether b holds only ASCII digits.
func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func protoErr(offset int, format string, args ...any) error {
	return &ProtocolError{Offset: offset, Msg: fmt.Sprintf(format, args...)}
}

// Reader reads frames from a byte stream, such as a connection. It is not
// safe for concurrent use.
type Reader struct {
	rd   io.Reader
	buf  []byte
	r, w int // the unread bytes are buf[r:w]
	p    parser
	// fillTime is when the last read that returned bytes completed.
	fillTime time.Time
}

// NewReader returns a Reader of rd with a buffer of size bytes, which grows
// as large frames need, up to maxFrameLen.
func NewReader(rd io.Reader, size int) *Reader {
	return &Reader{rd: rd, buf: make([]byte, max(size, 16))}
}

// ReadFrame returns the next frame, reading from the stream as needed. The
// Value is valid until the next call. At the end of the stream it returns
// io.EOF if no frame had begun and io.ErrUnexpectedEOF if one had; a read
// error is returned as is; bytes that are not RESP give a *ProtocolError.
func (r *Reader) ReadFrame() (Value, error) {
	for {
		v, ok, err := r.Buffered()
		if ok || err != nil {
			return v, err
		}
		if err := r.fill(); err != nil {
			if err == io.EOF && r.r < r.w {
				err = io.ErrUnexpectedEOF
			}
			return Value{}, err
		}
	}
}

// Buffered returns the next frame if the buffer holds all of it, without
// reading from the stream; ok is false if it does not. The Value is valid
// until the next call.
func (r *Reader) Buffered() (v Value, ok bool, err error) {
	if r.r == r.w {
		return Value{}, false, nil
	}
	v, n, err := r.p.parse(r.buf[r.r:r.w])
	if err == errIncomplete {
		return Value{}, false, nil
	}
	if err != nil {
		if pe, isPE := err.(*ProtocolError); isPE {
			pe.Offset += r.r
		}
		return Value{}, false, err
	}
	r.r += n
	return v, true, nil
}

// FillTime returns when the last read that returned bytes completed: for a
// frame just returned, a bound on when its last byte arrived.
func (r *Reader) FillTime() time.Time { return r.fillTime }

// fill reads more bytes into the buffer, moving or growing it first if it
// has no room.
func (r *Reader) fill() error {
	if r.r == r.w {
		r.r, r.w = 0, 0
	}
	if r.w == len(r.buf) {
		if r.r > 0 {
			r.w = copy(r.buf, r.buf[r.r:r.w])
			r.r = 0
		} else {
			if len(r.buf) >= maxFrameLen {
				return fmt.Errorf("resp: frame larger than %d bytes", maxFrameLen)
			}
			nb := make([]byte, min(2*len(r.buf), maxFrameLen))
			r.w = copy(nb, r.buf[r.r:r.w])
			r.r = 0
			r.buf = nb
		}
	}
	for range 100 {
		n, err := r.rd.Read(r.buf[r.w:])
		if n > 0 {
			r.w += n
			r.fillTime = time.Now()
			return nil
		}
		if err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}
