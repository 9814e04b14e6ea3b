package config

import (
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"
)

// rewriteFlag regenerates the expected outputs of testdata files and the
// example configuration file: go test ./config/ -rewrite
var rewriteFlag = flag.Bool("rewrite", false, "rewrite expected outputs in testdata and kvrocks.conf.example")

// ddCase is one test case of a data-driven file:
//
//	cmd arg arg ...
//	input lines
//	----
//	expected output
//
// Cases are separated by blank lines; lines starting with '#' between cases
// are comments. Expected output that contains blank lines is written between
// "----" / "----" fences, as in cockroachdb/datadriven:
//
//	----
//	----
//	output with a
//
//	blank line
//	----
//	----
type ddCase struct {
	Pos   string   // file:line of the command
	Cmd   string   // first token of the command line
	Args  []string // the remaining tokens (redis.conf quoting rules)
	Input string   // lines between the command and "----", joined by \n

	expStart, expEnd int // line range of the expected block (for -rewrite)
	expected         string
}

// runDataDriven runs fn for every case in path, in order, and compares its
// output to the expected output (or, with -rewrite, rewrites the file).
func runDataDriven(t *testing.T, path string, fn func(t *testing.T, d *ddCase) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var out []string // rewritten file
	copied := 0
	for i := 0; i < len(lines); {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			i++
			continue
		}
		d := &ddCase{Pos: path + ":" + strconv.Itoa(i+1)}
		toks, err := Tokenize(l)
		if err != nil || len(toks) == 0 {
			t.Fatalf("%s: bad command line %q: %v", d.Pos, l, err)
		}
		d.Cmd, d.Args = toks[0], toks[1:]
		i++
		var input []string
		for i < len(lines) && lines[i] != "----" {
			input = append(input, lines[i])
			i++
		}
		if i == len(lines) {
			t.Fatalf("%s: missing ----", d.Pos)
		}
		d.Input = strings.Join(input, "\n")
		i++ // ----
		d.expStart = i
		var exp []string
		if i < len(lines) && lines[i] == "----" { // fenced
			i++
			for i+1 < len(lines) && (lines[i] != "----" || lines[i+1] != "----") {
				exp = append(exp, lines[i])
				i++
			}
			if i+1 >= len(lines) {
				t.Fatalf("%s: unterminated ----/---- block", d.Pos)
			}
			i += 2
		} else {
			for i < len(lines) && lines[i] != "" {
				exp = append(exp, lines[i])
				i++
			}
		}
		d.expEnd = i
		d.expected = strings.Join(exp, "\n")

		got := strings.TrimRight(fn(t, d), "\n")
		if *rewriteFlag {
			out = append(out, lines[copied:d.expStart]...)
			if strings.Contains(got, "\n\n") || strings.HasPrefix(got, "\n") {
				out = append(out, "----")
				out = append(out, strings.Split(got, "\n")...)
				out = append(out, "----", "----")
			} else if got != "" {
				out = append(out, strings.Split(got, "\n")...)
			}
			copied = d.expEnd
			continue
		}
		if got != d.expected {
			t.Errorf("%s: %s\n--- got:\n%s\n--- want:\n%s", d.Pos, l, got, d.expected)
		}
	}
	if *rewriteFlag {
		out = append(out, lines[copied:]...)
		if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
