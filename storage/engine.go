package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/go-hclog"
)

// FormatVersion is the on-disk data format this build writes. Format 2
// keeps long string values in chunks; this build reads format 1's single
// value records too, and opening a format-1 database moves it to 2 (it
// may then hold chunks, which a format-1 build cannot read).
const FormatVersion uint64 = 2

// Sentinel errors callers test for.
var (
	// ErrClosed is returned by Commit after Close has begun.
	ErrClosed = errors.New("storage: engine is closed")
	// ErrLocked is returned by Open when another process holds the data dir.
	ErrLocked = errors.New("storage: data dir is in use by another process")
	// ErrFormat is returned by Open for data written in a format this build
	// does not understand.
	ErrFormat = errors.New("storage: unsupported data format")
)

// Options configures an Engine.
type Options struct {
	// Dir is the data directory; it is created if missing.
	Dir string
	// Sync makes every commit wait for its WAL fsync; it can be changed at
	// runtime with Engine.SetSync.
	Sync bool
	// BlockCacheBytes sizes Pebble's block cache; 0 means 64 MiB.
	BlockCacheBytes int64
	// RowCacheBytes sizes the cache of key metadata kept above Pebble,
	// and that of collection members beside it; 0 turns them off.
	RowCacheBytes int64
	// InlineValueMax is the longest string value kept inside its key's
	// metadata record; longer ones get a value record of their own. 0
	// means DefaultInlineValueMax.
	InlineValueMax int
	// Logger receives the engine's and Pebble's messages; nil discards them.
	Logger hclog.Logger
	// Fatal is called with a storage fault the engine cannot continue
	// from: a failed write or sync of the WAL, or a condition Pebble
	// reports as fatal. Nil logs the fault and exits the process with
	// status 1, DESIGN.md's policy; a test may record it instead, but the
	// engine is then unusable.
	Fatal func(error)
}

// DefaultInlineValueMax is Options.InlineValueMax's default: a value
// beyond 64 KiB costs far more to copy than a second read.
const DefaultInlineValueMax = 64 << 10

// CommitHook is called inside the commit critical section after a batch
// has been applied, with the batch's offset and its bytes, which stay
// valid only until the hook returns: a hook that keeps them copies them.
// Hooks are called in offset order and must not block.
type CommitHook func(offset uint64, repr []byte)

// WriteObserver is told, inside the commit section, which keys a committed
// batch wrote and which namespaces it emptied (WATCH and CLIENT TRACKING
// use it). Its methods must not block.
type WriteObserver interface {
	// Watching reports whether the observer wants to hear of writes now;
	// while it does not, commits skip it at no cost.
	Watching() bool
	// Written receives, once a batch is applied, what it did in order:
	// every key it set or deleted and, where the batch emptied
	// namespaces, one flush (after the keys written before it). A full
	// sync is told as one flush of everything once its data is in place.
	Written(writes iter.Seq[Write])
	// Flushing is told, before a batch that empties whole namespaces (a
	// FLUSHDB or FLUSHALL) is applied, which namespaces it empties; nil
	// means all of them: a full sync replaces the whole data set, and
	// tells it once before and once after. present reports whether a
	// metadata key (MetaKey) is in the database at that moment, expired
	// or not (an error reading it counts as present).
	Flushing(namespaces []string, present func(metaKey []byte) bool)
}

// Write is one change of a committed batch, as a WriteObserver hears it:
// a key set or deleted, or a flush of namespaces. Its slices are valid
// only during the Written call.
type Write struct {
	// MetaKey is the metadata key (MetaKey) set or deleted; nil for a
	// flush.
	MetaKey []byte
	// Deleted is true when the batch deleted MetaKey.
	Deleted bool
	// Flushed lists the namespaces a flush emptied; nil means all of them.
	Flushed []string
	// Origin is the Batch.Origin of the batch that wrote MetaKey.
	Origin int64
}

