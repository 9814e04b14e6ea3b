package config

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestSetAllOrNothing(t *testing.T) {
	c := New()
	var calls []string
	if err := c.OnChange("timeout", func(v string) { calls = append(calls, "timeout="+v) }); err != nil {
		t.Fatal(err)
	}
	err := c.Set([]Pair{{"timeout", "30"}, {"hz", "x"}})
	var se *SetError
	if !errors.As(err, &se) || !errors.Is(err, ErrInvalidValue) || se.Arg != "hz" {
		t.Fatalf("Set = %v", err)
	}
	if got := c.Int("timeout"); got != 0 {
		t.Errorf("timeout = %d after a failed Set, want 0", got)
	}
	if len(calls) != 0 {
		t.Errorf("hooks called after a failed Set: %v", calls)
	}
	if err := c.Set([]Pair{{"timeout", "30"}, {"hz", "20"}}); err != nil {
		t.Fatal(err)
	}
	if c.Int("timeout") != 30 || c.Int("hz") != 20 {
		t.Errorf("timeout=%d hz=%d", c.Int("timeout"), c.Int("hz"))
	}
	if want := []string{"timeout=30"}; fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("hook calls = %v, want %v", calls, want)
	}
}

func TestSetErrors(t *testing.T) {
	c := New()
	for _, tc := range []struct {
		pairs []Pair
		is    error
	}{
		{[]Pair{{"nope", "1"}}, ErrUnknownOption},
		{[]Pair{{"port", "1"}}, ErrImmutable},
		{[]Pair{{"hz", "1"}, {"HZ", "2"}}, ErrDuplicateOption},
		{[]Pair{{"hz", "0x"}}, ErrInvalidValue},
	} {
		err := c.Set(tc.pairs)
		if !errors.Is(err, tc.is) {
			t.Errorf("Set(%v) = %v, want %v", tc.pairs, err, tc.is)
		}
		if strings.HasPrefix(err.Error(), "-") || !strings.HasPrefix(err.Error(), "ERR ") {
			t.Errorf("Set(%v) error text %q", tc.pairs, err)
		}
	}
	if err := c.Set(nil); err != nil {
		t.Errorf("Set(nil) = %v", err)
	}
}

func TestTypedGetters(t *testing.T) {
	c := New()
	if c.Int("port") != 6666 || c.Int("hz") != 10 || c.Int("maxclients") != 10000 {
		t.Errorf("int defaults: port=%d hz=%d maxclients=%d", c.Int("port"), c.Int("hz"), c.Int("maxclients"))
	}
	if c.Bytes("proto-max-bulk-len") != 512<<20 {
		t.Errorf("proto-max-bulk-len = %d", c.Bytes("proto-max-bulk-len"))
	}
	if !c.Bool("slave-read-only") || c.Bool("rocksdb.write_options.sync") || !c.Bool("replica-read-only") {
		t.Error("bool defaults wrong")
	}
	if c.String("dir") != "./cairn-data" || c.String("log-dir") != "stderr" || c.String("bind") != "127.0.0.1" {
		t.Error("string defaults wrong")
	}
	if got := c.BufferLimit(ClientPubSub); got != (BufferLimit{Hard: 32 << 20, Soft: 8 << 20, SoftSeconds: 60}) {
		t.Errorf("pubsub limit = %+v", got)
	}
	if got := c.BufferLimit(ClientReplica); got != (BufferLimit{Hard: 256 << 20, Soft: 64 << 20, SoftSeconds: 60}) {
		t.Errorf("replica limit = %+v", got)
	}
	if got := c.BufferLimit(ClientClass(7)); got != (BufferLimit{}) {
		t.Errorf("bad class limit = %+v", got)
	}
	if _, _, ok := c.Master(); ok {
		t.Error("Master() ok on a primary")
	}
	// Unknown names and wrong kinds give zero values, never a panic.
	if c.Int("nope") != 0 || c.Bool("nope") || c.String("nope") != "" || c.Bool("port") || c.Int("bind") != 0 {
		t.Error("zero values expected")
	}

	if err := c.Override("slaveof", "10.1.2.3 7000"); err != nil {
		t.Fatal(err)
	}
	if h, p, ok := c.Master(); !ok || h != "10.1.2.3" || p != 7000 {
		t.Errorf("Master() = %q %d %v", h, p, ok)
	}
	if err := c.Override("slaveof", "no one"); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Get("replicaof"); v != "" {
		t.Errorf("replicaof = %q", v)
	}
	if err := c.Override("port", "x"); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("Override bad value = %v", err)
	}
}

