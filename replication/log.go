package replication

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// The replication log on disk, format version 1.
//
// A log directory holds segment files, each named by the offset of its first
// record in 20 zero-padded decimal digits and the suffix ".seg"
// (00000000000000000001.seg). Other files in the directory are ignored. All
// integers are little-endian. A segment begins with a 32-byte header:
//
//	[0:8]   magic "CAIRNLOG"
//	[8:12]  format version (uint32), 1
//	[12:16] reserved, zero
//	[16:24] base offset (uint64): the offset of the segment's first record;
//	        it equals the number in the file name
//	[24:28] CRC-32C (Castagnoli) of bytes [0:24]
//	[28:32] reserved, zero
//
// and continues with records, back to back:
//
//	[0:4]     payload length n (uint32), at most math.MaxInt32
//	[4:8]     CRC-32C of bytes [0:4], then [8:16], then the payload
//	[8:16]    offset (uint64)
//	[16:16+n] payload: the committed batch's bytes
//
// Offsets are consecutive: a segment's records start at its base offset, and
// each segment starts where the previous one ended. The magic and the version
// never move, so a later format is recognised and refused (ErrVersion) rather
// than misread. A segment may hold no record at all: that is how an empty log
// remembers the offset its next entry must carry (see Reset).
const (
	segmentMagic      = "CAIRNLOG"
	segmentVersion    = 1
	segmentHeaderSize = 32
	recordHeaderSize  = 16
	segmentSuffix     = ".seg"
	segmentNameDigits = 20

	// maxPayload is the largest batch a record can hold.
	maxPayload = math.MaxInt32

	// indexInterval is the spacing, in bytes, of the sparse in-memory index
	// that lets a reader start in the middle of a segment.
	indexInterval = 64 << 10
	// writeBufferSize is the size of the append buffer: records reach the
	// file when it fills, on a segment roll, on Sync and on Close.
	writeBufferSize = 64 << 10
	// readBufferSize is the buffer of each reader's segment cursor.
	readBufferSize = 32 << 10
	// scanBufferSize is the buffer used to validate segments at OpenLog.
	scanBufferSize = 1 << 20
	// arenaChunkSize is the size of the chunks the memory tail copies small
	// batches into, so that Append does not allocate once per entry.
	arenaChunkSize = 256 << 10
	// entryOverhead is what the memory tail charges per entry on top of the
	// batch's bytes.
	entryOverhead = 32
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors of the replication log. Callers test them with errors.Is; the
// returned errors wrap them with context.
var (
	// ErrOutOfOrder is returned by Append when the offset is not the one
	// the log expects next (NextOffset).
	ErrOutOfOrder = errors.New("replication: log offset out of order")
	// ErrTrimmed is returned by NewReader and LogReader.Next when the
	// entries asked for are no longer in the log: removed by retention,
	// dropped by TruncateAfter or Reset, or never held. A replica in that
	// position needs a full sync.
	ErrTrimmed = errors.New("replication: log entries trimmed")
	// ErrFuture is returned by NewReader when the offset asked for is past
	// the entry the log expects next.
	ErrFuture = errors.New("replication: log offset in the future")
	// ErrClosed is returned by every operation on a closed Log or a closed
	// LogReader.
	ErrClosed = errors.New("replication: log closed")
	// ErrCorrupt marks a segment file whose content fails its checks: a bad
	// header, a checksum mismatch, a torn record, an offset out of sequence
	// or a gap between segments.
	ErrCorrupt = errors.New("replication: log corrupt")
	// ErrVersion marks a segment file written in a format version this
	// build does not know.
	ErrVersion = errors.New("replication: unknown log format version")
	// ErrTooLarge is returned by Append for a batch longer than a record
	// can hold (math.MaxInt32 bytes).
	ErrTooLarge = errors.New("replication: batch too large for the log")
)

// LogOptions configure a Log. Every field but Dir has a default, applied by
// EnsureDefaults to fields left at zero.
type LogOptions struct {
	// Dir is the directory that holds the segment files. OpenLog creates it
	// when it is missing. The log owns every file in it named like a
	// segment; nothing else may write or remove them.
	Dir string
	// SegmentBytes is the size at which Append closes the current segment
	// and starts a new one. A segment exceeds it only when a single record
	// is larger. The default is 64 MiB.
	SegmentBytes int64
	// RetainBytes bounds the log's bytes on disk: after each segment roll
	// (and on EnforceRetention) the oldest segments are removed, whole,
	// while the total is above it. The default is 1 GiB.
	RetainBytes int64
	// RetainAge, when positive, also removes the oldest segments whose
	// newest record was written longer ago than this. Zero means no age
	// limit.
	RetainAge time.Duration
	// MemoryBytes bounds the hot tail of recent entries kept in memory,
	// from which readers are served without touching the disk. The default
	// is 64 MiB.
	MemoryBytes int64
	// Logger receives what the log finds at open, what it repairs and what
	// it removes. Nil discards the messages.
	Logger hclog.Logger

	// now is the clock of RetainAge; nil means time.Now. Tests set it.
	now func() time.Time
}

// EnsureDefaults fills in the default of every field left at zero and
// returns o.
func (o *LogOptions) EnsureDefaults() *LogOptions {
	if o.SegmentBytes == 0 {
		o.SegmentBytes = 64 << 20
	}
	if o.RetainBytes == 0 {
		o.RetainBytes = 1 << 30
	}
	if o.MemoryBytes == 0 {
		o.MemoryBytes = 64 << 20
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.now == nil {
		o.now = time.Now
	}
	return o
}

// Validate reports the first option that cannot work, or nil.
func (o *LogOptions) Validate() error {
	switch {
	case o.Dir == "":
		return errors.New("replication: log options: Dir is empty")
	case o.SegmentBytes <= segmentHeaderSize+recordHeaderSize:
		return fmt.Errorf("replication: log options: SegmentBytes %d is too small (minimum %d)",
			o.SegmentBytes, segmentHeaderSize+recordHeaderSize+1)
	case o.RetainBytes < 0:
		return fmt.Errorf("replication: log options: RetainBytes %d is negative", o.RetainBytes)
	case o.RetainAge < 0:
		return fmt.Errorf("replication: log options: RetainAge %s is negative", o.RetainAge)
	case o.MemoryBytes < 0:
		return fmt.Errorf("replication: log options: MemoryBytes %d is negative", o.MemoryBytes)
	}
	return nil
}

// Log is a node's replication log: the committed write batches, each with
// its offset, in offset order. Recent entries are kept in memory; all of them
// go to segment files in LogOptions.Dir, which are removed oldest first by
// retention.
//
// A Log has one appender (the storage engine's commit critical section) and
// any number of LogReaders in other goroutines; Sync, Pin, EnforceRetention,
// TruncateAfter, Reset, Stats and Close may be called from any goroutine.
// Append never waits for a reader: readers take the log's lock only to look
// an entry up and do their disk reads on their own file handles.
//
// The log is empty until its first Append, which may carry any offset; after
// that offsets must be consecutive. An empty log can also be positioned by
// Reset, after which the next Append must carry the offset given.
//
// After an I/O error while writing, the log is failed: Append, Sync,
// TruncateAfter and Reset return that error from then on. Readers go on
// reading what was written.
type Log struct {
	opts LogOptions
	log  hclog.Logger

	// syncMu serializes Sync, TruncateAfter, Reset and Close, and is held
	// across the fsyncs that Sync does without the writer lock.
	syncMu sync.Mutex

	// wmu is the writer lock: Append holds it, as do the operations that
	// replace the current segment and retention's trimming. It guards the
	// fields below, and is held (with mu) to change the fields under mu that
	// the writer reads (next, segs, the current segment, ring, memBytes).
	wmu      sync.Mutex
	cur      *os.File // current segment, open for appending; nil when unpositioned
	curSeg   *segment // the segment cur writes, the last of segs
	wbuf     []byte   // records not yet written to cur
	buffered uint64   // offset of the last record in wbuf or cur
	flushed  uint64   // offset of the last record written to cur
	werr     error    // sticky write error
	rolled   []*rollSync
	dirDirty bool // a segment was created since the directory's last fsync
	arena    []byte

	// retMu serializes the removal of segment files, so that a file is
	// never removed after a segment of the same name was created again.
	retMu sync.Mutex

	// mu guards the fields below. It is held only for in-memory work.
	mu        sync.Mutex
	closed    bool       // written under wmu and mu
	next      uint64     // offset the next Append must carry; 0: any (unpositioned)
	segs      []*segment // in offset order; the last is curSeg; empty only while unpositioned
	diskBytes int64
	ring      entryRing // the hot tail: the newest entries, contiguous, ending at next-1 when not empty
	memBytes  int64
	pins      map[uint64]int
	readers   map[*LogReader]struct{}
	notify    chan struct{} // closed and replaced by an Append that finds waiting set
	waiting   bool
	unlink    []removal // segments dropped by retention whose files are still there

	janitorWake chan struct{}
	janitorStop chan struct{}
	janitorDone chan struct{}

	// parked, when set (by tests, before any reader starts), is called by a
	// reader about to wait for an Append.
	parked func()
}

// segment is the in-memory description of one segment file. Its fields are
// guarded by Log.mu; the writer, which alone changes the current segment,
// reads them under Log.wmu.
type segment struct {
	base    uint64 // offset of the first record, and the file's name
	last    uint64 // offset of the last record; base-1 when empty
	size    int64  // header and records, including those not yet written out
	modTime time.Time
	index   []indexEntry // sparse: record offset -> file position, first entry at the header's end
}

type indexEntry struct {
	off uint64
	pos int64
}

// removal is a segment dropped from the log whose file is to be removed.
type removal struct {
	base, last uint64
	size       int64
	reason     string
}

// rollSync is the background fsync and close of a segment that Append rolled
// away from.
type rollSync struct {
	done chan struct{}
	err  error // set before done is closed
}

// LogStats describes a Log, for INFO.
type LogStats struct {
	// First and Last are the oldest and newest readable offsets; both are
	// zero when the log is empty.
	First, Last uint64
	// Next is the offset the next Append must carry; zero when any offset
	// will do (a log that never held an entry and was never Reset).
	Next uint64
	// Segments is the number of segment files and DiskBytes their total
	// length (records still in the write buffer included).
	Segments  int
	DiskBytes int64
	// MemoryEntries is the number of entries in the hot tail and
	// MemoryBytes what they are charged against LogOptions.MemoryBytes.
	MemoryEntries int
	MemoryBytes   int64
	// Readers is the number of open LogReaders and Pins the number of pins
	// held.
	Readers, Pins int
}

// OpenLog opens the log in opts.Dir, creating the directory if needed. It
// reads every segment and checks every record. A torn or corrupt tail of the
// last segment (a crash in the middle of a write) is cut off and logged; a
// corrupt record in any other segment, or a gap between segments, fails with
// an error wrapping ErrCorrupt, and a segment of an unknown format with one
// wrapping ErrVersion: the log is not guessed at. Retention is applied once
// before OpenLog returns. The caller owns the returned Log and must Close it.
func OpenLog(opts LogOptions) (*Log, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("replication: create log dir %s: %w", opts.Dir, err)
	}
	names, err := listSegments(opts.Dir)
	if err != nil {
		return nil, err
	}
	l := &Log{
		opts:        opts,
		log:         opts.Logger,
		wbuf:        make([]byte, 0, writeBufferSize),
		pins:        map[uint64]int{},
		readers:     map[*LogReader]struct{}{},
		notify:      make(chan struct{}),
		janitorWake: make(chan struct{}, 1),
		janitorStop: make(chan struct{}),
		janitorDone: make(chan struct{}),
	}
	for i, base := range names {
		s, err := l.loadSegment(base, i == len(names)-1)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			prev := l.segs[i-1]
			if s.base != prev.last+1 {
				return nil, fmt.Errorf("replication: log segment %s: starts at offset %d but %s ends at %d: %w",
					l.segmentPath(s.base), s.base, l.segmentPath(prev.base), prev.last, ErrCorrupt)
			}
		}
		l.segs = append(l.segs, s)
		l.diskBytes += s.size
	}
	if len(l.segs) > 0 {
		last := l.segs[len(l.segs)-1]
		f, err := os.OpenFile(l.segmentPath(last.base), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, fmt.Errorf("replication: log segment %s: open for append: %w", l.segmentPath(last.base), err)
		}
		l.cur, l.curSeg = f, last
		l.next = last.last + 1
		l.buffered, l.flushed = last.last, last.last
	}
	l.mu.Lock()
	l.trimLocked(opts.now())
	l.mu.Unlock()
	if err := l.unlinkPending(); err != nil {
		l.log.Warn("replication log: removing old segments failed", "error", err)
	}
	st := l.Stats()
	l.log.Info("replication log opened", "dir", opts.Dir, "segments", st.Segments,
		"first", st.First, "last", st.Last, "next", st.Next, "bytes", st.DiskBytes)
	go l.janitor()
	return l, nil
}