// Engine owns the Pebble database and is the one path through which every
// write passes (Commit). It is safe for concurrent use; callers serialize
// writes to the same key with Locks.
type Engine struct {
	opts Options
	// dbMu guards db and dbName: every use of db holds it for reading;
	// installing a full sync's checkpoint holds it for writing.
	dbMu   sync.RWMutex
	db     *pebble.DB
	dbName string // the live database's directory under opts.Dir
	cache  *pebble.Cache
	rows   *rowCache
	// members caches the member records (hash fields, set and sorted-set
	// members) that GetField reads; see cacheMembers.
	members *rowCache
	// memberMask is the member cache shards the batch being applied
	// writes (beginMembers); guarded by commitMu.
	memberMask uint64
	log        hclog.Logger
	sync       atomic.Bool
	closed     atomic.Bool

	// Locks are the striped key locks every write holds across read,
	// commit and publish.
	Locks *KeyLocks

	queue    commitQueue
	commitMu sync.Mutex // serializes offset assignment, Apply and hooks
	offset   uint64     // last committed offset; guarded by commitMu
	scratch  []byte     // record bytes being built; guarded by commitMu
	pending  []nsCount  // the key counts a commit leaves; guarded by commitMu
	hook     CommitHook // guarded by commitMu
	// libObserver hears of the function libraries replicated batches
	// change (SetLibraryObserver); guarded by commitMu.
	libObserver func(changes []LibraryChange, all bool)
	fault       func(*Batch) error
	observer    WriteObserver // guarded by commitMu

	// epoch is when the engine opened, and lastApply, lastPause and
	// lastYield when (since epoch) it last applied a batch and background
	// work last paused and yielded, for pacing that work (pacing.go).
	epoch     time.Time
	lastApply atomic.Int64
	lastPause atomic.Int64
	lastYield atomic.Int64
	// applying is set while a batch is handed to Pebble (under commitMu),
	// and versions counts the internal-key versions compared since the
	// engine opened (pacedComparer).
	applying atomic.Bool
	versions atomic.Uint64
	// walFaults and tableFaults are set by InjectWALFault and
	// InjectTableFault (tests only).
	walFaults, tableFaults atomic.Bool
	// synced is SyncedOffset; stopSync and syncDone stop syncLoop.
	synced    atomic.Uint64
	stopSync  chan struct{}
	syncDone  chan struct{}
	closeSync sync.Once

	// expireFrom is, per namespace, the expiry time from which ExpireSlice
	// scans the index (see there); expireRescanAt when it next scans from
	// the start. Guarded by expireMu.
	expireMu       sync.Mutex
	expireFrom     map[string]int64
	expireRescanAt int64
	// expireFloor is the earliest expiry time a commit has written to the
	// index since ExpireSlice last looked (0: none): an absolute time in
	// the past (SET ... PXAT) lands behind where the scans resume.
	expireFloor atomic.Int64

	countsMu sync.RWMutex
	counts   map[string]KeyCount // per namespace, expired keys included

	nsMu       sync.RWMutex
	namespaces map[string]string // namespace -> token
}

// Open opens (creating if needed) the database in opts.Dir. The live
// Pebble database is the subdirectory named by the file "current" in
// opts.Dir, so a full sync can install a new one atomically. A second
// process on the same dir gets ErrLocked; data of another format
// ErrFormat.
func Open(opts Options) (*Engine, error) {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.BlockCacheBytes <= 0 {
		opts.BlockCacheBytes = 64 << 20
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("storage: create data dir %s: %w", opts.Dir, err)
	}
	name, err := readCurrent(opts.Dir)
	if err != nil {
		return nil, err
	}
	e := &Engine{opts: opts, cache: pebble.NewCache(opts.BlockCacheBytes), rows: newRowCache(opts.RowCacheBytes), members: newRowCache(opts.RowCacheBytes),
		log: opts.Logger, Locks: NewKeyLocks(), epoch: time.Now()}
	e.sync.Store(opts.Sync)
	if err := e.openDB(name); err != nil {
		e.cache.Unref()
		return nil, err
	}
	if err := writeCurrent(opts.Dir, name); err != nil {
		e.db.Close()
		e.cache.Unref()
		return nil, err
	}
	e.synced.Store(e.offset) // replayed from the files
	e.stopSync, e.syncDone = make(chan struct{}), make(chan struct{})
	go e.syncLoop(e.stopSync, e.syncDone)
	return e, nil
}

