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