// listSegments returns the base offsets of the segment files in dir, in
// order.
func listSegments(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("replication: read log dir %s: %w", dir, err)
	}
	var bases []uint64
	for _, e := range ents {
		if base, ok := parseSegmentName(e.Name()); ok && e.Type().IsRegular() {
			bases = append(bases, base)
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	return bases, nil
}

// parseSegmentName returns the base offset a segment file name carries.
func parseSegmentName(name string) (uint64, bool) {
	digits, ok := strings.CutSuffix(name, segmentSuffix)
	if !ok || len(digits) != segmentNameDigits {
		return 0, false
	}
	base, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || base == 0 {
		return 0, false
	}
	return base, true
}

func segmentName(base uint64) string {
	return fmt.Sprintf("%0*d%s", segmentNameDigits, base, segmentSuffix)
}

func (l *Log) segmentPath(base uint64) string {
	return filepath.Join(l.opts.Dir, segmentName(base))
}

// loadSegment validates one segment file at open and returns its
// description. The last segment's torn or corrupt tail is cut off.
func (l *Log) loadSegment(base uint64, last bool) (*segment, error) {
	path := l.segmentPath(base)
	flag := os.O_RDONLY
	if last {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, fmt.Errorf("replication: log segment %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("replication: log segment %s: %w", path, err)
	}
	size := fi.Size()
	hbase, scan, err := scanSegment(bufio.NewReaderSize(f, scanBufferSize), size, nil)
	if err != nil && scan.valid == 0 && last && errors.Is(err, ErrCorrupt) && headerTorn(f, size) {
		// A crash right after the segment was created: no record can
		// have made it, so write the header again.
		l.log.Warn("replication log: rewriting the torn header of the last segment",
			"segment", path, "bytes", size, "error", err)
		if err := rewriteHeader(f, base); err != nil {
			return nil, fmt.Errorf("replication: log segment %s: rewrite header: %w", path, err)
		}
		return newSegment(base, fi.ModTime()), nil
	}
	if err != nil {
		return nil, fmt.Errorf("replication: log segment %s: %w", path, err)
	}
	if hbase != base {
		return nil, fmt.Errorf("replication: log segment %s: header names base offset %d: %w", path, hbase, ErrCorrupt)
	}
	if scan.tailErr != nil {
		if !last {
			return nil, fmt.Errorf("replication: log segment %s: %w", path, scan.tailErr)
		}
		l.log.Warn("replication log: cutting off the corrupt tail of the last segment",
			"segment", path, "at_byte", scan.valid, "dropped_bytes", size-scan.valid,
			"last_offset", scan.last, "reason", scan.tailErr)
		if err := f.Truncate(scan.valid); err != nil {
			return nil, fmt.Errorf("replication: log segment %s: truncate to %d bytes: %w", path, scan.valid, err)
		}
		if err := f.Sync(); err != nil {
			return nil, fmt.Errorf("replication: log segment %s: sync: %w", path, err)
		}
	}
	return &segment{base: base, last: scan.last, size: scan.valid, modTime: fi.ModTime(), index: scan.index}, nil
}

// headerTorn reports whether a segment whose header fails its checks looks
// like one whose header never fully reached the disk: shorter than a header,
// or zeros where the header should be.
func headerTorn(f *os.File, size int64) bool {
	if size < segmentHeaderSize {
		return true
	}
	var h [segmentHeaderSize]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return false
	}
	return h == [segmentHeaderSize]byte{}
}

func rewriteHeader(f *os.File, base uint64) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(appendSegmentHeader(nil, base), 0); err != nil {
		return err
	}
	return f.Sync()
}