// currentFile names the file that holds the live database's directory.
const currentFile = "current"

// readCurrent returns the live database's directory name ("db-1" for a
// new data dir).
func readCurrent(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, currentFile))
	if errors.Is(err, os.ErrNotExist) {
		return "db-1", nil
	}
	if err != nil {
		return "", fmt.Errorf("storage: read %s: %w", filepath.Join(dir, currentFile), err)
	}
	name := strings.TrimSpace(string(data))
	if name == "" || strings.ContainsAny(name, "/\\") {
		return "", fmt.Errorf("storage: %s names no database directory (%q)", filepath.Join(dir, currentFile), name)
	}
	return name, nil
}

// writeCurrent makes name the live database atomically: temp file,
// fsync, rename, fsync of the dir.
func writeCurrent(dir, name string) error {
	tmp := filepath.Join(dir, currentFile+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("storage: write %s: %w", tmp, err)
	}
	_, err = f.WriteString(name + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, currentFile))
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("storage: install %s as the live database: %w", name, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// walBytesPerSync is how often Pebble starts writing the WAL back. When
// a memtable is rotated Pebble fsyncs the old WAL while every commit
// waits; without write-back that fsync wrote the whole memtable's worth of
// log (BenchmarkCommitAtRotation, docs/performance.md). A variable so the
// benchmark can compare.
var walBytesPerSync = 512 << 10

// memTableSize is the size of Pebble's memtables. Each time one fills,
// Pebble closes the WAL with an fsync and creates the next one while every
// commit waits: 7–14 ms on the VMs these benchmarks run on, and a replica
// delays every event behind it. With 16 MB rather than 4 those waits come
// a quarter as often (a replica's event p99 in three alternating runs
// each: 255–323 µs against 289–403, docs/performance.md); reads are
// served by the row cache either way.
const memTableSize = 16 << 20

// pebbleOptions returns the options every database of e opens with:
// paced sstable writers (pacing.go), tables kept to one keyspace, bloom
// filters.
func (e *Engine) pebbleOptions() *pebble.Options {
	log := pebbleLogger{l: e.log.Named("pebble"), fatal: e.fatal}
	po := &pebble.Options{
		Cache:              e.cache,
		Comparer:           e.pacedComparer(),
		FormatMajorVersion: pebble.FormatNewest,
		Logger:             log,
		MemTableSize:       memTableSize,
		FS:                 engineFS{FS: vfs.Default, e: e},
		WALBytesPerSync:    walBytesPerSync,
	}
	po.Experimental.SpanPolicyFunc = keyspaceSpan
	// At log-level debug, each flush, compaction and new WAL is logged
	// with its timing, to line up with a latency trace (docs/performance.md).
	po.EventListener = &pebble.EventListener{
		FlushBegin:      func(i pebble.FlushInfo) { log.Infof("%s", i) },
		FlushEnd:        func(i pebble.FlushInfo) { log.Infof("%s", i) },
		CompactionBegin: func(i pebble.CompactionInfo) { log.Infof("%s", i) },
		CompactionEnd:   func(i pebble.CompactionInfo) { log.Infof("%s", i) },
		WALCreated:      func(i pebble.WALCreateInfo) { log.Infof("%s", i) },
		BackgroundError: e.backgroundError,
	}
	filter := pacedFilterPolicy{FilterPolicy: bloom.FilterPolicy(10), e: e}
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = filter
	}
	po.EnsureDefaults()
	return po
}

// openDB opens the database directory name under the data dir and loads
// its in-memory state; the caller holds dbMu or owns e exclusively.
func (e *Engine) openDB(name string) error {
	path := filepath.Join(e.opts.Dir, name)
	db, err := pebble.Open(path, e.pebbleOptions())
	if err != nil {
		if isLockError(err) {
			return fmt.Errorf("%w: %s: %v", ErrLocked, e.opts.Dir, err)
		}
		return fmt.Errorf("storage: open %s: %w", path, err)
	}
	e.db, e.dbName = db, name
	e.rows.clear()
	e.members.clear()
	if err := e.load(); err != nil {
		db.Close()
		return err
	}
	return nil
}

