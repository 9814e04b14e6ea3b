package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// ErrOffsetGap is returned by ApplyReplicated for a batch whose offset is
// not the next one: applying it would skip or repeat a batch.
var ErrOffsetGap = errors.New("storage: replicated batch offset is not the next one")

// ErrBadBatch is returned by ApplyReplicated for bytes that are not a
// well-formed committed batch of the offset they claim.
var ErrBadBatch = errors.New("storage: malformed replicated batch")

// Checkpoint writes a consistent copy of the database to dest (which must
// not exist) and returns the offset of the last batch it contains. Commits
// wait while the checkpoint is taken (hard links and a WAL copy).
func (e *Engine) Checkpoint(dest string) (uint64, error) {
	e.commitMu.Lock()
	defer e.commitMu.Unlock()
	if e.closed.Load() {
		return 0, ErrClosed
	}
	e.dbMu.RLock()
	defer e.dbMu.RUnlock()
	if err := e.db.Checkpoint(dest, pebble.WithFlushedWAL()); err != nil {
		return 0, fmt.Errorf("storage: checkpoint to %s: %w", dest, err)
	}
	return e.offset, nil
}

// InstallCheckpoint replaces the whole database with the checkpoint in
// src (a directory on the same filesystem as the data dir, as a full sync
// receives it) and returns the offset the new data carries. The switch is
// atomic: until the "current" file names the new directory the old data
// stays live, so a crash or an error leaves the old data serving. The
// caller makes sure no command writes meanwhile (a replica's only writer
// is its applier, which calls this).
func (e *Engine) InstallCheckpoint(src string) (uint64, error) {
	unlock := e.Locks.LockAll()
	defer unlock()
	e.commitMu.Lock()
	defer e.commitMu.Unlock()
	if e.closed.Load() {
		return 0, ErrClosed
	}
	e.dbMu.Lock()
	defer e.dbMu.Unlock()
	old := e.dbName
	next := nextDBName(old)
	nextPath := filepath.Join(e.opts.Dir, next)
	if err := os.RemoveAll(nextPath); err != nil {
		return 0, fmt.Errorf("storage: clear %s: %w", nextPath, err)
	}
	if err := os.Rename(src, nextPath); err != nil {
		return 0, fmt.Errorf("storage: move checkpoint into place: %w", err)
	}
	// Watched keys of the old data and of the new count as written, as
	// for a FLUSHALL (told before the switch, so a WATCH breaks even if
	// opening the new data fails and the old comes back).
	e.observeFlush(nil, e.presentLocked)
	if err := e.db.Close(); err != nil {
		return 0, fmt.Errorf("storage: close %s: %w", old, err)
	}
	if err := e.openDB(next); err != nil {
		// The old data is still named by "current": reopen it.
		if rerr := e.openDB(old); rerr != nil {
			return 0, fmt.Errorf("storage: open installed checkpoint: %w (and reopening the old data failed: %v)", err, rerr)
		}
		return 0, fmt.Errorf("storage: open installed checkpoint: %w", err)
	}
	e.observeFlush(nil, e.presentLocked)
	e.observe(nil, 0, true, nil)
	if err := writeCurrent(e.opts.Dir, next); err != nil {
		return 0, err
	}
	if e.libObserver != nil {
		var libs []LibraryChange
		if err := e.scanPrefixLocked(keyLibraryPfx, func(k, v []byte) bool {
			libs = append(libs, LibraryChange{Name: string(k[len(keyLibraryPfx):]), Code: append([]byte(nil), v...)})
			return true
		}); err != nil {
			e.log.Error("cannot read the installed data's function libraries", "error", err)
		}
		e.libObserver(libs, true)
	}
	if err := os.RemoveAll(filepath.Join(e.opts.Dir, old)); err != nil {
		e.log.Warn("could not remove the replaced database", "dir", old, "error", err)
	}
	e.synced.Store(e.offset) // the checkpoint's data is in its sstables
	e.log.Info("installed full sync", "dir", next, "offset", e.offset, "namespaces", len(e.namespaces))
	return e.offset, nil
}

// SyncEnabled reports whether commits wait for their WAL fsync (sync yes).
func (e *Engine) SyncEnabled() bool { return e.sync.Load() }

