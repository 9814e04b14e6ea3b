package tests

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
// start with "@name " to run on connection name (default "main"). Header
// lines: "#args: ..." for server arguments, "#redis" to also check against
// redis-server. Other lines starting with '#' and blank lines are ignored.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/scripts/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts found: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			s := parseScript(t, f)
			n := StartCairn(t, s.args...)
			out := s.run(t, n)
			if s.redis {
				// Redis's replies are the expectations of a #redis file.
				out = s.run(t, StartRedis(t, s.args...))
			}
			if *rewriteScripts {
				if err := os.WriteFile(f, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

type scriptCase struct {
	line     int
	conn     string
	args     []string
	expected string
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
	conns := map[string]*RawConn{}
	out := append([]string(nil), s.lines...)
	for _, c := range s.cases {
		rc := conns[c.conn]
		if rc == nil {
			rc = n.Raw()
			conns[c.conn] = rc
		}
		got := renderReply(rc.Do(c.args...))
		if !strings.HasPrefix(c.expected, "match:") {
			out[c.line] = got
		}
		if !replyMatches(got, c.expected) && !*rewriteScripts {
			t.Errorf("%s:%d (%s): %s\n  got:  %s\n  want: %s", s.path, c.line, n.Name, strings.Join(c.args, " "), got, c.expected)
		}
	}
	return []byte(strings.Join(out, "\n") + "\n")
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
// >[push], ,double, #t/#f.
func renderReply(raw string) string {
	rd := bufio.NewReader(strings.NewReader(raw))
	var b bytes.Buffer
	renderValue(rd, &b)
	return b.String()
}

func renderValue(rd *bufio.Reader, b *bytes.Buffer) {
	line, err := rd.ReadString('\n')
	if err != nil || len(line) < 3 {
		fmt.Fprintf(b, "<bad %q>", line)
		return
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+', '-', ':', ',', '#':
		b.WriteString(line[:len(line)-2])
	case '_':
		b.WriteString("nil")
	case '$', '=':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			b.WriteString("nil")
			return
		}
		buf := make([]byte, n+2)
		_, _ = io.ReadFull(rd, buf)
		b.WriteString(strconv.Quote(string(buf[:n])))
	case '*', '~', '>', '%':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			b.WriteString("nil")
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
		}
		b.WriteString(open)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(sep)
			}
			renderValue(rd, b)
			if line[0] == '%' {
				b.WriteString(": ")
				renderValue(rd, b)
			}
		}
		b.WriteString(closing)
	default:
		fmt.Fprintf(b, "<unknown %q>", line)
	}
}
