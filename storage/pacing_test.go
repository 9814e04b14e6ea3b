package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestPacedFSWrapsOnlySSTables checks that the engine's filesystem paces
// sstable files only, and that a paced file writes every byte it is given.
// Pacing acts only with one P, so the test runs with one.
func TestPacedFSWrapsOnlySSTables(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	e := openTest(t, t.TempDir())
	defer e.Close()
	e.noteApply() // a recent write: pauses are due
	fs := engineFS{FS: vfs.Default, e: e}
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		paced bool
	}{{"000012.sst", true}, {"000013.log", false}, {"MANIFEST-000001", false}} {
		f, err := fs.Create(filepath.Join(dir, c.name), vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		if _, paced := f.(*pacedFile); paced != c.paced {
			t.Errorf("%s: paced = %v, want %v", c.name, paced, c.paced)
		}
		want := make([]byte, 50_123)
		for i := range want {
			want[i] = byte(i)
		}
		for p := want; len(p) > 0; {
			n := min(len(p), 5000)
			if w, err := f.Write(p[:n]); w != n || err != nil {
				t.Fatalf("%s: Write = %d, %v", c.name, w, err)
			}
			p = p[n:]
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := vfs.Default.Open(filepath.Join(dir, c.name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: read back %d bytes (err %v), want the %d written", c.name, len(got), err, len(want))
		}
	}
}

// TestPauseDue checks when paced background work leaves the P idle:
// only while batches are being applied, and at most once per
// paceInterval.
func TestPauseDue(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		now, lastApply, lastPause time.Duration
		want                      bool
	}{
		{now: 10 * ms, lastApply: 10 * ms, lastPause: 0, want: true},
		{now: 10 * ms, lastApply: 9 * ms, lastPause: 10*ms - paceInterval, want: true},
		{now: 10 * ms, lastApply: 10 * ms, lastPause: 10*ms - paceInterval + 1, want: false}, // paused lately
		{now: 10 * ms, lastApply: 10*ms - paceWindow, lastPause: 0, want: false},             // no recent batch
		{now: 10 * ms, lastApply: 10*ms - paceWindow + 1, lastPause: 0, want: true},
	} {
		if got := pauseDue(c.now, c.lastApply, c.lastPause); got != c.want {
			t.Errorf("pauseDue(now %v, last apply %v, last pause %v) = %v, want %v", c.now, c.lastApply, c.lastPause, got, c.want)
		}
	}
}

// TestPacedFilterKeepsBloomFilters checks that every level's tables are
// built with the paced filter policy, that it is Pebble's bloom filter
// under its own name (tables written before it
// existed keep their filters), that it builds the same filters, and that
// a flush of many more than paceKeys keys through it keeps every key
// readable while a missing key is still filtered out.
func TestPacedFilterKeepsBloomFilters(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	e := openTest(t, t.TempDir())
	defer e.Close()
	for i, l := range e.pebbleOptions().Levels {
		if _, ok := l.FilterPolicy.(pacedFilterPolicy); !ok {
			t.Fatalf("level %d's filter policy is %T, not the paced one", i, l.FilterPolicy)
		}
	}
	plain := bloom.FilterPolicy(10)
	paced := pacedFilterPolicy{FilterPolicy: plain, e: e}
	if paced.Name() != plain.Name() {
		t.Fatalf("paced filter is named %q, bloom %q", paced.Name(), plain.Name())
	}
	pw := paced.NewWriter(pebble.TableFilter)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 7, paceFilterKeys + 1, 50_000} {
		bw := plain.NewWriter(pebble.TableFilter)
		var keys [][]byte
		for i := range n {
			k := make([]byte, rng.IntN(41)) // every tail length, bytes over 127 too
			for j := range k {
				k[j] = byte(rng.Uint32())
			}
			if i > 0 && rng.IntN(10) == 0 {
				k = keys[i-1] // a repeated key counts once
			}
			keys = append(keys, k)
			pw.AddKey(k)
			bw.AddKey(k)
		}
		// Finish appends: into a buffer with a prefix and spare capacity
		// holding other bytes, and into nil.
		buf := append(make([]byte, 0, 4096), "prefix"...)
		copy(buf[:cap(buf)][len(buf):], bytes.Repeat([]byte{0xff}, 100))
		p, b := pw.Finish(buf), bw.Finish(nil)
		if !bytes.HasPrefix(p, []byte("prefix")) || !bytes.Equal(p[len("prefix"):], b) {
			t.Fatalf("%d keys: paced filter differs from bloom's (%d and %d bytes)", n, len(p)-len("prefix"), len(b))
		}
		for _, k := range keys {
			if !plain.MayContain(pebble.TableFilter, b, k) {
				t.Fatalf("%d keys: the filter does not contain key %x", n, k)
			}
		}
	}
	e.noteApply() // a recent write: pauses are due
	const n = 3*paceKeys + 7
	b := e.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
	for i := range n {
		b.PutMeta("", fmt.Appendf(nil, "k%d", i), nil, Metadata{Type: TypeString, Value: []byte("v")})
	}
	if _, err := e.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := e.db.Flush(); err != nil {
		t.Fatal(err)
	}
	e.rows.clear()
	for i := range n {
		if _, found, err := e.GetMeta("", fmt.Appendf(nil, "k%d", i)); !found || err != nil {
			t.Fatalf("k%d after the flush: found %v, %v", i, found, err)
		}
	}
	if _, found, err := e.GetMeta("", []byte("missing")); found || err != nil {
		t.Fatalf("missing key: found %v, %v", found, err)
	}
}

