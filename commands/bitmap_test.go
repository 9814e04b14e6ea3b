package commands

import (
	"math/rand/v2"
	"testing"
)

// TestCountAndFindBits checks countBits and findBit, which skip whole
// bytes and words, against a bit-by-bit count and search over random
// strings (runs of 0x00 and 0xff among them) and ranges.
func TestCountAndFindBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 5000; round++ {
		s := make([]byte, 1+rng.IntN(40))
		fill := byte(rng.IntN(2) * 0xff)
		for i := range s {
			s[i] = fill
			if rng.IntN(8) == 0 {
				s[i] = byte(rng.IntN(256))
			}
		}
		n := int64(len(s)) << 3
		from := rng.Int64N(n)
		to := from + rng.Int64N(n-from)
		var count int64
		first := [2]int64{-1, -1}
		for i := from; i <= to; i++ {
			b := int64(bitAt(s, i))
			count += b
			if first[b] < 0 {
				first[b] = i
			}
		}
		if got := countBits(s, from, to); got != count {
			t.Fatalf("countBits(%x, %d, %d) = %d, want %d", s, from, to, got, count)
		}
		for bit := range int64(2) {
			if got := findBit(s, from, to, bit); got != first[bit] {
				t.Fatalf("findBit(%x, %d, %d, %d) = %d, want %d", s, from, to, bit, got, first[bit])
			}
		}
	}
}
