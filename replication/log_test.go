package replication

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// guard bounds every wait in these tests: a test that hangs fails instead.
const guard = 10 * time.Second

func guardCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return ctx
}

// batchFor returns the deterministic batch of size bytes the tests append at
// off.
func batchFor(off uint64, size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(off*31 + uint64(i)*7)
	}
	if size >= 8 {
		binary.LittleEndian.PutUint64(b, off)
	}
	return b
}

func openLog(t testing.TB, opts LogOptions) *Log {
	t.Helper()
	l, err := OpenLog(opts)
	if err != nil {
		t.Fatalf("OpenLog: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func appendRange(t testing.TB, l *Log, from, to uint64, size func(uint64) int) {
	t.Helper()
	for off := from; off <= to; off++ {
		if err := l.Append(off, batchFor(off, size(off))); err != nil {
			t.Fatalf("Append(%d): %v", off, err)
		}
	}
}

func fixed(n int) func(uint64) int { return func(uint64) int { return n } }

// watchParked returns a channel that receives, up to its capacity n, a
// signal each time one of l's readers is about to wait for an Append. Call it
// before any reader starts.
func watchParked(l *Log, n int) <-chan struct{} {
	parked := make(chan struct{}, n)
	l.parked = func() {
		select {
		case parked <- struct{}{}:
		default:
		}
	}
	return parked
}

// expectRange reads from..to from r and checks every entry.
func expectRange(t testing.TB, r *LogReader, from, to uint64, size func(uint64) int) {
	t.Helper()
	ctx := guardCtx(t)
	for want := from; want <= to; want++ {
		off, b, err := r.Next(ctx)
		if err != nil {
			t.Fatalf("Next (want %d): %v", want, err)
		}
		if off != want {
			t.Fatalf("Next returned offset %d, want %d", off, want)
		}
		if exp := batchFor(off, size(off)); !bytes.Equal(b, exp) {
			t.Fatalf("offset %d: batch of %d bytes differs from the %d appended", off, len(b), len(exp))
		}
	}
}

func readFrom(t testing.TB, l *Log, from, to uint64, size func(uint64) int) {
	t.Helper()
	r, err := l.NewReader(from)
	if err != nil {
		t.Fatalf("NewReader(%d): %v", from, err)
	}
	defer r.Close()
	expectRange(t, r, from, to, size)
}

func checkBounds(t testing.TB, l *Log, first, last, next uint64) {
	t.Helper()
	if got := l.First(); got != first {
		t.Errorf("First() = %d, want %d", got, first)
	}
	if got := l.Last(); got != last {
		t.Errorf("Last() = %d, want %d", got, last)
	}
	if got := l.NextOffset(); got != next {
		t.Errorf("NextOffset() = %d, want %d", got, next)
	}
}

// segmentFiles lists the segment files in dir.
func segmentFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+segmentSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// span is where a record sits in a segment file.
type span struct {
	off      uint64
	pos, len int64
}

func recordSpans(t testing.TB, path string) []span {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	base, err := decodeSegmentHeader(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var spans []span
	pos := int64(segmentHeaderSize)
	for off := base; ; off++ {
		_, n, err := readRecord(bytes.NewReader(data[pos:]), int64(len(data))-pos, off, nil)
		if err == io.EOF {
			return spans
		}
		if err != nil {
			t.Fatalf("%s: record %d: %v", path, off, err)
		}
		spans = append(spans, span{off, pos, n})
		pos += n
	}
}

func TestAppendReadRoundTrip(t *testing.T) {
	varied := func(off uint64) int { return int(off*37) % 300 }
	// everyTenth makes every tenth entry large, the others small.
	everyTenth := func(large, small int) func(uint64) int {
		return func(off uint64) int {
			if off%10 == 0 {
				return large
			}
			return small
		}
	}
	tests := []struct {
		name         string
		segmentBytes int64
		memoryBytes  int64
		first, n     uint64
		size         func(uint64) int
		minSegments  int
	}{
		{name: "one segment, from memory", segmentBytes: 1 << 20, memoryBytes: 1 << 20, first: 1, n: 200, size: fixed(100), minSegments: 1},
		{name: "many segments, from memory", segmentBytes: 1024, memoryBytes: 1 << 20, first: 1, n: 500, size: fixed(100), minSegments: 40},
		{name: "many segments, from disk", segmentBytes: 1024, memoryBytes: 1, first: 1, n: 500, size: fixed(100), minSegments: 40},
		{name: "varied sizes, half in memory", segmentBytes: 2048, memoryBytes: 16 << 10, first: 1, n: 600, size: varied, minSegments: 30},
		{name: "starting at any offset", segmentBytes: 4096, memoryBytes: 1, first: 1_000_000, n: 300, size: fixed(50), minSegments: 3},
		{name: "records larger than a segment", segmentBytes: 100, memoryBytes: 1, first: 1, n: 20, size: fixed(300), minSegments: 20},
		{name: "records larger than the write buffer", segmentBytes: 1 << 20, memoryBytes: 1, first: 1, n: 12, size: fixed(100 << 10), minSegments: 2},
		{name: "entries too large for the memory tail", segmentBytes: 64 << 10, memoryBytes: 16 << 10, first: 1, n: 400, size: everyTenth(5000, 60), minSegments: 3},
		{name: "empty batches", segmentBytes: 256, memoryBytes: 1, first: 1, n: 100, size: fixed(0), minSegments: 5},
		{name: "many entries per index step", segmentBytes: 8 << 20, memoryBytes: 1, first: 1, n: 20000, size: fixed(20), minSegments: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := LogOptions{Dir: dir, SegmentBytes: tc.segmentBytes, MemoryBytes: tc.memoryBytes, RetainBytes: 1 << 40}
			l := openLog(t, opts)
			last := tc.first + tc.n - 1
			appendRange(t, l, tc.first, last, tc.size)
			checkBounds(t, l, tc.first, last, last+1)
			if st := l.Stats(); st.Segments < tc.minSegments {
				t.Errorf("Stats().Segments = %d, want at least %d", st.Segments, tc.minSegments)
			}
			starts := []uint64{tc.first, tc.first + tc.n/3, tc.first + tc.n/2 + 1, last}
			for _, from := range starts {
				readFrom(t, l, from, last, tc.size)
			}
			if err := l.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if got, want := len(segmentFiles(t, dir)), l.Stats().Segments; got != want {
				t.Errorf("%d segment files, Stats says %d", got, want)
			}

			// Reopened, everything comes from disk, and appending goes on.
			l2 := openLog(t, opts)
			checkBounds(t, l2, tc.first, last, last+1)
			for _, from := range starts {
				readFrom(t, l2, from, last, tc.size)
			}
			appendRange(t, l2, last+1, last+10, tc.size)
			readFrom(t, l2, tc.first, last+10, tc.size)
		})
	}
}

func TestReaderWaitsForAppend(t *testing.T) {
	l := openLog(t, LogOptions{Dir: t.TempDir(), SegmentBytes: 512})
	parked := watchParked(l, 64)
	appendRange(t, l, 1, 5, fixed(40))

	type result struct {
		off uint64
		b   []byte
		err error
	}
	const readers = 3
	results := make(chan result, readers)
	for i := 0; i < readers; i++ {
		r, err := l.NewReader(6)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		go func() {
			off, b, err := r.Next(context.Background())
			results <- result{off, b, err}
		}()
	}
	for i := 0; i < readers; i++ {
		select {
		case <-parked:
		case res := <-results:
			t.Fatalf("Next returned before any Append: %+v", res)
		case <-time.After(guard):
			t.Fatal("readers never waited")
		}
	}
	appendRange(t, l, 6, 6, fixed(40))
	for i := 0; i < readers; i++ {
		select {
		case res := <-results:
			if res.err != nil || res.off != 6 || !bytes.Equal(res.b, batchFor(6, 40)) {
				t.Fatalf("woken reader got (%d, %d bytes, %v), want offset 6", res.off, len(res.b), res.err)
			}
		case <-time.After(guard):
			t.Fatal("Append did not wake a waiting reader")
		}
	}
}

func TestReaderContextEnds(t *testing.T) {
	l := openLog(t, LogOptions{Dir: t.TempDir()})
	parked := watchParked(l, 1)
	appendRange(t, l, 1, 3, fixed(10))
	r, err := l.NewReader(4)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := r.Next(ctx)
		done <- err
	}()
	select {
	case <-parked:
	case <-time.After(guard):
		t.Fatal("reader never waited")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Next after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(guard):
		t.Fatal("Next ignored its context")
	}
	// The reader is still usable.
	if got := r.NextOffset(); got != 4 {
		t.Fatalf("reader NextOffset() = %d, want 4", got)
	}
	appendRange(t, l, 4, 4, fixed(10))
	expectRange(t, r, 4, 4, fixed(10))
	if got := r.NextOffset(); got != 5 {
		t.Fatalf("reader NextOffset() = %d, want 5", got)
	}
}

func TestWriteFailureIsSticky(t *testing.T) {
	l := openLog(t, LogOptions{Dir: t.TempDir()})
	appendRange(t, l, 1, 10, fixed(100))
	// The segment file goes away under the log, as a failing disk would.
	l.wmu.Lock()
	l.cur.Close()
	l.wmu.Unlock()
	err := l.Sync()
	if err == nil || !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Sync on a failed file = %v", err)
	}
	if err2 := l.Append(11, nil); err2 != err {
		t.Fatalf("Append after a write failure = %v, want the sticky %v", err2, err)
	}
	if err2 := l.Sync(); err2 != err {
		t.Fatalf("second Sync = %v, want the sticky %v", err2, err)
	}
	readFrom(t, l, 1, 10, fixed(100)) // what was appended is still readable
	if err := l.Close(); err == nil {
		t.Fatal("Close of a failed log returned nil")
	}
}

