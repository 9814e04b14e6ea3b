package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// gcHeadroom is the least heap growth, in bytes, allowed between two
// garbage collections. Cairn's live heap is small (Pebble's caches and
// memtables live outside it), so Go's default of growing it by 100%
// collected every second or two at a few thousand writes a second, and
// on one CPU each collection's marking delays requests by milliseconds
// (docs/performance.md). With the headroom a collection comes when the
// heap has grown by max(live heap, gcHeadroom), so memory grows by at
// most gcHeadroom over Go's default.
const gcHeadroom = 64 << 20

// gcTuner raises the GC percentage after each collection so the next
// one leaves at least gcHeadroom of growth. It is not used when the
// GOGC environment variable is set: the user's choice stands.
type gcTuner struct {
	sample  []metrics.Sample
	percent int
}

// startGCTuner starts the tuner unless GOGC is set.
func startGCTuner() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	t := &gcTuner{sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}, percent: 100}
	t.arm()
}

// arm schedules tune to run after the next collection: the cleanup of an
// object that nothing references runs once a collection has found it
// unreachable.
func (t *gcTuner) arm() {
	runtime.AddCleanup(new([16]byte), func(t *gcTuner) { t.tune(); t.arm() }, t)
}

// tune sets the percentage from the live heap the last collection left.
func (t *gcTuner) tune() {
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	live := max(t.sample[0].Value.Uint64(), 1<<20)
	p := max(100, int(gcHeadroom*100/live))
	// Small changes are not worth a call.
	if p*8 < t.percent*7 || p*7 > t.percent*8 {
		t.percent = p
		debug.SetGCPercent(p)
	}
}
