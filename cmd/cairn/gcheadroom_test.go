package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// TestGCTunerLeavesHeadroom checks that after a collection the tuner sets
// the GC percentage that lets a small live heap grow by gcHeadroom.
func TestGCTunerLeavesHeadroom(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	runtime.GC()
	tu := &gcTuner{sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}, percent: 100}
	tu.tune()
	live := tu.sample[0].Value.Uint64()
	if live >= gcHeadroom {
		t.Fatalf("live heap %d B is not small; the test needs less than %d", live, gcHeadroom)
	}
	want := int(gcHeadroom * 100 / max(live, 1<<20))
	if got := debug.SetGCPercent(100); got != want {
		t.Fatalf("GC percent %d after tune with %d B live, want %d", got, live, want)
	}
}

// TestGCTunerRunsAfterCollections checks that a started tuner runs after
// collections on its own (the test binary runs without GOGC).
func TestGCTunerRunsAfterCollections(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	startGCTuner()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		time.Sleep(5 * time.Millisecond) // cleanups run on their own goroutine
		if p := debug.SetGCPercent(100); p > 100 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the GC percent stayed 100 after collections")
		}
	}
}
