// Package resp reads client requests in the Redis protocol.
//
// A Reader turns the byte stream of one client connection into commands,
// accepting exactly what Redis 7 accepts in processInputBuffer,
// processMultibulkBuffer and processInlineBuffer (src/networking.c) and
// rejecting the rest with the same error text, so that a Redis client sees
// the same replies from Cairn as from Redis. Two request forms exist:
//
//   - Multibulk requests, which start with '*': "*<n>\r\n" followed by n bulk
//     strings "$<len>\r\n<len bytes>\r\n". This is what client libraries send.
//   - Inline requests: any other line, terminated by "\n" or "\r\n" and split
//     into arguments like Redis's sdssplitargs, with double quotes (and the
//     escapes \n \r \t \b \a \xHH inside them) and single quotes (with \'
//     inside them). This is what a person types into telnet.
//
// Redis quirks that a client can observe are kept:
//
//   - Requests announcing zero or a negative number of arguments ("*0\r\n",
//     "*-1\r\n") and inline lines holding no argument are skipped silently.
//   - Header lines end at the first '\r', and the byte after that '\r' is
//     skipped without being checked, as are the two bytes after a bulk
//     string's payload: "*1\r\n$4\r\nPINGxx" is a valid PING.
//   - Redis searches header and inline lines with C string functions, so a
//     NUL byte hides the rest of the buffer: a line that has a NUL before its
//     terminator never ends, and the request fails once more than
//     MaxInlineSize bytes are buffered.
//   - Numbers follow Redis's string2ll: no sign other than a leading '-', no
//     leading zeros, no spaces, no "-0".
//
// Like Redis 7.0, a Reader accepts up to MaxMultibulkLength arguments per
// request, and far less from a connection that has yet to authenticate
// (SetAuthRequired): at most 10 arguments of at most 16384 bytes each.
//
// Redis tests the 64 KiB limit on unterminated lines only when a read from
// the socket returns, so whether it accepts a line that ends a little past
// 64 KiB depends on how the bytes were split into packets. A Reader decides
// deterministically: a request line, or a header line, with no terminator in
// its first MaxInlineSize+1 bytes is an error however the bytes arrive.
package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/cairnkv/cairn/config"
)

// Limits that mirror Redis's compile-time and default configuration.
const (
	// MaxInlineSize is the longest an inline request line or a multibulk
	// header line may grow without a terminator. It is Redis's
	// PROTO_INLINE_MAX_SIZE.
	MaxInlineSize = 64 * 1024

	// MaxMultibulkLength is the largest argument count a multibulk request
	// may announce (Redis's INT_MAX).
	MaxMultibulkLength = 1<<31 - 1

	// MaxUnauthMultibulkLength and MaxUnauthBulk are the limits for a
	// connection that must still authenticate.
	MaxUnauthMultibulkLength = 10
	MaxUnauthBulk            = 16384

	// DefaultMaxBulk is the largest bulk string accepted when NewReader is
	// given a maxBulk that is not positive. It is the default of Redis's
	// proto-max-bulk-len, 512 MiB.
	DefaultMaxBulk = 512 * 1024 * 1024
)