// keyspaceSpan is Pebble's SpanPolicyFunc: it ends every sstable that a
// flush or compaction writes at the end of the keyspace (the first key
// byte) its first key is in, so no sstable mixes keyspaces. Every commit
// writes the replication offset and key counts (prefixInternal) beside
// its user keys; in shared sstables those records made each flushed file
// span everything from them to the newest user key, and each compaction
// into the next level rewrote all data in between, however far the
// written keys were from it.
func keyspaceSpan(start []byte) (pebble.SpanPolicy, []byte, error) {
	if len(start) == 0 || start[0] == 0xff {
		return pebble.SpanPolicy{}, nil, nil
	}
	return pebble.SpanPolicy{}, []byte{start[0] + 1}, nil
}

// isLockError reports whether err is Pebble failing to take the dir lock.
func isLockError(err error) bool {
	msg := err.Error()
	return errors.Is(err, syscall.EAGAIN) || strings.Contains(msg, "resource temporarily unavailable") ||
		strings.Contains(msg, "lock held")
}

// load (called with dbMu and commitMu held, or on an engine nobody else
// has yet) checks the format version and reads the offset, key counts and
// namespaces into memory, writing the format record on a new database.
// Readers of the counts and namespaces (DBSIZE, a client's AUTH) hold only
// countsMu or nsMu, so the new maps are built aside and swapped in under
// those locks.
func (e *Engine) load() error {
	v, err := e.getLocked(keyFormatVersion)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		b := e.NewBatch(LogData{Cmd: CmdFormat})
		b.b.Set(keyFormatVersion, binary.BigEndian.AppendUint64(nil, FormatVersion), nil)
		if err := e.db.Apply(b.b, pebble.Sync); err != nil {
			return fmt.Errorf("storage: write format version: %w", err)
		}
		b.b.Close()
	case err != nil:
		return fmt.Errorf("storage: read format version: %w", err)
	case len(v) == 8 && binary.BigEndian.Uint64(v) == 1:
		if err := e.db.Set(keyFormatVersion, binary.BigEndian.AppendUint64(nil, FormatVersion), pebble.Sync); err != nil {
			return fmt.Errorf("storage: write format version: %w", err)
		}
		e.log.Info("data format 1 moved to 2: long string values are written in chunks from now on")
	case len(v) != 8 || binary.BigEndian.Uint64(v) != FormatVersion:
		return fmt.Errorf("%w: data dir has format %x, this build supports 1 and %d", ErrFormat, v, FormatVersion)
	}
	var offset uint64
	if v, err := e.getLocked(keyReplOffset); err == nil && len(v) == 8 {
		offset = binary.BigEndian.Uint64(v)
	} else if err != nil && !errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("storage: read replication offset: %w", err)
	}
	counts := map[string]KeyCount{}
	var unsummed []string
	if err := e.scanPrefixLocked(keyCountPrefix, func(k, v []byte) bool {
		if n, withSum, ok := decodeKeyCount(v); ok && len(k) > len(keyCountPrefix) {
			ns := string(k[len(keyCountPrefix)+1:])
			counts[ns] = n
			if !withSum && n.Expires > 0 {
				unsummed = append(unsummed, ns)
			}
		}
		return true
	}); err != nil {
		return fmt.Errorf("storage: read key counts: %w", err)
	}
	for _, ns := range unsummed {
		// A count written before it carried the sum of expiry times: the
		// sum comes from the keys, once (the next commit persists it).
		n := counts[ns]
		e.log.Info("summing the expiry times of a namespace's keys", "namespace", ns, "keys", n.Keys)
		if err := e.scanPrefixLocked(metaPrefix(ns), func(_, v []byte) bool {
			if m, err := decodeMetadata(v); err == nil && m.ExpireAt != 0 {
				n.expireSum.addInt(m.ExpireAt)
			}
			return true
		}); err != nil {
			return fmt.Errorf("storage: sum expiry times of namespace %q: %w", ns, err)
		}
		counts[ns] = n
	}
	namespaces := map[string]string{}
	if err := e.scanPrefixLocked(keyNamespacePfx, func(k, v []byte) bool {
		namespaces[string(k[len(keyNamespacePfx):])] = string(v)
		return true
	}); err != nil {
		return fmt.Errorf("storage: read namespaces: %w", err)
	}
	e.offset = offset
	e.countsMu.Lock()
	e.counts = counts
	e.countsMu.Unlock()
	e.nsMu.Lock()
	e.namespaces = namespaces
	e.nsMu.Unlock()
	e.log.Info("storage opened", "offset", offset, "namespaces", len(namespaces))
	return nil
}