func newSegment(base uint64, now time.Time) *segment {
	return &segment{
		base:    base,
		last:    base - 1,
		size:    segmentHeaderSize,
		modTime: now,
		index:   []indexEntry{headerEntry(base)},
	}
}

// appendSegmentHeader appends the header of a segment starting at base.
func appendSegmentHeader(dst []byte, base uint64) []byte {
	var h [segmentHeaderSize]byte
	copy(h[0:8], segmentMagic)
	binary.LittleEndian.PutUint32(h[8:12], segmentVersion)
	binary.LittleEndian.PutUint64(h[16:24], base)
	binary.LittleEndian.PutUint32(h[24:28], crc32.Checksum(h[0:24], castagnoli))
	return append(dst, h[:]...)
}

// decodeSegmentHeader checks a segment header and returns its base offset.
func decodeSegmentHeader(h []byte) (uint64, error) {
	if len(h) < segmentHeaderSize {
		return 0, fmt.Errorf("header torn after %d bytes: %w", len(h), ErrCorrupt)
	}
	if string(h[0:8]) != segmentMagic {
		return 0, fmt.Errorf("bad magic %q: %w", h[0:8], ErrCorrupt)
	}
	if v := binary.LittleEndian.Uint32(h[8:12]); v != segmentVersion {
		return 0, fmt.Errorf("format version %d (this build reads %d): %w", v, segmentVersion, ErrVersion)
	}
	if got, want := binary.LittleEndian.Uint32(h[24:28]), crc32.Checksum(h[0:24], castagnoli); got != want {
		return 0, fmt.Errorf("header checksum %#08x, want %#08x: %w", got, want, ErrCorrupt)
	}
	if binary.LittleEndian.Uint32(h[12:16]) != 0 || binary.LittleEndian.Uint32(h[28:32]) != 0 {
		return 0, fmt.Errorf("header reserved bytes not zero: %w", ErrCorrupt)
	}
	base := binary.LittleEndian.Uint64(h[16:24])
	if base == 0 {
		return 0, fmt.Errorf("header names base offset 0: %w", ErrCorrupt)
	}
	return base, nil
}

// appendRecordHeader appends the 16-byte header of a record holding payload
// at offset off.
func appendRecordHeader(dst []byte, off uint64, payload []byte) []byte {
	// Built in place: a header on the stack would escape through the
	// checksum's assembly and cost an allocation per record.
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(payload)))
	dst = binary.LittleEndian.AppendUint32(dst, 0)
	dst = binary.LittleEndian.AppendUint64(dst, off)
	h := dst[len(dst)-recordHeaderSize:]
	binary.LittleEndian.PutUint32(h[4:8], recordChecksum(h, payload))
	return dst
}

// recordChecksum is the CRC-32C of a record's length, offset and payload.
func recordChecksum(h, payload []byte) uint32 {
	c := crc32.Update(0, castagnoli, h[0:4])
	c = crc32.Update(c, castagnoli, h[8:16])
	return crc32.Update(c, castagnoli, payload)
}

// readRecord reads the record at the front of r, which has avail bytes left,
// and checks that it is whole, that its checksum matches and that its offset
// is want. The payload is read into dst when it fits, else into a new slice.
// It returns the payload and the record's length. At the very end of the
// data (avail == 0) it returns io.EOF. Damage is reported with an error
// wrapping ErrCorrupt; a failed read with that read's error.
func readRecord(r io.Reader, avail int64, want uint64, dst []byte) ([]byte, int64, error) {
	if avail <= 0 {
		return nil, 0, io.EOF
	}
	if avail < recordHeaderSize {
		return nil, 0, fmt.Errorf("record header torn after %d bytes: %w", avail, ErrCorrupt)
	}
	var h [recordHeaderSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, 0, shortRead(err, "record header")
	}
	n := int64(binary.LittleEndian.Uint32(h[0:4]))
	if n > maxPayload || n > avail-recordHeaderSize {
		return nil, 0, fmt.Errorf("record length %d exceeds the %d bytes left: %w", n, avail-recordHeaderSize, ErrCorrupt)
	}
	var p []byte
	if int64(cap(dst)) >= n {
		p = dst[:n]
	} else {
		p = make([]byte, n)
	}
	if _, err := io.ReadFull(r, p); err != nil {
		return nil, 0, shortRead(err, "record payload")
	}
	if got, want := binary.LittleEndian.Uint32(h[4:8]), recordChecksum(h[:], p); got != want {
		return nil, 0, fmt.Errorf("record checksum %#08x, want %#08x: %w", got, want, ErrCorrupt)
	}
	if off := binary.LittleEndian.Uint64(h[8:16]); off != want {
		return nil, 0, fmt.Errorf("record offset %d, want %d: %w", off, want, ErrCorrupt)
	}
	return p, recordHeaderSize + n, nil
}

// shortRead turns the end of the data in the middle of a record into
// corruption, and leaves other read errors as they are.
func shortRead(err error, what string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s torn: %w", what, ErrCorrupt)
	}
	return fmt.Errorf("read %s: %w", what, err)
}

