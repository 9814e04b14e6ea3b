package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// primaryBatches commits a few writes on a fresh engine and returns the
// batches its commit hook saw, with their offsets.
func primaryBatches(t testing.TB) (*Engine, []uint64, [][]byte) {
	p := openTest(t, t.TempDir())
	var offs []uint64
	var reprs [][]byte
	p.SetCommitHook(func(o uint64, r []byte) { offs, reprs = append(offs, o), append(reprs, bytes.Clone(r)) })
	put := func(ns, key, val string, expire int64) {
		old, found, _ := p.GetMeta(ns, []byte(key))
		var op *Metadata
		if found {
			op = &old
		}
		b := p.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
		b.PutMeta(ns, []byte(key), op, Metadata{Type: TypeString, Value: []byte(val), ExpireAt: expire})
		if _, err := p.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	put("", "a", "1", 0)
	put("", "b", "2", 99999999999999)
	put("t", "a", "3", 0)
	b := p.NewBatch(LogData{Cmd: CmdNamespace})
	b.PutNamespace("t", "tok")
	p.Commit(b)
	old, _, _ := p.GetMeta("", []byte("a"))
	b = p.NewBatch(LogData{Cmd: CmdDel})
	b.DeleteKey("", []byte("a"), old)
	p.Commit(b)
	return p, offs, reprs
}

func TestApplyReplicatedMirrorsThePrimary(t *testing.T) {
	p, offs, reprs := primaryBatches(t)
	defer p.Close()
	r := openTest(t, t.TempDir())
	defer r.Close()
	var logged []uint64
	r.SetCommitHook(func(o uint64, _ []byte) { logged = append(logged, o) })
	calls := 0
	for i := range reprs {
		if err := r.ApplyReplicated(offs[i], reprs[i], func() { calls++ }); err != nil {
			t.Fatal(err)
		}
	}
	if r.Offset() != p.Offset() || calls != len(reprs) || len(logged) != len(reprs) {
		t.Fatalf("offset %d vs %d, calls %d, logged %v", r.Offset(), p.Offset(), calls, logged)
	}
	if got, want := r.KeyCounts(), p.KeyCounts(); len(got) != len(want) || got[""] != want[""] || got["t"] != want["t"] {
		t.Fatalf("counts %+v vs %+v", got, want)
	}
	if r.Namespaces()["t"] != "tok" {
		t.Fatalf("namespaces %v", r.Namespaces())
	}
	if _, found, _ := r.ReadMeta("", []byte("a")); found {
		t.Fatal("deleted key present on the replica")
	}
	if m, found, _ := r.ReadMeta("t", []byte("a")); !found || string(m.Value) != "3" {
		t.Fatalf("t/a = %q %v", m.Value, found)
	}
	// Replaying a batch or skipping one is refused.
	if err := r.ApplyReplicated(offs[0], reprs[0], nil); !errors.Is(err, ErrOffsetGap) {
		t.Fatalf("replay: %v", err)
	}
	if err := r.ApplyReplicated(offs[len(offs)-1]+2, reprs[0], nil); !errors.Is(err, ErrOffsetGap) && !errors.Is(err, ErrBadBatch) {
		t.Fatalf("skip: %v", err)
	}
	// A batch that claims another offset than it carries is refused.
	if err := r.ApplyReplicated(r.Offset()+1, reprs[0], nil); !errors.Is(err, ErrBadBatch) {
		t.Fatalf("mislabelled batch: %v", err)
	}
	if err := r.ApplyReplicated(r.Offset()+1, []byte{1, 2, 3}, nil); !errors.Is(err, ErrBadBatch) {
		t.Fatalf("garbage: %v", err)
	}

	// The next batch, damaged: cut short (which Pebble's own reader
	// would index past), with a record kind Cairn never writes, or with
	// a record count other than its header's. Each is refused before
	// Pebble sees it; the intact batch then applies.
	var next []byte
	p.SetCommitHook(func(_ uint64, repr []byte) { next = bytes.Clone(repr) })
	b := p.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
	b.PutMeta("", []byte("next"), nil, Metadata{Type: TypeString, Value: []byte("v")})
	if _, err := p.Commit(b); err != nil {
		t.Fatal(err)
	}
	damaged := map[string]func([]byte) []byte{
		"truncated":    func(b []byte) []byte { return b[:len(b)-1] },
		"cut in a key": func(b []byte) []byte { return append(b[:len(b):len(b)], byte(pebble.InternalKeyKindSet)) },
		"unknown kind": func(b []byte) []byte { b[12] = byte(pebble.InternalKeyKindMerge); return b },
		"wrong count":  func(b []byte) []byte { b[8]++; return b },
	}
	for name, damage := range damaged {
		bad := damage(append([]byte(nil), next...))
		if err := r.ApplyReplicated(r.Offset()+1, bad, nil); !errors.Is(err, ErrBadBatch) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if err := r.ApplyReplicated(r.Offset()+1, next, nil); err != nil {
		t.Fatalf("the intact batch: %v", err)
	}
}

func TestCheckpointInstall(t *testing.T) {
	p, _, _ := primaryBatches(t)
	defer p.Close()
	rdir := t.TempDir()
	r := openTest(t, rdir)
	// The replica had other data, which the install replaces.
	b := r.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
	b.PutMeta("", []byte("stale"), nil, Metadata{Type: TypeString, Value: []byte("x")})
	r.Commit(b)
	if _, found, _ := r.ReadMeta("", []byte("stale")); !found {
		t.Fatal("setup")
	}
	cp := filepath.Join(rdir, "incoming")
	off, err := p.Checkpoint(cp)
	if err != nil || off != p.Offset() {
		t.Fatalf("checkpoint: %d %v", off, err)
	}
	got, err := r.InstallCheckpoint(cp)
	if err != nil || got != off {
		t.Fatalf("install: %d %v", got, err)
	}
	if _, found, _ := r.ReadMeta("", []byte("stale")); found {
		t.Fatal("old data survived the install")
	}
	if m, found, _ := r.ReadMeta("t", []byte("a")); !found || string(m.Value) != "3" {
		t.Fatalf("t/a after install = %q %v", m.Value, found)
	}
	if r.DBSize("") != p.DBSize("") || r.Namespaces()["t"] != "tok" {
		t.Fatalf("state after install: %d %v", r.DBSize(""), r.Namespaces())
	}
	r.Close()
	// The installed data is what opens next time.
	r = openTest(t, rdir)
	defer r.Close()
	if r.Offset() != off {
		t.Fatalf("offset after reopen = %d, want %d", r.Offset(), off)
	}
}

// Installing a checkpoint replaces the key counts and namespaces while
// clients read them (DBSIZE, AUTH with a namespace token); under -race
// this fails if the install writes them without the readers' locks.
func TestCheckpointInstallWhileReading(t *testing.T) {
	p, _, _ := primaryBatches(t)
	defer p.Close()
	rdir := t.TempDir()
	r := openTest(t, rdir)
	defer r.Close()
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		reads := 0
		for {
			select {
			case <-stop:
				done <- reads
				return
			default:
			}
			_ = r.DBSize("")
			_ = r.Namespaces()
			reads++
		}
	}()
	for i := range 3 {
		cp := filepath.Join(rdir, fmt.Sprintf("incoming-%d", i))
		if _, err := p.Checkpoint(cp); err != nil {
			t.Fatal(err)
		}
		if _, err := r.InstallCheckpoint(cp); err != nil {
			t.Fatalf("install %d: %v", i, err)
		}
	}
	close(stop)
	if reads := <-done; reads == 0 {
		t.Fatal("the reader never ran")
	}
	if r.DBSize("") != p.DBSize("") || r.Namespaces()["t"] != "tok" {
		t.Fatalf("state after installs: %d %v", r.DBSize(""), r.Namespaces())
	}
}

// TestApplyReplicatedKeepsTheBytes applies batches of the shapes a
// replica meets (small ones, one of Pebble's large batches, a flush), with
// sync off and on, and checks that the commit hook gets the records the
// primary sent, unchanged (the header's sequence number is each Pebble's
// own), and that the data follows.
func TestApplyReplicatedKeepsTheBytes(t *testing.T) {
	p := openTest(t, t.TempDir())
	defer p.Close()
	var offs []uint64
	var reprs [][]byte
	p.SetCommitHook(func(o uint64, r []byte) { offs, reprs = append(offs, o), append(reprs, bytes.Clone(r)) })
	put := func(key string, val []byte) {
		commitKey(t, p, "", key, func(b *Batch, old *Metadata) {
			b.PutMeta("", []byte(key), old, Metadata{Type: TypeString, Value: val})
		})
	}
	big := bytes.Repeat([]byte("x"), memTableSize/2+1<<20) // applied as a memtable of its own
	put("a", []byte("1"))
	put("big", big)
	put("b", []byte("2"))
	b := p.NewBatch(LogData{Cmd: CmdFlushDB})
	b.FlushNamespace("")
	if _, err := p.Commit(b); err != nil {
		t.Fatal(err)
	}
	put("c", []byte("3"))
	put("big", []byte("small now"))

	r := openTest(t, t.TempDir())
	defer r.Close()
	var logged [][]byte
	r.SetCommitHook(func(_ uint64, b []byte) { logged = append(logged, bytes.Clone(b)) })
	value := func(key string) string {
		m, found, err := r.ReadMeta("", []byte(key))
		if err != nil || !found {
			return fmt.Sprintf("<%v %v>", found, err)
		}
		if m.External() {
			if err := r.LoadValue(nil, "", []byte(key), &m); err != nil {
				return fmt.Sprintf("<%v>", err)
			}
		}
		return string(m.Value)
	}
	for i := range reprs {
		r.SetSync(i%2 == 1)
		sent := bytes.Clone(reprs[i])
		if err := r.ApplyReplicated(offs[i], reprs[i], nil); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		if len(logged) != i+1 || !bytes.Equal(logged[i][8:], sent[8:]) {
			t.Fatalf("batch %d: the records changed, or the hook did not get them", i)
		}
		if i == 2 && (value("a") != "1" || value("b") != "2" || value("big") != string(big)) {
			t.Fatalf("before the flush: a=%q b=%q len(big)=%d", value("a"), value("b"), len(value("big")))
		}
	}
	if value("c") != "3" || value("big") != "small now" || r.DBSize("") != 2 || r.Offset() != p.Offset() {
		t.Fatalf("after the flush: c=%q big=%q dbsize %d, offset %d (primary's %d)",
			value("c"), value("big"), r.DBSize(""), r.Offset(), p.Offset())
	}
	if _, found, _ := r.ReadMeta("", []byte("a")); found {
		t.Fatal("a survived the flush")
	}
}

// BenchmarkApplyReplicatedSet measures a replica applying one SET's batch
// as the primary shipped it (LogData, metadata, offset and count records),
// over 1,000 keys, with the row cache on and a commit hook installed.
func BenchmarkApplyReplicatedSet(b *testing.B) {
	p := openTest(b, b.TempDir())
	defer p.Close()
	offs := make([]uint64, 0, b.N)
	reprs := make([][]byte, 0, b.N)
	p.SetCommitHook(func(o uint64, r []byte) { offs, reprs = append(offs, o), append(reprs, bytes.Clone(r)) })
	val := []byte("0123456789abcdef")
	for i := range b.N {
		key := fmt.Appendf(nil, "key:%d", i%1000)
		old, found, err := p.GetMeta("", key)
		if err != nil {
			b.Fatal(err)
		}
		var op *Metadata
		if found {
			op = &old
		}
		batch := p.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
		batch.PutMeta("", key, op, Metadata{Type: TypeString, Value: val})
		if _, err := p.Commit(batch); err != nil {
			b.Fatal(err)
		}
	}
	r, err := Open(Options{Dir: b.TempDir(), RowCacheBytes: 32 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	logged := 0
	r.SetCommitHook(func(uint64, []byte) { logged++ })

	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := r.ApplyReplicated(offs[i], reprs[i], nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if logged != b.N || r.Offset() != p.Offset() {
		b.Fatalf("logged %d of %d batches; offset %d, primary's %d", logged, b.N, r.Offset(), p.Offset())
	}
}

// FuzzApplyReplicated hands ApplyReplicated damaged and made-up batches,
// as a corrupt replication stream would (the frame's checksum catches
// damage in transit, not a primary's bug): each is applied or refused with
// ErrBadBatch, never a panic, and the engine goes on reading and
// committing. The engine's offset is set to just before the offset a batch
// carries, so that made-up batches get past the offset check too.
func FuzzApplyReplicated(f *testing.F) {
	p, _, reprs := primaryBatches(f)
	// A transaction that writes, flushes and writes again.
	var flushed []byte
	p.SetCommitHook(func(_ uint64, repr []byte) { flushed = bytes.Clone(repr) })
	b := p.NewMultiBatch()
	b.LogData(LogData{Type: TypeString, Cmd: CmdSet}.Encode())
	b.PutMeta("", []byte("x"), nil, Metadata{Type: TypeString, Value: []byte("1")})
	b.FlushNamespace("")
	b.PutMeta("", []byte("y"), nil, Metadata{Type: TypeString, Value: []byte("2")})
	if _, err := p.Commit(b); err != nil {
		f.Fatal(err)
	}
	p.Close()
	for _, r := range append(reprs, flushed) {
		f.Add(r)
	}
	r := openTest(f, f.TempDir())
	f.Cleanup(func() { r.Close() })
	f.Fuzz(func(t *testing.T, repr []byte) {
		var carried uint64
		_ = ReadBatch(repr, func(rec Record) {
			if string(rec.Key) == string(keyReplOffset) && rec.Kind == RecordSet && len(rec.Value) == 8 {
				carried = binary.BigEndian.Uint64(rec.Value)
			}
		})
		if carried > 0 {
			r.commitMu.Lock()
			r.offset = carried - 1
			r.commitMu.Unlock()
		}
		if err := r.ApplyReplicated(r.Offset()+1, repr, nil); err != nil && !errors.Is(err, ErrBadBatch) {
			t.Fatalf("batch %x: %v", repr, err)
		}
		// A record the batch damaged may fail to decode; reading it is an
		// error, not a panic.
		for _, k := range []string{"a", "x", "y"} {
			_, _, _ = r.ReadMeta("", []byte(k))
		}
		_ = r.ScanKeys("", nil, func([]byte, Metadata) bool { return true })
		c := r.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
		c.PutMeta("", []byte("after"), nil, Metadata{Type: TypeString, Value: []byte("v")})
		if _, err := r.Commit(c); err != nil {
			t.Fatalf("after batch %x: commit: %v", repr, err)
		}
		if m, found, err := r.ReadMeta("", []byte("after")); err != nil || !found || string(m.Value) != "v" {
			t.Fatalf("after batch %x: read back %q %v %v", repr, m.Value, found, err)
		}
	})
}