// Close stops further commits and closes Pebble. Commits that already
// entered the critical section finish first.
func (e *Engine) Close() error {
	e.closeSync.Do(func() {
		close(e.stopSync)
		<-e.syncDone
	})
	e.commitMu.Lock()
	defer e.commitMu.Unlock()
	if e.closed.Swap(true) {
		return nil
	}
	e.dbMu.Lock()
	defer e.dbMu.Unlock()
	err := e.db.Close()
	e.cache.Unref()
	if err != nil {
		return fmt.Errorf("storage: close: %w", err)
	}
	return nil
}

// SetSync changes whether commits wait for their WAL fsync.
func (e *Engine) SetSync(on bool) { e.sync.Store(on) }

// LibraryChange is a function library a replicated batch stores (Code)
// or deletes.
type LibraryChange struct {
	Name    string
	Code    []byte
	Deleted bool
}

// SetLibraryObserver installs the function ApplyReplicated calls, inside
// its critical section, with the library changes of a batch it applied,
// before the batch's offset is visible, and InstallCheckpoint with every
// library of the installed data (all set), before any read sees it; nil
// removes it. It must not commit or read through the engine.
func (e *Engine) SetLibraryObserver(fn func(changes []LibraryChange, all bool)) {
	e.commitMu.Lock()
	e.libObserver = fn
	e.commitMu.Unlock()
}

// SetCommitHook installs the post-commit hook; nil removes it.
func (e *Engine) SetCommitHook(h CommitHook) {
	e.commitMu.Lock()
	e.hook = h
	e.commitMu.Unlock()
}

// observe tells the write observer, when it is watching, what a committed
// batch wrote: rows, and the namespaces emptied before rows[fresh:] when
// flush is set (nil: all); the caller holds commitMu.
func (e *Engine) observe(rows []rowUpdate, fresh int, flush bool, flushed []string) {
	if e.observer == nil || !e.observer.Watching() {
		return
	}
	e.observer.Written(func(yield func(Write) bool) {
		for i, r := range rows {
			if flush && i == fresh && !yield(Write{Flushed: flushed}) {
				return
			}
			if !r.quiet && !yield(Write{MetaKey: r.k, Deleted: r.v == nil, Origin: r.origin}) {
				return
			}
		}
		if flush && fresh == len(rows) {
			yield(Write{Flushed: flushed})
		}
	})
}

// observeFlush tells the write observer that namespaces (nil: all) are
// about to be emptied, present answering from the database as it is; the
// caller holds commitMu.
func (e *Engine) observeFlush(namespaces []string, present func([]byte) bool) {
	if e.observer != nil && e.observer.Watching() {
		e.observer.Flushing(namespaces, present)
	}
}

// present reports whether metadata record k is in the database (a read
// error counts as present); the caller holds every key lock, so the row
// cache answers when it has the key.
func (e *Engine) present(k []byte) bool {
	e.dbMu.RLock()
	defer e.dbMu.RUnlock()
	return e.presentLocked(k)
}

// presentLocked is present for a caller that holds dbMu.
func (e *Engine) presentLocked(k []byte) bool {
	if v, hit := e.rows.get(k); hit {
		return v != nil
	}
	_, err := e.getLocked(k)
	return !errors.Is(err, pebble.ErrNotFound)
}

