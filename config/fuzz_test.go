package config

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

// FuzzTokenize checks that Tokenize never panics, fails only with
// ErrUnbalancedQuotes, and that whatever it accepts survives a round trip
// through the quoting CONFIG REWRITE uses. Seeds are in
// testdata/fuzz/FuzzTokenize.
func FuzzTokenize(f *testing.F) {
	f.Add(`port 6666`)
	f.Fuzz(func(t *testing.T, line string) {
		toks, err := Tokenize(line)
		if err != nil {
			if !errors.Is(err, ErrUnbalancedQuotes) {
				t.Fatalf("Tokenize(%q) = %v", line, err)
			}
			return
		}
		quoted := make([]string, len(toks))
		for i, tok := range toks {
			quoted[i] = quoteToken(tok)
		}
		again, err := Tokenize(strings.Join(quoted, " "))
		if err != nil {
			t.Fatalf("re-tokenizing %q: %v", quoted, err)
		}
		if !slices.Equal(toks, again) && !(len(toks) == 0 && len(again) == 0) {
			t.Fatalf("round trip of %q: %q became %q", line, toks, again)
		}
	})
}

// FuzzParseFile checks that parsing arbitrary file contents never panics and
// that a file that parses also loads into a Config whose rewrite parses.
func FuzzParseFile(f *testing.F) {
	f.Add([]byte("port 6666\nbind 1.2.3.4 ::1\n# c\nnamespace.a b\nworkers 8\n"))
	f.Add([]byte("client-output-buffer-limit pubsub 1mb 1mb 0\nslaveof h 1\n"))
	f.Add([]byte("requirepass \"a\\x00b\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fv, _, err := parseFile("fuzz.conf", data, parseValue)
		if err != nil {
			return
		}
		c := New()
		for name, v := range fv.values {
			c.entries[name].val.Store(v)
		}
		c.namespaces = fv.namespaces
		if _, _, err := parseFile("rewritten.conf", rewriteContents(data, c), parseValue); err != nil {
			t.Fatalf("rewrite of a valid file does not parse: %v", err)
		}
	})
}

// FuzzLoadArgs checks that any command line (arguments separated by NUL
// in the input) loads or fails with an error, never a panic, and that a
// loaded configuration's values pass CONFIG SET's checks again. Command
// lines naming a configuration file are skipped: the input would choose
// the file.
func FuzzLoadArgs(f *testing.F) {
	f.Add("--port\x007000\x00--slaveof\x00127.0.0.1\x006666")
	f.Add("--replicaof\x00h\x001\x00--bind\x00127.0.0.1\x00::1\x00--\x00x")
	f.Add("--port=1\x00--PORT\x002\x00--workers\x008\x00stray")
	defer func(w io.Writer) { helpOutput = w }(helpOutput)
	helpOutput = io.Discard
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		for _, a := range args {
			if a == "-c" || strings.HasPrefix(a, "--config") || strings.HasPrefix(a, "-c") {
				return
			}
		}
		c, _, err := Load(args, nil)
		if err != nil {
			return
		}
		for _, name := range c.Names() {
			v, _ := c.Get(name)
			if err := c.Override(name, v); err != nil {
				t.Fatalf("%q loaded, but setting %s to its value %q fails: %v", args, name, v, err)
			}
		}
	})
}
