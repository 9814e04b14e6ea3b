package storage

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestConcurrentCommitsShareABatch holds the first commit inside the
// critical section while four more writers queue behind it, then checks
// that the queued writers were committed as one batch with one offset,
// except the one the fault hook fails (nothing of it applied) and the
// PUBLISH batch (always alone, after them).
func TestConcurrentCommitsShareABatch(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	type hooked struct {
		offset uint64
		repr   []byte
	}
	var batches []hooked
	e.SetCommitHook(func(off uint64, repr []byte) { batches = append(batches, hooked{off, bytes.Clone(repr)}) })
	entered, release := make(chan struct{}), make(chan struct{})
	first := true
	e.SetCommitFault(func(b *Batch) error {
		if first {
			first = false
			close(entered)
			<-release
		}
		if slices.ContainsFunc(b.rows, func(r rowUpdate) bool { return string(r.k) == string(metaKey("", []byte("c"))) }) {
			return ErrInjectedFault
		}
		return nil
	})

	type result struct {
		key    string
		offset uint64
		err    error
	}
	results := make(chan result, 5)
	commit := func(key string, b *Batch) {
		off, err := e.Commit(b)
		results <- result{key, off, err}
	}
	set := func(key string) *Batch {
		b := e.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
		b.PutMeta("", []byte(key), nil, Metadata{Type: TypeString, Value: []byte("v-" + key)})
		return b
	}
	queued := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			e.queue.mu.Lock()
			got := len(e.queue.waiting)
			e.queue.mu.Unlock()
			if got == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d commits queued, want %d", got, n)
			}
			time.Sleep(time.Millisecond)
		}
	}

	go commit("a", set("a"))
	<-entered
	for i, key := range []string{"b", "c", "d"} {
		go commit(key, set(key))
		queued(i + 1)
	}
	go commit("publish", e.NewRawBatch(EncodePublish([]byte("ch"), []byte("msg"))))
	queued(4)
	close(release)

	got := map[string]result{}
	for range 5 {
		r := <-results
		got[r.key] = r
	}
	want := map[string]uint64{"a": 1, "b": 2, "d": 2, "publish": 3}
	for key, off := range want {
		if r := got[key]; r.err != nil || r.offset != off {
			t.Errorf("commit of %s: offset %d, error %v; want offset %d", key, r.offset, r.err, off)
		}
	}
	if r := got["c"]; !errors.Is(r.err, ErrInjectedFault) {
		t.Errorf("commit of c: offset %d, error %v; want the injected fault", r.offset, r.err)
	}
	if _, found, _ := e.GetMeta("", []byte("c")); found {
		t.Error("the failed commit of c was applied")
	}
	if n := e.DBSize(""); n != 3 {
		t.Errorf("DBSize = %d, want 3", n)
	}

	// The hook saw three batches; the shared one carries b's and d's
	// LogData and records, in queue order, and the offset 2.
	if len(batches) != 3 || batches[1].offset != 2 {
		t.Fatalf("hook saw %d batches", len(batches))
	}
	var trace []string
	if err := ReadBatch(batches[1].repr, func(r Record) {
		switch {
		case r.Kind == RecordLogData:
			trace = append(trace, "logdata")
		case string(r.Key) == string(keyReplOffset):
			trace = append(trace, "offset")
		case r.Kind == RecordSet:
			trace = append(trace, fmt.Sprintf("set %q", r.Key))
		}
	}); err != nil {
		t.Fatal(err)
	}
	wantTrace := []string{"logdata", fmt.Sprintf("set %q", metaKey("", []byte("b"))), "logdata",
		fmt.Sprintf("set %q", metaKey("", []byte("d"))), "offset", fmt.Sprintf("set %q", countKey(""))}
	if !slices.Equal(trace, wantTrace) {
		t.Errorf("shared batch records:\n got %q\nwant %q", trace, wantTrace)
	}
}

// TestWALFaultIsFatal injects a failing WAL write under a synced commit:
// the engine's fatal handler receives the I/O error, and the commit fails
// rather than be acknowledged.
func TestWALFaultIsFatal(t *testing.T) {
	faults := make(chan error, 8)
	record := func(err error) {
		select {
		case faults <- err:
		default:
		}
	}
	e, err := Open(Options{Dir: t.TempDir(), Sync: true, Fatal: record})
	if err != nil {
		t.Fatal(err)
	}
	set := func(key string) error {
		b := e.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
		b.PutMeta("", []byte(key), nil, Metadata{Type: TypeString, Value: []byte("v")})
		_, err := e.Commit(b)
		return err
	}
	if err := set("before"); err != nil {
		t.Fatal(err)
	}
	e.InjectWALFault()
	if err := set("after"); err == nil {
		t.Fatal("a commit whose WAL write failed was acknowledged")
	}
	select {
	case err := <-faults:
		if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "WAL") {
			t.Fatalf("fatal handler got %v, want the WAL's EIO", err)
		}
	default:
		t.Fatal("the fatal handler was not called")
	}
	e.Close() // Pebble may report more of the failed WAL: the handler records it
}