// SetWriteObserver installs the observer of written keys; nil removes it.
func (e *Engine) SetWriteObserver(o WriteObserver) {
	e.commitMu.Lock()
	e.observer = o
	e.commitMu.Unlock()
}

// SetCommitFault installs a test-only hook that Commit consults before
// applying a batch: a non-nil error from it fails the commit as a storage
// fault would, with nothing applied. nil removes it.
func (e *Engine) SetCommitFault(f func(*Batch) error) {
	e.commitMu.Lock()
	e.fault = f
	e.commitMu.Unlock()
}

// Offset returns the offset of the last committed batch.
func (e *Engine) Offset() uint64 {
	e.commitMu.Lock()
	defer e.commitMu.Unlock()
	return e.offset
}

// DBSize returns the number of keys in ns, including expired keys not yet
// reclaimed.
func (e *Engine) DBSize(ns string) int64 {
	e.countsMu.RLock()
	defer e.countsMu.RUnlock()
	return e.counts[ns].Keys
}

// KeyCounts returns a copy of the per-namespace key counts.
func (e *Engine) KeyCounts() map[string]KeyCount {
	e.countsMu.RLock()
	defer e.countsMu.RUnlock()
	out := make(map[string]KeyCount, len(e.counts))
	for k, v := range e.counts {
		out[k] = v
	}
	return out
}

// LSMStats are counters of Pebble's background work and the shape of its
// tree, for INFO. The counters start at zero when the live database opens
// (start-up, or a full sync's install).
type LSMStats struct {
	Flushes         int64  // memtables flushed to sstables
	FlushBytes      uint64 // bytes of sstables written by flushes
	Compactions     int64  // compactions completed
	CompactionBytes uint64 // bytes of sstables written by compactions
	L0Files         int64  // sstables in level 0
	Tables          int64  // sstables in all levels
	DiskBytes       uint64 // bytes of every file Pebble keeps (WAL and sstables included)
	RowCacheHits    uint64 // metadata reads the row cache answered
	RowCacheMisses  uint64 // metadata reads that went to Pebble
	MemberHits      uint64 // member reads (HGET, SISMEMBER, ZSCORE...) the member cache answered
	MemberMisses    uint64 // member reads that went to Pebble
}

// LSMStats returns the live database's LSMStats.
func (e *Engine) LSMStats() LSMStats {
	e.dbMu.RLock()
	m := e.db.Metrics()
	e.dbMu.RUnlock()
	s := LSMStats{Flushes: m.Flush.Count, Compactions: m.Compact.Count, L0Files: m.Levels[0].TablesCount,
		DiskBytes: m.DiskSpaceUsage()}
	s.RowCacheHits, s.RowCacheMisses = e.rows.stats()
	s.MemberHits, s.MemberMisses = e.members.stats()
	for _, l := range m.Levels {
		s.FlushBytes += l.TableBytesFlushed
		s.CompactionBytes += l.TableBytesCompacted
		s.Tables += l.TablesCount
	}
	return s
}

// Namespaces returns a copy of the namespace -> token table.
func (e *Engine) Namespaces() map[string]string {
	e.nsMu.RLock()
	defer e.nsMu.RUnlock()
	out := make(map[string]string, len(e.namespaces))
	for k, v := range e.namespaces {
		out[k] = v
	}
	return out
}

// Libraries calls fn with the name and code of each function library
// stored, in name order. The code is only valid during the call.
func (e *Engine) Libraries(fn func(name string, code []byte)) error {
	e.dbMu.RLock()
	defer e.dbMu.RUnlock()
	if err := e.scanPrefixLocked(keyLibraryPfx, func(k, v []byte) bool {
		fn(string(k[len(keyLibraryPfx):]), v)
		return true
	}); err != nil {
		return fmt.Errorf("storage: read function libraries: %w", err)
	}
	return nil
}

// getLocked is get for a caller that holds dbMu (or owns the engine).
func (e *Engine) getLocked(k []byte) ([]byte, error) { return e.appendLocked(nil, k) }

