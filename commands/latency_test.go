package commands

import (
	"testing"
	"time"
)

// TestLatencyBuckets checks the histogram's layout: buckets tile 1 ns to
// 1 s without gaps, each at most 1/128 of its values wide, and the bounds
// match the values Redis 7.0.15 printed for single runs of 22 µs
// (p0=21.888, p50=22.015) and 5 µs (p50=5.023).
func TestLatencyBuckets(t *testing.T) {
	next := int64(1)
	for i := 1; i <= latencyBucket(latencyMaxNs); i++ {
		lo, hi := latencyBounds(i)
		if lo != next || hi < lo || hi-lo+1 > max(1, lo/128) {
			t.Fatalf("bucket %d holds %d..%d; want it to start at %d and be at most %d wide", i, lo, hi, next, max(1, lo/128))
		}
		for _, v := range []int64{lo, hi, (lo + hi) / 2} {
			if b := latencyBucket(v); b != i {
				t.Fatalf("%d ns goes to bucket %d, want %d", v, b, i)
			}
		}
		next = hi + 1
	}
	if next <= latencyMaxNs || latencyBucket(latencyMaxNs) >= latencyBuckets {
		t.Fatalf("buckets end at %d ns, bucket of 1 s = %d of %d", next-1, latencyBucket(latencyMaxNs), latencyBuckets)
	}
	for _, c := range []struct{ ns, lo, hi int64 }{
		{22_000, 21_888, 22_015}, {5_000, 4_992, 5_023}, {0, 1, 1}, {100, 100, 100},
		{int64(time.Minute), latencyMaxNs - latencyMaxNs%(1<<22), latencyMaxNs - latencyMaxNs%(1<<22) + 1<<22 - 1},
	} {
		if lo, hi := latencyBounds(latencyBucket(c.ns)); lo != c.lo || hi != c.hi {
			t.Errorf("%d ns: bucket %d..%d, want %d..%d", c.ns, lo, hi, c.lo, c.hi)
		}
	}
}

// TestLatencyPercentiles checks percentiles over a known distribution: 90
// runs of 10 µs and 10 of 1 ms.
func TestLatencyPercentiles(t *testing.T) {
	var h latencyHistogram
	if _, _, ok := h.snapshot(); ok {
		t.Fatal("an unused histogram has a snapshot")
	}
	for range 90 {
		h.record(10 * time.Microsecond)
	}
	for range 10 {
		h.record(time.Millisecond)
	}
	counts, total, ok := h.snapshot()
	if !ok || total != 100 {
		t.Fatalf("snapshot: total %d, ok %v", total, ok)
	}
	_, tenUs := latencyBounds(latencyBucket(10_000))
	loTenUs, _ := latencyBounds(latencyBucket(10_000))
	_, oneMs := latencyBounds(latencyBucket(1_000_000))
	for _, c := range []struct {
		p    float64
		want int64
	}{{0, loTenUs}, {50, tenUs}, {90, tenUs}, {90.4, tenUs}, {90.5, oneMs}, {99, oneMs}, {100, oneMs}, {150, oneMs}} {
		if got := latencyPercentile(counts, total, c.p); got != c.want {
			t.Errorf("p%v = %d ns, want %d", c.p, got, c.want)
		}
	}
	if got, want := latencyStatsLine("get", &h, []float64{50, 99.9}), "latency_percentiles_usec_get:p50=10.047,p99.9=1003.519\r\n"; got != want {
		t.Errorf("INFO line = %q, want %q", got, want)
	}
	if got, want := latencyStatsLine("get", &h, nil), "latency_percentiles_usec_get:\r\n"; got != want {
		t.Errorf("INFO line without percentiles = %q, want %q", got, want)
	}
	h.reset()
	if got := latencyStatsLine("get", &h, []float64{50}); got != "" {
		t.Errorf("after a reset: %q", got)
	}
}
