package storage

import (
	"bytes"
	"fmt"
	"iter"
	"testing"
)

// recordingObserver writes down what a WriteObserver hears, one line per
// Write: "set ns/key @origin", "del ns/key @origin" or "flush [ns...]".
type recordingObserver struct{ heard []string }

func (o *recordingObserver) Watching() bool { return true }

func (o *recordingObserver) Written(writes iter.Seq[Write]) {
	for w := range writes {
		if w.MetaKey == nil {
			o.heard = append(o.heard, fmt.Sprintf("flush %q", w.Flushed))
			continue
		}
		ns, key, err := DecodeMetaKey(w.MetaKey)
		if err != nil {
			o.heard = append(o.heard, err.Error())
			continue
		}
		op := "set"
		if w.Deleted {
			op = "del"
		}
		o.heard = append(o.heard, fmt.Sprintf("%s %s/%s @%d", op, ns, key, w.Origin))
	}
}

func (o *recordingObserver) Flushing([]string, func([]byte) bool) {}

// observedPair is a primary engine and a replica engine, each with a
// recordingObserver (po, ro); replicate applies to the replica the
// batches the primary committed since its last call.
type observedPair struct {
	primary, replica *Engine
	po, ro           recordingObserver
	shipped          [][]byte
	applied          int
}

func newObservedPair(t *testing.T) *observedPair {
	p := &observedPair{primary: openTest(t, t.TempDir()), replica: openTest(t, t.TempDir())}
	t.Cleanup(func() { p.primary.Close(); p.replica.Close() })
	p.primary.SetWriteObserver(&p.po)
	p.replica.SetWriteObserver(&p.ro)
	p.primary.SetCommitHook(func(_ uint64, repr []byte) { p.shipped = append(p.shipped, bytes.Clone(repr)) })
	return p
}

func (p *observedPair) replicate(t *testing.T) {
	t.Helper()
	for ; p.applied < len(p.shipped); p.applied++ {
		if err := p.replica.ApplyReplicated(uint64(p.applied+1), p.shipped[p.applied], nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWriteObserverHearsKeysFlushesAndOrigins commits a batch that writes,
// flushes its namespace and writes again, and applies the same bytes on a
// replica's engine: both observers hear the keys and the flush in batch
// order, the primary's with the batch's Origin and the replica's with 0.
func TestWriteObserverHearsKeysFlushesAndOrigins(t *testing.T) {
	pair := newObservedPair(t)
	primary := pair.primary

	put := func(b *Batch, key string) {
		b.PutMeta("ns", []byte(key), nil, Metadata{Type: TypeString, Value: []byte("v")})
	}
	b := primary.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
	b.Origin = 7
	put(b, "a")
	if _, err := primary.Commit(b); err != nil {
		t.Fatal(err)
	}
	b = primary.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
	b.Origin = 8
	old, _, err := primary.GetMeta("ns", []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	b.DeleteKey("ns", []byte("a"), old)
	b.FlushNamespace("ns")
	put(b, "b")
	if _, err := primary.Commit(b); err != nil {
		t.Fatal(err)
	}
	pair.replicate(t)
	want := []string{"set ns/a @%d", "del ns/a @%d", `flush ["ns"]`, "set ns/b @%d"}
	check := func(who string, heard []string, origins ...any) {
		t.Helper()
		if len(heard) != len(want) {
			t.Fatalf("%s heard %q", who, heard)
		}
		for i, w := range want {
			if i != 2 {
				w = fmt.Sprintf(w, origins[0])
				origins = origins[1:]
			}
			if heard[i] != w {
				t.Errorf("%s heard %q, want %q at %d", who, heard, w, i)
			}
		}
	}
	check("primary", pair.po.heard, 7, 8, 8)
	check("replica", pair.ro.heard, 0, 0, 0)
}

// TestWriteObserverSkipsQuietRecords commits a batch whose first context
// is quiet (LogFlagQuiet) and whose second is not, and applies it on a
// replica's engine: both observers hear only the second context's key.
func TestWriteObserverSkipsQuietRecords(t *testing.T) {
	pair := newObservedPair(t)
	primary, replica := pair.primary, pair.replica

	b := primary.NewMultiBatch()
	b.Context(LogData{Type: TypeString, Cmd: CmdSetBit, Flags: LogFlagQuiet})
	b.PutMeta("", []byte("quiet"), nil, Metadata{Type: TypeString, Flags: FlagRawEncoding, Value: []byte("v")})
	b.LogData([]byte{0xE1, 1}) // an events record leaves the context as it is
	b.PutMeta("", []byte("quiet2"), nil, Metadata{Type: TypeString, Value: []byte("v")})
	b.Context(LogData{Type: TypeString, Cmd: CmdSet})
	b.PutMeta("", []byte("loud"), nil, Metadata{Type: TypeString, Value: []byte("v")})
	if _, err := primary.Commit(b); err != nil {
		t.Fatal(err)
	}
	pair.replicate(t)
	for who, heard := range map[string][]string{"primary": pair.po.heard, "replica": pair.ro.heard} {
		if len(heard) != 1 || heard[0] != "set /loud @0" {
			t.Errorf("%s heard %q, want only the loud key", who, heard)
		}
	}
	// The quiet record is written all the same.
	if m, found, err := replica.GetMeta("", []byte("quiet")); err != nil || !found || m.Flags&FlagRawEncoding == 0 {
		t.Errorf("replica's quiet key: %+v %v %v", m, found, err)
	}
}

// TestLongValueDeletionIsNoFlush deletes a value long enough that its
// chunks go by one range deletion (rangeDropChunks) and applies the batch
// on a replica's engine: both observers hear the key's deletion and no
// flush, and neither engine keeps a chunk.
func TestLongValueDeletionIsNoFlush(t *testing.T) {
	pair := newObservedPair(t)
	primary := pair.primary
	long := bytes.Repeat([]byte("x"), int(rangeDropChunks+1)*chunkSize)
	b := primary.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
	b.PutMeta("ns", []byte("long"), nil, Metadata{Type: TypeString, Value: long})
	if _, err := primary.Commit(b); err != nil {
		t.Fatal(err)
	}
	old, _, err := primary.GetMeta("ns", []byte("long"))
	if err != nil || !old.Chunked() {
		t.Fatalf("GetMeta = %+v, %v; want a chunked value", old, err)
	}
	b = primary.NewBatch(LogData{Type: TypeString, Cmd: CmdDel})
	b.DeleteKey("ns", []byte("long"), old)
	if _, err := primary.Commit(b); err != nil {
		t.Fatal(err)
	}
	var ranges int
	if err := ReadBatch(pair.shipped[len(pair.shipped)-1], func(r Record) {
		if r.Kind == RecordDeleteRange {
			ranges++
		}
	}); err != nil || ranges != 1 {
		t.Fatalf("the deletion's batch holds %d range deletions (%v), want 1", ranges, err)
	}
	pair.replicate(t)
	want := fmt.Sprint([]string{"set ns/long @0", "del ns/long @0"})
	for who, e := range map[string]*Engine{"primary": primary, "replica": pair.replica} {
		heard := pair.po.heard
		if who == "replica" {
			heard = pair.ro.heard
		}
		if fmt.Sprint(heard) != want {
			t.Errorf("%s heard %q, want %s", who, heard, want)
		}
		if left := chunkRecords(t, e, "ns"); len(left) != 0 {
			t.Errorf("%s keeps chunks: %v", who, left)
		}
	}
}