// appendLocked appends the value of record k to dst; the caller holds
// dbMu (or owns the engine).
func (e *Engine) appendLocked(dst, k []byte) ([]byte, error) {
	v, closer, err := e.db.Get(k)
	if err != nil {
		return dst, err
	}
	dst = append(dst, v...)
	closer.Close()
	return dst, nil
}

// GetMeta returns the metadata of key in ns; the caller holds the key's
// lock. Expired keys are returned too (found is true); callers decide with
// Metadata.Expired. m.Value must not be modified.
func (e *Engine) GetMeta(ns string, key []byte) (m Metadata, found bool, err error) {
	// The cache is looked up with the key built on the stack; only a miss
	// allocates, a buffer holding the key and then the record read after
	// it (m.Value refers to it).
	var buf [metaKeyStack]byte
	k := appendMetaKey(buf[:0], ns, key)
	v, hit := e.rows.get(k)
	if !hit {
		kv := append(make([]byte, 0, len(k)+metaHeaderLen+32), k...)
		klen := len(kv)
		e.dbMu.RLock()
		kv, err = e.appendLocked(kv, kv[:klen:klen])
		e.dbMu.RUnlock()
		switch {
		case errors.Is(err, pebble.ErrNotFound):
			e.rows.put(kv[:klen], nil)
			v = nil
		case err != nil:
			return Metadata{}, false, fmt.Errorf("storage: get %q: %w", key, err)
		default:
			v = kv[klen:len(kv):len(kv)]
			e.rows.put(kv[:klen], v)
		}
	}
	if v == nil {
		return Metadata{}, false, nil
	}
	m, err = decodeMetadata(v)
	if err != nil {
		return Metadata{}, false, fmt.Errorf("storage: key %q: %w", key, err)
	}
	return m, true, nil
}

// metaKeyStack is the room for a metadata key that GetMeta and ReadMeta
// keep on the stack (longer keys are built on the heap).
const metaKeyStack = 96

// LoadValue reads the value of m, key's external string metadata as read
// under the key's lock (which the caller still holds), into m.Value. b is
// the batch of the caller's transaction (nil: none), whose writes it
// reads. Value records that do not fit m (a chunk past its length, a
// format-1 record of another length or missing) are an error: the
// database is inconsistent.
func (e *Engine) LoadValue(b *Batch, ns string, key []byte, m *Metadata) error {
	v, err := e.LoadValueRange(b, ns, key, m, 0, int64(m.Size))
	if err == nil {
		m.Value = v
	}
	return err
}

// LoadValueRange is LoadValue for the bytes from to to (exclusive) of the
// value alone, which it returns (0 <= from <= to <= m.Size).
func (e *Engine) LoadValueRange(b *Batch, ns string, key []byte, m *Metadata, from, to int64) ([]byte, error) {
	if from < 0 || from > to || to > int64(m.Size) {
		return nil, fmt.Errorf("storage: key %q: range %d..%d of a value of %d bytes", key, from, to, m.Size)
	}
	out := make([]byte, to-from)
	return out, e.ReadValueAt(b, ns, key, m, out, from)
}

// ReadValueAt is LoadValueRange into dst, which the bytes from from to
// from+len(dst) (at most m.Size) fill, so that a caller walking a long
// value reuses one buffer. dst need not be zeroed.
func (e *Engine) ReadValueAt(b *Batch, ns string, key []byte, m *Metadata, dst []byte, from int64) error {
	to := from + int64(len(dst))
	if from < 0 || to > int64(m.Size) {
		return fmt.Errorf("storage: key %q: range %d..%d of a value of %d bytes", key, from, to, m.Size)
	}
	if from == to {
		return nil
	}
	e.dbMu.RLock()
	defer e.dbMu.RUnlock()
	if m.Chunked() {
		clear(dst)
		return e.readChunks(b, ns, key, m, from, to, dst)
	}
	v, closer, err := e.db.Get(valueKey(ns, key))
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		return fmt.Errorf("storage: key %q: value record missing", key)
	case err != nil:
		return fmt.Errorf("storage: key %q: read value: %w", key, err)
	}
	defer closer.Close()
	if uint64(len(v)) != m.Size {
		return fmt.Errorf("storage: key %q: value record of %d bytes, metadata says %d", key, len(v), m.Size)
	}
	copy(dst, v[from:to])
	return nil
}

