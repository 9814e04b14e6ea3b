package config

import (
	"errors"
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
		fv, _, err := parseFile("fuzz.conf", data)
		if err != nil {
			return
		}
		c := New()
		for name, v := range fv.values {
			c.entries[name].val.Store(v)
		}
		c.namespaces = fv.namespaces
		if _, _, err := parseFile("rewritten.conf", rewriteContents(data, c)); err != nil {
			t.Fatalf("rewrite of a valid file does not parse: %v", err)
		}
	})
}
