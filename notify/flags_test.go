package notify

import (
	"errors"
	"testing"
)

func TestParseAndRender(t *testing.T) {
	cases := []struct {
		in, out string
		flags   Flags
	}{
		{"", "", 0},
		{"KEA", "AKE", Keyspace | Keyevent | All},
		{"AKE", "AKE", Keyspace | Keyevent | All},
		{"K$", "$K", Keyspace | String},
		{"Eg", "gE", Keyevent | Generic},
		{"g$lshzt", "A", All},
		{"EEgg", "gE", Keyevent | Generic},
		{"tzhsl$g", "A", All},
		{"Kl", "lK", Keyspace | List},
	}
	for _, c := range cases {
		f, err := ParseFlags(c.in)
		if err != nil || f != c.flags || f.String() != c.out {
			t.Errorf("%q: flags %b (%v), rendered %q; want %b, %q", c.in, f, err, f.String(), c.flags, c.out)
		}
	}
	for _, bad := range []string{"x", "KEAx", "KEAm", "n", "e", "d", " ", "k", "KEA "} {
		if _, err := ParseFlags(bad); !errors.Is(err, ErrInvalidFlags) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestBitsAreDistinct(t *testing.T) {
	seen := Flags(0)
	for _, f := range []Flags{Keyspace, Keyevent, Generic, String, List, Set, Hash, ZSet, Stream} {
		if f == 0 || seen&f != 0 {
			t.Fatalf("flag %b overlaps", f)
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