// segmentScan is what scanSegment found in a segment image.
type segmentScan struct {
	last    uint64       // offset of the last valid record; base-1 when none
	valid   int64        // length of the valid prefix: header and whole, checked records
	index   []indexEntry // sparse index of the valid records
	tailErr error        // why the records stopped before the end (wraps ErrCorrupt); nil at a clean end
}

// scanSegment reads a whole segment image of size bytes from r: the header,
// whose base offset it returns, then every record. A bad header or a failed
// read is returned as the error; damage among the records stops the scan and
// is reported in segmentScan.tailErr, with valid marking where it starts.
// fn, when not nil, is called with every valid record; its payload is only
// valid during the call.
func scanSegment(r io.Reader, size int64, fn func(off uint64, payload []byte)) (uint64, segmentScan, error) {
	var h [segmentHeaderSize]byte
	n, err := io.ReadFull(r, h[:min(size, segmentHeaderSize)])
	if err != nil {
		return 0, segmentScan{}, fmt.Errorf("read header: %w", err)
	}
	base, err := decodeSegmentHeader(h[:n])
	if err != nil {
		return 0, segmentScan{}, err
	}
	s := segmentScan{last: base - 1, valid: segmentHeaderSize, index: []indexEntry{headerEntry(base)}}
	var buf []byte
	for {
		p, n, err := readRecord(r, size-s.valid, s.last+1, buf)
		if err == io.EOF {
			break
		}
		if errors.Is(err, ErrCorrupt) {
			s.tailErr = fmt.Errorf("record %d at byte %d: %w", s.last+1, s.valid, err)
			break
		}
		if err != nil {
			return base, s, fmt.Errorf("record %d at byte %d: %w", s.last+1, s.valid, err)
		}
		if fn != nil {
			fn(s.last+1, p)
		}
		buf = p
		s.index = indexRecord(s.index, s.last+1, s.valid)
		s.last++
		s.valid += n
	}
	return base, s, nil
}

// janitor removes the files of segments that Append's retention dropped, so
// that Append does not wait for the file system to free them.
func (l *Log) janitor() {
	defer close(l.janitorDone)
	for {
		select {
		case <-l.janitorWake:
			if err := l.unlinkPending(); err != nil {
				l.log.Warn("replication log: removing old segments failed", "error", err)
			}
		case <-l.janitorStop:
			return
		}
	}
}

// unlinkPending removes the files of the segments retention dropped.
func (l *Log) unlinkPending() error {
	l.retMu.Lock()
	defer l.retMu.Unlock()
	return l.unlinkPendingLocked()
}

// unlinkPendingLocked is unlinkPending with retMu held.
func (l *Log) unlinkPendingLocked() error {
	l.mu.Lock()
	todo := l.unlink
	l.unlink = nil
	l.mu.Unlock()
	var first error
	for _, r := range todo {
		path := l.segmentPath(r.base)
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			if first == nil {
				first = fmt.Errorf("replication: log segment %s: remove: %w", path, err)
			}
			continue
		}
		l.log.Info("replication log: removed segment", "segment", segmentName(r.base), "first", r.base,
			"last", r.last, "bytes", r.size, "reason", r.reason)
	}
	return first
}

// trimLocked drops the oldest segments that retention no longer keeps,
// queueing their files for removal, and their entries from the memory tail,
// and reports whether it dropped any. The current segment is never dropped,
// nor one holding a pinned offset. The caller holds wmu and mu: the memory
// tail's accounting is read by Append under wmu alone.
func (l *Log) trimLocked(now time.Time) bool {
	pin, pinned := l.minPinLocked()
	dropped := false
	for len(l.segs) > 1 {
		s := l.segs[0]
		if pinned && s.last >= pin {
			break
		}
		var reason string
		switch {
		case l.diskBytes > l.opts.RetainBytes:
			reason = "size"
		case l.opts.RetainAge > 0 && now.Sub(s.modTime) > l.opts.RetainAge:
			reason = "age"
		}
		if reason == "" {
			break
		}
		l.segs[0] = nil
		l.segs = l.segs[1:]
		l.diskBytes -= s.size
		l.unlink = append(l.unlink, removal{base: s.base, last: s.last, size: s.size, reason: reason})
		dropped = true
	}
	first := l.firstLocked()
	for l.ring.n > 0 && l.ring.at(0).offset < first {
		l.popOldestLocked()
	}
	return dropped
}

// firstLocked returns the oldest readable offset: the first segment's base,
// which is next when the log is empty, or 0 while the log is unpositioned.
func (l *Log) firstLocked() uint64 {
	if len(l.segs) == 0 {
		return 0
	}
	return l.segs[0].base
}

// popOldestLocked drops the oldest entry of the memory tail.
func (l *Log) popOldestLocked() {
	e := l.ring.popFront()
	l.memBytes -= entryCost(e.data)
}

func (l *Log) minPinLocked() (uint64, bool) {
	var lowest uint64
	found := false
	for from := range l.pins {
		if !found || from < lowest {
			lowest, found = from, true
		}
	}
	return lowest, found
}

// Append adds the entry (offset, batch) to the log. offset must be
// NextOffset(), or anything but zero while NextOffset() is zero; otherwise
// Append returns an error wrapping ErrOutOfOrder and changes nothing. The log
// keeps its own copy of batch, if any, so the caller may reuse it.
//
// Append is meant to be called from the commit critical section: it never
// waits for a reader and does no fsync. The record goes through a write
// buffer to the current segment; when the segment would grow past
// LogOptions.SegmentBytes, Append starts a new one, fsyncs the old one in the
// background and applies retention. Use Sync to make entries durable.
//
// An I/O error fails the log: Append returns it, wrapped, from then on. It
// returns ErrClosed after Close.
func (l *Log) Append(offset uint64, batch []byte) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	if offset == 0 || (l.next != 0 && offset != l.next) {
		return fmt.Errorf("replication: append offset %d, log expects %d: %w", offset, l.next, ErrOutOfOrder)
	}
	if len(batch) > maxPayload {
		return fmt.Errorf("replication: append offset %d: %d bytes: %w", offset, len(batch), ErrTooLarge)
	}
	recLen := int64(recordHeaderSize + len(batch))
	var (
		newSeg, oldSeg *segment
		now            time.Time // set on a roll: the old segment's mtime, the new one's and retention's clock
		err            error
	)
	switch {
	case l.cur == nil:
		newSeg, err = l.startSegment(offset, l.opts.now())
	case l.curSeg.last >= l.curSeg.base && l.curSeg.size+recLen > l.opts.SegmentBytes:
		oldSeg, now = l.curSeg, l.opts.now()
		newSeg, err = l.roll(offset, now)
	}
	if err != nil {
		return l.fail(err)
	}
	seg := l.curSeg
	if err := l.writeRecord(offset, batch); err != nil {
		return l.fail(err)
	}
	cost := entryCost(batch)
	// An entry of more than a quarter of the memory tail (a large value's
	// batch) is not copied into it: readers read it from disk, and the
	// tail starts again after it, as it must stay contiguous.
	huge := cost > l.opts.MemoryBytes/4
	if huge || l.memBytes+cost > l.opts.MemoryBytes && l.ring.n > 0 && l.ring.at(0).offset > l.flushed {
		// The tail must shed entries that only the write buffer holds:
		// write them out first, so that readers find them on disk.
		if err := l.flush(); err != nil {
			return l.fail(err)
		}
	}
	var data []byte
	if !huge {
		data = l.copyBatch(batch)
	}

	l.mu.Lock()
	if newSeg != nil {
		if oldSeg != nil {
			oldSeg.modTime = now
		}
		l.segs = append(l.segs, newSeg)
		l.diskBytes += newSeg.size
	}
	seg.index = indexRecord(seg.index, offset, seg.size)
	seg.size += recLen
	seg.last = offset
	l.diskBytes += recLen
	l.next = offset + 1
	if huge {
		for l.ring.n > 0 {
			l.popOldestLocked()
		}
	} else {
		l.ring.push(entry{offset: offset, data: data})
		l.memBytes += cost
		for l.memBytes > l.opts.MemoryBytes && l.ring.n > 0 && l.ring.at(0).offset <= l.flushed {
			l.popOldestLocked()
		}
	}
	if l.waiting {
		l.wakeLocked()
	}
	trimmed := oldSeg != nil && l.trimLocked(now)
	l.mu.Unlock()

	if trimmed {
		select {
		case l.janitorWake <- struct{}{}:
		default:
		}
	}
	return nil
}