// Sentinel errors for the protocol violations a Reader detects. ReadCommand
// never returns them directly: it returns a *ProtocolError whose Unwrap
// method yields one of them, so callers test for a kind of violation with
// errors.Is and obtain the text to send with Error. Their text is Redis's
// (capitalised as Redis spells it); for ErrExpectedBulk the ProtocolError
// adds the offending byte.
var (
	// ErrInvalidMultibulkLength reports a "*" header whose count is not a
	// number or exceeds MaxMultibulkLength.
	ErrInvalidMultibulkLength = errors.New("Protocol error: invalid multibulk length")

	// ErrInvalidBulkLength reports a "$" header whose length is not a
	// number, is negative, or exceeds the Reader's maximum bulk length.
	ErrInvalidBulkLength = errors.New("Protocol error: invalid bulk length")

	// ErrUnauthMultibulkLength and ErrUnauthBulkLength report requests
	// over the limits for a client that has yet to authenticate.
	ErrUnauthMultibulkLength = errors.New("Protocol error: unauthenticated multibulk length")
	ErrUnauthBulkLength      = errors.New("Protocol error: unauthenticated bulk length")

	// ErrExpectedBulk reports an argument of a multibulk request that does
	// not start with '$'.
	ErrExpectedBulk = errors.New("Protocol error: expected '$'")

	// ErrTooBigMultibulkCount reports a "*" header line that is not
	// terminated within MaxInlineSize bytes.
	ErrTooBigMultibulkCount = errors.New("Protocol error: too big mbulk count string")

	// ErrTooBigBulkCount reports a "$" header line that is not terminated
	// within MaxInlineSize bytes.
	ErrTooBigBulkCount = errors.New("Protocol error: too big bulk count string")

	// ErrTooBigInline reports an inline request line that is not
	// terminated within MaxInlineSize bytes.
	ErrTooBigInline = errors.New("Protocol error: too big inline request")

	// ErrUnbalancedQuotes reports an inline request with an unterminated
	// quoted argument, or a closing quote followed by something other than
	// white space.
	ErrUnbalancedQuotes = errors.New("Protocol error: unbalanced quotes in request")
)

// ProtocolError is returned by ReadCommand when a request violates the
// protocol. The connection cannot be resynchronised afterwards: Redis replies
// "-ERR " followed by Error() and closes the connection, and a server built on
// this package should do the same.
type ProtocolError struct {
	kind error
	msg  string
}

// Error returns the text Redis sends after "-ERR ", for example
// "Protocol error: invalid bulk length". It never contains '\r' or '\n'.
func (e *ProtocolError) Error() string { return e.msg }

// Unwrap returns the sentinel error, such as ErrInvalidBulkLength, that names
// the kind of violation.
func (e *ProtocolError) Unwrap() error { return e.kind }

// Preallocated errors for the kinds whose text never varies.
var (
	errInvalidMultibulkLength = &ProtocolError{ErrInvalidMultibulkLength, ErrInvalidMultibulkLength.Error()}
	errInvalidBulkLength      = &ProtocolError{ErrInvalidBulkLength, ErrInvalidBulkLength.Error()}
	errUnauthMultibulkLength  = &ProtocolError{ErrUnauthMultibulkLength, ErrUnauthMultibulkLength.Error()}
	errUnauthBulkLength       = &ProtocolError{ErrUnauthBulkLength, ErrUnauthBulkLength.Error()}
	errTooBigMultibulkCount   = &ProtocolError{ErrTooBigMultibulkCount, ErrTooBigMultibulkCount.Error()}
	errTooBigBulkCount        = &ProtocolError{ErrTooBigBulkCount, ErrTooBigBulkCount.Error()}
	errTooBigInline           = &ProtocolError{ErrTooBigInline, ErrTooBigInline.Error()}
	errUnbalancedQuotes       = &ProtocolError{ErrUnbalancedQuotes, ErrUnbalancedQuotes.Error()}
)

// expectedBulkError builds the error for a bulk header that starts with c
// instead of '$'. Redis formats the byte with %c and then replaces '\r' and
// '\n' in error replies by spaces so that the reply stays one line.
func expectedBulkError(c byte) *ProtocolError {
	if c == '\r' || c == '\n' {
		c = ' '
	}
	return &ProtocolError{ErrExpectedBulk, "Protocol error: expected '$', got '" + string([]byte{c}) + "'"}
}

const (
	// initialBufferSize is the size of a Reader's buffer until a long line
	// makes it grow.
	initialBufferSize = 4096
	// initialArgvCap caps the argument slice allocated up front for a
	// multibulk request, however many arguments it announces; Redis uses
	// the same bound.
	initialArgvCap = 1024
	// maxBulkPrealloc is the most room reserved for a bulk string on the
	// strength of its announced length alone; beyond it, room grows with
	// the bytes that actually arrive.
	maxBulkPrealloc = 64 * 1024
	// maxEmptyReads is how many reads returning no data and no error a
	// Reader tolerates in a row before reporting io.ErrNoProgress.
	maxEmptyReads = 100
)

