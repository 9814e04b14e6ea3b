package tests

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/config"
	"github.com/cairnkv/cairn/glob"
)

var rewriteScripts = flag.Bool("rewrite", false, "rewrite testdata/scripts expectations from the servers' replies")

// TestScripts runs every testdata/scripts/*.txt file against a fresh Cairn
// (and, for files with a "#redis" header, against a real redis-server
// too, so the expectations are Redis's own replies).
//
// A file is a list of cases: a command line in redis.conf quoting, then
// the expected reply rendered on one line (see renderReply). A command may
// start with "@name " to run on connection name (default "main"). A line
// "@name <<" sends nothing and reads one more frame on that connection (a
// further reply of a multi-reply command, or a message pushed to it); its
// expectation follows it like a reply's. A connection the server closed
// renders as "<closed>", and one that sent nothing in time as "<timeout>".
// An expectation "sorted:<rendering>" is compared with the reply's
// top-level elements sorted (for replies in hash-table order), and a line
// "#cairn: <expectation>" right after an expectation replaces it when the
// server is Cairn (a deliberate, documented difference from Redis).
// An argument "$id:name" stands for the client id of connection name (the
// runner asks it with CLIENT ID the first time, a request the script does
// not see). Header lines: "#args: ..." for server arguments, "#redis" to
// also check against redis-server. Other lines starting with '#' and blank
// lines are ignored.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/scripts/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts found: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			s := parseScript(t, f)
			n := StartCairn(t, s.args...)
			logTailOnFailure(t, n)
			out := s.run(t, n)
			if s.redis {
				// Redis's replies are the expectations of a #redis file,
				// and its INFO counters those of Cairn's.
				rn := StartRedis(t, s.args...)
				logTailOnFailure(t, rn)
				out = s.run(t, rn)
				checkSameCounters(t, n.Raw(), rn.Raw(), counterFields)
			}
			if *rewriteScripts {
				if err := os.WriteFile(f, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// logTailOnFailure logs the end of n's log when t fails: a server that
// crashed or refused a case says why there.
func logTailOnFailure(t *testing.T, n *Node) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s log, last 4000 bytes:\n%s", n.Name, n.Log.Tail(4000))
		}
	})
}

type scriptCase struct {
	line     int
	conn     string
	args     []string // nil for a "<<" read
	expected string
	cairn    string // the "#cairn:" override, if any
}

type script struct {
	path  string
	args  []string
	redis bool
	cases []scriptCase
	lines []string // the file, for rewriting
}

func parseScript(t *testing.T, path string) *script {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := &script{path: path}
	s.lines = strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var pending *scriptCase
	for i, l := range s.lines {
		switch {
		case pending != nil:
			pending.expected = l
			s.cases = append(s.cases, *pending)
			pending = nil
		case strings.HasPrefix(l, "#cairn:") && len(s.cases) > 0 && s.cases[len(s.cases)-1].line+1 == i:
			s.cases[len(s.cases)-1].cairn = strings.TrimSpace(strings.TrimPrefix(l, "#cairn:"))
		case strings.HasPrefix(l, "#args:"):
			a, err := config.Tokenize(strings.TrimPrefix(l, "#args:"))
			if err != nil {
				t.Fatalf("%s:%d: %v", path, i+1, err)
			}
			s.args = append(s.args, a...)
		case l == "#redis":
			s.redis = true
		case strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "":
		default:
			c := scriptCase{line: i + 1, conn: "main"}
			if strings.HasPrefix(l, "@") {
				name, rest, _ := strings.Cut(l[1:], " ")
				c.conn, l = name, rest
			}
			if strings.TrimSpace(l) == "<<" {
				pending = &c
				continue
			}
			a, err := config.Tokenize(l)
			if err != nil || len(a) == 0 {
				t.Fatalf("%s:%d: bad command line %q: %v", path, i+1, l, err)
			}
			c.args = a
			pending = &c
		}
	}
	if pending != nil {
		t.Fatalf("%s:%d: command without expected reply", path, pending.line)
	}
	return s
}

// run executes the script on n, checking each reply, and returns the file
// with the replies n gave (for -rewrite).
func (s *script) run(t *testing.T, n *Node) []byte {
	t.Helper()
	return s.exec(t, n, scriptOptions{}).out
}

