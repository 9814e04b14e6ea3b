package resp

import (
	"math"
	"strconv"

	"github.com/tidwall/redcon"
)

// Writer encodes replies into a buffer for one connection, in RESP2 or
// RESP3 as the connection negotiated with HELLO. RESP3-only shapes (maps,
// sets, nulls, doubles, pushes) fall back to their RESP2 equivalents, the
// way Redis 7 does. A Writer is owned by its connection's goroutine.
type Writer struct {
	buf []byte
	// Proto is 2 or 3.
	Proto int
	// Errors counts the error replies written so far.
	Errors int64
	// OnError, when set, is called with the message of each error reply
	// (INFO's error counters).
	OnError func(msg string)
}

// NewWriter returns a RESP2 writer.
func NewWriter() *Writer { return &Writer{Proto: 2} }

// Bytes returns the encoded replies; they stay valid until the next write
// or Reset.
func (w *Writer) Bytes() []byte { return w.buf }

// Len returns the number of buffered bytes.
func (w *Writer) Len() int { return len(w.buf) }

// maxRetained bounds the capacity Reset keeps. A larger buffer held the
// reply to one big read (a GET of a 100 MB value); an idle connection must
// not hold it until it disconnects, as every connection of a pool would.
const maxRetained = 64 << 10

// Reset empties the buffer, keeping its capacity up to maxRetained.
func (w *Writer) Reset() {
	if cap(w.buf) > maxRetained {
		w.buf = nil
		return
	}
	w.buf = w.buf[:0]
}

// Truncate cuts the buffer back to n bytes, dropping replies written after
// a Len of n.
func (w *Writer) Truncate(n int) { w.buf = w.buf[:n] }

// Raw appends pre-encoded RESP.
func (w *Writer) Raw(b []byte) { w.buf = append(w.buf, b...) }

// SimpleString writes +s.
func (w *Writer) SimpleString(s string) { w.buf = redcon.AppendString(w.buf, s) }

// OK writes +OK.
func (w *Writer) OK() { w.buf = append(w.buf, "+OK\r\n"...) }

// Error writes -s; s carries its own code ("ERR ...", "WRONGTYPE ...").
// Line breaks in s are replaced by spaces, as Redis does.
func (w *Writer) Error(s string) {
	w.Errors++
	if w.OnError != nil {
		w.OnError(s)
	}
	w.buf = redcon.AppendError(w.buf, s)
}

// RepeatError writes -s as Error does, but without OnError: the error
// was already counted where it arose (a command a Lua script called,
// whose error the script passes on), as Redis counts it once.
func (w *Writer) RepeatError(s string) {
	w.Errors++
	w.buf = redcon.AppendError(w.buf, s)
}

// Int writes :n.
func (w *Writer) Int(n int64) { w.buf = redcon.AppendInt(w.buf, n) }

// Bulk writes a bulk string.
func (w *Writer) Bulk(b []byte) { w.buf = redcon.AppendBulk(w.buf, b) }

// BulkFill writes a bulk string of n bytes that fill writes straight into
// the buffer (a large value read from storage is then copied once, not
// into a buffer of its own first). If fill fails, nothing is written and
// its error is returned. fill must not use w.
func (w *Writer) BulkFill(n int, fill func(dst []byte) error) error {
	start := len(w.buf)
	w.buf = appendHeader(w.buf, '$', n)
	at := len(w.buf)
	if cap(w.buf)-at < n+2 {
		grown := make([]byte, at, at+n+2)
		w.buf = grown[:copy(grown, w.buf)]
	}
	w.buf = w.buf[:at+n]
	if err := fill(w.buf[at:]); err != nil {
		w.buf = w.buf[:start]
		return err
	}
	w.buf = append(w.buf, '\r', '\n')
	return nil
}

// Detach returns the buffered replies and leaves w with an empty buffer
// of its own, so that the caller may keep the bytes (a connection queues
// a large reply without copying it).
func (w *Writer) Detach() []byte {
	b := w.buf
	w.buf = nil
	return b
}

// BulkString writes a bulk string.
func (w *Writer) BulkString(s string) { w.buf = redcon.AppendBulkString(w.buf, s) }

// Array writes an array header of n elements.
func (w *Writer) Array(n int) { w.buf = redcon.AppendArray(w.buf, n) }

// NullBulk writes the null of a missing string: $-1 in RESP2, _ in RESP3.
func (w *Writer) NullBulk() {
	if w.Proto == 3 {
		w.buf = append(w.buf, "_\r\n"...)
		return
	}
	w.buf = append(w.buf, "$-1\r\n"...)
}

// NullArray writes the null of a missing array: *-1 in RESP2, _ in RESP3.
func (w *Writer) NullArray() {
	if w.Proto == 3 {
		w.buf = append(w.buf, "_\r\n"...)
		return
	}
	w.buf = append(w.buf, "*-1\r\n"...)
}

// Map writes a map header of n key/value pairs (an array of 2n in RESP2).
func (w *Writer) Map(n int) {
	if w.Proto == 3 {
		w.buf = appendHeader(w.buf, '%', n)
		return
	}
	w.Array(2 * n)
}

// Set writes a set header of n members (an array in RESP2).
func (w *Writer) Set(n int) {
	if w.Proto == 3 {
		w.buf = appendHeader(w.buf, '~', n)
		return
	}
	w.Array(n)
}

// Push writes a push header of n elements (an array in RESP2).
func (w *Writer) Push(n int) {
	if w.Proto == 3 {
		w.buf = appendHeader(w.buf, '>', n)
		return
	}
	w.Array(n)
}

// Double writes a double: a RESP3 double, or its text as a bulk string in
// RESP2, formatted as Redis 7.0 does (%.17g, inf, -inf).
func (w *Writer) Double(f float64) {
	if w.Proto == 3 {
		w.buf = append(w.buf, ',')
		w.buf = AppendDouble(w.buf, f)
		w.buf = append(w.buf, '\r', '\n')
		return
	}
	w.Bulk(AppendDouble(nil, f))
}

// Bool writes a RESP3 boolean, or 1/0 in RESP2.
func (w *Writer) Bool(b bool) {
	if w.Proto == 3 {
		if b {
			w.buf = append(w.buf, "#t\r\n"...)
		} else {
			w.buf = append(w.buf, "#f\r\n"...)
		}
		return
	}
	if b {
		w.Int(1)
	} else {
		w.Int(0)
	}
}

// Verbatim writes a RESP3 verbatim string of format "txt", or a bulk
// string in RESP2.
func (w *Writer) Verbatim(s string) {
	if w.Proto == 3 {
		w.buf = appendHeader(w.buf, '=', len(s)+4)
		w.buf = append(w.buf, "txt:"...)
		w.buf = append(w.buf, s...)
		w.buf = append(w.buf, '\r', '\n')
		return
	}
	w.BulkString(s)
}

// AppendDouble appends f as Redis 7.0 prints doubles.
func AppendDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(f):
		return append(dst, "nan"...)
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}

func appendHeader(b []byte, c byte, n int) []byte {
	b = append(b, c)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}