// Reader reads Redis protocol requests from an io.Reader. It owns a buffer
// and may read ahead of the request it returns, so the underlying reader must
// not be read by anyone else. A Reader is not safe for concurrent use.
type Reader struct {
	rd       io.Reader
	maxBulk  int64
	authWall bool // the client must still authenticate

	// buf[r:w] holds bytes read from rd but not yet consumed.
	buf  []byte
	r, w int

	// rerr is an error from rd that arrived together with data and is
	// reported once that data is consumed.
	rerr error
	// err is the sticky error returned by every call after a failure.
	err error

	// fills counts the reads into the buffer: the bytes of buf[r:w] stay
	// as they are until the next one.
	fills uint64
	// has memoizes HasCommand's answer for the buffer state hasAt (r,
	// fills and the auth wall): a server asks again before it reads,
	// with nothing consumed in between.
	has   bool
	hasAt [3]uint64

	// largest is the payload size of the largest request read since the
	// last TakeLargest.
	largest int
}

// NewReader returns a Reader that reads requests from rd and accepts bulk
// strings of at most maxBulk bytes (Redis's proto-max-bulk-len); a maxBulk
// that is not positive selects DefaultMaxBulk. The Reader reserves at most
// 64 KiB on the strength of a length the client announced; beyond that,
// memory grows with the bytes that actually arrive, to at most eight times
// them.
func NewReader(rd io.Reader, maxBulk int64) *Reader {
	if maxBulk <= 0 {
		maxBulk = DefaultMaxBulk
	}
	return &Reader{rd: rd, maxBulk: maxBulk, buf: make([]byte, initialBufferSize)}
}

// TakeLargest returns the payload size (the arguments' bytes) of the
// largest request read since the last call, and starts counting again.
func (r *Reader) TakeLargest() int {
	n := r.largest
	r.largest = 0
	return n
}

// SetAuthRequired tells the Reader whether the client has yet to
// authenticate; until it has, requests are held to Redis's small
// unauthenticated limits, so an anonymous client cannot make the server
// buffer large requests.
func (r *Reader) SetAuthRequired(required bool) { r.authWall = required }

// Buffered returns the number of bytes already read from the underlying
// reader but not yet returned as part of a request. A server can use it to
// tell whether another pipelined request is waiting, and delay flushing
// replies until it is not.
func (r *Reader) Buffered() int { return r.w - r.r }

// HasCommand reports whether the buffered bytes hold a whole, valid
// request, after any requests that ReadCommand would skip: when it does,
// ReadCommand returns that request without reading from the underlying
// reader. A false answer promises nothing (the request may be incomplete,
// or invalid, which ReadCommand reports). A server asks before reading
// ahead of a pipeline, and flushes its replies when it is false, since
// the next read may wait for the client.
func (r *Reader) HasCommand() bool {
	if r.err != nil || r.r == r.w {
		return false
	}
	at := [3]uint64{uint64(r.r), r.fills + 1, 0}
	if r.authWall {
		at[2] = 1
	}
	if at != r.hasAt {
		r.has, r.hasAt = r.hasCommand(), at
	}
	return r.has
}

// hasCommand is HasCommand without the memo.
func (r *Reader) hasCommand() bool {
	buf := r.buf[r.r:r.w]
	for len(buf) > 0 {
		var n int
		var complete bool
		if buf[0] == '*' {
			n, complete = r.scanMultibulk(buf)
		} else {
			n, complete = scanInline(buf)
		}
		if n == 0 {
			return complete
		}
		buf = buf[n:] // a request ReadCommand skips
	}
	return false
}