func entryCost(data []byte) int64 { return int64(len(data)) + entryOverhead }

// copyBatch copies b for the memory tail, small batches into a shared chunk.
// The copies are never written again, so readers may hold them.
func (l *Log) copyBatch(b []byte) []byte {
	if len(b) > arenaChunkSize/8 {
		return append(make([]byte, 0, len(b)), b...)
	}
	if cap(l.arena)-len(l.arena) < len(b) {
		l.arena = make([]byte, 0, arenaChunkSize)
	}
	n := len(l.arena)
	l.arena = append(l.arena, b...)
	return l.arena[n:len(l.arena):len(l.arena)]
}

// writableLocked returns ErrClosed after Close, the sticky write error of a
// failed log, or nil. The caller holds wmu.
func (l *Log) writableLocked() error {
	if l.closed {
		return ErrClosed
	}
	return l.werr
}

// fail makes err the log's sticky write error and returns it.
func (l *Log) fail(err error) error {
	if l.werr == nil {
		l.werr = fmt.Errorf("replication: log failed: %w", err)
		l.log.Error("replication log: write failed; the log accepts no more writes", "error", err)
	}
	return l.werr
}

// writeRecord puts a record into the write buffer, writing the buffer out
// first when the record does not fit. A record larger than the buffer goes
// straight to the file.
func (l *Log) writeRecord(off uint64, p []byte) error {
	n := recordHeaderSize + len(p)
	if len(l.wbuf)+n > cap(l.wbuf) && len(l.wbuf) > 0 {
		if err := l.flush(); err != nil {
			return err
		}
	}
	l.wbuf = appendRecordHeader(l.wbuf, off, p)
	if len(l.wbuf)+len(p) <= cap(l.wbuf) {
		l.wbuf = append(l.wbuf, p...)
		l.buffered = off
		return nil
	}
	if err := l.writeCur(l.wbuf); err != nil {
		return err
	}
	l.wbuf = l.wbuf[:0]
	if err := l.writeCur(p); err != nil {
		return err
	}
	l.buffered, l.flushed = off, off
	return nil
}

// flush writes the write buffer to the current segment.
func (l *Log) flush() error {
	if len(l.wbuf) > 0 {
		if err := l.writeCur(l.wbuf); err != nil {
			return err
		}
		l.wbuf = l.wbuf[:0]
	}
	l.flushed = l.buffered
	return nil
}

// writeCur writes b to the current segment's file.
func (l *Log) writeCur(b []byte) error {
	if _, err := l.cur.Write(b); err != nil {
		return fmt.Errorf("replication: log segment %s: write: %w", l.segmentPath(l.curSeg.base), err)
	}
	return nil
}

// createSegmentFile creates the segment file for base and makes it the
// file Append writes, with the segment's header in the write buffer (which
// must be empty). The caller sets curSeg.
func (l *Log) createSegmentFile(base uint64) error {
	path := l.segmentPath(base)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("replication: log segment %s: create: %w", path, err)
	}
	l.dirDirty = true
	l.cur = f
	l.wbuf = appendSegmentHeader(l.wbuf[:0], base)
	return nil
}

// startSegment creates the segment for base, created at now, and makes it
// current. The caller adds the returned segment to segs.
func (l *Log) startSegment(base uint64, now time.Time) (*segment, error) {
	if err := l.createSegmentFile(base); err != nil {
		return nil, err
	}
	l.curSeg = newSegment(base, now)
	return l.curSeg, nil
}

// roll writes out the current segment, hands it to a background fsync and
// starts the segment for base, created at now.
func (l *Log) roll(base uint64, now time.Time) (*segment, error) {
	if err := l.flush(); err != nil {
		return nil, err
	}
	kept := l.rolled[:0]
	for _, rs := range l.rolled {
		select {
		case <-rs.done:
			if rs.err == nil {
				continue
			}
		default:
		}
		kept = append(kept, rs)
	}
	l.rolled = append(kept, syncAndClose(l.cur, l.segmentPath(l.curSeg.base)))
	l.cur = nil
	return l.startSegment(base, now)
}

// syncAndClose fsyncs and closes f in the background.
func syncAndClose(f *os.File, path string) *rollSync {
	rs := &rollSync{done: make(chan struct{})}
	go func() {
		defer close(rs.done)
		err := f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			rs.err = fmt.Errorf("replication: log segment %s: sync: %w", path, err)
		}
	}()
	return rs
}

// Sync writes out the write buffer and fsyncs the current segment, the
// segments rolled away from since the last Sync and, when segments were
// created, the directory. Entries appended before Sync was called are durable
// when it returns nil. Sync does its fsyncs without the writer lock, so
// Append proceeds meanwhile. A failure fails the log (see Append). It returns
// ErrClosed after Close.
func (l *Log) Sync() error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.wmu.Lock()
	if err := l.writableLocked(); err != nil || l.cur == nil {
		l.wmu.Unlock()
		return err
	}
	if err := l.flush(); err != nil {
		err = l.fail(err)
		l.wmu.Unlock()
		return err
	}
	f, path := l.cur, l.segmentPath(l.curSeg.base)
	l.wmu.Unlock()

	err := f.Sync()
	if errors.Is(err, os.ErrClosed) {
		// Append rolled away from f meanwhile; its background fsync,
		// waited for below, covers what Sync must.
		err = nil
	}
	if err != nil {
		err = fmt.Errorf("replication: log segment %s: sync: %w", path, err)
	}

	l.wmu.Lock()
	rolled, dirty := l.rolled, l.dirDirty
	l.rolled, l.dirDirty = nil, false
	l.wmu.Unlock()
	if werr := waitRolled(rolled); err == nil {
		err = werr
	}
	if dirty {
		if derr := syncDir(l.opts.Dir); err == nil {
			err = derr
		}
	}
	if err != nil {
		l.wmu.Lock()
		err = l.fail(err)
		l.wmu.Unlock()
	}
	return err
}