// SyncCommitted makes every batch committed so far durable, with one WAL
// fsync that concurrent commits share, and returns the offset of the last
// of them. A primary with sync on ships a batch only once it is durable,
// so a crash never leaves its replicas holding a batch it lost.
func (e *Engine) SyncCommitted() (uint64, error) {
	e.commitMu.Lock()
	off := e.offset
	e.commitMu.Unlock()
	e.dbMu.RLock()
	defer e.dbMu.RUnlock()
	if e.closed.Load() {
		return 0, ErrClosed
	}
	// An empty LogData record, queued after every batch up to off: its
	// fsync covers them. It consumes no sequence number.
	if err := e.db.LogData(nil, pebble.Sync); err != nil {
		return 0, fmt.Errorf("storage: sync committed batches: %w", err)
	}
	e.noteSynced(off)
	return off, nil
}

// nextDBName returns the directory name after name (db-7 -> db-8).
func nextDBName(name string) string {
	n, err := strconv.Atoi(strings.TrimPrefix(name, "db-"))
	if err != nil {
		n = 0
	}
	return "db-" + strconv.Itoa(n+1)
}

// replicaScratch holds what ApplyReplicated gathers from a batch before
// applying it. Scratches are recycled through replicaScratches, so a
// replica applying a stream of batches does not allocate them anew.
type replicaScratch struct {
	rows  []rowUpdate // the batch's metadata records; they alias its bytes
	locks []int       // the key-lock stripes of the keys it writes
	// counts are the key counts the batch leaves (its count records).
	counts []nsCount
}

var replicaScratches = sync.Pool{New: func() any { return new(replicaScratch) }}

// maxScratchRows bounds the rows a recycled scratch keeps room for, so
// one huge batch does not pin its buffers.
const maxScratchRows = 1024

// release empties s, forgetting the batch it referred to, and returns it
// to replicaScratches.
func (s *replicaScratch) release() {
	if cap(s.rows) > maxScratchRows {
		s.rows, s.locks = nil, nil
	} else {
		clear(s.rows)
		s.rows, s.locks = s.rows[:0], s.locks[:0]
	}
	clear(s.counts)
	s.counts = s.counts[:0]
	replicaScratches.Put(s)
}

// maxCopiedReplicatedBatch is the largest replicated batch ApplyReplicated
// copies for Pebble; a larger one is applied in place.
const maxCopiedReplicatedBatch = 1 << 20