// scanMultibulk looks at the multibulk request at the start of buf. It
// returns complete true when the request is whole and valid, or the length
// of a request announcing no arguments (which ReadCommand skips).
func (r *Reader) scanMultibulk(buf []byte) (skip int, complete bool) {
	line := func(b []byte) (int64, int, bool) {
		end := indexTermOrNUL(b[:min(len(b), MaxInlineSize+1)], '\r')
		if end < 0 || b[end] != '\r' || len(b) < end+2 {
			return 0, 0, false
		}
		v, ok := parseInt(b[1:end])
		return v, end + 2, ok
	}
	n, used, ok := line(buf)
	if !ok || n > MaxMultibulkLength || r.authWall && n > MaxUnauthMultibulkLength {
		return 0, false
	}
	if n <= 0 {
		return used, false
	}
	buf = buf[used:]
	for range n {
		if len(buf) == 0 || buf[0] != '$' {
			return 0, false
		}
		l, used, ok := line(buf)
		if !ok || l < 0 || l > r.maxBulk || r.authWall && l > MaxUnauthBulk || int64(len(buf)-used) < l+2 {
			return 0, false
		}
		buf = buf[used+int(l)+2:]
	}
	return 0, true
}

// scanInline looks at the inline request at the start of buf. It returns
// complete true when its line is whole and holds an argument (or has
// unbalanced quotes, which ReadCommand reports at once), or the length of
// a line with none (which ReadCommand skips).
func scanInline(buf []byte) (skip int, complete bool) {
	end := indexTermOrNUL(buf[:min(len(buf), MaxInlineSize+1)], '\n')
	if end < 0 || buf[end] != '\n' {
		return 0, false
	}
	toks, err := config.Tokenize(string(bytes.TrimSuffix(buf[:end], []byte("\r"))))
	if err != nil || len(toks) > 0 {
		return 0, true
	}
	return end + 1, false
}

// ReadCommand reads the next request and returns its arguments, of which
// there is always at least one. Requests that Redis ignores (empty inline
// lines, multibulk requests announcing no arguments) are skipped.
//
// The returned slices are freshly allocated and owned by the caller; each
// argument's capacity is clipped to its length, so appending to one never
// overwrites another.
//
// At a clean end of input between requests, ReadCommand returns io.EOF
// itself. If the input ends inside a request, the error wraps
// io.ErrUnexpectedEOF; other errors from the underlying reader are returned
// wrapped. A request that violates the protocol yields a *ProtocolError. Any
// error is final: the Reader returns it again from every later call.
func (r *Reader) ReadCommand() (args [][]byte, err error) {
	for r.err == nil {
		a, e := r.readRequest()
		if e != nil {
			r.err = e
			break
		}
		if len(a) > 0 {
			return a, nil
		}
	}
	return nil, r.err
}

