package storage

import (
	"math"
	"math/big"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

func TestSum128(t *testing.T) {
	var s sum128
	want := new(big.Int)
	step := func(v int64, add bool) {
		if add {
			s.addInt(v)
			want.Add(want, big.NewInt(v))
		} else {
			s.subInt(v)
			want.Sub(want, big.NewInt(v))
		}
		got := new(big.Int).Lsh(big.NewInt(int64(s.hi)), 64)
		got.Add(got, new(big.Int).SetUint64(s.lo))
		if got.Cmp(want) != 0 {
			t.Fatalf("after %+d (add %v): sum %v, want %v", v, add, got, want)
		}
	}
	// Expiry times far beyond 64 bits in sum, then back down through zero
	// and below it.
	for range 1000 {
		step(math.MaxInt64, true)
	}
	for range 1000 {
		step(math.MaxInt64, false)
	}
	step(5, false)
	step(-7, true)
	step(math.MinInt64, true)
	step(math.MinInt64, false)
	step(12, true)
	if s != (sum128{}) {
		t.Fatalf("sum = %+v, want 0", s)
	}
}

func TestAvgTTL(t *testing.T) {
	const now = 1_800_000_000_000
	at := func(ttls ...int64) KeyCount {
		n := KeyCount{Keys: int64(len(ttls)) + 1, Expires: int64(len(ttls))}
		for _, ttl := range ttls {
			n.expireSum.addInt(now + ttl)
		}
		return n
	}
	for _, c := range []struct {
		n    KeyCount
		want int64
	}{
		{KeyCount{Keys: 3}, 0},
		{at(100_000, 200_000), 150_000},
		{at(1, 2), 2}, // 1.5 rounds half away from zero
		{at(-50, 10), 0},
		{at(-500), 0},
		{at(math.MaxInt64 - now), math.MaxInt64 - now},
	} {
		if got := c.n.AvgTTL(now); got != c.want {
			t.Errorf("%+v: AvgTTL = %d, want %d", c.n, got, c.want)
		}
	}
	var many KeyCount
	for range 1_000_000 {
		many.add(at(60_000))
	}
	if got := many.AvgTTL(now); got != 60_000 {
		t.Errorf("a million keys: AvgTTL = %d, want 60000", got)
	}
}

// TestExpireSumPersists checks that commits keep the sum of expiry times
// exact, that it survives a reopen, and that a count record written
// before it existed (16 bytes) gets its sum from the keys at start-up.
func TestExpireSumPersists(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir)
	write := func(key string, expire int64, del bool) {
		t.Helper()
		commitKey(t, e, "ns", key, func(b *Batch, old *Metadata) {
			if del {
				b.DeleteKey("ns", []byte(key), *old)
			} else {
				b.PutMeta("ns", []byte(key), old, Metadata{Type: TypeString, Value: []byte("v"), ExpireAt: expire})
			}
		})
	}
	const now = 1_000_000
	write("a", now+1000, false)
	write("b", now+5000, false)
	write("b", now+3000, false) // a new TTL
	write("c", now+9000, false)
	write("c", 0, false) // PERSIST
	write("d", now+7000, false)
	write("d", 0, true) // DEL
	want := KeyCount{Keys: 3, Expires: 2}
	want.expireSum.addInt(2*now + 4000)
	check := func(when string) {
		t.Helper()
		if got := e.KeyCounts()["ns"]; got != want || got.AvgTTL(now) != 2000 {
			t.Fatalf("%s: count %+v (avg %d), want %+v (avg 2000)", when, got, got.AvgTTL(now), want)
		}
	}
	check("after the writes")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openTest(t, dir)
	check("after a reopen")
	legacy := want.append(nil)[:16]
	if err := e.db.Set(countKey("ns"), legacy, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openTest(t, dir)
	defer e.Close()
	check("after a reopen on a 16-byte count record")
}
