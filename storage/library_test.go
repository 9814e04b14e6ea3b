package storage

import (
	"bytes"
	"testing"
)

// TestLibrariesReplicate: function libraries stored and deleted through
// commits read back with Libraries, and a replica applying the batches
// tells its library observer of each change before the batch's offset
// shows, and ends with the same libraries.
func TestLibrariesReplicate(t *testing.T) {
	p := openTest(t, t.TempDir())
	defer p.Close()
	var offs []uint64
	var reprs [][]byte
	p.SetCommitHook(func(o uint64, r []byte) { offs, reprs = append(offs, o), append(reprs, bytes.Clone(r)) })
	commit := func(fn func(b *Batch)) {
		b := p.NewBatch(LogData{Cmd: CmdFunction})
		fn(b)
		if _, err := p.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	commit(func(b *Batch) { b.PutLibrary("a", []byte("code a")); b.PutLibrary("b", []byte("code b")) })
	commit(func(b *Batch) { b.DeleteLibrary("a"); b.PutLibrary("c", []byte("code c")) })
	libs := func(e *Engine) map[string]string {
		m := map[string]string{}
		if err := e.Libraries(func(name string, code []byte) { m[name] = string(code) }); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if got := libs(p); len(got) != 2 || got["b"] != "code b" || got["c"] != "code c" {
		t.Fatalf("the primary's libraries: %v", got)
	}

	r := openTest(t, t.TempDir())
	defer r.Close()
	var seen []string
	r.SetLibraryObserver(func(changes []LibraryChange, _ bool) {
		for _, ch := range changes {
			seen = append(seen, ch.Name+"="+string(ch.Code))
		}
		// Called inside the commit, before the offset moves.
		seen = append(seen, "offset "+string(rune('0'+r.offset)))
	})
	for i := range reprs {
		if err := r.ApplyReplicated(offs[i], reprs[i], nil); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"a=code a", "b=code b", "offset 0", "a=", "c=code c", "offset 1"}
	if len(seen) != len(want) {
		t.Fatalf("observer saw %q, want %q", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("observer saw %q, want %q", seen, want)
		}
	}
	if got := libs(r); len(got) != 2 || got["b"] != "code b" || got["c"] != "code c" {
		t.Fatalf("the replica's libraries: %v", got)
	}
}