func TestLoadValidators(t *testing.T) {
	upper := Validator{Option: "notify-keyspace-events", Check: func(s string) (string, error) {
		if strings.ContainsAny(s, "z") {
			return "", errors.New("Invalid event class character")
		}
		return strings.ToUpper(s), nil
	}}
	c, _, err := Load(nil, nil, upper)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Set([]Pair{{"notify-keyspace-events", "kea"}}); err != nil {
		t.Fatal(err)
	}
	if v := c.String("notify-keyspace-events"); v != "KEA" {
		t.Errorf("canonical = %q", v)
	}
	err = c.Set([]Pair{{"notify-keyspace-events", "z"}})
	want := "ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character"
	if err == nil || err.Error() != want {
		t.Errorf("Set = %v, want %s", err, want)
	}

	// Every layer goes through the validator, and its errors say where
	// the value came from.
	conf := writeConf(t, "notify-keyspace-events xz\n")
	for _, tc := range []struct {
		args, env []string
		want      string
	}{
		{args: []string{"--notify-keyspace-events", "xz"},
			want: `config: flag --notify-keyspace-events: invalid value "xz" for "notify-keyspace-events": Invalid event class character`},
		{env: []string{EnvName("notify-keyspace-events") + "=xz"},
			want: `config: environment variable CAIRN_NOTIFY_KEYSPACE_EVENTS: invalid value "xz" for "notify-keyspace-events": Invalid event class character`},
		{args: []string{"-c", conf},
			want: "config: " + conf + `:1: invalid value "xz" for "notify-keyspace-events": Invalid event class character`},
	} {
		_, _, err := Load(tc.args, tc.env, upper)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Load(%q, %q) = %v, want %s", tc.args, tc.env, err, tc.want)
		}
	}
	if c, _, err := Load([]string{"--notify-keyspace-events", "xe"}, nil, upper); err != nil || c.String("notify-keyspace-events") != "XE" {
		t.Errorf("Load canonical form: %v", err)
	}

	if _, _, err := Load(nil, nil, Validator{Option: "nope", Check: upper.Check}); !errors.Is(err, ErrUnknownOption) {
		t.Errorf("Load with a validator for nope = %v", err)
	}
	if err := c.OnChange("nope", func(string) {}); !errors.Is(err, ErrUnknownOption) {
		t.Errorf("OnChange(nope) = %v", err)
	}
	// A validator returning a form the option itself refuses is an error.
	zero := Validator{Option: "maxclients", Check: func(s string) (string, error) { return "0", nil }}
	if _, _, err := Load(nil, nil, zero); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("a validator returning a bad canonical form = %v", err)
	}
}

// TestConcurrent exercises readers, writers and hooks together under -race.
func TestConcurrent(t *testing.T) {
	c := New()
	var mu sync.Mutex
	var seen []string
	if err := c.OnChange("hz", func(v string) {
		mu.Lock()
		seen = append(seen, v)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 100 {
				hz := fmt.Sprint(1 + (w*100+i)%500)
				if err := c.Set([]Pair{{"hz", hz}, {"timeout", hz}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				if hz := c.Int("hz"); hz < 1 || hz > 500 {
					t.Errorf("hz = %d", hz)
					return
				}
				_, _ = c.Get("timeout")
				_ = c.Namespaces()
			}
		})
	}
	wg.Wait()
	if len(seen) != 400 {
		t.Errorf("%d hook calls, want 400", len(seen))
	}
	// Hooks run in the order of the changes, so the last one seen is the
	// current value.
	if last := seen[len(seen)-1]; last != c.String("hz") {
		t.Errorf("last hook value %s, current %s", last, c.String("hz"))
	}
}

func TestParseMemorySize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1", 1, true},
		{"1b", 1, true},
		{"1B", 1, true},
		{"100k", 100000, true},
		{"100K", 100000, true},
		{"1kb", 1024, true},
		{"1Kb", 1024, true},
		{"5m", 5000000, true},
		{"512mb", 512 << 20, true},
		{"1g", 1000000000, true},
		{"1gb", 1 << 30, true},
		{"1GB", 1 << 30, true},
		{"", 0, true},   // as Redis's memtoull
		{"mb", 0, true}, // as Redis's memtoull
		{"9223372036854775807", 1<<63 - 1, true},
		{"9223372036854775808", 0, false},
		{"8589934592gb", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"1.5mb", 0, false},
		{"1tb", 0, false},
		{"1mbb", 0, false},
		{"0x10", 0, false},
		{strings.Repeat("0", 127) + "1", 0, false}, // 128 digits: too long for Redis
		{strings.Repeat("0", 126) + "1", 1, true},
	} {
		got, err := ParseMemorySize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseMemorySize(%q) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestParseInteger(t *testing.T) {
	for in, ok := range map[string]bool{
		"0": true, "1": true, "-1": true, "9223372036854775807": true, "-9223372036854775808": true,
		"": false, "-": false, "-0": false, "00": false, "01": false, "+1": false, " 1": false,
		"1 ": false, "9223372036854775808": false, "1e3": false, "0x1": false,
	} {
		if _, got := parseInteger(in); got != ok {
			t.Errorf("parseInteger(%q) ok = %v, want %v", in, got, ok)
		}
	}
}
