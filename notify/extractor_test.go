package notify

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/pubsub"
	"github.com/cairnkv/cairn/pubsub/pubsubtest"
	"github.com/cairnkv/cairn/storage"
)

// setBatch commits one SET of key on a fresh engine the way the SET
// command writes it with "set" events enabled (a LogData context with the
// notify bit, the events record, the metadata record) and returns the
// batch's bytes as the commit hook sees them.
func setBatch(tb testing.TB, key string) []byte {
	return committedBatch(tb, func(b *storage.Batch) {
		b.LogData(EncodeRecordEvents([]Code{CodeSet}))
		b.PutMeta("", []byte(key), nil, storage.Metadata{Type: storage.TypeString, Value: []byte("v")})
	})
}

// publishBatch commits a transaction's batch as MULTI, SET a, PUBLISH ch
// m, DEL a, EXEC writes it for a replica and returns its bytes.
func publishBatch(tb testing.TB) []byte {
	return committedBatch(tb, func(b *storage.Batch) {
		b.LogData(EncodeRecordEvents([]Code{CodeSet}))
		b.PutMeta("", []byte("a"), nil, storage.Metadata{Type: storage.TypeString, Value: []byte("v")})
		b.Publish([]byte("ch"), []byte("m"))
		b.Context(storage.LogData{Type: storage.TypeString, Cmd: storage.CmdDel, Flags: storage.LogFlagNotify})
		b.LogData(EncodeRecordEvents([]Code{CodeDel}))
		b.PutMeta("", []byte("a"), nil, storage.Metadata{})
	})
}