// scriptOptions tunes a script run; the zero value is TestScripts's.
type scriptOptions struct {
	// exact renders replies with renderExact, which tells apart every RESP
	// type (a RESP2 null bulk from a null array or a RESP3 null).
	exact bool
	// drain proves at the end that no open connection has an unread frame:
	// it sends PING on each and requires the PING's reply (or the close of
	// the connection) to be the very next thing read.
	drain bool
	// timeout bounds each read (default 10s). A connection that times out
	// is left alone afterwards: its later reads render as "<timeout>" at
	// once.
	timeout time.Duration
}

// scriptFrame is what one case (or one drain check) read.
type scriptFrame struct {
	where string // "file:line" or "drain @name"
	raw   string // the bytes read (sorted for "sorted:"), or "<closed>" / "<timeout>"
	// skip: the bytes may differ between servers ("match:" expectations
	// for ids and times, and "#cairn:" overrides).
	skip bool
}

// scriptResult is what one run of a script saw.
type scriptResult struct {
	out    []byte // the file with n's replies, for -rewrite
	frames []scriptFrame
}

// scriptConn is one named connection of a script run.
type scriptConn struct {
	rc    *RawConn
	state string // "" while usable, else "<closed>" or "<timeout>"
	id    string // its CLIENT ID, once asked ("$id:name")
}

// substitute returns args with every "$id:name" replaced by the client id
// of connection name, which must exist.
func substitute(t *testing.T, where string, conns map[string]*scriptConn, args []string, timeout time.Duration) []string {
	t.Helper()
	out := slices.Clone(args)
	for i, a := range out {
		name, ok := strings.CutPrefix(a, "$id:")
		if !ok {
			continue
		}
		sc := conns[name]
		if sc == nil {
			t.Fatalf("%s: %s names no connection of the script yet", where, a)
		}
		if sc.id == "" {
			sc.send([]string{"CLIENT", "ID"})
			raw := sc.read(timeout)
			id, ok := strings.CutPrefix(strings.TrimSuffix(raw, "\r\n"), ":")
			if !ok {
				t.Fatalf("%s: CLIENT ID on @%s replied %q", where, name, raw)
			}
			sc.id = id
		}
		out[i] = sc.id
	}
	return out
}

func (sc *scriptConn) send(args []string) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	// A failed write shows in the next read (what is left, then the close).
	_, _ = sc.rc.c.Write(b.Bytes())
}

// read returns the raw bytes of the next frame, or "<closed>" /
// "<timeout>".
func (sc *scriptConn) read(timeout time.Duration) string {
	if sc.state != "" {
		return sc.state
	}
	sc.rc.c.SetReadDeadline(time.Now().Add(timeout))
	var b bytes.Buffer
	if err := readRaw(sc.rc.rd, &b); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			sc.state = "<timeout>"
		} else {
			sc.state = "<closed>"
		}
		if b.Len() > 0 {
			return fmt.Sprintf("%s after %q", sc.state, b.String())
		}
		return sc.state
	}
	return b.String()
}

// exec runs the script on n, checking every frame read against the file.
func (s *script) exec(t *testing.T, n *Node, o scriptOptions) scriptResult {
	t.Helper()
	if o.timeout == 0 {
		o.timeout = 10 * time.Second
	}
	render := renderReply
	if o.exact {
		render = renderExact
	}
	conns := map[string]*scriptConn{}
	var names []string
	out := append([]string(nil), s.lines...)
	var res scriptResult
	for _, c := range s.cases {
		sc := conns[c.conn]
		if sc == nil {
			sc = &scriptConn{rc: n.Raw()}
			conns[c.conn] = sc
			names = append(names, c.conn)
		}
		what := "<<"
		if c.args != nil {
			args := substitute(t, fmt.Sprintf("%s:%d", s.path, c.line), conns, c.args, o.timeout)
			what = strings.Join(args, " ")
			sc.send(args)
		}
		want := c.expected
		if c.cairn != "" && n.Name == "cairn" {
			want = c.cairn
		}
		raw := sc.read(o.timeout)
		sorted := strings.HasPrefix(want, "sorted:")
		if sorted {
			raw = sortedRaw(raw)
		}
		got := raw
		if !strings.HasPrefix(raw, "<") {
			got = render(raw)
		}
		if sorted {
			got = "sorted:" + got
		}
		isMatch := strings.HasPrefix(c.expected, "match:")
		if !isMatch {
			out[c.line] = got
		}
		where := fmt.Sprintf("%s:%d", s.path, c.line)
		res.frames = append(res.frames, scriptFrame{where: where, raw: raw, skip: isMatch || c.cairn != ""})
		if !replyMatches(got, want) && !*rewriteScripts {
			t.Errorf("%s (%s): @%s %s\n  got:  %s\n  want: %s", where, n.Name, c.conn, what, got, want)
		}
	}
	if o.drain {
		for _, name := range names {
			sc := conns[name]
			if sc.state != "" {
				continue
			}
			sc.send([]string{"PING"})
			raw := sc.read(o.timeout)
			res.frames = append(res.frames, scriptFrame{where: "drain @" + name, raw: raw})
			switch raw {
			case "+PONG\r\n", "*2\r\n$4\r\npong\r\n$0\r\n\r\n", "<closed>":
			default:
				t.Errorf("%s (%s): @%s has an unread frame at the end of the script (or did not answer the PING marker): %s",
					s.path, n.Name, name, render(raw))
			}
		}
	}
	res.out = []byte(strings.Join(out, "\n") + "\n")
	return res
}