// FuzzPacedFilter checks that the paced filter writer builds the bytes
// Pebble's bloom writer builds for the same keys (the input split at
// each 0x00 byte).
func FuzzPacedFilter(f *testing.F) {
	f.Add([]byte("a\x00bc\x00def\x00ghij\x00\xff\xfe\xfd"))
	f.Add([]byte("\x00\x00\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		e := &Engine{epoch: time.Now()}
		plain := bloom.FilterPolicy(10)
		pw, bw := pacedFilterPolicy{FilterPolicy: plain, e: e}.NewWriter(pebble.TableFilter), plain.NewWriter(pebble.TableFilter)
		for k := range bytes.SplitSeq(data, []byte{0}) {
			pw.AddKey(k)
			bw.AddKey(k)
		}
		if p, b := pw.Finish(nil), bw.Finish(nil); !bytes.Equal(p, b) {
			t.Fatalf("paced filter %x, bloom's %x", p, b)
		}
	})
}

// BenchmarkFilterWriter measures building the filter of a table of 60,000
// and of 250,000 keys with the paced writer and with Pebble's: ns/op for
// adding the keys and finishing, finish-µs/op for Finish alone (Pebble's
// is one uninterrupted piece of work; the paced writer's has a pacing
// point every paceFilterKeys keys). Run it on one CPU (taskset -c 1), as
// the server runs, so that pacing acts.
func BenchmarkFilterWriter(b *testing.B) {
	e := &Engine{epoch: time.Now()}
	policies := []struct {
		name   string
		policy pebble.FilterPolicy
	}{{"paced", pacedFilterPolicy{FilterPolicy: bloom.FilterPolicy(10), e: e}}, {"pebble", bloom.FilterPolicy(10)}}
	for _, n := range []int{60_000, 250_000} {
		keys := make([][]byte, n)
		for i := range keys {
			keys[i] = fmt.Appendf(nil, "m\x00cairn-bench:inv:abcdef:%d", i)
		}
		for _, c := range policies {
			b.Run(fmt.Sprintf("%s/keys=%d", c.name, n), func(b *testing.B) {
				var buf []byte
				var finish time.Duration
				for b.Loop() {
					w := c.policy.NewWriter(pebble.TableFilter)
					for _, k := range keys {
						w.AddKey(k)
					}
					t0 := time.Now()
					buf = w.Finish(buf[:0])
					finish += time.Since(t0)
				}
				b.ReportMetric(float64(finish.Microseconds())/float64(b.N), "finish-µs/op")
			})
		}
	}
}