func waitRolled(rolled []*rollSync) error {
	var first error
	for _, rs := range rolled {
		<-rs.done
		if first == nil {
			first = rs.err
		}
	}
	return first
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("replication: log dir %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("replication: log dir %s: sync: %w", dir, err)
	}
	return nil
}

// First returns the oldest offset still readable, or 0 when the log is
// empty.
func (l *Log) First() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	first, _ := l.boundsLocked()
	return first
}

// Last returns the newest offset in the log, or 0 when the log is empty.
func (l *Log) Last() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, last := l.boundsLocked()
	return last
}

// boundsLocked returns the oldest and newest readable offsets, both 0 when
// the log is empty.
func (l *Log) boundsLocked() (first, last uint64) {
	if first = l.firstLocked(); first == l.next {
		return 0, 0
	}
	return first, l.next - 1
}

// NextOffset returns the offset the next Append must carry: Last()+1, or the
// offset given to Reset or implied by TruncateAfter while the log is empty.
// It returns 0 for a log that never held an entry and was never Reset, which
// accepts any offset.
func (l *Log) NextOffset() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next
}

// Stats returns a snapshot of the log's state.
func (l *Log) Stats() LogStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := LogStats{
		Next:          l.next,
		Segments:      len(l.segs),
		DiskBytes:     l.diskBytes,
		MemoryEntries: l.ring.n,
		MemoryBytes:   l.memBytes,
		Readers:       len(l.readers),
	}
	for _, n := range l.pins {
		st.Pins += n
	}
	st.First, st.Last = l.boundsLocked()
	return st
}

// Pin keeps every entry at or after from in the log, whatever retention
// says, until the returned function is called; it is how a full sync keeps
// the entries the replica will stream from the checkpoint's offset on. Pins
// may overlap; each is released by its own function, which is safe to call
// more than once. Pin does not bring back entries already removed.
func (l *Log) Pin(from uint64) (unpin func()) {
	l.mu.Lock()
	l.pins[from]++
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			if l.pins[from]--; l.pins[from] <= 0 {
				delete(l.pins, from)
			}
			l.mu.Unlock()
		})
	}
}

// EnforceRetention removes the oldest segments that LogOptions.RetainBytes or
// RetainAge no longer keep, except pinned ones and the current segment.
// Append does this after every segment roll; the server calls it
// periodically so that RetainAge also applies to a quiet log. It returns
// ErrClosed after Close, and the first failure to remove a file otherwise.
func (l *Log) EnforceRetention() error {
	// Trimming changes the memory tail, which Append reads under wmu
	// alone: hold wmu too, as Append does when it trims after a roll.
	l.wmu.Lock()
	l.mu.Lock()
	closed := l.closed
	if !closed {
		l.trimLocked(l.opts.now())
	}
	l.mu.Unlock()
	l.wmu.Unlock()
	if closed {
		return ErrClosed
	}
	return l.unlinkPending()
}

// TruncateAfter drops every entry after offset, in memory and on disk, and
// leaves NextOffset() at most offset+1 (the database kept less than the log
// after a crash). Dropping everything leaves an empty log positioned at
// offset+1. Readers that already returned a dropped entry get ErrTrimmed from
// then on; the others carry on. It writes out and fsyncs what it changed
// before returning. A failure fails the log (see Append); it returns
// ErrClosed after Close.
//
// At start-up, with d the offset the database holds, TruncateAfter(d)
// followed by Reset(d+1) when NextOffset() != d+1 (the log lost its
// unsynced tail, or is new) lines the log up with the database.
func (l *Log) TruncateAfter(offset uint64) error {
	return l.exclusive(func() error { return l.truncateAfterLocked(offset) })
}

// exclusive runs fn, which replaces segment files, with syncMu, wmu and
// retMu held, after removing the files retention dropped. It returns
// ErrClosed after Close and the sticky error of a failed log without
// calling fn.
func (l *Log) exclusive(fn func() error) error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	l.retMu.Lock()
	defer l.retMu.Unlock()
	if err := l.unlinkPendingLocked(); err != nil {
		l.log.Warn("replication log: removing old segments failed", "error", err)
	}
	return fn()
}

// truncateAfterLocked is TruncateAfter under exclusive.
func (l *Log) truncateAfterLocked(offset uint64) error {
	// segs changes only with wmu held, which it is: read it freely.
	if l.next == 0 || offset >= l.next-1 {
		return nil
	}
	if l.cur != nil {
		if err := l.flush(); err != nil {
			return l.fail(err)
		}
	}
	segs := l.segs
	i := sort.Search(len(segs), func(j int) bool { return segs[j].base > offset })
	var (
		cut    *segment
		cutPos int64
	)
	if i > 0 && segs[i-1].last > offset {
		cut = segs[i-1]
		pos, err := l.recordPos(cut, offset+1)
		if err != nil {
			return fmt.Errorf("replication: truncate after %d: %w", offset, err)
		}
		cutPos = pos
	}
	dropped := append([]*segment(nil), segs[i:]...)
	ns := newSegment(offset+1, l.opts.now())

	l.mu.Lock()
	for r := range l.readers {
		r.dirty = true
		if r.next > offset+1 {
			r.trimmed = true
		}
	}
	keep := append(make([]*segment, 0, i+1), segs[:i]...)
	for _, s := range dropped {
		l.diskBytes -= s.size
	}
	if cut != nil {
		l.diskBytes -= cut.size - cutPos
		cut.size, cut.last = cutPos, offset
		cut.index = cut.index[:max(cut.indexUpTo(offset), 1)]
	}
	l.segs = append(keep, ns)
	l.diskBytes += ns.size
	l.next = offset + 1
	for l.ring.n > 0 && l.ring.at(l.ring.n-1).offset > offset {
		e := l.ring.popBack()
		l.memBytes -= entryCost(e.data)
	}
	l.wakeLocked()
	l.mu.Unlock()

	return l.replaceFiles(ns, dropped, cut, cutPos)
}

// recordPos returns the file position of the record at off in s, which is
// written out.
func (l *Log) recordPos(s *segment, off uint64) (int64, error) {
	c, err := openCursorAt(l.segmentPath(s.base), s.base, s.size, s.indexFor(off), off)
	if err != nil {
		return 0, err
	}
	c.close()
	return c.pos, nil
}