// readRequest reads one request. It returns no arguments and no error for a
// request that Redis skips.
func (r *Reader) readRequest() ([][]byte, error) {
	if r.r == r.w {
		if err := r.fill(); err != nil {
			if err == io.EOF {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("resp: reading request: %w", err)
		}
	}
	var args [][]byte
	var err error
	if r.buf[r.r] == '*' {
		args, err = r.readMultibulk()
	} else {
		args, err = r.readInline()
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if _, ok := err.(*ProtocolError); !ok {
			err = fmt.Errorf("resp: reading request: %w", err)
		}
	}
	return args, err
}

// readMultibulk reads a request that starts with '*'.
func (r *Reader) readMultibulk() ([][]byte, error) {
	end, err := r.scanLine('\r', 1, errTooBigMultibulkCount)
	if err != nil {
		return nil, err
	}
	n, ok := parseInt(r.buf[r.r+1 : r.r+end])
	if !ok || n > MaxMultibulkLength {
		return nil, errInvalidMultibulkLength
	}
	if r.authWall && n > MaxUnauthMultibulkLength {
		return nil, errUnauthMultibulkLength
	}
	r.r += end + 2
	if n <= 0 {
		return nil, nil
	}

	// Size the allocations from what is already buffered: for the usual
	// small request that arrived whole, argv and the argument bytes are
	// allocated once each, at their exact size.
	complete, size := r.prescan(int(n))
	argvCap := min(int(n), initialArgvCap)
	if complete == int(n) {
		argvCap = complete
	}
	argv := make([][]byte, 0, argvCap)
	store := make([]byte, 0, size)

	for range n {
		end, err := r.scanLine('\r', 1, errTooBigBulkCount)
		if err != nil {
			return nil, err
		}
		if c := r.buf[r.r]; c != '$' {
			return nil, expectedBulkError(c)
		}
		l, ok := parseInt(r.buf[r.r+1 : r.r+end])
		if !ok || l < 0 || l > r.maxBulk {
			return nil, errInvalidBulkLength
		}
		if r.authWall && l > MaxUnauthBulk {
			return nil, errUnauthBulkLength
		}
		r.r += end + 2
		start := len(store)
		store, err = r.readBulk(store, l)
		if err != nil {
			return nil, err
		}
		// Remember the length; the final slicing below happens once
		// store can no longer move.
		argv = append(argv, store[start:])
	}

	pos := 0
	for i, a := range argv {
		argv[i] = store[pos : pos+len(a) : pos+len(a)]
		pos += len(a)
	}
	r.largest = max(r.largest, len(store))
	return argv, nil
}

// prescan looks ahead in the buffered bytes at the bulk strings of a
// multibulk request announcing n arguments. It returns how many of them are
// complete in the buffer and their total payload size, plus a little room for
// an argument that has started to arrive. It consumes nothing and validates
// only loosely; readMultibulk reports any errors.
func (r *Reader) prescan(n int) (complete, size int) {
	buf := r.buf[r.r:r.w]
	for complete < n {
		if len(buf) == 0 || buf[0] != '$' {
			break
		}
		i := bytes.IndexByte(buf, '\r')
		if i < 0 || i > MaxInlineSize {
			break
		}
		l, ok := parseInt(buf[1:i])
		if !ok || l < 0 || l > r.maxBulk {
			break
		}
		if l > int64(len(buf)) || i+2+int(l)+2 > len(buf) {
			// Reserve room for the start of an argument that is still
			// arriving, without trusting its announced length.
			size += int(min(l, maxBulkPrealloc))
			break
		}
		next := i + 2 + int(l) + 2
		size += int(l)
		complete++
		buf = buf[next:]
	}
	return complete, size
}

// readBulk appends a bulk payload of l bytes to store and consumes the two
// bytes that follow it, which Redis assumes to be "\r\n" without checking.
// At most maxBulkPrealloc bytes are reserved up front; past that the payload
// is copied as it arrives, into room that doubles until an eighth of the
// payload has arrived and then takes the rest at once. So a client that
// announces a large length without sending the bytes costs at most eight
// times what it sent, and a large payload costs one final buffer plus
// about a quarter of its size in the smaller ones before it (rather than
// its size again in doublings, each copying the last).
func (r *Reader) readBulk(store []byte, l int64) ([]byte, error) {
	if int64(cap(store)-len(store)) < l {
		store = slices.Grow(store, int(min(l, maxBulkPrealloc)))
	}
	remaining := l
	for remaining > 0 {
		if r.r == r.w {
			if remaining < int64(len(r.buf)) {
				if err := r.fill(); err != nil {
					return store, err
				}
				continue
			}
			// A large payload bypasses the buffer: read it straight
			// into store, growing store only as bytes arrive.
			if len(store) == cap(store) {
				grow := int64(max(len(store), len(r.buf)))
				if l-remaining >= l/8 {
					grow = remaining
				}
				grown := make([]byte, len(store), len(store)+int(min(remaining, grow)))
				store = grown[:copy(grown, store)]
			}
			room := store[len(store):cap(store)]
			if int64(len(room)) > remaining {
				room = room[:remaining]
			}
			n, err := r.read(room)
			store = store[:len(store)+n]
			remaining -= int64(n)
			if err != nil {
				return store, err
			}
			continue
		}
		n := min(int64(r.w-r.r), remaining)
		store = append(store, r.buf[r.r:r.r+int(n)]...)
		r.r += int(n)
		remaining -= n
	}
	for r.w-r.r < 2 {
		if err := r.fill(); err != nil {
			return store, err
		}
	}
	r.r += 2
	return store, nil
}

// readInline reads a request line that does not start with '*'.
func (r *Reader) readInline() ([][]byte, error) {
	end, err := r.scanLine('\n', 0, errTooBigInline)
	if err != nil {
		return nil, err
	}
	line := r.buf[r.r : r.r+end]
	if end > 0 && line[end-1] == '\r' {
		line = line[:end-1]
	}
	// Inline requests split like redis.conf lines (Redis uses
	// sdssplitargs for both), so config's tokenizer serves here too.
	toks, err := config.Tokenize(string(line))
	if err != nil {
		return nil, errUnbalancedQuotes
	}
	r.r += end + 1
	if len(toks) == 0 {
		return nil, nil
	}
	args := make([][]byte, len(toks))
	for i, t := range toks {
		args[i] = []byte(t)
	}
	return args, nil
}

// scanLine finds the terminator of the line that starts at r.r, reading more
// input as needed, and returns its offset from r.r. It also waits for extra
// more bytes to be buffered after the terminator. Like Redis's strchr, the
// search stops at a NUL byte, after which the line can never end. If no
// terminator lies within the first MaxInlineSize+1 bytes and more than
// MaxInlineSize bytes are buffered, scanLine returns tooBig.
func (r *Reader) scanLine(term byte, extra int, tooBig *ProtocolError) (int, error) {
	scanned := 0
	for {
		buf := r.buf[r.r:r.w]
		limit := min(len(buf), MaxInlineSize+1)
		if scanned < limit {
			i := indexTermOrNUL(buf[scanned:limit], term)
			if i < 0 {
				scanned = limit
			} else {
				scanned += i
			}
		}
		// Below limit, scanned can only have stopped at a terminator or a NUL.
		if scanned < limit && buf[scanned] == term {
			if len(buf) > scanned+extra {
				return scanned, nil
			}
		} else if len(buf) > MaxInlineSize {
			return 0, tooBig
		}
		if err := r.fill(); err != nil {
			return 0, err
		}
	}
}

// indexTermOrNUL returns the index of the first term or NUL byte in b, or -1.
func indexTermOrNUL(b []byte, term byte) int {
	i := bytes.IndexByte(b, term)
	if i < 0 {
		i = len(b)
	}
	if j := bytes.IndexByte(b[:i], 0); j >= 0 {
		return j
	}
	if i == len(b) {
		return -1
	}
	return i
}

// fill reads at least one more byte into the buffer, moving or growing it
// when it is full.
func (r *Reader) fill() error {
	r.fills++
	if r.r == r.w {
		r.r, r.w = 0, 0
	}
	if r.w == len(r.buf) {
		if r.r > 0 {
			r.w = copy(r.buf, r.buf[r.r:r.w])
			r.r = 0
		} else {
			nbuf := make([]byte, 2*len(r.buf))
			r.w = copy(nbuf, r.buf[r.r:r.w])
			r.r = 0
			r.buf = nbuf
		}
	}
	n, err := r.read(r.buf[r.w:])
	r.w += n
	if n > 0 {
		return nil
	}
	return err
}

// read reads into p from the underlying reader. It returns n > 0 with a nil
// error, or n == 0 with a non-nil error: an error that comes with data is kept
// in r.rerr and returned by the next call.
func (r *Reader) read(p []byte) (int, error) {
	if r.rerr != nil {
		err := r.rerr
		r.rerr = nil
		return 0, err
	}
	for range maxEmptyReads {
		n, err := r.rd.Read(p)
		if n < 0 || n > len(p) {
			return 0, errors.New("resp: underlying reader returned an invalid count")
		}
		if n > 0 {
			r.rerr = err
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
	return 0, io.ErrNoProgress
}

// parseInt parses b as Redis's string2ll does: an optional '-', then either
// "0" alone or a digit 1-9 followed by digits, fitting in an int64.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	if b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1)/10 || v*10 > 1<<64-1-d {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return int64(-v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}
