package storage

import (
	"io"
	"path/filepath"
	"runtime"
	"testing"

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
		want := make([]byte, 3*paceBytes+123)
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