// TestLargeEntryEmptiesMemoryTail: an entry of more than a quarter of
// MemoryBytes is not kept in memory, and the tail starts again after it.
func TestLargeEntryEmptiesMemoryTail(t *testing.T) {
	l := openLog(t, LogOptions{Dir: t.TempDir(), MemoryBytes: 4 << 10, RetainBytes: 1 << 40})
	appendRange(t, l, 1, 5, fixed(100))
	if st := l.Stats(); st.MemoryEntries != 5 {
		t.Fatalf("after 5 small entries the memory tail holds %d, want 5", st.MemoryEntries)
	}
	if err := l.Append(6, batchFor(6, 2000)); err != nil {
		t.Fatal(err)
	}
	if st := l.Stats(); st.MemoryEntries != 0 || st.MemoryBytes != 0 {
		t.Fatalf("after a large entry the memory tail holds %d entries (%d bytes), want none", st.MemoryEntries, st.MemoryBytes)
	}
	appendRange(t, l, 7, 8, fixed(100))
	if st := l.Stats(); st.MemoryEntries != 2 {
		t.Fatalf("after 2 more small entries the memory tail holds %d, want 2", st.MemoryEntries)
	}
	readFrom(t, l, 1, 8, func(off uint64) int {
		if off == 6 {
			return 2000
		}
		return 100
	})
}

