package resp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// readerKinds feed the same input to a Reader in different chunkings. A
// Reader's results must not depend on how the bytes arrive.
var readerKinds = []struct {
	name string
	wrap func(io.Reader) io.Reader
}{
	{"whole", func(r io.Reader) io.Reader { return r }},
	{"onebyte", iotest.OneByteReader},
	{"half", iotest.HalfReader},
	{"dataerr", iotest.DataErrReader},
}

// result is one ReadCommand outcome rendered as a comparable string, in the
// notation of testdata/requests.txt.
func result(args [][]byte, err error) string {
	switch {
	case err == io.EOF:
		return "EOF"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "UNEXPECTED EOF"
	case err != nil:
		var pe *ProtocolError
		if errors.As(err, &pe) {
			return "ERR " + pe.Error()
		}
		return "OTHER " + err.Error()
	}
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Quote(string(a)))
	}
	return b.String()
}

// readAll calls ReadCommand until it fails and returns every result.
func readAll(t testing.TB, rd *Reader) []string {
	var out []string
	for {
		args, err := rd.ReadCommand()
		if err == nil && len(args) == 0 {
			t.Fatalf("ReadCommand returned an empty argument list")
		}
		out = append(out, result(args, err))
		if err != nil {
			return out
		}
	}
}

type fileCase struct {
	line    int
	input   []byte
	maxBulk int64
	want    []string
}