// sortedRaw returns a raw aggregate reply with its top-level elements in
// byte order (anything else unchanged).
func sortedRaw(raw string) string {
	rd := bufio.NewReader(strings.NewReader(raw))
	head, err := rd.ReadString('\n')
	if err != nil || !strings.ContainsRune("*~>", rune(head[0])) {
		return raw
	}
	n, err := strconv.Atoi(head[1 : len(head)-2])
	if err != nil || n < 0 {
		return raw
	}
	elems := make([]string, n)
	for i := range elems {
		var b bytes.Buffer
		if err := readRaw(rd, &b); err != nil {
			return raw
		}
		elems[i] = b.String()
	}
	slices.Sort(elems)
	return head + strings.Join(elems, "")
}

// replyMatches compares a rendered reply with an expectation; in one
// written "match:<pattern>" each '*' stands for any text (for ids and
// times).
func replyMatches(got, want string) bool {
	if p, ok := strings.CutPrefix(want, "match:"); ok {
		p = strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, "?", `\?`).Replace(p)
		return glob.Match([]byte(p), []byte(got), false)
	}
	return got == want
}

// renderReply renders a raw RESP reply on one line: +simple, -error,
// :integer, "bulk" (Go-quoted), nil, [a b] arrays, {k: v} maps, ~[set],
// >[push], ,double, #t/#f, (bignum.
func renderReply(raw string) string {
	rd := bufio.NewReader(strings.NewReader(raw))
	var b bytes.Buffer
	renderValue(rd, &b, false)
	return b.String()
}

// renderExact renders like renderReply but keeps every RESP type apart:
// a RESP2 null bulk is nil, a RESP2 null array *nil, a RESP3 null _, a
// verbatim string ="txt:..." and a blob error !"...", so that equal
// renderings mean equal bytes (short of simple strings holding spaces).
func renderExact(raw string) string {
	rd := bufio.NewReader(strings.NewReader(raw))
	var b bytes.Buffer
	renderValue(rd, &b, true)
	return b.String()
}

func renderValue(rd *bufio.Reader, b *bytes.Buffer, exact bool) {
	line, err := rd.ReadString('\n')
	if err != nil || len(line) < 3 {
		fmt.Fprintf(b, "<bad %q>", line)
		return
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+', '-', ':', ',', '#', '(':
		b.WriteString(line[:len(line)-2])
	case '_':
		if exact {
			b.WriteString("_")
		} else {
			b.WriteString("nil")
		}
	case '$', '=', '!':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			b.WriteString("nil")
			return
		}
		buf := make([]byte, n+2)
		_, _ = io.ReadFull(rd, buf)
		if exact && line[0] != '$' {
			b.WriteByte(line[0])
		}
		b.WriteString(strconv.Quote(string(buf[:n])))
	case '*', '~', '>', '%', '|':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			if exact && line[0] == '*' {
				b.WriteString("*nil")
			} else {
				b.WriteString("nil")
			}
			return
		}
		open, sep, closing := "[", " ", "]"
		switch line[0] {
		case '~':
			open = "~["
		case '>':
			open = ">["
		case '%':
			open, closing = "{", "}"
		case '|':
			open, closing = "|{", "} "
		}
		b.WriteString(open)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(sep)
			}
			renderValue(rd, b, exact)
			if line[0] == '%' || line[0] == '|' {
				b.WriteString(": ")
				renderValue(rd, b, exact)
			}
		}
		b.WriteString(closing)
		if line[0] == '|' {
			renderValue(rd, b, exact)
		}
	default:
		fmt.Fprintf(b, "<unknown %q>", line)
	}
}