// ApplyReplicated applies a batch shipped by the primary, keeping the
// primary's offset, which must be the next one (ErrOffsetGap otherwise).
// The batch already carries its offset record, so data and position
// persist atomically, and its key-count and namespace records, which the
// engine's in-memory state follows. It holds the locks of the keys the
// batch writes while it applies, so the row cache stays exact, and calls
// the commit hook like Commit does, so a replica logs what it applies.
// A batch that changes function libraries is told to the library
// observer (SetLibraryObserver) once applied, before its offset shows.
// fn, if not nil, runs after the batch is applied and before the key
// locks are released (a replica publishes its notifications there). The
// caller gives repr up: ApplyReplicated clears the sequence number in its
// header, and Pebble keeps a large batch's bytes until it has flushed them.
func (e *Engine) ApplyReplicated(offset uint64, repr []byte, fn func()) error {
	s := replicaScratches.Get().(*replicaScratch)
	defer s.release()
	var (
		nsSet   = map[string]string{}
		nsDel   []string
		flush   bool
		flushed []string // namespaces whose metadata range the batch deletes
		fresh   int      // s.rows[fresh:] follow the last flush
		carried uint64
		libs    []LibraryChange
		quiet   bool // the current context is quiet (LogFlagQuiet)
	)
	err := ReadBatch(repr, func(r Record) {
		switch {
		case r.Kind == RecordLogData:
			if l, err := DecodeLogData(r.Key); err == nil { // a context; events records leave it
				quiet = l.Flags&LogFlagQuiet != 0
			}
		case r.Kind == RecordDeleteRange:
			// A flush deletes a namespace's whole metadata range; other
			// ranges (a long value's chunks) leave every key's metadata.
			if ns, key, err := DecodeMetaKey(r.Key); err == nil && len(key) == 0 {
				flush, fresh = true, len(s.rows)
				flushed = append(flushed, string(ns))
			}
		case IsMetaKey(r.Key):
			ns, key, err := DecodeMetaKey(r.Key)
			if err != nil {
				return
			}
			s.locks = append(s.locks, e.Locks.stripe(string(ns), key))
			// The rows alias repr (the row cache copies what it keeps).
			// A Set's empty value is nil, as a copy of it would be.
			var v []byte
			if r.Kind == RecordSet && len(r.Value) > 0 {
				v = r.Value
			}
			s.rows = append(s.rows, rowUpdate{k: r.Key, v: v, quiet: quiet})
		case string(r.Key) == string(keyReplOffset) && r.Kind == RecordSet && len(r.Value) == 8:
			carried = binary.BigEndian.Uint64(r.Value)
		case strings.HasPrefix(string(r.Key), string(keyCountPrefix)) && len(r.Key) > len(keyCountPrefix):
			ns := string(r.Key[len(keyCountPrefix)+1:])
			n, _, _ := decodeKeyCount(r.Value)
			s.counts = setCount(s.counts, ns, n) // a Delete leaves the zero count
		case strings.HasPrefix(string(r.Key), string(keyLibraryPfx)):
			ch := LibraryChange{Name: string(r.Key[len(keyLibraryPfx):]), Deleted: r.Kind != RecordSet}
			if !ch.Deleted {
				ch.Code = append([]byte(nil), r.Value...)
			}
			libs = append(libs, ch)
		case strings.HasPrefix(string(r.Key), string(keyNamespacePfx)):
			ns := string(r.Key[len(keyNamespacePfx):])
			if r.Kind == RecordSet {
				nsSet[ns] = string(r.Value)
			} else {
				nsDel = append(nsDel, ns)
			}
		}
	})
	if err != nil {
		return fmt.Errorf("%w: offset %d: %v", ErrBadBatch, offset, err)
	}
	if carried != offset {
		return fmt.Errorf("%w: offset %d carries offset record %d", ErrBadBatch, offset, carried)
	}
	if flush {
		unlock := e.Locks.LockAll()
		defer unlock()
	} else {
		s.locks = e.Locks.lockStripes(s.locks)
		defer e.Locks.unlockStripes(s.locks)
	}

	syncOn := e.sync.Load()
	e.commitMu.Lock()
	if e.closed.Load() {
		e.commitMu.Unlock()
		return ErrClosed
	}
	if offset != e.offset+1 {
		have := e.offset
		e.commitMu.Unlock()
		return fmt.Errorf("%w: got %d after %d", ErrOffsetGap, offset, have)
	}
	// Pebble takes the bytes it applies (SetRepr) and writes its own
	// sequence number into their header, which must be clear first: the
	// primary's Pebble wrote its own there, and a batch applied as a
	// memtable of its own (a large one) is refused with one set. A small
	// batch is copied into the buffer of one of Pebble's recycled batches,
	// which Close recycles once Pebble is done with it. A large one is
	// applied in place, not copied again, in a batch whose buffer Close
	// lets go of rather than recycles (WithMaxRetainedSizeBytes): the rows
	// alias it until fn has run. e.db stays while commitMu is held.
	var b *pebble.Batch
	data := repr
	e.dbMu.RLock()
	if len(repr) > maxCopiedReplicatedBatch {
		b = e.db.NewBatch(pebble.WithMaxRetainedSizeBytes(maxCopiedReplicatedBatch))
	} else {
		b = e.db.NewBatch()
		data = append(b.Repr()[:0], repr...)
	}
	e.dbMu.RUnlock()
	if len(data) >= 8 {
		clear(data[:8])
	}
	if err := b.SetRepr(data); err != nil {
		b.Close()
		e.commitMu.Unlock()
		return fmt.Errorf("%w: offset %d: %v", ErrBadBatch, offset, err)
	}
	if len(flushed) > 0 {
		e.observeFlush(flushed, e.present)
	}
	if err := e.apply(b, syncOn); err != nil {
		b.Close()
		e.commitMu.Unlock()
		return fmt.Errorf("storage: apply replicated batch %d: %w", offset, err)
	}
	if len(libs) > 0 && e.libObserver != nil {
		// Before the offset moves: a reader that sees it sees the
		// libraries of its batch.
		e.libObserver(libs, false)
	}
	e.applied(offset, repr, s.rows, fresh, flush, flushed, s.counts, nsSet, nsDel)
	e.commitMu.Unlock()
	if syncOn {
		err := b.SyncWait()
		b.Close()
		if err != nil {
			return fmt.Errorf("storage: sync replicated batch %d: %w", offset, err)
		}
	} else {
		b.Close()
	}
	if fn != nil {
		fn()
	}
	return nil
}
