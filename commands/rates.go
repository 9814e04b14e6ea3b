package commands

import (
	"sync"
	"time"
)

// rateSamples is how many samples INFO's instantaneous_* fields average,
// one every rateInterval at most, as Redis keeps them.
const (
	rateSamples  = 16
	rateInterval = 100 * time.Millisecond
)

// rates holds the samples of the counters INFO reports as per-second
// rates (instantaneous_ops_per_sec, instantaneous_input_kbps and
// instantaneous_output_kbps): like Redis, each is the average of the last
// rateSamples rates, each measured over about rateInterval.
type rates struct {
	mu   sync.Mutex
	last time.Time // of the previous sample; zero: none yet
	// The counters at the previous sample.
	lastOps, lastIn, lastOut int64
	// Per-second rates of the last samples, a ring whose next slot is next.
	ops, in, out [rateSamples]float64
	next         int
}

// Sample records the counters' rates since the previous sample, unless
// that was less than rateInterval before now, and notes the heap's size
// for used_memory_peak. The server calls it from a periodic loop.
func (s *Stats) Sample(now time.Time) {
	s.peak.sampleNow()
	r := &s.rates
	r.mu.Lock()
	defer r.mu.Unlock()
	ops, in, out := s.Commands.Load(), s.NetInput.Load(), s.NetOutput.Load()
	if !r.last.IsZero() {
		d := now.Sub(r.last)
		if d < rateInterval {
			return
		}
		per := func(cur, last int64) float64 { return float64(max(cur-last, 0)) / d.Seconds() }
		r.ops[r.next], r.in[r.next], r.out[r.next] = per(ops, r.lastOps), per(in, r.lastIn), per(out, r.lastOut)
		r.next = (r.next + 1) % rateSamples
	}
	r.last, r.lastOps, r.lastIn, r.lastOut = now, ops, in, out
}

// Instantaneous returns the averages of the sampled rates: commands per
// second, and KB (1024 bytes) per second read from and written to clients.
func (s *Stats) Instantaneous() (opsPerSec int64, inKBps, outKBps float64) {
	r := &s.rates
	r.mu.Lock()
	defer r.mu.Unlock()
	var ops, in, out float64
	for i := range rateSamples {
		ops, in, out = ops+r.ops[i], in+r.in[i], out+r.out[i]
	}
	return int64(ops / rateSamples), in / rateSamples / 1024, out / rateSamples / 1024
}

// reset forgets the samples (CONFIG RESETSTAT).
func (r *rates) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last, r.lastOps, r.lastIn, r.lastOut = time.Time{}, 0, 0, 0
	r.ops, r.in, r.out, r.next = [rateSamples]float64{}, [rateSamples]float64{}, [rateSamples]float64{}, 0
}