// replaceFiles carries out on disk what TruncateAfter or Reset decided: the
// current segment is closed, the dropped segments removed, cut truncated to
// cutPos, and ns created, written and made current. Everything is fsynced.
// The caller holds wmu and retMu.
func (l *Log) replaceFiles(ns *segment, dropped []*segment, cut *segment, cutPos int64) error {
	if l.cur != nil {
		err := l.cur.Close()
		l.cur = nil
		if err != nil {
			return l.fail(fmt.Errorf("replication: log segment %s: close: %w", l.segmentPath(l.curSeg.base), err))
		}
	}
	l.wbuf = l.wbuf[:0]
	l.arena = nil
	for _, s := range dropped {
		path := l.segmentPath(s.base)
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return l.fail(fmt.Errorf("replication: log segment %s: remove: %w", path, err))
		}
	}
	if cut != nil {
		path := l.segmentPath(cut.base)
		if err := truncateFile(path, cutPos); err != nil {
			return l.fail(fmt.Errorf("replication: log segment %s: truncate to %d bytes: %w", path, cutPos, err))
		}
	}
	if err := l.createSegmentFile(ns.base); err != nil {
		return l.fail(err)
	}
	l.curSeg = ns
	l.buffered, l.flushed = ns.base-1, ns.base-1
	if err := l.flush(); err != nil {
		return l.fail(err)
	}
	if err := l.cur.Sync(); err != nil {
		return l.fail(fmt.Errorf("replication: log segment %s: sync: %w", l.segmentPath(ns.base), err))
	}
	if err := syncDir(l.opts.Dir); err != nil {
		return l.fail(err)
	}
	l.dirDirty = false
	return nil
}

func truncateFile(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Reset empties the log, removing every segment, so that the next Append
// must carry next (after a replica installs a full sync, its log restarts at
// the checkpoint's offset + 1). The position survives a restart. Every open
// reader gets ErrTrimmed from then on. Pins are kept. A failure fails the log
// (see Append); it returns ErrClosed after Close.
func (l *Log) Reset(next uint64) error {
	if next == 0 {
		return errors.New("replication: reset log to offset 0: offsets start at 1")
	}
	return l.exclusive(func() error { return l.resetLocked(next) })
}

// resetLocked is Reset under exclusive.
func (l *Log) resetLocked(next uint64) error {
	ns := newSegment(next, l.opts.now())
	l.mu.Lock()
	dropped := l.segs
	for r := range l.readers {
		r.trimmed = true
	}
	l.segs = []*segment{ns}
	l.diskBytes = ns.size
	l.next = next
	l.ring = entryRing{}
	l.memBytes = 0
	l.wakeLocked()
	l.mu.Unlock()
	l.log.Info("replication log: reset", "next", next, "dropped_segments", len(dropped))
	return l.replaceFiles(ns, dropped, nil, 0)
}

// wakeLocked wakes every reader waiting for an Append.
func (l *Log) wakeLocked() {
	close(l.notify)
	l.notify = make(chan struct{})
	l.waiting = false
}

// Close writes out and fsyncs the log, closes its files and wakes waiting
// readers, which get ErrClosed, as does every later call on the log. Readers
// must still be closed. Close returns the first error it met; a second Close
// returns ErrClosed.
func (l *Log) Close() error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.wmu.Lock()
	if l.closed {
		l.wmu.Unlock()
		return ErrClosed
	}
	err := l.werr
	if l.cur != nil {
		path := l.segmentPath(l.curSeg.base)
		if err == nil {
			if ferr := l.flush(); ferr != nil {
				err = ferr
			} else if serr := l.cur.Sync(); serr != nil {
				err = fmt.Errorf("replication: log segment %s: sync: %w", path, serr)
			}
		}
		if cerr := l.cur.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("replication: log segment %s: close: %w", path, cerr)
		}
		l.cur = nil
	}
	if rerr := waitRolled(l.rolled); err == nil {
		err = rerr
	}
	l.rolled = nil
	if l.dirDirty {
		if derr := syncDir(l.opts.Dir); err == nil {
			err = derr
		}
	}
	l.mu.Lock()
	l.closed = true
	l.wakeLocked()
	l.mu.Unlock()
	l.wmu.Unlock()

	close(l.janitorStop)
	<-l.janitorDone
	if uerr := l.unlinkPending(); err == nil {
		err = uerr
	}
	l.log.Info("replication log closed", "dir", l.opts.Dir)
	return err
}

// segmentForLocked returns the segment holding off, or nil.
func (l *Log) segmentForLocked(off uint64) *segment {
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].last >= off })
	if i == len(l.segs) || l.segs[i].base > off {
		return nil
	}
	return l.segs[i]
}

// indexFor returns the index entry at or before off.
func (s *segment) indexFor(off uint64) indexEntry {
	i := s.indexUpTo(off)
	if i == 0 {
		return headerEntry(s.base)
	}
	return s.index[i-1]
}

// indexUpTo returns how many index entries are at or before off.
func (s *segment) indexUpTo(off uint64) int {
	return sort.Search(len(s.index), func(i int) bool { return s.index[i].off > off })
}

// headerEntry is the first entry of every segment's index: the first record
// starts right after the header.
func headerEntry(base uint64) indexEntry {
	return indexEntry{off: base, pos: segmentHeaderSize}
}

// indexRecord adds the record at off, which starts at byte pos, to the
// sparse index when it starts indexInterval or more past the last entry.
func indexRecord(index []indexEntry, off uint64, pos int64) []indexEntry {
	if pos-index[len(index)-1].pos >= indexInterval {
		index = append(index, indexEntry{off: off, pos: pos})
	}
	return index
}

// LogReader is a cursor over a Log's entries, created by NewReader. A
// LogReader belongs to one goroutine: Next and Close must not be called
// concurrently (cancel Next's context to stop a waiting Next). Close it when
// done, or it keeps a file open.
type LogReader struct {
	l   *Log
	cur *segmentCursor // owned by the reader's goroutine

	// Guarded by l.mu; next is written only by the reader's goroutine.
	next    uint64 // offset Next returns next
	trimmed bool   // sticky: what the reader needs is gone
	dirty   bool   // segment files changed under the reader: reopen
	closed  bool
}

// NewReader returns a reader whose first entry is from. from may be
// NextOffset() (or 1 on a log that accepts any offset), in which case the
// reader waits for the next Append. It returns an error wrapping ErrTrimmed
// when from is before First() (the caller needs a full sync), one wrapping
// ErrFuture when from is past NextOffset(), and ErrClosed after Close.
func (l *Log) NewReader(from uint64) (*LogReader, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	first, next := l.firstLocked(), l.next
	if next == 0 {
		first, next = 1, 1
	}
	if from < first {
		return nil, fmt.Errorf("replication: read log from offset %d: oldest is %d: %w", from, first, ErrTrimmed)
	}
	if from > next {
		return nil, fmt.Errorf("replication: read log from offset %d: next to be written is %d: %w", from, next, ErrFuture)
	}
	r := &LogReader{l: l, next: from}
	l.readers[r] = struct{}{}
	return r, nil
}

// NextOffset returns the offset of the entry Next returns next.
func (r *LogReader) NextOffset() uint64 {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	return r.next
}

// checkLocked returns the error that stops the reader, if any.
func (r *LogReader) checkLocked() error {
	l := r.l
	switch first := l.firstLocked(); {
	case r.closed, l.closed:
		return ErrClosed
	case r.trimmed:
		return fmt.Errorf("replication: read log at offset %d: %w", r.next, ErrTrimmed)
	case l.next != 0 && r.next < first:
		r.trimmed = true
		return fmt.Errorf("replication: read log at offset %d: oldest is %d: %w", r.next, first, ErrTrimmed)
	}
	return nil
}

