package tests

import (
	"strconv"
	"testing"
	"time"
)

// TestInstantaneousRates: INFO's instantaneous_ops_per_sec and
// instantaneous_input_kbps / _output_kbps rise while a client sends
// commands, and fall back once it stops (they average the last 16 samples
// of 100 ms, as Redis's do).
func TestInstantaneousRates(t *testing.T) {
	n := StartCairn(t)
	admin := n.Client()
	stats := func() (ops int64, in, out float64) {
		m := infoMap(t, admin, "stats")
		ops, _ = strconv.ParseInt(m["instantaneous_ops_per_sec"], 10, 64)
		in, _ = strconv.ParseFloat(m["instantaneous_input_kbps"], 64)
		out, _ = strconv.ParseFloat(m["instantaneous_output_kbps"], 64)
		return ops, in, out
	}
	if ops, in, out := stats(); ops > 10 || in > 1 || out > 1 {
		t.Fatalf("idle server: %d ops/s, %.2f KB/s in, %.2f KB/s out", ops, in, out)
	}

	load := n.Client()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		cx := ctx(t)
		for range 2_000_000 {
			select {
			case <-stop:
				return
			default:
			}
			if load.Ping(cx).Err() != nil {
				return
			}
		}
	}()
	waitFor(t, 20*time.Second, "the rates of a client sending PINGs", func() bool {
		ops, in, out := stats()
		return ops > 100 && in > 0 && out > 0
	})
	close(stop)
	<-done
	// INFO is itself a command: polled every 200 ms, it keeps the rate at
	// a few a second.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		ops, _, _ := stats()
		if ops <= 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("20 s after the client stopped: %d ops/s", ops)
		}
	}
}
