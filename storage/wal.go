package storage

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// walSyncInterval is how often, with sync off, the engine writes out and
// syncs the WAL of the batches committed since it last did. Pebble keeps
// the WAL's current 32 KB block in memory until the block fills or a sync
// asks for it, so without this a server that took a few writes and then
// none would keep them out of the file indefinitely, and a process crash
// would lose them however long ago they were acknowledged. With it, a
// crash loses about the last second of writes at most, as with Redis's
// appendfsync everysec.
const walSyncInterval = time.Second

// syncLoop syncs the WAL every walSyncInterval while sync is off and
// there are batches the last sync did not cover, until stop is closed.
func (e *Engine) syncLoop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(walSyncInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if e.sync.Load() || e.Offset() == e.synced.Load() {
			continue
		}
		// A failed write or sync of the WAL is fatal in walFile; what
		// else fails here (a close racing with it) the next tick retries.
		if _, err := e.SyncCommitted(); err != nil {
			e.log.Debug("background WAL sync", "error", err)
		}
	}
}

// SyncedOffset returns the offset of the last batch known to be synced to
// disk: by a commit with sync on, a SyncCommitted call or the background
// sync of sync off (INFO persistence shows it).
func (e *Engine) SyncedOffset() uint64 { return e.synced.Load() }

// noteSynced records that every batch up to offset off is on disk.
func (e *Engine) noteSynced(off uint64) {
	for {
		cur := e.synced.Load()
		if off <= cur || e.synced.CompareAndSwap(cur, off) {
			return
		}
	}
}

// walCategory is the write category Pebble creates and recycles its WAL
// files with.
const walCategory vfs.DiskWriteCategory = "pebble-wal"

// walFile is a WAL file of the engine. An error writing or syncing it is a
// storage fault the engine cannot continue from: the batches it held may
// already be visible to readers, replicas and subscribers, yet they are not
// on disk. DESIGN.md makes such a fault fatal for the process, and walFile
// makes it so at once, in both sync modes; left to Pebble, it would be
// fatal only at the next commit (and a sync=no server that took no more
// writes would go on serving what it failed to write).
type walFile struct {
	vfs.File
	e    *Engine
	name string
}

// Write writes p to the WAL; an error is fatal (Engine.fatal).
func (f *walFile) Write(p []byte) (int, error) {
	if err := f.e.walFault(); err != nil {
		return 0, f.fail("write", err)
	}
	n, err := f.File.Write(p)
	if err != nil {
		return n, f.fail("write", err)
	}
	return n, nil
}

// Sync syncs the WAL; an error is fatal.
func (f *walFile) Sync() error { return f.sync(f.File.Sync) }

// SyncData syncs the WAL's data; an error is fatal.
func (f *walFile) SyncData() error { return f.sync(f.File.SyncData) }

// SyncTo syncs the WAL up to length; an error is fatal.
func (f *walFile) SyncTo(length int64) (full bool, err error) {
	err = f.sync(func() (err error) {
		full, err = f.File.SyncTo(length)
		return err
	})
	return full, err
}

// sync runs one of the file's syncs, unless a fault is injected; an error
// is fatal.
func (f *walFile) sync(op func() error) error {
	err := f.e.walFault()
	if err == nil {
		err = op()
	}
	if err != nil {
		return f.fail("sync", err)
	}
	return nil
}

// fail reports a failed operation on the WAL as fatal and returns its
// error (which Pebble sees when Engine.fatal returns, as in tests).
func (f *walFile) fail(op string, err error) error {
	err = fmt.Errorf("storage: %s WAL %s: %w", op, f.name, err)
	f.e.fatal(err)
	return err
}

// InjectWALFault makes the next write or sync of the WAL fail with an I/O
// error, as a failing disk would (a test-only hook behind DEBUG
// WAL-FAULT). Like a real one, the fault is fatal (Options.Fatal).
func (e *Engine) InjectWALFault() { e.walFaults.Store(true) }

// InjectTableFault makes the next write of an sstable (by a flush or a
// compaction) fail as on a full disk (a test-only hook behind DEBUG
// TABLE-FAULT). Like a real one, the fault is fatal (backgroundError).
func (e *Engine) InjectTableFault() { e.tableFaults.Store(true) }

// walFault and tableFault return the fault InjectWALFault or
// InjectTableFault armed, once, and nil otherwise.
func (e *Engine) walFault() error   { return injectedFault(&e.walFaults, syscall.EIO) }
func (e *Engine) tableFault() error { return injectedFault(&e.tableFaults, syscall.ENOSPC) }

func injectedFault(armed *atomic.Bool, errno syscall.Errno) error {
	if !armed.Load() || !armed.CompareAndSwap(true, false) {
		return nil
	}
	return fmt.Errorf("injected disk fault: %w", errno)
}

// backgroundError handles an error of a flush or a compaction, which Pebble
// retries. A disk that is full, read-only or failing does not recover by
// itself, and meanwhile memtables and level-0 tables pile up until writes
// stall for good (and Open, which waits for the flush of the WAL it
// replays, never returns): such a fault is fatal, with a log line naming
// it. Other errors are logged and left to Pebble's retries.
func (e *Engine) backgroundError(err error) {
	for _, fault := range []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EIO} {
		if errors.Is(err, fault) {
			e.fatal(fmt.Errorf("storage: flush or compaction: %w", err))
			return
		}
	}
	e.log.Error("pebble background error", "error", err)
}

// fatal handles a storage fault the engine cannot continue from:
// Options.Fatal's, or by default a log line and exit status 1.
func (e *Engine) fatal(err error) {
	if e.opts.Fatal != nil {
		e.opts.Fatal(err)
		return
	}
	e.log.Error("fatal storage error, exiting", "error", err)
	os.Exit(1)
}
