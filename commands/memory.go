package commands

import (
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// heapObjectsMetric is the runtime metric INFO's used_memory reports (the
// bytes of live and not yet collected heap objects, MemStats.HeapAlloc),
// read without stopping the world.
const heapObjectsMetric = "/memory/classes/heap/objects:bytes"

// memoryPeak tracks INFO's used_memory_peak: the highest used_memory seen
// by the server's periodic sample or by an INFO.
type memoryPeak struct {
	bytes atomic.Uint64

	mu     sync.Mutex // guards sample
	sample [1]metrics.Sample
}

// note raises the peak to used if it is higher.
func (p *memoryPeak) note(used uint64) {
	for {
		cur := p.bytes.Load()
		if used <= cur || p.bytes.CompareAndSwap(cur, used) {
			return
		}
	}
}

// sampleNow notes the heap's current size.
func (p *memoryPeak) sampleNow() {
	p.mu.Lock()
	p.sample[0].Name = heapObjectsMetric
	metrics.Read(p.sample[:])
	used := uint64(0)
	if p.sample[0].Value.Kind() == metrics.KindUint64 {
		used = p.sample[0].Value.Uint64()
	}
	p.mu.Unlock()
	p.note(used)
}

// reset starts the peak again from the heap's current size (CONFIG
// RESETSTAT, as Redis resets it).
func (p *memoryPeak) reset() {
	p.bytes.Store(0)
	p.sampleNow()
}