func TestReaderBehindMemoryTailReadsDisk(t *testing.T) {
	l := openLog(t, LogOptions{Dir: t.TempDir(), SegmentBytes: 8 << 10, MemoryBytes: 4 << 10, RetainBytes: 1 << 40})
	size := fixed(100)
	appendRange(t, l, 1, 2000, size)
	st := l.Stats()
	if st.MemoryEntries == 0 || st.MemoryEntries >= 2000 || st.MemoryBytes > 4<<10+writeBufferSize {
		t.Fatalf("memory tail holds %d entries (%d bytes); want some, not all", st.MemoryEntries, st.MemoryBytes)
	}
	r, err := l.NewReader(1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// Append goes on while the reader reads old entries from disk.
	errc := make(chan error, 1)
	go func() {
		for off := uint64(2001); off <= 4000; off++ {
			if err := l.Append(off, batchFor(off, 100)); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	expectRange(t, r, 1, 4000, size)
	if err := <-errc; err != nil {
		t.Fatalf("Append: %v", err)
	}
}

// fakeClock is a settable clock for RetainAge.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestRetentionBySize(t *testing.T) {
	dir := t.TempDir()
	// 100-byte batches make 116-byte records: 8 records per 1 KiB segment.
	l := openLog(t, LogOptions{Dir: dir, SegmentBytes: 1024, RetainBytes: 4096, MemoryBytes: 1})
	size := fixed(100)
	early, err := l.NewReader(1)
	if err != nil {
		t.Fatal(err)
	}
	defer early.Close()
	appendRange(t, l, 1, 200, size)
	if err := l.EnforceRetention(); err != nil { // also waits for the removals Append queued
		t.Fatal(err)
	}
	st := l.Stats()
	if st.DiskBytes > 4096 || st.First <= 1 || st.Last != 200 {
		t.Fatalf("after retention: %+v; want at most 4096 bytes ending at 200", st)
	}
	if got := len(segmentFiles(t, dir)); got != st.Segments {
		t.Fatalf("%d segment files, Stats says %d", got, st.Segments)
	}
	if _, _, err := early.Next(guardCtx(t)); !errors.Is(err, ErrTrimmed) {
		t.Fatalf("Next on a reader whose entries were removed = %v, want ErrTrimmed", err)
	}
	if _, err := l.NewReader(1); !errors.Is(err, ErrTrimmed) {
		t.Fatalf("NewReader(1) = %v, want ErrTrimmed", err)
	}
	readFrom(t, l, st.First, 200, size)

	// A pin keeps everything from its offset, however far the log grows.
	unpin := l.Pin(201)
	unpin2 := l.Pin(250)
	appendRange(t, l, 201, 400, size)
	if first := l.First(); first > 201 {
		t.Fatalf("First() = %d with a pin at 201", first)
	}
	readFrom(t, l, 201, 400, size)
	if st := l.Stats(); st.Pins != 2 {
		t.Fatalf("Stats().Pins = %d, want 2", st.Pins)
	}
	unpin()
	unpin() // a second call is harmless
	if first := l.First(); first > 201 {
		t.Fatalf("unpin alone removed entries: First() = %d", first)
	}
	if err := l.EnforceRetention(); err != nil {
		t.Fatal(err)
	}
	if first := l.First(); first <= 201 || first > 250 {
		t.Fatalf("First() = %d after unpinning 201 with 250 still pinned", first)
	}
	unpin2()
	appendRange(t, l, 401, 420, size) // rolls: retention runs from Append
	if err := l.EnforceRetention(); err != nil {
		t.Fatal(err)
	}
	if st := l.Stats(); st.DiskBytes > 4096 || st.Pins != 0 {
		t.Fatalf("after unpinning: %+v", st)
	}
}

func TestRetentionByAge(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := openLog(t, LogOptions{Dir: dir, SegmentBytes: 1024, RetainBytes: 1 << 40, RetainAge: time.Hour, MemoryBytes: 1, now: clock.Now})
	size := fixed(100)
	appendRange(t, l, 1, 100, size) // about 12 segments, all rolled "now"
	clock.Advance(30 * time.Minute)
	appendRange(t, l, 101, 140, size)
	if err := l.EnforceRetention(); err != nil {
		t.Fatal(err)
	}
	if first := l.First(); first != 1 {
		t.Fatalf("First() = %d before anything is an hour old", first)
	}

	clock.Advance(45 * time.Minute) // the first 100 are now 75 minutes old
	unpin := l.Pin(50)
	if err := l.EnforceRetention(); err != nil {
		t.Fatal(err)
	}
	first := l.First()
	if first == 1 || first > 50 {
		t.Fatalf("First() = %d; want old segments removed up to the pin at 50", first)
	}
	readFrom(t, l, 50, 140, size)
	unpin()
	if err := l.EnforceRetention(); err != nil {
		t.Fatal(err)
	}
	first = l.First()
	if first <= 50 || first > 101 {
		t.Fatalf("First() = %d; want every segment of the first 100 removed, none of the later ones", first)
	}
	readFrom(t, l, first, 140, size)
	if got := len(segmentFiles(t, dir)); got != l.Stats().Segments {
		t.Fatalf("%d segment files, Stats says %d", got, l.Stats().Segments)
	}

	// The current segment stays, however old.
	clock.Advance(24 * time.Hour)
	if err := l.EnforceRetention(); err != nil {
		t.Fatal(err)
	}
	if st := l.Stats(); st.Segments != 1 || st.Last != 140 {
		t.Fatalf("after a day: %+v; want the current segment only", st)
	}
}

// TestRetentionDropsMemoryTail checks that retention drops the entries of the
// segments it removes from the memory tail too, however it stops: the tail
// holds only entries the log claims to have, and readers get ErrTrimmed, not
// a stale batch, for the rest.
func TestRetentionDropsMemoryTail(t *testing.T) {
	size := fixed(100)
	tests := []struct {
		name string
		opts LogOptions
		// run appends entries and applies retention, returning the last
		// offset appended.
		run func(t *testing.T, l *Log, clock *fakeClock) uint64
	}{
		{
			name: "size, on a segment roll",
			opts: LogOptions{SegmentBytes: 1024, RetainBytes: 4096},
			run: func(t *testing.T, l *Log, _ *fakeClock) uint64 {
				appendRange(t, l, 1, 200, size)
				return 200
			},
		},
		{
			name: "size, EnforceRetention after an unpin",
			opts: LogOptions{SegmentBytes: 1024, RetainBytes: 4096},
			run: func(t *testing.T, l *Log, _ *fakeClock) uint64 {
				unpin := l.Pin(1)
				appendRange(t, l, 1, 200, size)
				unpin()
				if err := l.EnforceRetention(); err != nil {
					t.Fatal(err)
				}
				return 200
			},
		},
		{
			name: "age, EnforceRetention",
			opts: LogOptions{SegmentBytes: 1024, RetainBytes: 1 << 40, RetainAge: time.Hour},
			run: func(t *testing.T, l *Log, clock *fakeClock) uint64 {
				appendRange(t, l, 1, 100, size)
				clock.Advance(30 * time.Minute)
				appendRange(t, l, 101, 140, size)
				clock.Advance(45 * time.Minute) // the first 100 are 75 minutes old
				if err := l.EnforceRetention(); err != nil {
					t.Fatal(err)
				}
				return 140
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			opts := tt.opts
			opts.Dir = t.TempDir()
			opts.MemoryBytes = 1 << 20 // room for every entry: only retention drops them
			opts.now = clock.Now
			l := openLog(t, opts)
			early, err := l.NewReader(1)
			if err != nil {
				t.Fatal(err)
			}
			defer early.Close()

			last := tt.run(t, l, clock)
			st := l.Stats()
			if st.First <= 1 || st.Last != last {
				t.Fatalf("after retention: %+v; want entries removed from the front, ending at %d", st, last)
			}
			entries := int(st.Last - st.First + 1)
			if st.MemoryEntries != entries || st.MemoryBytes != int64(entries)*entryCost(make([]byte, 100)) {
				t.Fatalf("memory tail holds %d entries (%d bytes); the log holds %d entries, %d to %d",
					st.MemoryEntries, st.MemoryBytes, entries, st.First, st.Last)
			}
			l.mu.Lock()
			oldest := l.ring.at(0).offset
			l.mu.Unlock()
			if oldest != st.First {
				t.Fatalf("memory tail starts at %d, First() = %d", oldest, st.First)
			}
			if _, _, err := early.Next(guardCtx(t)); !errors.Is(err, ErrTrimmed) {
				t.Fatalf("Next at offset 1 after retention = %v, want ErrTrimmed", err)
			}
			if _, err := l.NewReader(st.First - 1); !errors.Is(err, ErrTrimmed) {
				t.Fatalf("NewReader(%d) = %v, want ErrTrimmed", st.First-1, err)
			}
			readFrom(t, l, st.First, last, size)
		})
	}
}

// TestAppendRacesEnforceRetention runs EnforceRetention, which drops entries
// from the memory tail, while Append, which reads the tail's accounting,
// goes on. Under the race detector it checks that the two are synchronized.
func TestAppendRacesEnforceRetention(t *testing.T) {
	// Every reading of the clock is an hour after the last, so every
	// segment but the current one is too old when EnforceRetention runs,
	// and its entries are still in the (large) memory tail.
	var ticks atomic.Int64
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return start.Add(time.Duration(ticks.Add(1)) * time.Hour) }
	l := openLog(t, LogOptions{Dir: t.TempDir(), SegmentBytes: 1024, RetainBytes: 1 << 40,
		RetainAge: time.Minute, MemoryBytes: 1 << 20, now: now})
	size := fixed(100)
	const last = 2000

	stop := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				errc <- nil
				return
			default:
			}
			if err := l.EnforceRetention(); err != nil {
				errc <- err
				return
			}
		}
	}()
	appendRange(t, l, 1, last, size)
	close(stop)
	if err := <-errc; err != nil {
		t.Fatalf("EnforceRetention: %v", err)
	}
	if err := l.EnforceRetention(); err != nil {
		t.Fatal(err)
	}
	st := l.Stats()
	if st.Last != last || st.Segments != 1 || st.MemoryEntries != int(st.Last-st.First+1) {
		t.Fatalf("after retention: %+v; want the current segment only, all of it in memory", st)
	}
	readFrom(t, l, st.First, last, size)
}

