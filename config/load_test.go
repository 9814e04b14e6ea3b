package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeConf(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kvrocks.conf")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoadPrecedence checks every combination of the four layers for one
// option: the highest layer present wins.
func TestLoadPrecedence(t *testing.T) {
	for mask := range 8 {
		file, env, flag := mask&1 != 0, mask&2 != 0, mask&4 != 0
		want := "6666"
		var args, environ []string
		if file {
			args = append(args, "-c", writeConf(t, "port 7001\n"))
			want = "7001"
		}
		if env {
			environ = append(environ, "CAIRN_PORT=7002")
			want = "7002"
		}
		if flag {
			args = append(args, "--port", "7003")
			want = "7003"
		}
		c, _, err := Load(args, environ)
		if err != nil {
			t.Fatalf("file=%v env=%v flag=%v: %v", file, env, flag, err)
		}
		if got := c.String("port"); got != want {
			t.Errorf("file=%v env=%v flag=%v: port = %s, want %s", file, env, flag, got, want)
		}
	}
}

func TestLoadEveryOptionByFlagAndEnv(t *testing.T) {
	for _, o := range options {
		val := sampleValue(o)
		c, _, err := Load([]string{"--" + o.Name, val}, nil)
		if err != nil {
			t.Errorf("--%s %q: %v", o.Name, val, err)
			continue
		}
		def, _ := parseValue(&o, nil, o.Default)
		want, _ := parseValue(&o, def, val)
		if got := c.String(o.Name); got != want.text {
			t.Errorf("--%s %q: got %q, want %q", o.Name, val, got, want.text)
		}
		c, _, err = Load(nil, []string{EnvName(o.Name) + "=" + val})
		if err != nil {
			t.Errorf("%s=%q: %v", EnvName(o.Name), val, err)
			continue
		}
		if got := c.String(o.Name); got != want.text {
			t.Errorf("%s=%q: got %q, want %q", EnvName(o.Name), val, got, want.text)
		}
	}
}

// sampleValue returns a valid value of o that is not its default.
func sampleValue(o Option) string {
	switch o.Name {
	case "bind":
		return "0.0.0.0 ::1"
	case "slaveof":
		return "10.0.0.1 7000"
	case "client-output-buffer-limit":
		return "pubsub 1mb 1mb 0"
	case "daemonize":
		return "NO"
	case "slave-read-only":
		return "YES"
	case "scheduler-slice-us":
		return "250"
	case "latency-tracking-info-percentiles":
		return "1e1 99.99"
	case "save":
		return ""
	case "appendonly":
		return "NO"
	case "databases":
		return "1"
	case "maxmemory":
		return "0mb"
	case "string-value-inline-max":
		return "1kb"
	case "shutdown-on-sigterm", "shutdown-on-sigint":
		return "NOW nosave"
	}
	switch o.Kind {
	case KindBool:
		if o.Default == "yes" {
			return "no"
		}
		return "yes"
	case KindInt:
		return "42"
	case KindMemory:
		return "2gb"
	case KindEnum:
		return strings.ToUpper(o.Enum[0])
	}
	return "some value"
}

func TestLoadPath(t *testing.T) {
	c, _, err := Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Path() != "" {
		t.Errorf("Path() = %q without a file", c.Path())
	}
	if err := Rewrite(c.Path(), c); !errors.Is(err, ErrNoConfigFile) || err.Error() != "ERR The server is running without a config file" {
		t.Errorf("Rewrite without a file = %v", err)
	}
	p := writeConf(t, "port 7000\n")
	c, _, err = Load([]string{"--config=" + p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Path() != p || c.Int("port") != 7000 {
		t.Errorf("Path() = %q port=%d", c.Path(), c.Int("port"))
	}
}

func TestLoadErrors(t *testing.T) {
	p := writeConf(t, "port 6666\nport x\n")
	_, _, err := Load([]string{"-c", p}, nil)
	var fe *FileError
	if !errors.As(err, &fe) || fe.Line != 2 || !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("Load = %v", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error spans lines: %q", err)
	}
	for _, tc := range []struct {
		content string
		is      error
	}{
		{"nope 1\n", ErrUnknownDirective},
		{"port 1 2\n", ErrWrongArgs},
		{"port \"1\n", ErrUnbalancedQuotes},
		{"namespace.a t\n", ErrNamespace},
	} {
		_, _, err := Load([]string{"-c", writeConf(t, tc.content)}, nil)
		if !errors.Is(err, tc.is) {
			t.Errorf("%q: Load = %v, want %v", tc.content, err, tc.is)
		}
	}
}

func TestHelp(t *testing.T) {
	var buf bytes.Buffer
	old := helpOutput
	helpOutput = &buf
	defer func() { helpOutput = old }()
	for _, arg := range []string{"--help", "-h"} {
		buf.Reset()
		_, _, err := Load([]string{arg}, nil)
		if !errors.Is(err, ErrHelp) {
			t.Fatalf("%s: Load = %v", arg, err)
		}
		for _, o := range options {
			if !strings.Contains(buf.String(), "--"+o.Name+" ") {
				t.Errorf("%s: usage lacks --%s", arg, o.Name)
			}
		}
	}
}

// TestRewriteRoundTrip loads a file, changes every mutable option, rewrites
// and loads the result again: every value and namespace must survive, and
// the lines Cairn does not own must be kept.
func TestRewriteRoundTrip(t *testing.T) {
	orig := strings.Join([]string{
		"# header comment",
		"",
		"workers 8",
		"port 7000",
		"rocksdb.max_open_files 100",
		"requirepass admin",
		"namespace.a ta",
		"",
	}, "\n")
	p := writeConf(t, orig)
	c, _, err := Load([]string{"-c", p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var pairs []Pair
	for _, o := range options {
		if o.Mutable && o.Name != "requirepass" {
			pairs = append(pairs, Pair{o.Name, sampleValue(o)})
		}
	}
	pairs = append(pairs, Pair{"requirepass", "a \"tricky\" pass\n#"})
	if err := c.Set(pairs); err != nil {
		t.Fatal(err)
	}
	if err := c.Override("slaveof", "primary.example 6666"); err != nil {
		t.Fatal(err)
	}
	ns := []NamespaceToken{{"b", "tb"}, {"sp ace", "t c"}}
	if err := c.SetNamespaces(ns); err != nil {
		t.Fatal(err)
	}
	if err := Rewrite(c.Path(), c); err != nil {
		t.Fatal(err)
	}
	c2, warnings, err := Load([]string{"-c", p}, nil)
	if err != nil {
		data, _ := os.ReadFile(p)
		t.Fatalf("reload: %v\n%s", err, data)
	}
	if len(warnings) != 2 {
		t.Errorf("warnings = %q", warnings)
	}
	for _, name := range c.Names() {
		if a, b := c.String(name), c2.String(name); a != b {
			t.Errorf("%s: %q before, %q after", name, a, b)
		}
	}
	if fmt.Sprint(c2.Namespaces()) != fmt.Sprint(ns) {
		t.Errorf("namespaces = %v, want %v", c2.Namespaces(), ns)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []string{"# header comment\n\nworkers 8\nport 7000\nrocksdb.max_open_files 100\n"} {
		if !strings.HasPrefix(string(data), keep) {
			t.Errorf("rewritten file does not start with %q:\n%s", keep, data)
		}
	}
	if strings.Contains(string(data), "namespace.a ") {
		t.Errorf("removed namespace still in the file:\n%s", data)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestRewriteFollowsSymlink(t *testing.T) {
	p := writeConf(t, "port 7000\n")
	link := filepath.Join(t.TempDir(), "link.conf")
	if err := os.Symlink(p, link); err != nil {
		t.Skip(err)
	}
	c, _, err := Load([]string{"-c", link}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Set([]Pair{{"hz", "20"}}); err != nil {
		t.Fatal(err)
	}
	if err := Rewrite(c.Path(), c); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("symlink replaced: %v %v", fi, err)
	}
	data, _ := os.ReadFile(p)
	if !strings.Contains(string(data), "hz 20") {
		t.Errorf("target not rewritten:\n%s", data)
	}
}

func TestRewriteKeepsLineEnds(t *testing.T) {
	for _, eol := range []string{"\n", "\r\n"} {
		p := writeConf(t, "# a comment"+eol+"port 7000"+eol+"workers 4"+eol)
		c, _, err := Load([]string{"-c", p}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Set([]Pair{{"port", "7001"}, {"hz", "20"}}); err == nil {
			t.Fatal("port is immutable")
		}
		if err := c.Set([]Pair{{"hz", "20"}}); err != nil {
			t.Fatal(err)
		}
		if err := Rewrite(c.Path(), c); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(p)
		want := strings.Join([]string{"# a comment", "port 7000", "workers 4", rewriteMarker, "hz 20", ""}, eol)
		if string(data) != want {
			t.Errorf("rewrite of a file with line ends %q:\n%q\nwant\n%q", eol, data, want)
		}
	}
}

// TestExampleFile checks that kvrocks.conf.example is what the options table
// generates (go test -rewrite regenerates it) and that it loads, without a
// warning, to the defaults.
func TestExampleFile(t *testing.T) {
	const path = "../kvrocks.conf.example"
	want := exampleFile()
	if *rewriteFlag {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is out of date with the options table; run go test ./config/ -rewrite", path)
	}
	c, warnings, err := Load([]string{"-c", path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
	def := New()
	for _, name := range def.Names() {
		if a, b := c.String(name), def.String(name); a != b {
			t.Errorf("%s = %q, default %q", name, a, b)
		}
	}
	fv, _, err := parseFile(path, got, parseValue)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range options {
		if _, ok := fv.values[o.Name]; !ok {
			t.Errorf("%s does not set %s", path, o.Name)
		}
	}
}

// exampleFile renders kvrocks.conf.example from the options table.
func exampleFile() string {
	var b strings.Builder
	b.WriteString(`# Cairn configuration file (kvrocks.conf syntax), generated from the options
# table in config/options.go by "go test ./config/ -rewrite".
#
# Each line is "<option> <value>". A value with spaces or special characters
# is written in double quotes (with \n \t \" \\ \xHH escapes) or in single
# quotes. Lines starting with '#' are comments. Options of Apache Kvrocks that
# Cairn does not implement are accepted with a warning; unknown directives are
# errors. Start the server with "cairn -c <file>"; CAIRN_<OPTION> environment
# variables and --<option> <value> flags override the file.
#
# Every option is shown with its default value. Options marked [runtime] can be
# changed with CONFIG SET; CONFIG REWRITE writes the current values back.
#
# Namespaces, as in Kvrocks: a client that AUTHs with <token> works in <ns>.
# They require requirepass, which is then the admin password.
# namespace.<ns> <token>
#
# Commands can be renamed, or disabled with an empty new name, as in
# redis.conf (file only; repeat the line for each command):
# rename-command <command> <new name>
# rename-command FLUSHALL ""
`)
	for i := range options {
		o := &options[i]
		tag := ""
		if o.Mutable {
			tag = " [runtime]"
		}
		fmt.Fprintf(&b, "\n# %s%s\n%s\n", o.Doc, tag, optionLine(o, exampleValue(o)))
	}
	return b.String()
}

// exampleValue writes sizes with units, as people write them.
func exampleValue(o *Option) string {
	switch {
	case o.Kind == KindMemory:
		n, _ := parseMemory(o.Default)
		return humanBytes(int64(n))
	case o.Name == "client-output-buffer-limit":
		v, _ := parseValue(o, nil, o.Default)
		var parts []string
		for class, l := range v.limits {
			name := ClientClass(class).String()
			if name == "slave" {
				name = "replica"
			}
			parts = append(parts, fmt.Sprintf("%s %s %s %d", name, humanBytes(l.Hard), humanBytes(l.Soft), l.SoftSeconds))
		}
		return strings.Join(parts, " ")
	}
	return o.Default
}

func humanBytes(n int64) string {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.suffix)
		}
	}
	return fmt.Sprint(n)
}
