package commands

import (
	"testing"
	"time"
)

// The instantaneous rates average the last 16 samples, zeros included,
// as Redis's do; a sample sooner than 100 ms after the last is skipped,
// and CONFIG RESETSTAT (Stats.Reset) clears them.
func TestInstantaneousRates(t *testing.T) {
	var s Stats
	t0 := time.Unix(1000, 0)
	check := func(what string, ops int64, in, out float64) {
		t.Helper()
		if gotOps, gotIn, gotOut := s.Instantaneous(); gotOps != ops || gotIn != in || gotOut != out {
			t.Fatalf("%s: %d ops/s, %.4f KB/s in, %.4f KB/s out; want %d, %.4f, %.4f", what, gotOps, gotIn, gotOut, ops, in, out)
		}
	}
	s.Sample(t0)
	check("first sample", 0, 0, 0)
	s.Commands.Add(100)
	s.NetInput.Add(10 << 10)
	s.NetOutput.Add(2 << 10)
	s.Sample(t0.Add(50 * time.Millisecond))
	check("a sample 50 ms later", 0, 0, 0)
	s.Sample(t0.Add(100 * time.Millisecond))
	// One sample of 1,000 commands, 100 KB in and 20 KB out a second.
	check("one sample", 1000/16, 100.0/16, 20.0/16)
	for i := 2; i <= 17; i++ {
		s.Commands.Add(100)
		s.Sample(t0.Add(time.Duration(i) * 100 * time.Millisecond))
	}
	check("16 samples of commands only", 1000, 0, 0)
	s.Reset()
	check("after RESETSTAT", 0, 0, 0)
	s.Commands.Add(50)
	s.Sample(t0.Add(2 * time.Second))
	s.Sample(t0.Add(2100 * time.Millisecond))
	check("sampling again after RESETSTAT", 0, 0, 0)
}