func TestReopenAfterCleanClose(t *testing.T) {
	dir := t.TempDir()
	opts := LogOptions{Dir: dir, SegmentBytes: 2048}
	l := openLog(t, opts)
	appendRange(t, l, 7, 300, fixed(64))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, opts)
	checkBounds(t, l, 7, 300, 301)
	if err := l.Append(302, nil); !errors.Is(err, ErrOutOfOrder) {
		t.Fatalf("Append(302) after reopen = %v, want ErrOutOfOrder", err)
	}
	appendRange(t, l, 301, 310, fixed(64))
	readFrom(t, l, 7, 310, fixed(64))
}

// corruptLastSegment builds a log of several segments and hands the path of
// the last one, and the spans of its records, to damage.
func buildSegments(t *testing.T, opts LogOptions, last uint64) []string {
	t.Helper()
	l := openLog(t, opts)
	appendRange(t, l, 1, last, fixed(100))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	files := segmentFiles(t, opts.Dir)
	if len(files) < 3 {
		t.Fatalf("only %d segments", len(files))
	}
	return files
}

func flipByte(t *testing.T, path string, pos int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[pos] ^= 0x40
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRecoverDamagedTail(t *testing.T) {
	// Segments of 1 KiB hold 8 records of 116 bytes; 30 records make 4
	// segments, the last holding 25..30.
	tests := []struct {
		name   string
		damage func(t *testing.T, path string, spans []span)
		last   uint64 // Last() after recovery
	}{
		{"torn in the last record's header", func(t *testing.T, path string, s []span) {
			truncate(t, path, s[len(s)-1].pos+5)
		}, 29},
		{"torn after the last record's header", func(t *testing.T, path string, s []span) {
			truncate(t, path, s[len(s)-1].pos+recordHeaderSize)
		}, 29},
		{"torn in the last record's payload", func(t *testing.T, path string, s []span) {
			truncate(t, path, s[len(s)-1].pos+s[len(s)-1].len-1)
		}, 29},
		{"torn in the middle of the segment", func(t *testing.T, path string, s []span) {
			truncate(t, path, s[2].pos+50)
		}, 26},
		{"torn header, no record survives", func(t *testing.T, path string, s []span) {
			truncate(t, path, 10)
		}, 24},
		{"header never written", func(t *testing.T, path string, s []span) {
			truncate(t, path, 0)
		}, 24},
		{"zeroed header", func(t *testing.T, path string, s []span) {
			data, _ := os.ReadFile(path)
			copy(data, make([]byte, segmentHeaderSize))
			os.WriteFile(path, data[:segmentHeaderSize], 0o644)
		}, 24},
		{"flipped byte in the last payload", func(t *testing.T, path string, s []span) {
			flipByte(t, path, s[len(s)-1].pos+recordHeaderSize+40)
		}, 29},
		{"flipped byte in the last checksum", func(t *testing.T, path string, s []span) {
			flipByte(t, path, s[len(s)-1].pos+5)
		}, 29},
		{"flipped byte in the last length", func(t *testing.T, path string, s []span) {
			flipByte(t, path, s[len(s)-1].pos+1)
		}, 29},
		{"flipped byte in the last offset", func(t *testing.T, path string, s []span) {
			flipByte(t, path, s[len(s)-1].pos+9)
		}, 29},
		{"flipped byte in the first record of the segment", func(t *testing.T, path string, s []span) {
			flipByte(t, path, s[0].pos+recordHeaderSize+3)
		}, 24},
		{"garbage after the last record", func(t *testing.T, path string, s []span) {
			f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			f.Write([]byte("garbage"))
			f.Close()
		}, 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := LogOptions{Dir: t.TempDir(), SegmentBytes: 1024}
			files := buildSegments(t, opts, 30)
			lastFile := files[len(files)-1]
			tc.damage(t, lastFile, recordSpans(t, lastFile))

			l := openLog(t, opts)
			checkBounds(t, l, 1, tc.last, tc.last+1)
			readFrom(t, l, 1, tc.last, fixed(100))
			// Appending resumes right after what survived, and all of it
			// reads back, before and after another reopen.
			appendRange(t, l, tc.last+1, 40, fixed(100))
			readFrom(t, l, 1, 40, fixed(100))
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = openLog(t, opts)
			checkBounds(t, l, 1, 40, 41)
			readFrom(t, l, 1, 40, fixed(100))
		})
	}
}

