package storage

import (
	"bytes"
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
// engineFS therefore wraps the files of sstables being written, and
// pacedFilterPolicy the keys they receive and the filters built from them,
// and only while one P runs goroutines: at each of these pacing points
// the background goroutine yields to the goroutines that are ready, at
// most once per paceYield, and, if the engine applied a batch within
// paceWindow and it has not paused for paceInterval, sleeps for
// pacePause instead, which leaves the P idle so the scheduler polls the
// network. A goroutine whose socket became readable thus waits about
// paceInterval at most, whatever a key or a block costs. With more Ps the
// kernel interleaves the threads and nothing changes; without recent
// writes (a write stall included) background work never sleeps, so it
// cannot crawl while the foreground waits for it.
const (
	paceYield    = 20 * time.Microsecond
	paceInterval = 100 * time.Microsecond
	pacePause    = 50 * time.Microsecond
	paceWindow   = 2 * time.Millisecond
)

// engineFS is the filesystem the engine gives Pebble: fs with its sstable
// files paced for e, and its WAL files' faults fatal (walFile).
type engineFS struct {
	vfs.FS
	e *Engine
}

// Create creates name, paced when it is an sstable, and with its faults
// fatal when it is a WAL (walFile).
func (fs engineFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	switch {
	case err != nil:
		return f, err
	case category == walCategory:
		return &walFile{File: f, e: fs.e, name: name}, nil
	case strings.HasSuffix(name, ".sst"):
		return &pacedFile{File: f, e: fs.e}, nil
	}
	return f, nil
}

// ReuseForWrite recycles an old WAL as newname (see Create).
func (fs engineFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	if err != nil || category != walCategory {
		return f, err
	}
	return &walFile{File: f, e: fs.e, name: newname}, nil
}

// pacedFile is an sstable being written by a flush or a compaction.
type pacedFile struct {
	vfs.File
	e *Engine
}

// Write writes p, then paces the calling goroutine (see engineFS).
func (f *pacedFile) Write(p []byte) (int, error) {
	if err := f.e.tableFault(); err != nil {
		return 0, err
	}
	n, err := f.File.Write(p)
	f.e.pace()
	return n, err
}

// pace lets ready goroutines run once per paceYield and, while batches
// are being applied, leaves the P idle for pacePause once per paceInterval
// so the scheduler polls the network (see engineFS). It does nothing with
// more than one P.
func (e *Engine) pace() {
	if runtime.GOMAXPROCS(0) > 1 {
		return
	}
	now := time.Since(e.epoch)
	switch {
	case pauseDue(now, time.Duration(e.lastApply.Load()), time.Duration(e.lastPause.Load())):
		time.Sleep(pacePause) // ready goroutines run meanwhile
		e.lastPause.Store(int64(time.Since(e.epoch)))
	case now-time.Duration(e.lastYield.Load()) >= paceYield:
		runtime.Gosched()
		e.lastYield.Store(int64(now))
	}
}

// pauseDue reports whether background work pacing itself at now should
// pause, given when a batch was last applied and when a pause last ended.
func pauseDue(now, lastApply, lastPause time.Duration) bool {
	return now-lastApply < paceWindow && now-lastPause >= paceInterval
}

// noteApply records that a batch is being applied; the caller holds
// commitMu.
func (e *Engine) noteApply() { e.lastApply.Store(int64(time.Since(e.epoch))) }

// paceVersions is how many versions of internal keys a flush or a
// compaction skips between pacing points.
const paceVersions = 64

// pacedComparer returns Pebble's default comparer (same name, same order)
// with an Equal that is also a pacing point for the versions of internal
// keys. Every commit rewrites the replication offset and most rewrite a
// key count, so a memtable holds tens of thousands of versions of these
// few keys; a flush skips all but the newest of each, adding nothing to
// its table and writing nothing, so neither pacedFile nor the filter
// writer paced it: ~80 ns a version, 2–8 ms on end (docs/performance.md).
// Skipping a version compares it with the previous one using Equal. A
// commit (which holds commitMu and sets applying) never paces.
func (e *Engine) pacedComparer() *pebble.Comparer {
	c := *pebble.DefaultComparer
	c.Equal = func(a, b []byte) bool {
		if !bytes.Equal(a, b) {
			return false
		}
		if len(a) > 0 && a[0] == prefixInternal && !e.applying.Load() &&
			e.versions.Add(1)%paceVersions == 0 {
			e.pace()
		}
		return true
	}
	return &c
}