// TestTxnBatchHoldsMetadata checks the records a transaction's batch
// commits when its commands write the same keys again and again: one
// metadata record per key, at the end, except where replicas need a
// record in place (after an events record, before a change of quietness
// or a flush), and that the keys read back as last written. Each step is
// "ctx", "quiet" (a quiet context), "ev" (an events record), "put K V",
// "del K" or "flush"; the records are shown the same way, "set K V" for a
// metadata Set.
func TestTxnBatchHoldsMetadata(t *testing.T) {
	// More keys than the batch holds back: the first maxHeld are written
	// when one more comes.
	var many, manyRecords []string
	for i := range maxHeld + 1 {
		many = append(many, fmt.Sprintf("put k%d 1", i))
		manyRecords = append(manyRecords, fmt.Sprintf("set k%d 1", i))
	}
	for _, tc := range []struct {
		name    string
		steps   string
		records string
		want    map[string]string // "" for absent
	}{{
		name:    "repeated writes of a key make one record",
		steps:   "ctx; put a 1; ctx; put a 2; ctx; put b 1; ctx; put a 3",
		records: "ctx; ctx; ctx; ctx; set a 3; set b 1",
		want:    map[string]string{"a": "3", "b": "1"},
	}, {
		name:    "a write after an events record is in place",
		steps:   "ctx; put a 1; ctx; ev; put a 2; ctx; put a 3",
		records: "ctx; ctx; ev; set a 2; ctx; set a 3",
		want:    map[string]string{"a": "3"},
	}, {
		name:    "a deletion replaces the held record",
		steps:   "ctx; put a 1; put b 1; ctx; del a; ctx; put b 2",
		records: "ctx; ctx; del a; ctx; set b 2",
		want:    map[string]string{"a": "", "b": "2"},
	}, {
		name:    "a key written again after its deletion",
		steps:   "ctx; put a 1; ctx; ev; del a; ctx; put a 2",
		records: "ctx; ctx; ev; del a; ctx; set a 2",
		want:    map[string]string{"a": "2"},
	}, {
		name:    "a change of quietness writes the held records first",
		steps:   "ctx; put a 1; quiet; put a 2; put b 1; ctx; put b 2",
		records: "ctx; set a 1; quiet; set a 2; set b 1; ctx; set b 2",
		want:    map[string]string{"a": "2", "b": "2"},
	}, {
		name:    "a flush removes the records held before it",
		steps:   "ctx; put a 1; put b 1; ctx; flush; ctx; put b 2",
		records: "ctx; ctx; set a 1; set b 1; flush; ctx; set b 2",
		want:    map[string]string{"a": "", "b": "2"},
	}, {
		name:    "a batch holds at most maxHeld records",
		steps:   "ctx; " + strings.Join(many, "; ") + "; put k0 2",
		records: "ctx; " + strings.Join(manyRecords, "; ") + "; set k0 2",
		want:    map[string]string{"k0": "2", "k1": "1", fmt.Sprint("k", maxHeld): "1"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			e := openTest(t, t.TempDir())
			defer e.Close()
			var repr []byte
			e.SetCommitHook(func(_ uint64, r []byte) { repr = bytes.Clone(r) })
			b := e.NewTxnBatch()
			live := map[string]*Metadata{}
			for _, step := range strings.Split(tc.steps, "; ") {
				f := strings.Fields(step)
				switch f[0] {
				case "ctx", "quiet":
					l := LogData{Type: TypeString, Cmd: CmdSet}
					if f[0] == "quiet" {
						l.Flags = LogFlagQuiet
					}
					b.Context(l)
				case "ev":
					b.LogData([]byte{0xE1, 1})
				case "put":
					m := b.PutMeta("", []byte(f[1]), live[f[1]], Metadata{Type: TypeString, Value: []byte(f[2])})
					live[f[1]] = &m
				case "del":
					b.DeleteKey("", []byte(f[1]), *live[f[1]])
					delete(live, f[1])
				case "flush":
					b.FlushNamespace("")
					clear(live)
				}
			}
			if _, err := e.Commit(b); err != nil {
				t.Fatal(err)
			}
			if got := renderRecords(t, repr); got != tc.records {
				t.Errorf("records:\n got %s\nwant %s", got, tc.records)
			}
			for key, want := range tc.want {
				m, found, err := e.GetMeta("", []byte(key))
				if err != nil {
					t.Fatal(err)
				}
				if got := string(m.Value); found != (want != "") || got != want {
					t.Errorf("key %s: found %v, value %q; want %q", key, found, got, want)
				}
			}
			if n := e.DBSize(""); n != int64(len(live)) {
				t.Errorf("DBSIZE %d, want %d", n, len(live))
			}
		})
	}
}

// renderRecords shows a batch's contexts, events records and metadata
// records as TestTxnBatchHoldsMetadata's steps do.
func renderRecords(t *testing.T, repr []byte) string {
	t.Helper()
	var out []string
	err := ReadBatch(repr, func(r Record) {
		switch {
		case r.Kind == RecordLogData:
			l, err := DecodeLogData(r.Key)
			switch {
			case err != nil:
				out = append(out, "ev")
			case l.Flags&LogFlagQuiet != 0:
				out = append(out, "quiet")
			default:
				out = append(out, "ctx")
			}
		case !IsMetaKey(r.Key):
		case r.Kind == RecordDeleteRange:
			out = append(out, "flush")
		case r.Kind == RecordDelete:
			_, key, _ := DecodeMetaKey(r.Key)
			out = append(out, "del "+string(key))
		default:
			_, key, _ := DecodeMetaKey(r.Key)
			m, err := DecodeMetadata(r.Value)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("set %s %s", key, m.Value))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "; ")
}