// BenchmarkFlushVersions measures what a flush costs for the versions of
// the two internal records every commit rewrites (the replication offset
// and a key count): 50,000 batches of both, then one flush (flush-ms/op).
func BenchmarkFlushVersions(b *testing.B) {
	var flush time.Duration
	for b.Loop() {
		db, err := pebble.Open(b.TempDir(), &pebble.Options{MemTableSize: 64 << 20})
		if err != nil {
			b.Fatal(err)
		}
		var v [8]byte
		for i := range 50_000 {
			binary.BigEndian.PutUint64(v[:], uint64(i))
			bt := db.NewBatch()
			_ = bt.Set(keyReplOffset, v[:], nil)
			_ = bt.Set(countKey(""), v[:], nil)
			if err := bt.Commit(pebble.NoSync); err != nil {
				b.Fatal(err)
			}
		}
		t0 := time.Now()
		if err := db.Flush(); err != nil {
			b.Fatal(err)
		}
		flush += time.Since(t0)
		db.Close()
	}
	b.ReportMetric(float64(flush.Milliseconds())/float64(b.N), "flush-ms/op")
}

// TestFlushPacesInternalVersions checks that a flush reaches a pacing
// point while it skips the old versions of the replication offset and the
// key counts (pacedComparer): after 5,000 commits, each writing both, a
// flush compares thousands of versions through the engine's Equal, and
// the commits themselves compare none.
func TestFlushPacesInternalVersions(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	for i := range 5000 {
		bt := e.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
		bt.PutMeta("", fmt.Appendf(nil, "key:%d", i), nil, Metadata{Type: TypeString, Value: []byte("v")})
		if _, err := e.Commit(bt); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.versions.Load(); n != 0 {
		t.Fatalf("the commits compared %d internal-key versions; want 0", n)
	}
	e.dbMu.RLock()
	err := e.db.Flush()
	e.dbMu.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	if n := e.versions.Load(); n < 9000 {
		t.Fatalf("the flush compared %d internal-key versions through the engine's Equal; want about 10,000", n)
	}
}

// BenchmarkCommitAtRotation commits 20,000 one-key SET batches of 1 KB
// values at 5,000 a second through the engine (20 MB: at least one
// memtable rotation, which fsyncs the old WAL while commits wait) and
// reports the slowest commit (max-commit-ms) and how many took over 1 ms,
// with the WAL written back every walBytesPerSync bytes and, for
// comparison, never (Pebble's default). It takes 4 s a run.
func BenchmarkCommitAtRotation(b *testing.B) {
	defer func(v int) { walBytesPerSync = v }(walBytesPerSync)
	for _, c := range []struct {
		name  string
		bytes int
	}{{"writeback", walBytesPerSync}, {"none", 0}} {
		b.Run(c.name, func(b *testing.B) {
			walBytesPerSync = c.bytes
			var worst time.Duration
			slow := 0
			for b.Loop() {
				e := openTest(b, b.TempDir())
				value := bytes.Repeat([]byte("v"), 1024)
				start := time.Now()
				for i := range 20_000 {
					time.Sleep(time.Until(start.Add(time.Duration(i) * 200 * time.Microsecond)))
					bt := e.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
					bt.PutMeta("", fmt.Appendf(nil, "key:%d", i), nil, Metadata{Type: TypeString, Value: value})
					t0 := time.Now()
					if _, err := e.Commit(bt); err != nil {
						b.Fatal(err)
					}
					if d := time.Since(t0); d > time.Millisecond {
						slow++
						worst = max(worst, d)
					}
				}
				e.Close()
			}
			b.ReportMetric(float64(worst.Microseconds())/1000, "max-commit-ms")
			b.ReportMetric(float64(slow)/float64(b.N), "commits-over-1ms/op")
		})
	}
}