// ReadMeta is GetMeta for a caller that does not hold the key's lock (a
// read-only command): a cache miss takes the lock to fill the cache.
func (e *Engine) ReadMeta(ns string, key []byte) (m Metadata, found bool, err error) {
	if e.rows != nil {
		var buf [metaKeyStack]byte
		if v, hit := e.rows.get(appendMetaKey(buf[:0], ns, key)); hit {
			if v == nil {
				return Metadata{}, false, nil
			}
			if m, err = decodeMetadata(v); err == nil {
				return m, true, nil
			}
		}
		unlock := e.Locks.Lock(ns, key)
		defer unlock()
	}
	return e.GetMeta(ns, key)
}

// scanPrefixLocked calls fn for every record whose key starts with p, in
// key order, until fn returns false; the caller holds dbMu (or owns the
// engine). Slices passed to fn are valid only during the call.
func (e *Engine) scanPrefixLocked(p []byte, fn func(k, v []byte) bool) error {
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		if !fn(it.Key(), it.Value()) {
			break
		}
	}
	return it.Close()
}

// ScanKeys calls fn for each key of ns at or after start, in key order,
// until fn returns false. Expired keys are included. The key slice is only
// valid during the call; m.Value too.
func (e *Engine) ScanKeys(ns string, start []byte, fn func(key []byte, m Metadata) bool) error {
	p := metaPrefix(ns)
	e.dbMu.RLock()
	defer e.dbMu.RUnlock()
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		return fmt.Errorf("storage: scan: %w", err)
	}
	var ok bool
	if len(start) > 0 {
		ok = it.SeekGE(metaKey(ns, start))
	} else {
		ok = it.First()
	}
	for ; ok; ok = it.Next() {
		m, derr := decodeMetadata(it.Value())
		if derr != nil {
			e.log.Warn("skipping undecodable metadata", "key", fmt.Sprintf("%q", it.Key()), "error", derr)
			continue
		}
		if !fn(it.Key()[len(p):], m) {
			break
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("storage: scan: %w", err)
	}
	return nil
}

// ScanExpiring calls fn for each expiry-index entry of ns whose time is
// from fromMs to untilMs, oldest first, until fn returns false.
func (e *Engine) ScanExpiring(ns string, fromMs, untilMs int64, fn func(expireAt int64, key []byte) bool) error {
	p := expirePrefix(ns)
	lower := binary.BigEndian.AppendUint64(append([]byte(nil), p...), uint64(max(fromMs, 0)))
	upper := binary.BigEndian.AppendUint64(append([]byte(nil), p...), uint64(untilMs)+1)
	e.dbMu.RLock()
	defer e.dbMu.RUnlock()
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return fmt.Errorf("storage: scan expiring: %w", err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		ms, key, valid := decodeExpireKey(it.Key(), len(p))
		if valid && !fn(ms, key) {
			break
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("storage: scan expiring: %w", err)
	}
	return nil
}

// pebbleLogger adapts hclog to Pebble's Logger. Pebble's Fatalf is for
// conditions it cannot continue from (a failed commit among them): they go
// to the engine's fatal handler, which by default logs and exits the
// process, DESIGN.md's policy for storage faults.
type pebbleLogger struct {
	l     hclog.Logger
	fatal func(error)
}

func (p pebbleLogger) Infof(format string, args ...interface{}) {
	if p.l.IsDebug() {
		p.l.Debug(fmt.Sprintf(format, args...))
	}
}
func (p pebbleLogger) Errorf(format string, args ...interface{}) {
	p.l.Error(fmt.Sprintf(format, args...))
}
func (p pebbleLogger) Fatalf(format string, args ...interface{}) {
	p.fatal(fmt.Errorf("storage: %s", fmt.Sprintf(format, args...)))
}
