package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDataDriven runs the testdata/*.txt scripts. Each file gets its own
// temporary working directory, so messages name "kvrocks.conf" as a user
// would see it.
func TestDataDriven(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/*.txt files")
	}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			t.Chdir(t.TempDir())
			h := &harness{}
			runDataDriven(t, abs, h.run)
		})
	}
}

// harness holds the state of one data-driven script: the configuration the
// last load produced.
type harness struct {
	c *Config
}

func (h *harness) run(t *testing.T, d *ddCase) string {
	switch d.Cmd {
	case "tokenize":
		return cmdTokenize(d)
	case "value":
		return cmdValue(t, d)
	case "load":
		return h.cmdLoad(t, d)
	case "set":
		if len(d.Args)%2 != 0 {
			t.Fatalf("%s: set needs name value pairs", d.Pos)
		}
		var pairs []Pair
		for i := 0; i < len(d.Args); i += 2 {
			pairs = append(pairs, Pair{Name: d.Args[i], Value: d.Args[i+1]})
		}
		if err := h.config().Set(pairs); err != nil {
			return err.Error()
		}
		return "OK"
	case "get":
		var b strings.Builder
		for _, name := range d.Args {
			v, ok := h.config().Get(name)
			if !ok {
				fmt.Fprintf(&b, "%s: (no such option)\n", name)
				continue
			}
			fmt.Fprintf(&b, "%s: %q\n", name, v)
		}
		return b.String()
	case "namespaces":
		var ns []NamespaceToken
		for i := 0; i+1 < len(d.Args); i += 2 {
			ns = append(ns, NamespaceToken{Namespace: d.Args[i], Token: d.Args[i+1]})
		}
		if err := h.config().SetNamespaces(ns); err != nil {
			return "error: " + err.Error()
		}
		return "OK"
	case "rewrite":
		if err := Rewrite(h.config().Path(), h.config()); err != nil {
			return "error: " + err.Error()
		}
		data, err := os.ReadFile("kvrocks.conf")
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}

func (h *harness) config() *Config {
	if h.c == nil {
		h.c = New()
	}
	return h.c
}

// cmdTokenize prints the tokens of each input line, quoted, or the error.
func cmdTokenize(d *ddCase) string {
	var b strings.Builder
	for _, line := range strings.Split(d.Input, "\n") {
		toks, err := Tokenize(line)
		if err != nil {
			fmt.Fprintf(&b, "%q -> error: %v\n", line, err)
			continue
		}
		q := make([]string, len(toks))
		for i, tok := range toks {
			q[i] = fmt.Sprintf("%q", tok)
		}
		fmt.Fprintf(&b, "%q -> [%s]\n", line, strings.Join(q, " "))
	}
	return b.String()
}

// cmdValue checks each input line "<option> <raw value>" against the
// option's parser, starting from the default value, and prints the
// canonical value or the error.
func cmdValue(t *testing.T, d *ddCase) string {
	var b strings.Builder
	c := New()
	for _, line := range strings.Split(d.Input, "\n") {
		name, raw, _ := strings.Cut(line, " ")
		e := c.entry(name)
		if e == nil {
			t.Fatalf("%s: no option %q", d.Pos, name)
		}
		v, err := parseValue(e.opt, e.val.Load(), raw)
		if err != nil {
			fmt.Fprintf(&b, "%s %q -> error: %v\n", name, raw, err)
			continue
		}
		fmt.Fprintf(&b, "%s %q -> %q\n", name, raw, v.text)
	}
	return b.String()
}

// cmdLoad runs Load. Arguments: "file" writes the input to kvrocks.conf and
// passes -c kvrocks.conf; "env=NAME=VALUE" adds an environment variable;
// anything else is passed as a command-line argument. It prints the
// warnings, then every option that differs from its default and the
// namespaces, or the error.
func (h *harness) cmdLoad(t *testing.T, d *ddCase) string {
	var args, env []string
	for _, a := range d.Args {
		switch {
		case a == "file":
			if err := os.WriteFile("kvrocks.conf", []byte(d.Input+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			args = append(args, "-c", "kvrocks.conf")
		case strings.HasPrefix(a, "env="):
			env = append(env, strings.TrimPrefix(a, "env="))
		default:
			args = append(args, a)
		}
	}
	c, warnings, err := Load(args, env)
	var b strings.Builder
	for _, w := range warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	if err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
		return b.String()
	}
	h.c = c
	b.WriteString(describe(c))
	return b.String()
}

// describe lists the options of c that differ from their defaults, its
// namespaces and its command renames.
func describe(c *Config) string {
	var b strings.Builder
	def := New()
	for _, name := range c.Names() {
		if v := c.String(name); v != def.String(name) {
			fmt.Fprintf(&b, "%s: %q\n", name, v)
		}
	}
	for _, n := range c.Namespaces() {
		fmt.Fprintf(&b, "namespace %q: %q\n", n.Namespace, n.Token)
	}
	for _, r := range c.CommandRenames() {
		fmt.Fprintf(&b, "rename-command %q %q (%s)\n", r.Name, r.NewName, r.Source)
	}
	if b.Len() == 0 {
		return "(defaults)\n"
	}
	return b.String()
}

func TestDefaultsParse(t *testing.T) {
	for i := range options {
		o := &options[i]
		v, err := parseValue(o, nil, o.Default)
		if err != nil {
			t.Errorf("%s: default %q: %v", o.Name, o.Default, err)
			continue
		}
		if v.text != o.Default {
			t.Errorf("%s: default %q is not canonical (%q)", o.Name, o.Default, v.text)
		}
		if o.Doc == "" || !strings.HasSuffix(o.Doc, ".") {
			t.Errorf("%s: doc %q must be one full sentence", o.Name, o.Doc)
		}
		if IsKvrocksOnly(o.Name) {
			t.Errorf("%s: listed as Kvrocks-only", o.Name)
		}
	}
}

func TestEnvNamesUnique(t *testing.T) {
	seen := map[string]string{}
	for _, o := range options {
		n := EnvName(o.Name)
		if other, dup := seen[n]; dup {
			t.Errorf("%s and %s share the environment variable %s", o.Name, other, n)
		}
		seen[n] = o.Name
	}
	if got := EnvName("rocksdb.write_options.sync"); got != "CAIRN_ROCKSDB_WRITE_OPTIONS_SYNC" {
		t.Errorf("EnvName = %s", got)
	}
}

func TestNamesSorted(t *testing.T) {
	names := New().Names()
	if !slices.IsSorted(names) || len(names) != len(options) {
		t.Fatalf("Names() = %v", names)
	}
	for _, n := range names {
		if _, ok := New().Get(n); !ok {
			t.Errorf("Get(%q) not found", n)
		}
	}
}
