package geohash

import (
	"math"
	"testing"
)

// TestTrig checks the double-double sine, cosine and arcsine against
// glibc 2.36's results for arguments where package math's differ from
// them by one unit in the last place.
func TestTrig(t *testing.T) {
	fns := map[string]func(float64) float64{"sin": sin, "cos": cos, "asin": asin}
	for _, c := range []struct {
		fn      string
		x, want float64
	}{
		{"asin", 0x1.6d1ebb6d3aa66p-1, 0x1.9680164fb933bp-1},
		{"asin", 0x1.46bb38e9411b1p-11, 0x1.46bb3a4c1198ap-11},
		{"asin", 0x1.98dacdf6e985p-1, 0x1.d988f57076f39p-1},
		{"sin", 0x1.00c6b5d196b56p+0, 0x1.afab813a0c6bp-1},
		{"sin", 0x1.ab9a0dfb1bf73p-1, 0x1.7b994417f7e35p-1},
		{"sin", 0x1.9a8a665dd123ap-5, 0x1.9a5e69bca5913p-5},
		{"cos", 0x1.00c6b5d196b56p+0, 0x1.1353c2d2ba698p-1},
		{"cos", 0x1.f90d7696c48cep-1, 0x1.1a748684e67edp-1},
		{"cos", -0x1.c1f800f7bdf85p-8, 0x1.fffce918e7f8bp-1},
		{"sin", 0, 0},
		{"cos", 0, 1},
		{"asin", 1, math.Pi / 2},
		{"sin", 3 * math.Pi / 2, -1},
		{"cos", math.Pi, -1},
	} {
		if got := fns[c.fn](c.x); got != c.want {
			t.Errorf("%s(%x) = %x, want %x", c.fn, c.x, got, c.want)
		}
	}
	if !math.IsNaN(asin(1.0000000000000002)) || !math.IsNaN(cos(math.Inf(1))) {
		t.Error("asin beyond 1 or cos of infinity is not NaN")
	}
}
