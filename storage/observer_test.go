package storage

import (
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

// TestWriteObserverHearsKeysFlushesAndOrigins commits a batch that writes,
// flushes its namespace and writes again, and applies the same bytes on a
// replica's engine: both observers hear the keys and the flush in batch
// order, the primary's with the batch's Origin and the replica's with 0.
func TestWriteObserverHearsKeysFlushesAndOrigins(t *testing.T) {
	primary := openTest(t, t.TempDir())
	defer primary.Close()
	replica := openTest(t, t.TempDir())
	defer replica.Close()
	var po, ro recordingObserver
	primary.SetWriteObserver(&po)
	replica.SetWriteObserver(&ro)
	var shipped [][]byte
	primary.SetCommitHook(func(_ uint64, repr []byte) { shipped = append(shipped, repr) })

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
	for i, repr := range shipped {
		if err := replica.ApplyReplicated(uint64(i+1), repr, nil); err != nil {
			t.Fatal(err)
		}
	}
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
	check("primary", po.heard, 7, 8, 8)
	check("replica", ro.heard, 0, 0, 0)
}

// TestWriteObserverSkipsQuietRecords commits a batch whose first context
// is quiet (LogFlagQuiet) and whose second is not, and applies it on a
// replica's engine: both observers hear only the second context's key.
func TestWriteObserverSkipsQuietRecords(t *testing.T) {
	primary := openTest(t, t.TempDir())
	defer primary.Close()
	replica := openTest(t, t.TempDir())
	defer replica.Close()
	var po, ro recordingObserver
	primary.SetWriteObserver(&po)
	replica.SetWriteObserver(&ro)
	var shipped [][]byte
	primary.SetCommitHook(func(_ uint64, repr []byte) { shipped = append(shipped, repr) })

	b := primary.NewMultiBatch()
	b.LogData(LogData{Type: TypeString, Cmd: CmdSetBit, Flags: LogFlagQuiet}.Encode())
	b.PutMeta("", []byte("quiet"), nil, Metadata{Type: TypeString, Flags: FlagRawEncoding, Value: []byte("v")})
	b.LogData([]byte{0xE1, 1}) // an events record leaves the context as it is
	b.PutMeta("", []byte("quiet2"), nil, Metadata{Type: TypeString, Value: []byte("v")})
	b.LogData(LogData{Type: TypeString, Cmd: CmdSet}.Encode())
	b.PutMeta("", []byte("loud"), nil, Metadata{Type: TypeString, Value: []byte("v")})
	if _, err := primary.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := replica.ApplyReplicated(1, shipped[0], nil); err != nil {
		t.Fatal(err)
	}
	for who, heard := range map[string][]string{"primary": po.heard, "replica": ro.heard} {
		if len(heard) != 1 || heard[0] != "set /loud @0" {
			t.Errorf("%s heard %q, want only the loud key", who, heard)
		}
	}
	// The quiet record is written all the same.
	if m, found, err := replica.GetMeta("", []byte("quiet")); err != nil || !found || m.Flags&FlagRawEncoding == 0 {
		t.Errorf("replica's quiet key: %+v %v %v", m, found, err)
	}
}
