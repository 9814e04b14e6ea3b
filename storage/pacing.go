package storage

import (
	"runtime"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Pebble's flushes and compactions run in CPU-bound goroutines. With one P
// (GOMAXPROCS=1, Go's default on one CPU) a compaction and Pebble's block
// writer goroutine hand the P to each other for as long as the compaction
// lasts (each readies the other as the next to run), so goroutines that are
// ready wait behind them, and a goroutine whose socket became readable is
// not even noticed: the network is polled when the P runs out of work, or
// every 10 ms by the runtime's monitor. While writes flow, a replica's
// events and a primary's replies would wait behind every flush and
// compaction (docs/performance.md measured p99 of 10–80 ms).
//
// pacedFS therefore wraps the files of sstables being written, and only
// while one P runs goroutines: after each write the writer yields to the
// goroutines that are ready, and after every paceBytes, if the engine
// applied a batch within paceWindow, it sleeps for pacePause, which leaves
// the P idle so the scheduler polls the network. With more Ps the kernel
// interleaves the threads and nothing changes; without recent writes (a
// write stall included) background work never sleeps, so it cannot crawl
// while the foreground waits for it.
const (
	paceBytes  = 16 << 10
	pacePause  = 50 * time.Microsecond
	paceWindow = 2 * time.Millisecond
)

// pacedFS is the filesystem the engine gives Pebble: fs with its sstable
// files paced for e.
type pacedFS struct {
	vfs.FS
	e *Engine
}

// Create creates name, paced when it is an sstable.
func (fs pacedFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	if err != nil || !strings.HasSuffix(name, ".sst") {
		return f, err
	}
	return &pacedFile{File: f, e: fs.e}, nil
}

// pacedFile is an sstable being written by a flush or a compaction.
type pacedFile struct {
	vfs.File
	e       *Engine
	written int // bytes since the last pause
}

// Write writes p, then paces the calling goroutine (see pacedFS).
func (f *pacedFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	if runtime.GOMAXPROCS(0) > 1 {
		return n, err
	}
	if f.written += n; f.written >= paceBytes {
		f.written = 0
		f.e.pace()
	} else {
		runtime.Gosched()
	}
	return n, err
}

// paceKeys is how many keys a flush or compaction adds to an sstable
// between two pacing points (about 100-200 µs of its work).
const paceKeys = 1024

// pacedFilterPolicy is the engine's bloom filter policy. Pebble builds an
// sstable's filter in the goroutine that writes the table's keys, the
// flush's or compaction's own, which otherwise ran for up to 5 ms at a
// time with one P (pacedFile paces only the goroutine that writes the
// blocks out): its writers pace that goroutine every paceKeys keys.
type pacedFilterPolicy struct {
	pebble.FilterPolicy
	e *Engine
}

// NewWriter returns a paced filter writer of ftype.
func (p pacedFilterPolicy) NewWriter(ftype pebble.FilterType) pebble.FilterWriter {
	return &pacedFilterWriter{FilterWriter: p.FilterPolicy.NewWriter(ftype), e: p.e}
}

// pacedFilterWriter adds keys to a filter, pacing its caller.
type pacedFilterWriter struct {
	pebble.FilterWriter
	e    *Engine
	keys int // since the last pacing point
}

// AddKey adds key to the filter, then paces the caller every paceKeys keys.
func (w *pacedFilterWriter) AddKey(key []byte) {
	w.FilterWriter.AddKey(key)
	if w.keys++; w.keys >= paceKeys {
		w.keys = 0
		w.e.pace()
	}
}

// pace lets ready goroutines run and, while batches are being applied,
// leaves the P idle for pacePause so the scheduler polls the network
// (see pacedFS). It does nothing with more than one P.
func (e *Engine) pace() {
	if runtime.GOMAXPROCS(0) > 1 {
		return
	}
	runtime.Gosched()
	if time.Since(e.epoch)-time.Duration(e.lastApply.Load()) < paceWindow {
		time.Sleep(pacePause)
	}
}

// noteApply records that a batch is being applied; the caller holds
// commitMu.
func (e *Engine) noteApply() { e.lastApply.Store(int64(time.Since(e.epoch))) }
