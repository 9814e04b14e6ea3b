package notify

import (
	"errors"
	"testing"
)

// The expectations in TestParseAndRender were recorded from redis-server
// 7.0.15: for each input, CONFIG SET notify-keyspace-events <in> followed by
// CONFIG GET notify-keyspace-events gave out, or CONFIG SET failed with
// "ERR CONFIG SET failed (possibly related to argument
// 'notify-keyspace-events') - <ErrInvalidFlags>".
func TestParseAndRender(t *testing.T) {
	cases := []struct {
		in, out string
		bad     bool
	}{
		// Empty, K and E alone: Redis keeps them as they are.
		{"", "", false},
		{"K", "K", false},
		{"E", "E", false},
		{"KE", "KE", false},
		{"EK", "KE", false},
		{"gggKKK", "gK", false},
		// A is g$lshzxetd; m and n are outside it.
		{"A", "A", false},
		{"KEA", "AKE", false},
		{"AKE", "AKE", false},
		{"g$lshzxetd", "A", false},
		{"dtexzhsl$g", "A", false},
		{"Ad", "A", false},
		{"g$lshzxet", "g$lshzxet", false},
		{"g$lshzt", "g$lshzt", false},
		{"KEg$lshzxetdmn", "AKEm", false},
		// Class order g $ l s h z x e t d n, then K, E, m.
		{"Ex", "xE", false},
		{"gx$", "g$x", false},
		{"x$g", "g$x", false},
		{"Ext", "xtE", false},
		{"x", "x", false},
		{"e", "e", false},
		{"t", "t", false},
		{"d", "d", false},
		{"nd", "dn", false},
		{"Kg", "gK", false},
		{"Eg", "gE", false},
		{"K$", "$K", false},
		{"Kl", "lK", false},
		{"Ks", "sK", false},
		{"Kh", "hK", false},
		{"Kz", "zK", false},
		{"Kt", "tK", false},
		{"Kd", "dK", false},
		{"Ke", "eK", false},
		{"Kx", "xK", false},
		// m comes after E; n is a class character but is dropped next to A.
		{"m", "m", false},
		{"n", "n", false},
		{"Km", "Km", false},
		{"Kn", "nK", false},
		{"mg", "gm", false},
		{"nm", "nm", false},
		{"mn", "nm", false},
		{"EKmn", "nKEm", false},
		{"KEAm", "AKEm", false},
		{"KEAn", "AKE", false},
		{"KEAnm", "AKEm", false},
		{"An", "A", false},
		{"Anm", "Am", false},
		{"g$lshzxetdn", "A", false},
		{"g$lshzxetdm", "Am", false},
		{"g$lshzxetn", "g$lshzxetn", false},
		// A NUL byte ends the value, as Redis reads it as a C string.
		{"K\x00zz", "K", false},
		{"\x00", "", false},
		{"KE\x00A", "KE", false},
		{"Kq\x00", "", true},
		// Everything else is refused, whole.
		{"k", "", true},
		{"a", "", true},
		{"G", "", true},
		{"X", "", true},
		{"M", "", true},
		{"N", "", true},
		{"1", "", true},
		{"*", "", true},
		{",", "", true},
		{"KEA,", "", true},
		{" ", "", true},
		{"KEA ", "", true},
		{"K E", "", true},
		{"Ü", "", true},
	}
	for _, c := range cases {
		f, err := ParseFlags(c.in)
		if c.bad {
			if !errors.Is(err, ErrInvalidFlags) || f != 0 {
				t.Errorf("ParseFlags(%q) = %b, %v; want ErrInvalidFlags", c.in, f, err)
			}
			if s, err := Canonical(c.in); !errors.Is(err, ErrInvalidFlags) || s != "" {
				t.Errorf("Canonical(%q) = %q, %v; want ErrInvalidFlags", c.in, s, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseFlags(%q): %v", c.in, err)
			continue
		}
		if got := f.String(); got != c.out {
			t.Errorf("ParseFlags(%q).String() = %q, want %q", c.in, got, c.out)
		}
		// The stored form keeps every flag and displays as Redis does.
		s, err := Canonical(c.in)
		if back, perr := ParseFlags(s); err != nil || perr != nil || back != f || Display(s) != c.out {
			t.Errorf("Canonical(%q) = %q, %v; re-parses to %b, displays %q; want %b, %q", c.in, s, err, back, Display(s), f, c.out)
		}
	}
}

func TestParseBits(t *testing.T) {
	cases := map[string]Flags{
		"":           0,
		"K":          Keyspace,
		"E":          Keyevent,
		"A":          All,
		"g$lshzxetd": All,
		"KEA":        Keyspace | Keyevent | All,
		"x":          Expired,
		"e":          Evicted,
		"t":          Stream,
		"m":          KeyMiss,
		"d":          Module,
		"n":          New,
		"KEAnm":      Keyspace | Keyevent | All | New | KeyMiss,
		"Ex":         Keyevent | Expired,
		"K\x00E":     Keyspace,
	}
	for in, want := range cases {
		if f, err := ParseFlags(in); err != nil || f != want {
			t.Errorf("ParseFlags(%q) = %b, %v; want %b", in, f, err, want)
		}
	}
	if All&(KeyMiss|New|Keyspace|Keyevent) != 0 {
		t.Errorf("All %b includes m, n, K or E", All)
	}
}

// TestNewDroppedNextToAll pins a Redis 7.0 quirk: n is lost from the
// rendering, not from the flags, when every class of A is set.
func TestNewDroppedNextToAll(t *testing.T) {
	f, err := ParseFlags("KEAn")
	if err != nil || f&New == 0 {
		t.Fatalf("ParseFlags(KEAn) = %b, %v; want New set", f, err)
	}
	if got := f.String(); got != "AKE" {
		t.Fatalf("String() = %q, want AKE", got)
	}
	if got := (All&^Module | New).String(); got != "g$lshzxetn" {
		t.Fatalf("n not rendered without A: %q", got)
	}
}

func TestErrorText(t *testing.T) {
	const want = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
	if got := ErrInvalidFlags.Error(); got != want {
		t.Fatalf("ErrInvalidFlags = %q, want %q (redis-server 7.0.15)", got, want)
	}
}

func TestBitsAreDistinct(t *testing.T) {
	seen := Flags(0)
	for _, f := range []Flags{Keyspace, Keyevent, Generic, String, List, Set, Hash, ZSet,
		Expired, Evicted, Stream, KeyMiss, Module, New} {
		if f == 0 || f&(f-1) != 0 || seen&f != 0 {
			t.Fatalf("flag %b is not a distinct single bit", f)
		}
		seen |= f
	}
}

func TestDB(t *testing.T) {
	cases := map[string]string{
		"":          "0",
		"0":         "ns:0",
		"tenantA":   "ns:tenantA",
		"a b%c":     "ns:a%20b%25c",
		"x.y_z-1":   "ns:x.y_z-1",
		"\xff:\x00": "ns:%FF%3A%00",
	}
	for in, want := range cases {
		if got := DB(in); got != want {
			t.Errorf("DB(%q) = %q, want %q", in, got, want)
		}
	}
}
