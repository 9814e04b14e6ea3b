package storage

import (
	"bytes"
	"fmt"
	"io"
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
	fs := pacedFS{FS: vfs.Default, e: e}
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
	pw, bw := paced.NewWriter(pebble.TableFilter), plain.NewWriter(pebble.TableFilter)
	for i := range 3*paceKeys + 7 {
		k := fmt.Appendf(nil, "key-%d", i)
		pw.AddKey(k)
		bw.AddKey(k)
	}
	if p, b := pw.Finish(nil), bw.Finish(nil); !bytes.Equal(p, b) {
		t.Fatalf("paced filter differs from bloom's (%d and %d bytes)", len(p), len(b))
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
