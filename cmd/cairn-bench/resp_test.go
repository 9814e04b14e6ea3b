package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// rewriteFlag regenerates the expected outputs of testdata/parse.txt:
// go test ./cmd/cairn-bench/ -rewrite
var rewriteFlag = flag.Bool("rewrite", false, "rewrite the expected outputs in testdata/parse.txt")

// TestParseData runs the cases of testdata/parse.txt. A case is a line of
// input, written as the inside of a Go string literal (so "\r\n" is CRLF),
// a "----" line, and the expected output: one line per frame the input
// holds, then what stops the parse ("incomplete" or the error) unless the
// input ends with a frame. Cases are separated by blank lines; lines
// starting with "//" are comments (RESP frames cannot start with '/').
func TestParseData(t *testing.T) {
	const path = "testdata/parse.txt"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var out []string
	for i := 0; i < len(lines); {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "//") {
			out = append(out, l)
			i++
			continue
		}
		pos := fmt.Sprintf("%s:%d", path, i+1)
		if i+1 >= len(lines) || lines[i+1] != "----" {
			t.Fatalf("%s: want an input line and then ----", pos)
		}
		input, err := strconv.Unquote(`"` + l + `"`)
		if err != nil {
			t.Fatalf("%s: input is not a Go string body: %v", pos, err)
		}
		i += 2
		var want []string
		for i < len(lines) && lines[i] != "" {
			want = append(want, lines[i])
			i++
		}
		got := describeFrames([]byte(input))
		out = append(out, l, "----")
		out = append(out, got...)
		if !*rewriteFlag && strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: %s\n--- got:\n%s\n--- want:\n%s", pos, l, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	if *rewriteFlag {
		if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// describeFrames parses b frame after frame and describes each, and what
// stopped the parse.
func describeFrames(b []byte) []string {
	var out []string
	for pos := 0; pos < len(b); {
		v, n, err := ParseFrame(b[pos:])
		switch {
		case err == errIncomplete:
			return append(out, fmt.Sprintf("incomplete (%d bytes)", len(b)-pos))
		case err != nil:
			return append(out, err.Error())
		}
		out = append(out, fmt.Sprintf("%v (%d bytes)", v, n))
		pos += n
	}
	return out
}

// TestRoundTrip checks that encoding a parsed frame gives bytes that parse
// to the same frame, and for canonical input the same bytes.
func TestRoundTrip(t *testing.T) {
	for _, in := range []string{
		"+OK\r\n", "-ERR bad\r\n", ":0\r\n", ":-9223372036854775808\r\n", ":9223372036854775807\r\n",
		"$0\r\n\r\n", "$-1\r\n", "*-1\r\n", "*0\r\n", "_\r\n", "#t\r\n", "#f\r\n",
		",3.25\r\n", ",inf\r\n", "(-12345678901234567890123\r\n", "!3\r\nERR\r\n", "=7\r\ntxt:abc\r\n",
		"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n",
		">4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$2\r\nch\r\n$0\r\n\r\n",
		"%2\r\n+a\r\n:1\r\n+b\r\n*1\r\n~1\r\n_\r\n",
		"$4\r\na\r\nb\r\n",
	} {
		v, n, err := ParseFrame([]byte(in))
		if err != nil || n != len(in) {
			t.Errorf("ParseFrame(%q) = %v, %d, %v", in, v, n, err)
			continue
		}
		enc := AppendFrame(nil, v)
		if string(enc) != in {
			t.Errorf("AppendFrame(ParseFrame(%q)) = %q", in, enc)
		}
	}
}

func TestAppendCommand(t *testing.T) {
	got := string(AppendCommand([]byte("x"), "PUBLISH", "ch", ""))
	want := "x*3\r\n$7\r\nPUBLISH\r\n$2\r\nch\r\n$0\r\n\r\n"
	if got != want {
		t.Errorf("AppendCommand = %q, want %q", got, want)
	}
}

func TestParseInt(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "-0": 0, "+7": 7, "007": 7, "-1": -1,
		"9223372036854775807": 1<<63 - 1, "-9223372036854775808": -1 << 63,
	} {
		if got, ok := parseInt([]byte(in)); !ok || got != want {
			t.Errorf("parseInt(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "-", "+", "1a", " 1", "1 ", "9223372036854775808",
		"-9223372036854775809", "99999999999999999999", "--1", "0x10"} {
		if got, ok := parseInt([]byte(in)); ok {
			t.Errorf("parseInt(%q) = %d, want failure", in, got)
		}
	}
}

// stream is a run of frames of every kind, as a server could send them.
const stream = "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n" +
	"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n" +
	"*4\r\n$8\r\npmessage\r\n$3\r\nc*h\r\n$2\r\nch\r\n$0\r\n\r\n" +
	":42\r\n-ERR unknown command 'publish'\r\n+OK\r\n$-1\r\n*-1\r\n_\r\n#t\r\n,1.5\r\n(123\r\n" +
	"!5\r\nERR x\r\n=8\r\ntxt:abcd\r\n%1\r\n+k\r\n*2\r\n:1\r\n:2\r\n~2\r\n:1\r\n:2\r\n>2\r\n+a\r\n+b\r\n"

// TestReaderStream checks that the Reader returns the frames ParseFrame
// finds, however the stream is cut into reads, and reports the end of the
// stream.
func TestReaderStream(t *testing.T) {
	var want []string
	for pos := 0; pos < len(stream); {
		v, n, err := ParseFrame([]byte(stream[pos:]))
		if err != nil {
			t.Fatalf("ParseFrame at %d: %v", pos, err)
		}
		want = append(want, v.String())
		pos += n
	}
	for name, rd := range map[string]io.Reader{
		"whole":     strings.NewReader(stream),
		"one byte":  iotest.OneByteReader(strings.NewReader(stream)),
		"half":      iotest.HalfReader(strings.NewReader(stream)),
		"data+EOF":  iotest.DataErrReader(strings.NewReader(stream)),
		"tiny buf":  strings.NewReader(stream),
		"truncated": strings.NewReader(stream[:len(stream)-3]),
	} {
		size := 4096
		if name == "tiny buf" {
			size = 1 // grows as needed
		}
		r := NewReader(rd, size)
		var got []string
		var err error
		for {
			var v Value
			if v, err = r.ReadFrame(); err != nil {
				break
			}
			got = append(got, v.String())
		}
		wantErr, wantN := io.EOF, len(want)
		if name == "truncated" {
			wantErr, wantN = io.ErrUnexpectedEOF, len(want)-1
		}
		if !errors.Is(err, wantErr) {
			t.Errorf("%s: ended with %v, want %v", name, err, wantErr)
		}
		if strings.Join(got, "\n") != strings.Join(want[:wantN], "\n") {
			t.Errorf("%s: got frames\n%s\nwant\n%s", name, strings.Join(got, "\n"), strings.Join(want[:wantN], "\n"))
		}
	}
}

// TestReaderProtocolError checks that the Reader reports bad bytes with
// their offset in the stream, not in its buffer.
func TestReaderProtocolError(t *testing.T) {
	r := NewReader(strings.NewReader("+OK\r\n:1\r\n?x\r\n"), 16)
	for range 2 {
		if _, err := r.ReadFrame(); err != nil {
			t.Fatal(err)
		}
	}
	_, err := r.ReadFrame()
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Offset != 9 {
		t.Fatalf("got %v, want a protocol error at byte 9", err)
	}
}

// TestReaderReuse checks that the Reader allocates nothing per frame once
// warm, which the subscribers of fanout depend on.
func TestReaderReuse(t *testing.T) {
	msg := "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n"
	data := []byte(strings.Repeat(msg, 2000))
	br := bytes.NewReader(data)
	r := NewReader(br, 4096)
	allocs := testing.AllocsPerRun(10, func() {
		br.Reset(data)
		r.r, r.w = 0, 0
		for range 2000 {
			v, err := r.ReadFrame()
			if err != nil || len(v.Elems) != 3 {
				t.Fatalf("ReadFrame = %v, %v", v, err)
			}
		}
	})
	if allocs > 1 {
		t.Errorf("%v allocations per 2000 frames", allocs)
	}
}

// TestLimits checks that claimed lengths beyond the limits fail at once
// instead of waiting for data or allocating.
func TestLimits(t *testing.T) {
	for _, in := range []string{
		"$" + strconv.Itoa(maxBulkLen+1) + "\r\n",
		"*" + strconv.Itoa(maxAggregateLen+1) + "\r\n",
		"%" + strconv.Itoa(maxAggregateLen/2+1) + "\r\n",
		strings.Repeat("*1\r\n", maxDepth+1) + "_\r\n",
		"+" + strings.Repeat("a", maxLineLen),
	} {
		_, _, err := ParseFrame([]byte(in))
		var pe *ProtocolError
		if !errors.As(err, &pe) {
			t.Errorf("ParseFrame(%.40q...) = %v, want a protocol error", in, err)
		}
	}
	if _, _, err := ParseFrame([]byte(strings.Repeat("*1\r\n", maxDepth) + "_\r\n")); err != nil {
		t.Errorf("nesting of exactly %d: %v", maxDepth, err)
	}
}

// FuzzParseFrame checks, for any bytes, that the parser does not panic,
// that a parsed frame encodes to bytes that parse to the same frame, that
// every strict prefix of a frame is incomplete, and that the Reader agrees
// with ParseFrame when fed a byte at a time. Its seed corpus is in
// testdata/fuzz/FuzzParseFrame.
func FuzzParseFrame(f *testing.F) {
	f.Add([]byte(stream))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, n, err := ParseFrame(b)
		if err != nil {
			var pe *ProtocolError
			if err != errIncomplete && !errors.As(err, &pe) {
				t.Fatalf("ParseFrame(%q): unexpected error type %T: %v", b, err, err)
			}
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("ParseFrame(%q) took %d bytes", b, n)
		}
		enc := AppendFrame(nil, v)
		w, m, err := ParseFrame(enc)
		if err != nil || m != len(enc) || !v.Equal(w) {
			t.Fatalf("ParseFrame(%q) = %v; its encoding %q parses to %v, %d, %v", b, v, enc, w, m, err)
		}
		// The prefix checks and a reader of one byte at a time take time
		// quadratic in the frame's size (the Reader parses a frame again
		// from its start after each read), so big frames skip them.
		var rd io.Reader = bytes.NewReader(b[:n])
		if n <= 1024 {
			for k := range n {
				if _, _, err := ParseFrame(b[:k]); err != errIncomplete {
					t.Fatalf("prefix %q of frame %q: %v, want incomplete", b[:k], b[:n], err)
				}
			}
			rd = iotest.OneByteReader(rd)
		}
		r := NewReader(rd, 16)
		rv, err := r.ReadFrame()
		if err != nil || !rv.Equal(v) {
			t.Fatalf("Reader on %q = %v, %v; ParseFrame gave %v", b[:n], rv, err, v)
		}
		if _, err := r.ReadFrame(); err != io.EOF {
			t.Fatalf("Reader after the frame %q: %v, want EOF", b[:n], err)
		}
	})
}