// Next returns the next entry: its offset and batch. It waits for an Append
// when the reader has caught up, until ctx ends (then it returns ctx's
// error). Recent entries come from memory, older ones from the segment
// files. The batch belongs to the log: it must not be modified, and stays
// valid for as long as the caller keeps it. Next returns an error wrapping
// ErrTrimmed when the entry it needs was removed (by retention,
// TruncateAfter or Reset), and keeps returning it; ErrClosed when the log or
// the reader is closed; an error wrapping ErrCorrupt when a segment file is
// damaged.
func (r *LogReader) Next(ctx context.Context) (uint64, []byte, error) {
	l := r.l
	for {
		l.mu.Lock()
		if err := r.checkLocked(); err != nil {
			l.mu.Unlock()
			r.dropCursor()
			return 0, nil, err
		}
		if l.next == 0 || r.next >= l.next {
			ch := l.notify
			l.waiting = true
			parked := l.parked
			l.mu.Unlock()
			if parked != nil {
				parked()
			}
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return 0, nil, ctx.Err()
			}
		}
		if data, ok := l.ring.lookup(r.next); ok {
			off := r.next
			r.next++
			l.mu.Unlock()
			r.dropCursor()
			return off, data, nil
		}
		s := l.segmentForLocked(r.next)
		if s == nil {
			err := fmt.Errorf("replication: read log at offset %d: no segment holds it: %w", r.next, ErrCorrupt)
			l.mu.Unlock()
			return 0, nil, err
		}
		if r.dirty {
			r.dirty = false
			r.dropCursor()
		}
		want, base, size, start := r.next, s.base, s.size, s.indexFor(r.next)
		l.mu.Unlock()

		data, err := r.readDisk(want, base, size, start)

		l.mu.Lock()
		if cerr := r.checkLocked(); cerr != nil {
			l.mu.Unlock()
			r.dropCursor()
			return 0, nil, cerr
		}
		if r.dirty {
			// The files changed while we read: what we read may be stale.
			r.dirty = false
			l.mu.Unlock()
			r.dropCursor()
			continue
		}
		if err != nil {
			l.mu.Unlock()
			r.dropCursor()
			return 0, nil, err
		}
		r.next++
		l.mu.Unlock()
		return want, data, nil
	}
}

// readDisk reads the entry at want from the segment at base, reusing the
// reader's open cursor when it is positioned there.
func (r *LogReader) readDisk(want, base uint64, size int64, start indexEntry) ([]byte, error) {
	if r.cur == nil || r.cur.base != base || r.cur.next != want {
		r.dropCursor()
		c, err := openCursorAt(r.l.segmentPath(base), base, size, start, want)
		if err != nil {
			return nil, err
		}
		r.cur = c
	}
	return r.cur.read(size, nil)
}

func (r *LogReader) dropCursor() {
	if r.cur != nil {
		r.cur.close()
		r.cur = nil
	}
}

// Close releases the reader. Later calls to Next return ErrClosed. It
// returns nil; a second Close returns ErrClosed.
func (r *LogReader) Close() error {
	l := r.l
	l.mu.Lock()
	if r.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	r.closed = true
	delete(l.readers, r)
	l.mu.Unlock()
	r.dropCursor()
	return nil
}

// segmentCursor reads one segment file sequentially.
type segmentCursor struct {
	f       *os.File
	br      *bufio.Reader
	path    string
	base    uint64
	next    uint64 // offset of the record at pos
	pos     int64
	scratch []byte
}

// openCursor opens the segment at path, checks its header and positions the
// cursor at start.
func openCursor(path string, base uint64, start indexEntry) (*segmentCursor, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			// Removed by retention since the caller looked.
			return nil, fmt.Errorf("replication: log segment %s: %w", path, ErrTrimmed)
		}
		return nil, fmt.Errorf("replication: log segment %s: %w", path, err)
	}
	var h [segmentHeaderSize]byte
	n, err := f.ReadAt(h[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, fmt.Errorf("replication: log segment %s: read header: %w", path, err)
	}
	hbase, err := decodeSegmentHeader(h[:n])
	if err == nil && hbase != base {
		err = fmt.Errorf("header names base offset %d: %w", hbase, ErrCorrupt)
	}
	if err == nil {
		_, err = f.Seek(start.pos, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("replication: log segment %s: %w", path, err)
	}
	return &segmentCursor{
		f:    f,
		br:   bufio.NewReaderSize(f, readBufferSize),
		path: path,
		base: base,
		next: start.off,
		pos:  start.pos,
	}, nil
}

// openCursorAt opens the segment at path, size bytes long, and positions the
// cursor at the record at off, reading forward from the index entry start.
func openCursorAt(path string, base uint64, size int64, start indexEntry, off uint64) (*segmentCursor, error) {
	c, err := openCursor(path, base, start)
	if err != nil {
		return nil, err
	}
	if err := c.skipTo(off, size); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// read returns the record at the cursor, whose segment is size bytes long,
// and advances past it. The payload goes into dst when it fits.
func (c *segmentCursor) read(size int64, dst []byte) ([]byte, error) {
	p, n, err := readRecord(c.br, size-c.pos, c.next, dst)
	if err == io.EOF {
		err = fmt.Errorf("record missing at the segment's end: %w", ErrCorrupt)
	}
	if err != nil {
		return nil, fmt.Errorf("replication: log segment %s: record %d at byte %d: %w", c.path, c.next, c.pos, err)
	}
	c.pos += n
	c.next++
	return p, nil
}

// skipTo advances the cursor to the record at off.
func (c *segmentCursor) skipTo(off uint64, size int64) error {
	if c.next > off {
		return fmt.Errorf("replication: log segment %s: cursor at %d is past %d", c.path, c.next, off)
	}
	for c.next < off {
		p, err := c.read(size, c.scratch)
		if err != nil {
			return err
		}
		c.scratch = p
	}
	return nil
}

func (c *segmentCursor) close() { c.f.Close() }

// entry is one entry of the memory tail.
type entry struct {
	offset uint64
	data   []byte
}

// entryRing is a growable circular buffer of consecutive entries.
type entryRing struct {
	buf  []entry
	head int
	n    int
}

func (r *entryRing) at(i int) *entry { return &r.buf[(r.head+i)%len(r.buf)] }

func (r *entryRing) push(e entry) {
	if r.n == len(r.buf) {
		r.resize(max(64, 2*len(r.buf)))
	}
	*r.at(r.n) = e
	r.n++
}

func (r *entryRing) popFront() entry {
	p := r.at(0)
	e := *p
	*p = entry{}
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	if len(r.buf) > 1024 && r.n < len(r.buf)/4 {
		r.resize(len(r.buf) / 2) // after a burst of small entries
	}
	return e
}

func (r *entryRing) resize(size int) {
	nb := make([]entry, size)
	for i := 0; i < r.n; i++ {
		nb[i] = *r.at(i)
	}
	r.buf, r.head = nb, 0
}

func (r *entryRing) popBack() entry {
	p := r.at(r.n - 1)
	e := *p
	*p = entry{}
	r.n--
	return e
}

// lookup returns the batch at off if the ring holds it.
func (r *entryRing) lookup(off uint64) ([]byte, bool) {
	if r.n == 0 {
		return nil, false
	}
	first := r.at(0).offset
	if off < first || off-first >= uint64(r.n) {
		return nil, false
	}
	return r.at(int(off - first)).data, true
}