func truncate(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

func TestRefuseDamagedMiddle(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, files []string)
		want   error
	}{
		{"flipped byte in a middle segment", func(t *testing.T, files []string) {
			s := recordSpans(t, files[1])
			flipByte(t, files[1], s[3].pos+recordHeaderSize+7)
		}, ErrCorrupt},
		{"torn middle segment", func(t *testing.T, files []string) {
			s := recordSpans(t, files[1])
			truncate(t, files[1], s[len(s)-1].pos+3)
		}, ErrCorrupt},
		{"missing middle segment", func(t *testing.T, files []string) {
			os.Remove(files[1])
		}, ErrCorrupt},
		{"middle segment's header damaged", func(t *testing.T, files []string) {
			flipByte(t, files[1], 18)
		}, ErrCorrupt},
		{"middle segment renamed", func(t *testing.T, files []string) {
			os.Rename(files[1], filepath.Join(filepath.Dir(files[1]), segmentName(12)))
		}, ErrCorrupt},
		{"last segment of a newer format", func(t *testing.T, files []string) {
			flipByte(t, files[len(files)-1], 9)
		}, ErrVersion},
		{"last segment with a foreign magic", func(t *testing.T, files []string) {
			flipByte(t, files[len(files)-1], 0)
		}, ErrCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := LogOptions{Dir: t.TempDir(), SegmentBytes: 1024}
			files := buildSegments(t, opts, 30)
			tc.damage(t, files)
			l, err := OpenLog(opts)
			if err == nil {
				l.Close()
				t.Fatalf("OpenLog succeeded on a damaged log")
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("OpenLog = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestTruncateAfter(t *testing.T) {
	// 1 KiB segments of 8 records: 1-8, 9-16, 17-24, 25-30.
	tests := []struct {
		name   string
		offset uint64
		first  uint64 // First() after, 0 when empty
	}{
		{"within the last segment", 27, 1},
		{"at the end of a segment", 16, 1},
		{"at the start of a segment", 17, 1},
		{"within an earlier segment", 5, 1},
		{"before the first entry", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := LogOptions{Dir: t.TempDir(), SegmentBytes: 1024, MemoryBytes: 600}
			l := openLog(t, opts)
			size := fixed(100)
			appendRange(t, l, 1, 30, size)
			behind, _ := l.NewReader(1)
			defer behind.Close()
			if tc.offset > 0 {
				expectRange(t, behind, 1, tc.offset, size) // read up to the cut, not past it
			}
			ahead, _ := l.NewReader(31)
			defer ahead.Close()
			var past *LogReader
			if tc.offset+2 <= 30 {
				past, _ = l.NewReader(1)
				defer past.Close()
				expectRange(t, past, 1, tc.offset+1, size) // returned a dropped entry
			}

			if err := l.TruncateAfter(tc.offset); err != nil {
				t.Fatalf("TruncateAfter(%d): %v", tc.offset, err)
			}
			last := tc.offset
			if tc.first == 0 {
				checkBounds(t, l, 0, 0, tc.offset+1)
			} else {
				checkBounds(t, l, tc.first, last, last+1)
				readFrom(t, l, tc.first, last, size)
			}
			for _, r := range []*LogReader{ahead, past} {
				if r == nil {
					continue
				}
				if _, _, err := r.Next(guardCtx(t)); !errors.Is(err, ErrTrimmed) {
					t.Fatalf("reader past the cut: Next = %v, want ErrTrimmed", err)
				}
			}
			if err := l.Append(tc.offset+2, nil); !errors.Is(err, ErrOutOfOrder) {
				t.Fatalf("Append past the cut = %v, want ErrOutOfOrder", err)
			}
			// New entries differ from the dropped ones.
			newSize := fixed(77)
			appendRange(t, l, tc.offset+1, 40, newSize)
			both := func(off uint64) int {
				if off <= tc.offset {
					return 100
				}
				return 77
			}
			expectRange(t, behind, tc.offset+1, 40, newSize)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = openLog(t, opts)
			checkBounds(t, l, max(tc.first, 1), 40, 41)
			readFrom(t, l, max(tc.first, 1), 40, both)
		})
	}
}

func TestLineUpWithDatabase(t *testing.T) {
	// The start-up recipe of TruncateAfter's documentation.
	tests := []struct {
		name        string
		logged      uint64 // entries 1..logged in the log; 0: a fresh log
		db          uint64 // offset the database holds
		first, last uint64 // readable afterwards
	}{
		{"log ahead of the database", 30, 20, 1, 20},
		{"log equal to the database", 30, 30, 1, 30},
		{"log behind the database", 30, 40, 0, 0},
		{"database empty", 30, 0, 0, 0},
		{"fresh log, fresh database", 0, 0, 0, 0},
		{"fresh log, database with data", 0, 7, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := LogOptions{Dir: t.TempDir(), SegmentBytes: 1024}
			l := openLog(t, opts)
			if tc.logged > 0 {
				appendRange(t, l, 1, tc.logged, fixed(100))
			}
			if err := l.TruncateAfter(tc.db); err != nil {
				t.Fatal(err)
			}
			if l.NextOffset() != tc.db+1 {
				if err := l.Reset(tc.db + 1); err != nil {
					t.Fatal(err)
				}
			}
			checkBounds(t, l, tc.first, tc.last, tc.db+1)
			if tc.first > 0 {
				readFrom(t, l, tc.first, tc.last, fixed(100))
			}
			r, err := l.NewReader(tc.db + 1)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			appendRange(t, l, tc.db+1, tc.db+3, fixed(5))
			expectRange(t, r, tc.db+1, tc.db+3, fixed(5))
		})
	}
}

func TestTruncateAfterNothingToDrop(t *testing.T) {
	l := openLog(t, LogOptions{Dir: t.TempDir(), SegmentBytes: 1024})
	if err := l.TruncateAfter(10); err != nil {
		t.Fatalf("TruncateAfter on a fresh log: %v", err)
	}
	checkBounds(t, l, 0, 0, 0)
	appendRange(t, l, 1, 20, fixed(100))
	r, _ := l.NewReader(21)
	defer r.Close()
	for _, off := range []uint64{20, 25} {
		if err := l.TruncateAfter(off); err != nil {
			t.Fatalf("TruncateAfter(%d): %v", off, err)
		}
		checkBounds(t, l, 1, 20, 21)
	}
	appendRange(t, l, 21, 21, fixed(100))
	expectRange(t, r, 21, 21, fixed(100))
}

func TestTruncateAfterRacesDiskReader(t *testing.T) {
	// A reader reading segment files while TruncateAfter rewrites them
	// either gets the entries that were kept, ErrTrimmed, or the new ones:
	// never a stale or corrupt one.
	l := openLog(t, LogOptions{Dir: t.TempDir(), SegmentBytes: 2048, MemoryBytes: 1})
	appendRange(t, l, 1, 500, fixed(100))
	r, _ := l.NewReader(1)
	defer r.Close()
	done := make(chan error, 1)
	go func() {
		ctx := guardCtx(t)
		var sawOld, sawNew bool
		for {
			off, b, err := r.Next(ctx)
			if errors.Is(err, ErrTrimmed) {
				done <- nil
				return
			}
			if err != nil {
				done <- err
				return
			}
			switch {
			case off <= 250 && bytes.Equal(b, batchFor(off, 100)):
			case off > 250 && bytes.Equal(b, batchFor(off, 33)) && !sawOld:
				sawNew = true
			case off > 250 && bytes.Equal(b, batchFor(off, 100)) && !sawNew:
				sawOld = true // read before the truncation; ErrTrimmed must follow
			default:
				done <- fmt.Errorf("offset %d: unexpected batch of %d bytes (old seen %v, new seen %v)", off, len(b), sawOld, sawNew)
				return
			}
			if off == 600 {
				done <- nil
				return
			}
		}
	}()
	if err := l.TruncateAfter(250); err != nil {
		t.Fatal(err)
	}
	appendRange(t, l, 251, 600, fixed(33))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestReset(t *testing.T) {
	dir := t.TempDir()
	opts := LogOptions{Dir: dir, SegmentBytes: 1024}
	l := openLog(t, opts)
	appendRange(t, l, 1, 50, fixed(100))
	mid, _ := l.NewReader(20)
	defer mid.Close()
	waiting, _ := l.NewReader(51)
	defer waiting.Close()
	waitErr := make(chan error, 1)
	go func() {
		_, _, err := waiting.Next(guardCtx(t))
		waitErr <- err
	}()

	if err := l.Reset(0); err == nil {
		t.Fatal("Reset(0) succeeded")
	}
	if err := l.Reset(1000); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	checkBounds(t, l, 0, 0, 1000)
	if st := l.Stats(); st.Segments != 1 || st.MemoryEntries != 0 {
		t.Fatalf("after Reset: %+v", st)
	}
	if got := segmentFiles(t, dir); len(got) != 1 || filepath.Base(got[0]) != segmentName(1000) {
		t.Fatalf("segment files after Reset: %v", got)
	}
	if _, _, err := mid.Next(guardCtx(t)); !errors.Is(err, ErrTrimmed) {
		t.Fatalf("Next on an old reader = %v, want ErrTrimmed", err)
	}
	if err := <-waitErr; !errors.Is(err, ErrTrimmed) {
		t.Fatalf("waiting reader woken by Reset: %v, want ErrTrimmed", err)
	}
	for _, off := range []uint64{1, 51, 999, 1001} {
		if err := l.Append(off, nil); !errors.Is(err, ErrOutOfOrder) {
			t.Fatalf("Append(%d) after Reset(1000) = %v, want ErrOutOfOrder", off, err)
		}
	}
	for _, from := range []uint64{1, 999} {
		if _, err := l.NewReader(from); !errors.Is(err, ErrTrimmed) {
			t.Fatalf("NewReader(%d) = %v, want ErrTrimmed", from, err)
		}
	}
	if _, err := l.NewReader(1001); !errors.Is(err, ErrFuture) {
		t.Fatalf("NewReader(1001) = %v, want ErrFuture", err)
	}

	// The position survives a restart.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, opts)
	checkBounds(t, l, 0, 0, 1000)
	r, err := l.NewReader(1000)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	appendRange(t, l, 1000, 1020, fixed(100))
	expectRange(t, r, 1000, 1020, fixed(100))
	checkBounds(t, l, 1000, 1020, 1021)
}

func TestFreshLogReader(t *testing.T) {
	l := openLog(t, LogOptions{Dir: t.TempDir()})
	checkBounds(t, l, 0, 0, 0)
	if _, err := l.NewReader(2); !errors.Is(err, ErrFuture) {
		t.Fatalf("NewReader(2) on a fresh log = %v, want ErrFuture", err)
	}
	r, err := l.NewReader(1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The first entry may carry any offset; a reader that wanted 1 has
	// missed 1..4.
	appendRange(t, l, 5, 6, fixed(10))
	if _, _, err := r.Next(guardCtx(t)); !errors.Is(err, ErrTrimmed) {
		t.Fatalf("Next = %v, want ErrTrimmed", err)
	}
	readFrom(t, l, 5, 6, fixed(10))
}

func TestErrors(t *testing.T) {
	l := openLog(t, LogOptions{Dir: t.TempDir(), SegmentBytes: 1024, RetainBytes: 2048, MemoryBytes: 1})
	if err := l.Append(0, nil); !errors.Is(err, ErrOutOfOrder) {
		t.Errorf("Append(0) = %v, want ErrOutOfOrder", err)
	}
	appendRange(t, l, 1, 100, fixed(100))
	first := l.First()
	for _, tc := range []struct {
		off  uint64
		want error
	}{{100, ErrOutOfOrder}, {99, ErrOutOfOrder}, {102, ErrOutOfOrder}, {0, ErrOutOfOrder}} {
		if err := l.Append(tc.off, nil); !errors.Is(err, tc.want) {
			t.Errorf("Append(%d) = %v, want %v", tc.off, err, tc.want)
		}
	}
	for _, tc := range []struct {
		from uint64
		want error
	}{{0, ErrTrimmed}, {1, ErrTrimmed}, {first - 1, ErrTrimmed}, {102, ErrFuture}, {1 << 62, ErrFuture}, {first, nil}, {101, nil}} {
		r, err := l.NewReader(tc.from)
		if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
			t.Errorf("NewReader(%d) = %v, want %v", tc.from, err, tc.want)
		}
		if r != nil {
			r.Close()
		}
	}

	r, _ := l.NewReader(first)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Next(guardCtx(t)); !errors.Is(err, ErrClosed) {
		t.Errorf("Next after Close = %v, want ErrClosed", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("reader Close after log Close = %v", err)
	}
	if err := r.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second reader Close = %v, want ErrClosed", err)
	}
	for name, err := range map[string]error{
		"Append":           l.Append(101, nil),
		"Sync":             l.Sync(),
		"TruncateAfter":    l.TruncateAfter(5),
		"Reset":            l.Reset(5),
		"EnforceRetention": l.EnforceRetention(),
		"Close":            l.Close(),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
	if _, err := l.NewReader(101); !errors.Is(err, ErrClosed) {
		t.Errorf("NewReader after Close = %v, want ErrClosed", err)
	}
}

func TestWaitingReaderClosedLog(t *testing.T) {
	l := openLog(t, LogOptions{Dir: t.TempDir()})
	appendRange(t, l, 1, 1, fixed(10))
	r, _ := l.NewReader(2)
	defer r.Close()
	done := make(chan error, 1)
	go func() {
		_, _, err := r.Next(guardCtx(t))
		done <- err
	}()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("waiting Next after Close = %v, want ErrClosed", err)
	}
}

func TestOptions(t *testing.T) {
	o := (&LogOptions{Dir: "x"}).EnsureDefaults()
	if o.SegmentBytes != 64<<20 || o.RetainBytes != 1<<30 || o.MemoryBytes != 64<<20 || o.RetainAge != 0 || o.Logger == nil {
		t.Fatalf("defaults: %+v", o)
	}
	for _, bad := range []LogOptions{
		{},
		{Dir: "x", SegmentBytes: 10},
		{Dir: "x", RetainBytes: -1},
		{Dir: "x", RetainAge: -time.Second},
		{Dir: "x", MemoryBytes: -1},
	} {
		if _, err := OpenLog(bad); err == nil {
			t.Errorf("OpenLog(%+v) succeeded", bad)
		}
	}
}

func TestSyncWritesEverything(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, LogOptions{Dir: dir, SegmentBytes: 4096})
	appendRange(t, l, 1, 100, fixed(100))
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	// Every record is in the files, read behind the log's back.
	next := uint64(1)
	for _, path := range segmentFiles(t, dir) {
		for _, s := range recordSpans(t, path) {
			if s.off != next {
				t.Fatalf("%s: record %d, want %d", path, s.off, next)
			}
			next++
		}
	}
	if next != 101 {
		t.Fatalf("files hold records up to %d, want 100", next-1)
	}
}

func TestConcurrentUse(t *testing.T) {
	l := openLog(t, LogOptions{Dir: t.TempDir(), SegmentBytes: 4096, RetainBytes: 64 << 10, MemoryBytes: 8 << 10})
	const last = 5000
	size := func(off uint64) int { return int(off % 200) }
	appendRange(t, l, 1, 10, size)
	var wg sync.WaitGroup
	errc := make(chan error, 16)
	stop := make(chan struct{})
	// Readers 0 and 1 may fall off the retained log; readers 2 and 3 pin
	// their position as they go, so they never do.
	for i, from := range []uint64{1, 5, 11, 11} {
		pinned := i >= 2
		unpin := func() {}
		if pinned {
			unpin = l.Pin(from)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { unpin() }()
			r, err := l.NewReader(from)
			if errors.Is(err, ErrTrimmed) && !pinned {
				return // the appends outran this goroutine's start
			}
			if err != nil {
				errc <- err
				return
			}
			defer r.Close()
			ctx := guardCtx(t)
			for want := from; want <= last; want++ {
				off, b, err := r.Next(ctx)
				if errors.Is(err, ErrTrimmed) && !pinned {
					return
				}
				if err != nil {
					errc <- fmt.Errorf("reader %d at %d: %w", i, want, err)
					return
				}
				if off != want || !bytes.Equal(b, batchFor(off, size(off))) {
					errc <- fmt.Errorf("reader %d: got offset %d, want %d", i, off, want)
					return
				}
				if pinned && off%100 == 0 {
					old := unpin
					unpin = l.Pin(off + 1)
					old()
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := l.Sync(); err != nil {
				errc <- err
				return
			}
			if err := l.EnforceRetention(); err != nil {
				errc <- err
				return
			}
			unpin := l.Pin(l.Last())
			_ = l.Stats()
			unpin()
		}
	}()
	appendRange(t, l, 11, last, size)
	close(stop)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}

func FuzzScanSegment(f *testing.F) {
	seg := appendSegmentHeader(nil, 7)
	for off := uint64(7); off < 12; off++ {
		p := batchFor(off, int(off*3))
		seg = appendRecordHeader(seg, off, p)
		seg = append(seg, p...)
	}
	f.Add(seg)
	f.Add(seg[:len(seg)-3])
	f.Add(seg[:segmentHeaderSize])
	f.Add(seg[:20])
	f.Fuzz(func(t *testing.T, data []byte) {
		var got []byte
		base, s, err := scanSegment(bytes.NewReader(data), int64(len(data)), func(off uint64, p []byte) {
			got = appendRecordHeader(got, off, p)
			got = append(got, p...)
		})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
				t.Fatalf("scan error wraps neither ErrCorrupt nor ErrVersion: %v", err)
			}
			return
		}
		if s.valid > int64(len(data)) || s.valid < segmentHeaderSize {
			t.Fatalf("valid prefix %d of %d bytes", s.valid, len(data))
		}
		if (s.tailErr == nil) != (s.valid == int64(len(data))) {
			t.Fatalf("tail error %v with %d of %d bytes valid", s.tailErr, s.valid, len(data))
		}
		if s.tailErr != nil && !errors.Is(s.tailErr, ErrCorrupt) {
			t.Fatalf("tail error does not wrap ErrCorrupt: %v", s.tailErr)
		}
		// What the scan accepted encodes back to the same bytes.
		want := data[:s.valid]
		if enc := append(appendSegmentHeader(nil, base), got...); !bytes.Equal(enc, want) {
			t.Fatalf("re-encoded %d bytes differ from the %d valid ones", len(enc), len(want))
		}
		if len(s.index) == 0 || s.index[0] != (indexEntry{off: base, pos: segmentHeaderSize}) {
			t.Fatalf("index %v does not start at the header's end", s.index)
		}
		for _, e := range s.index {
			if e.pos > s.valid || e.off < base || e.off > s.last+1 {
				t.Fatalf("index entry %+v outside the valid records", e)
			}
		}
	})
}

func FuzzReadRecord(f *testing.F) {
	rec := appendRecordHeader(nil, 42, []byte("payload"))
	rec = append(rec, "payload"...)
	f.Add(rec, uint64(42))
	f.Add(rec, uint64(43))
	f.Add(rec[:recordHeaderSize+2], uint64(42))
	f.Add([]byte{}, uint64(1))
	f.Fuzz(func(t *testing.T, data []byte, want uint64) {
		p, n, err := readRecord(bytes.NewReader(data), int64(len(data)), want, nil)
		if err != nil {
			if err != io.EOF && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error wraps neither io.EOF nor ErrCorrupt: %v", err)
			}
			return
		}
		if n > int64(len(data)) {
			t.Fatalf("record of %d bytes in %d", n, len(data))
		}
		enc := append(appendRecordHeader(nil, want, p), p...)
		if !bytes.Equal(enc, data[:n]) {
			t.Fatalf("re-encoded record differs")
		}
	})
}

func BenchmarkAppend(b *testing.B) {
	for _, bc := range []struct {
		name   string
		reader bool
	}{{"100B", false}, {"100B/caught-up reader", true}} {
		b.Run(bc.name, func(b *testing.B) {
			l := openLog(b, LogOptions{Dir: b.TempDir(), RetainBytes: 256 << 20})
			batch := batchFor(1, 100)
			readerDone := make(chan struct{})
			if bc.reader {
				r, err := l.NewReader(1)
				if err != nil {
					b.Fatal(err)
				}
				go func() {
					defer close(readerDone)
					defer r.Close()
					for {
						if _, _, err := r.Next(context.Background()); err != nil {
							return
						}
					}
				}()
			} else {
				close(readerDone)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(batch)))
			off := uint64(0)
			for b.Loop() {
				off++
				if err := l.Append(off, batch); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			l.Close()
			<-readerDone
		})
	}
}