// loadCases parses testdata/requests.txt.
func loadCases(t *testing.T) []fileCase {
	f, err := os.Open("testdata/requests.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []fileCase
	var cur *fileCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"):
			continue
		case line == "":
			cur = nil
			continue
		}
		if cur == nil {
			cases = append(cases, fileCase{line: n})
			cur = &cases[len(cases)-1]
		}
		switch {
		case strings.HasPrefix(line, "! maxbulk "):
			v, err := strconv.ParseInt(strings.TrimPrefix(line, "! maxbulk "), 10, 64)
			if err != nil {
				t.Fatalf("line %d: %v", n, err)
			}
			cur.maxBulk = v
		case strings.HasPrefix(line, "> "):
			s, err := strconv.Unquote(strings.TrimPrefix(line, "> "))
			if err != nil {
				t.Fatalf("line %d: %v", n, err)
			}
			cur.input = append(cur.input, s...)
		case strings.HasPrefix(line, "< "):
			want := strings.TrimPrefix(line, "< ")
			if text, ok := strings.CutPrefix(want, `ERR "`); ok {
				s, err := strconv.Unquote(`"` + text)
				if err != nil {
					t.Fatalf("line %d: %v", n, err)
				}
				want = "ERR " + s
			} else if strings.HasPrefix(want, `"`) {
				// Normalise the quoting so that it compares with result.
				var args [][]byte
				for rest := want; rest != ""; rest = strings.TrimLeft(rest, " ") {
					q, err := strconv.QuotedPrefix(rest)
					if err != nil {
						t.Fatalf("line %d: %v", n, err)
					}
					s, _ := strconv.Unquote(q)
					args = append(args, []byte(s))
					rest = rest[len(q):]
				}
				want = result(args, nil)
			}
			cur.want = append(cur.want, want)
		default:
			t.Fatalf("line %d: cannot parse %q", n, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

func TestReadCommandFile(t *testing.T) {
	cases := loadCases(t)
	if len(cases) < 50 {
		t.Fatalf("only %d cases in testdata/requests.txt", len(cases))
	}
	for _, tc := range cases {
		for _, k := range readerKinds {
			t.Run(fmt.Sprintf("line%d/%s", tc.line, k.name), func(t *testing.T) {
				rd := NewReader(k.wrap(bytes.NewReader(tc.input)), tc.maxBulk)
				got := readAll(t, rd)
				if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
					t.Errorf("input %q:\ngot  %q\nwant %q", tc.input, got, tc.want)
				}
			})
		}
	}
}

func TestProtocolErrorKinds(t *testing.T) {
	long := strings.Repeat("1", MaxInlineSize+1)
	for _, tc := range []struct {
		input string
		kind  error
		text  string
	}{
		{"*x\r\n", ErrInvalidMultibulkLength, "Protocol error: invalid multibulk length"},
		{"*1\r\n$x\r\n", ErrInvalidBulkLength, "Protocol error: invalid bulk length"},
		{"*1\r\n!\r\n", ErrExpectedBulk, "Protocol error: expected '$', got '!'"},
		{"*" + long, ErrTooBigMultibulkCount, "Protocol error: too big mbulk count string"},
		{"*1\r\n$" + long, ErrTooBigBulkCount, "Protocol error: too big bulk count string"},
		{"P" + long, ErrTooBigInline, "Protocol error: too big inline request"},
		{"'\r\n", ErrUnbalancedQuotes, "Protocol error: unbalanced quotes in request"},
	} {
		_, err := NewReader(strings.NewReader(tc.input), 0).ReadCommand()
		var pe *ProtocolError
		if !errors.As(err, &pe) {
			t.Errorf("%.20q: got %v, want a *ProtocolError", tc.input, err)
			continue
		}
		if !errors.Is(err, tc.kind) {
			t.Errorf("%.20q: errors.Is(%v, %v) is false", tc.input, err, tc.kind)
		}
		if pe.Error() != tc.text {
			t.Errorf("%.20q: text %q, want %q", tc.input, pe.Error(), tc.text)
		}
	}
}

// TestLineLimits pins the MaxInlineSize boundary for every kind of line: a
// terminator at offset MaxInlineSize is still found, one byte later it is not.
func TestLineLimits(t *testing.T) {
	pad := func(n int) string { return strings.Repeat("a", n) }
	digits := func(n int) string { return strings.Repeat("0", n-1) + "1" }
	for _, tc := range []struct {
		name, input, want string
	}{
		// Inline: the '\n' may be at offset MaxInlineSize at most.
		{"inline-ok", pad(MaxInlineSize) + "\n", strconv.Quote(pad(MaxInlineSize))},
		{"inline-crlf-ok", pad(MaxInlineSize-1) + "\r\n", strconv.Quote(pad(MaxInlineSize - 1))},
		{"inline-crlf-long", pad(MaxInlineSize) + "\r\n", "ERR Protocol error: too big inline request"},
		{"inline-long", pad(MaxInlineSize+1) + "\n", "ERR Protocol error: too big inline request"},
		{"inline-unterminated", pad(MaxInlineSize), "UNEXPECTED EOF"},
		{"inline-unterminated-long", pad(MaxInlineSize + 1), "ERR Protocol error: too big inline request"},
		{"inline-nul", "PING\x00" + pad(MaxInlineSize-5), "UNEXPECTED EOF"},
		{"inline-nul-long", "PING\x00" + pad(MaxInlineSize-4) + "\r\n", "ERR Protocol error: too big inline request"},
		// A header's '\r' may be at offset MaxInlineSize at most. Leading
		// zeros are invalid, so a long valid-looking count fails to parse.
		{"mbulk-ok", "*" + digits(MaxInlineSize-1) + "\r\n", "ERR Protocol error: invalid multibulk length"},
		{"mbulk-long", "*" + digits(MaxInlineSize) + "\r\n", "ERR Protocol error: too big mbulk count string"},
		{"mbulk-wait", "*" + digits(MaxInlineSize-1), "UNEXPECTED EOF"},
		{"bulk-ok", "*1\r\n$" + digits(MaxInlineSize-1) + "\r\n", "ERR Protocol error: invalid bulk length"},
		{"bulk-long", "*1\r\n$" + digits(MaxInlineSize) + "\r\n", "ERR Protocol error: too big bulk count string"},
		{"bulk-nul-long", "*1\r\n$1\x00" + pad(MaxInlineSize), "ERR Protocol error: too big bulk count string"},
		{"expected-long", "*1\r\n" + pad(MaxInlineSize+1), "ERR Protocol error: too big bulk count string"},
	} {
		for _, k := range readerKinds {
			rd := NewReader(k.wrap(strings.NewReader(tc.input)), 0)
			args, err := rd.ReadCommand()
			if got := result(args, err); got != tc.want {
				if len(got) > 80 {
					got = got[:80] + "..."
				}
				t.Errorf("%s/%s: got %s, want %.80s", tc.name, k.name, got, tc.want)
			}
		}
	}
}

func TestErrorsAreSticky(t *testing.T) {
	rd := NewReader(strings.NewReader("*1\r\nx\r\n*1\r\n$4\r\nPING\r\n"), 0)
	_, err1 := rd.ReadCommand()
	_, err2 := rd.ReadCommand()
	if err1 == nil || err1 != err2 {
		t.Fatalf("got %v then %v, want the same protocol error twice", err1, err2)
	}
	rd = NewReader(strings.NewReader(""), 0)
	for range 3 {
		if _, err := rd.ReadCommand(); err != io.EOF {
			t.Fatalf("got %v, want io.EOF", err)
		}
	}
}

func TestReadErrorsWrapped(t *testing.T) {
	boom := errors.New("boom")
	// At a request boundary.
	_, err := NewReader(iotest.ErrReader(boom), 0).ReadCommand()
	if !errors.Is(err, boom) || err == boom {
		t.Errorf("got %v, want an error wrapping boom", err)
	}
	// Mid-request, arriving together with data.
	rd := NewReader(io.MultiReader(strings.NewReader("*1\r\n$4\r\nPI"), iotest.ErrReader(boom)), 0)
	if _, err := rd.ReadCommand(); !errors.Is(err, boom) {
		t.Errorf("got %v, want an error wrapping boom", err)
	}
	// A reader that never makes progress.
	_, err = NewReader(zeroReader{}, 0).ReadCommand()
	if !errors.Is(err, io.ErrNoProgress) {
		t.Errorf("got %v, want io.ErrNoProgress", err)
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestPipelineAndBuffered(t *testing.T) {
	var in bytes.Buffer
	const n = 1000
	for i := range n {
		k := fmt.Sprintf("key:%d", i)
		fmt.Fprintf(&in, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(k), k, len(k)+1, k+"v")
	}
	rd := NewReader(bytes.NewReader(in.Bytes()), 0)
	sawBuffered := false
	for i := range n {
		args, err := rd.ReadCommand()
		if err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
		k := fmt.Sprintf("key:%d", i)
		if len(args) != 3 || string(args[0]) != "SET" || string(args[1]) != k || string(args[2]) != k+"v" {
			t.Fatalf("command %d: got %q", i, args)
		}
		if rd.Buffered() > 0 {
			sawBuffered = true
		}
	}
	if !sawBuffered {
		t.Errorf("Buffered never reported pipelined data")
	}
	if rd.Buffered() != 0 {
		t.Errorf("Buffered() = %d after the last command, want 0", rd.Buffered())
	}
	if _, err := rd.ReadCommand(); err != io.EOF {
		t.Errorf("got %v, want io.EOF", err)
	}
}

func TestBufferedPartial(t *testing.T) {
	pr, pw := io.Pipe()
	defer pr.Close()
	go func() {
		pw.Write([]byte("*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPI"))
		pw.Write([]byte("NG\r\n"))
		pw.Close()
	}()
	rd := NewReader(pr, 0)
	if _, err := rd.ReadCommand(); err != nil {
		t.Fatal(err)
	}
	if got := rd.Buffered(); got != len("*1\r\n$4\r\nPI") {
		t.Errorf("Buffered() = %d, want %d", got, len("*1\r\n$4\r\nPI"))
	}
	if args, err := rd.ReadCommand(); err != nil || string(args[0]) != "PING" {
		t.Fatalf("got %q, %v", args, err)
	}
}

// countingSource counts the reads a Reader makes of it.
type countingSource struct {
	r     io.Reader
	reads int
}

func (c *countingSource) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

// TestHasCommand: after a first request, HasCommand tells whether the
// rest of the buffer holds another whole request, skipping what
// ReadCommand skips (empty lines, "*0"), so a server neither waits for
// bytes it already has nor reads ahead into bytes it lacks.
func TestHasCommand(t *testing.T) {
	for _, c := range []struct {
		rest string
		want bool
	}{
		{"", false},
		{"\r\n", false},
		{"\r\n\r\n   \r\n", false},
		{"\r\nPING\r\n", true},
		{"PING", false},
		{"PING\r", false},
		{"PING\n", true},
		{"\"a b\r\n", true}, // unbalanced quotes: an error at once
		{"PI\x00NG\r\n", false},
		{"*1\r\n$4\r\nPING\r\n", true},
		{"*1\r\n$4\r\nPING\r", false},
		{"*1\r\n$4\r\nPI", false},
		{"*1\r\n", false},
		{"*1\r", false},
		{"*0\r\n*-1\r\n", false},
		{"*0\r\n*1\r\n$1\r\nx\r\n", true},
		{"*1\r\n$-1\r\n", false},
		{"*1\r\nx\r\n", false},
		{"*2\r\n$1\r\na\r\n", false},
		{"*2\r\n$1\r\na\r\n$0\r\n\r\n", true},
		{"*x\r\n", false},
	} {
		src := &countingSource{r: strings.NewReader("*1\r\n$4\r\nPING\r\n" + c.rest)}
		rd := NewReader(src, 0)
		if _, err := rd.ReadCommand(); err != nil {
			t.Fatal(err)
		}
		if got := rd.HasCommand(); got != c.want {
			t.Errorf("HasCommand() with %q buffered = %v, want %v", c.rest, got, c.want)
		}
		if c.want {
			reads := src.reads
			if _, err := rd.ReadCommand(); src.reads != reads {
				t.Errorf("%q: ReadCommand read more (%v) after HasCommand", c.rest, err)
			}
		}
	}
}

func TestArgsAreIndependent(t *testing.T) {
	rd := NewReader(strings.NewReader("*2\r\n$1\r\na\r\n$1\r\nb\r\nSET x y\r\n"), 0)
	for range 2 {
		args, err := rd.ReadCommand()
		if err != nil {
			t.Fatal(err)
		}
		before := string(args[1])
		_ = append(args[0], "ZZZ"...)
		if string(args[1]) != before {
			t.Errorf("appending to args[0] changed args[1] to %q", args[1])
		}
	}
}

// TestLargeBulk reads a payload much larger than the buffer, arriving in
// pieces, and checks that it is reassembled intact.
func TestLargeBulk(t *testing.T) {
	payload := bytes.Repeat([]byte("0123456789abcdef"), 300000) // 4.8 MB
	var in bytes.Buffer
	fmt.Fprintf(&in, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n", len(payload))
	in.Write(payload)
	in.WriteString("\r\n*1\r\n$4\r\nPING\r\n")
	for _, k := range readerKinds[1:3] {
		rd := NewReader(k.wrap(bytes.NewReader(in.Bytes())), 0)
		args, err := rd.ReadCommand()
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		if len(args) != 3 || !bytes.Equal(args[2], payload) {
			t.Fatalf("%s: payload corrupted", k.name)
		}
		if args, err := rd.ReadCommand(); err != nil || string(args[0]) != "PING" {
			t.Fatalf("%s: after payload got %q, %v", k.name, args, err)
		}
	}
}

// TestLargeBulkAllocations checks that a large payload costs little more
// than itself: 40 MB arriving in 64 KiB reads allocate less than 1.6 times
// that (doubling all the way allocated twice the payload).
func TestLargeBulkAllocations(t *testing.T) {
	const size = 40 << 20
	var in bytes.Buffer
	fmt.Fprintf(&in, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n", size)
	in.Write(bytes.Repeat([]byte{'v'}, size))
	in.WriteString("\r\n")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	args, err := NewReader(bufio.NewReaderSize(&in, 64<<10), 0).ReadCommand()
	runtime.ReadMemStats(&after)
	if err != nil || len(args) != 3 || len(args[2]) != size {
		t.Fatalf("ReadCommand: %d args, %v", len(args), err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > size*16/10 {
		t.Errorf("a payload of %d bytes allocated %d", size, d)
	}
}

// TestAnnouncedLengthDoesNotAllocate checks that announcing a huge bulk, or a
// huge argument count, costs memory only for the bytes actually sent.
func TestAnnouncedLengthDoesNotAllocate(t *testing.T) {
	for _, input := range []string{
		"*1\r\n$536870912\r\nabc",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870912\r\n" + strings.Repeat("x", 100000),
		"*1048576\r\n$1\r\na\r\n",
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := NewReader(strings.NewReader(input), 0).ReadCommand()
		runtime.ReadMemStats(&after)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%.30q: got %v, want unexpected EOF", input, err)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 4<<20 {
			t.Errorf("%.30q: allocated %d bytes", input, d)
		}
	}
}

func TestParseInt(t *testing.T) {
	for _, tc := range []struct {
		in string
		v  int64
		ok bool
	}{
		{"0", 0, true},
		{"1", 1, true},
		{"-1", -1, true},
		{"99", 99, true},
		{"9223372036854775807", 1<<63 - 1, true},
		{"-9223372036854775808", -1 << 63, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"18446744073709551616", 0, false},
		{"", 0, false},
		{"-", 0, false},
		{"-0", 0, false},
		{"00", 0, false},
		{"01", 0, false},
		{"+1", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"1a", 0, false},
		{"0x1", 0, false},
	} {
		v, ok := parseInt([]byte(tc.in))
		if v != tc.v || ok != tc.ok {
			t.Errorf("parseInt(%q) = %d, %v; want %d, %v", tc.in, v, ok, tc.v, tc.ok)
		}
	}
}

func TestReadCommandAllocs(t *testing.T) {
	cmd := []byte("*3\r\n$3\r\nSET\r\n$8\r\nkey:1234\r\n$5\r\nhello\r\n")
	src := &loopReader{data: cmd}
	rd := NewReader(src, 0)
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := rd.ReadCommand(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 2 {
		t.Errorf("ReadCommand made %.1f allocations per small command, want at most 2", allocs)
	}
}

// loopReader returns data over and over, without allocating.
type loopReader struct {
	data []byte
	off  int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], l.data[l.off:])
		n += c
		l.off = (l.off + c) % len(l.data)
	}
	return n, nil
}

func FuzzReadCommand(f *testing.F) {
	for _, s := range []string{
		"*1\r\n$4\r\nPING\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n",
		"PING\r\n",
		"SET k \"a\\x41\" 'b\\'c'\r\n",
		"*0\r\n*-1\r\n\r\n",
		"*1\r\nx\r\n",
		"*1\r\n$-1\r\n",
		"*2\r\n$1\r\na\r",
		"\"unbalanced\r\n",
		"*1\r\n\x00\r\n",
	} {
		f.Add([]byte(s), int64(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, maxBulk int64) {
		var first []string
		for i, k := range readerKinds {
			src := &countingSource{r: k.wrap(bytes.NewReader(data))}
			rd := NewReader(src, maxBulk)
			var got []string
			for {
				has, reads := rd.HasCommand(), src.reads
				args, err := rd.ReadCommand()
				if has && src.reads != reads {
					t.Fatalf("%s: HasCommand promised a request, but ReadCommand read more (%s)", k.name, result(args, err))
				}
				if err == nil && len(args) == 0 {
					t.Fatalf("%s: empty argument list", k.name)
				}
				got = append(got, result(args, err))
				if err != nil {
					var pe *ProtocolError
					if err != io.EOF && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.As(err, &pe) {
						t.Fatalf("%s: unexpected error %v", k.name, err)
					}
					if pe != nil && strings.ContainsAny(pe.Error(), "\r\n") {
						t.Fatalf("%s: error text %q would break the reply", k.name, pe.Error())
					}
					break
				}
				if len(got) > len(data)+1 {
					t.Fatalf("%s: more commands than input bytes", k.name)
				}
			}
			if i == 0 {
				first = got
			} else if strings.Join(got, "\n") != strings.Join(first, "\n") {
				t.Fatalf("%s disagrees with whole reads:\n%q\n%q", k.name, got, first)
			}
		}
	})
}

// BenchmarkReadCommand measures reading pipelined small commands from a
// buffered stream.
func BenchmarkReadCommand(b *testing.B) {
	for _, bm := range []struct {
		name string
		cmd  string
	}{
		{"get", "*2\r\n$3\r\nGET\r\n$8\r\nkey:1234\r\n"},
		{"set", "*3\r\n$3\r\nSET\r\n$8\r\nkey:1234\r\n$32\r\n" + strings.Repeat("v", 32) + "\r\n"},
		{"inline", "SET key:1234 \"some value\"\r\n"},
		{"set-16k", "*3\r\n$3\r\nSET\r\n$8\r\nkey:1234\r\n$16384\r\n" + strings.Repeat("v", 16384) + "\r\n"},
	} {
		b.Run(bm.name, func(b *testing.B) {
			rd := NewReader(&loopReader{data: []byte(bm.cmd)}, 0)
			b.SetBytes(int64(len(bm.cmd)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := rd.ReadCommand(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestUnauthenticatedLimits(t *testing.T) {
	cases := []struct {
		in   string
		auth bool
		want error
	}{
		{"*11\r\n", true, ErrUnauthMultibulkLength},
		{"*1\r\n$16385\r\n", true, ErrUnauthBulkLength},
		{"*10\r\n", false, io.ErrUnexpectedEOF},
		{"*1\r\n$16385\r\n", false, io.ErrUnexpectedEOF},
	}
	for _, c := range cases {
		r := NewReader(strings.NewReader(c.in), 0)
		r.SetAuthRequired(c.auth)
		if _, err := r.ReadCommand(); !errors.Is(err, c.want) {
			t.Errorf("%q (auth required %v): got %v, want %v", c.in, c.auth, err, c.want)
		}
	}
	r := NewReader(strings.NewReader("*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n"), 0)
	r.SetAuthRequired(true)
	if args, err := r.ReadCommand(); err != nil || len(args) != 2 {
		t.Fatalf("small request refused: %v", err)
	}
}