// committedBatch commits, on a fresh engine, a batch that starts with a
// SET's context (notify bit on) and goes on as fill writes it, and
// returns the batch's bytes as the commit hook sees them.
func committedBatch(tb testing.TB, fill func(b *storage.Batch)) []byte {
	tb.Helper()
	e, err := storage.Open(storage.Options{Dir: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	defer e.Close()
	var repr []byte
	e.SetCommitHook(func(_ uint64, r []byte) { repr = append([]byte(nil), r...) }) // valid until the hook returns
	b := e.NewBatch(storage.LogData{Type: storage.TypeString, Cmd: storage.CmdSet, Flags: storage.LogFlagNotify})
	fill(b)
	if _, err := e.Commit(b); err != nil {
		tb.Fatal(err)
	}
	return repr
}

// TestExtractPublishInTransaction: a PUBLISH record in a transaction's
// batch yields its message between the events of the records around it.
func TestExtractPublishInTransaction(t *testing.T) {
	evs, err := Extract(publishBatch(t))
	var got []string
	for _, ev := range evs {
		if ev.Message {
			got = append(got, fmt.Sprintf("message %s=%s", ev.Channel, ev.Key))
		} else {
			got = append(got, fmt.Sprintf("%s %s", ev.Name, ev.Key))
		}
	}
	if want := "set a|message ch=m|del a"; strings.Join(got, "|") != want || err != nil {
		t.Fatalf("events %q, %v; want %q", got, err, want)
	}
}

// TestAppendEventsMatchesExtract extracts a batch whose events records
// hold an unknown code, alone or among known ones, both ways: the events
// are the same, AppendEvents appends them to what dst holds, with keys
// that alias the batch, and Extract's keys are copies.
func TestAppendEventsMatchesExtract(t *testing.T) {
	e, err := storage.Open(storage.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var repr []byte
	e.SetCommitHook(func(_ uint64, r []byte) { repr = append([]byte(nil), r...) }) // valid until the hook returns
	b := e.NewBatch(storage.LogData{Type: storage.TypeString, Cmd: storage.CmdMSet, Flags: storage.LogFlagNotify})
	put := func(key string, record []byte) {
		b.LogData(record)
		b.PutMeta("", []byte(key), nil, storage.Metadata{Type: storage.TypeString, Value: []byte("v")})
	}
	put("a", []byte{eventsTag, byte(CodeSet), 200, byte(CodeExpire)})
	put("b", []byte{eventsTag, 201})
	put("c", EncodeRecordEvents([]Code{CodeNew, CodeSet}))
	if _, err := e.Commit(b); err != nil {
		t.Fatal(err)
	}
	render := func(evs []Event) string {
		var out []string
		for _, ev := range evs {
			out = append(out, fmt.Sprintf("%s:%s", ev.Key, ev.Name))
		}
		return strings.Join(out, " ")
	}
	const want = "a:set a:expire c:new c:set"
	const wantErr = "notify: unknown event code 200 skipped"
	copied, err := Extract(repr)
	if render(copied) != want || err == nil || err.Error() != wantErr {
		t.Fatalf("Extract: %q, %v; want %q, %q", render(copied), err, want, wantErr)
	}
	dst := []Event{CodeDel.Event("", []byte("x"))}
	aliased, err := AppendEvents(dst, repr)
	if render(aliased) != "x:del "+want || err == nil || err.Error() != wantErr {
		t.Fatalf("AppendEvents: %q, %v; want %q, %q", render(aliased), err, "x:del "+want, wantErr)
	}
	// AppendEvents' keys are the batch's bytes: writing through them
	// changes the batch, and not Extract's copies.
	for _, ev := range aliased[1:] {
		ev.Key[0] = 'z'
	}
	if render(copied) != want {
		t.Fatalf("Extract's keys changed with the batch: %q", render(copied))
	}
	if again, _ := Extract(repr); render(again) != "z:set z:expire z:new z:set" {
		t.Fatalf("AppendEvents' keys are not the batch's bytes: the batch now has %q", render(again))
	}
}

// BenchmarkExtractEmit measures what a replica does to publish a
// replicated SET's keyspace events: extract them from the batch into a
// slice it reuses and emit them, with notify-keyspace-events KEA, to one
// PSUBSCRIBE __keyevent@0__:* subscriber.
func BenchmarkExtractEmit(b *testing.B) {
	repr := setBatch(b, "key:1")
	hub := pubsub.NewHub()
	em := NewEmitter(hub)
	em.SetFlags(Keyspace | Keyevent | All)
	sink := &pubsubtest.FrameSink{}
	hub.Subscribe(sink, pubsub.KindPattern, []byte("__keyevent@0__:*"))
	var events []Event
	b.ReportAllocs()
	for b.Loop() {
		var err error
		events, err = AppendEvents(events[:0], repr)
		if err != nil {
			b.Fatal(err)
		}
		for _, ev := range events {
			em.Emit(ev)
		}
	}
	const want = "*4\r\n$8\r\npmessage\r\n$16\r\n__keyevent@0__:*\r\n$18\r\n__keyevent@0__:set\r\n$5\r\nkey:1\r\n"
	if sink.N != b.N || string(sink.Last) != want {
		b.Fatalf("%d messages for %d batches; last %q", sink.N, b.N, sink.Last)
	}
}

// FuzzExtract feeds Extract and AppendEvents arbitrary batch bytes (seeded
// with real batches): neither may panic, both must return the same events,
// and each event has the name and class of a known code.
func FuzzExtract(f *testing.F) {
	f.Add(setBatch(f, "key"))
	f.Add(setBatch(f, "\x00binary\xffkey"))
	f.Add(publishBatch(f))
	f.Add([]byte{})
	f.Add(make([]byte, 12))
	f.Fuzz(func(t *testing.T, repr []byte) {
		copied, err1 := Extract(repr)
		aliased, err2 := AppendEvents(nil, repr)
		if (err1 == nil) != (err2 == nil) || len(copied) != len(aliased) {
			t.Fatalf("Extract: %d events, %v; AppendEvents: %d events, %v", len(copied), err1, len(aliased), err2)
		}
		for i := range copied {
			if copied[i].Name != aliased[i].Name || string(copied[i].Key) != string(aliased[i].Key) ||
				copied[i].Namespace != aliased[i].Namespace || copied[i].Message != aliased[i].Message ||
				string(copied[i].Channel) != string(aliased[i].Channel) {
				t.Fatalf("event %d: Extract %+v, AppendEvents %+v", i, copied[i], aliased[i])
			}
			if !knownEvent(copied[i]) {
				t.Fatalf("event %d is not one a code makes: %+v", i, copied[i])
			}
		}
	})
}

// knownEvent reports whether ev is a message or has the name and class of
// a valid code.
func knownEvent(ev Event) bool {
	if ev.Message {
		return ev.Name == "" && ev.Class == 0 && !ev.Shard
	}
	for c := codeNone + 1; c.Valid(); c++ {
		if c.Name() == ev.Name && c.Class() == ev.Class {
			return true
		}
	}
	return false
}
