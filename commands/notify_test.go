package commands

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cairnkv/cairn/config"
	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/pubsub"
	"github.com/cairnkv/cairn/server/resp"
	"github.com/cairnkv/cairn/storage"
)

// testEnv is a command environment over real storage in a temp dir.
type testEnv struct {
	*Env
	batches [][]byte // every committed batch, via the commit hook
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	store, err := storage.Open(storage.Options{Dir: t.TempDir(), RowCacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	hub := pubsub.NewHub()
	te := &testEnv{Env: &Env{Store: store, Config: config.New(), PubSub: hub, Notify: notify.NewEmitter(hub),
		Log: hclog.NewNullLogger(), Clients: NewClientRegistry(), Stats: &Stats{}, Started: time.Now()}}
	store.SetCommitHook(func(_ uint64, repr []byte) { te.batches = append(te.batches, repr) })
	return te
}

// run executes one command for cl and returns its raw reply.
func (te *testEnv) run(cl *Client, args ...string) string {
	w := resp.NewWriter()
	a := make([][]byte, len(args))
	for i, s := range args {
		a[i] = []byte(s)
	}
	te.Dispatch(cl, w, a)
	return string(w.Bytes())
}

// recorder subscribes to every keyspace channel and keeps "channel payload"
// lines.
type recorder struct{ got []string }

func (r *recorder) Deliver(m *pubsub.Message) {
	r.got = append(r.got, string(m.Frame(2)))
}

// events renders what a recorder received as "channel=payload" lines.
func (r *recorder) events() []string {
	var out []string
	for _, f := range r.got {
		// *4 pmessage <pattern> <channel> <payload>
		parts := strings.Split(f, "\r\n")
		out = append(out, parts[6]+"="+parts[8])
	}
	return out
}

// extracted renders the events the batches carry, as a replica would
// publish them with the same flags, and reports extraction problems.
func extracted(t *testing.T, batches [][]byte) []string {
	var out []string
	for _, b := range batches {
		evs, err := notify.Extract(b)
		if err != nil {
			t.Errorf("extract: %v", err)
		}
		for _, ev := range evs {
			db := notify.DB(ev.Namespace)
			out = append(out, "__keyspace@"+db+"__:"+string(ev.Key)+"="+ev.Name, "__keyevent@"+db+"__:"+ev.Name+"="+string(ev.Key))
		}
	}
	return out
}

func TestEventsOnPrimaryMatchExtractedEvents(t *testing.T) {
	te := newTestEnv(t)
	te.Notify.SetFlags(notify.Keyspace | notify.Keyevent | notify.All)
	rec := &recorder{}
	te.PubSub.Subscribe(rec, pubsub.KindPattern, []byte("__key*"))
	cl := &Client{ID: 1, Authed: true, Admin: true}
	tenant := &Client{ID: 2, Authed: true, Namespace: "tenant A"}
	script := []struct {
		cl   *Client
		args []string
	}{
		{cl, []string{"SET", "k1", "v"}},
		{cl, []string{"SET", "k1", "v", "NX"}},        // condition fails: nothing
		{cl, []string{"SET", "k2", "v", "XX"}},        // condition fails: nothing
		{cl, []string{"SET", "k1", "w", "XX", "GET"}}, // writes: set
		{cl, []string{"SET", "bin\x00key\xff", "v", "EX", "100"}},
		{cl, []string{"APPEND", "k1", "x"}}, // out of scope: nothing
		{cl, []string{"INCR", "n"}},         // out of scope: nothing
		{cl, []string{"UNLINK", "n"}},       // out of scope: nothing
		{cl, []string{"DEL", "k1", "missing", "bin\x00key\xff", "k1"}},
		{cl, []string{"DEL", "missing"}}, // nothing deleted: no batch
		{tenant, []string{"SET", "k1", "t"}},
		{tenant, []string{"DEL", "k1"}},
	}
	for _, s := range script {
		te.run(s.cl, s.args...)
	}
	want := []string{
		"__keyspace@0__:k1=set", "__keyevent@0__:set=k1",
		"__keyspace@0__:k1=set", "__keyevent@0__:set=k1",
		"__keyspace@0__:bin\x00key\xff=set", "__keyevent@0__:set=bin\x00key\xff",
		"__keyspace@0__:k1=del", "__keyevent@0__:del=k1",
		"__keyspace@0__:bin\x00key\xff=del", "__keyevent@0__:del=bin\x00key\xff",
		"__keyspace@ns:tenant%20A__:k1=set", "__keyevent@ns:tenant%20A__:set=k1",
		"__keyspace@ns:tenant%20A__:k1=del", "__keyevent@ns:tenant%20A__:del=k1",
	}
	if got := rec.events(); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("primary published\n%q\nwant\n%q", got, want)
	}
	if got := extracted(t, te.batches); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("batches carry\n%q\nwant\n%q", got, want)
	}
}

func TestNoContextWhenClassesAreOff(t *testing.T) {
	te := newTestEnv(t)
	cl := &Client{ID: 1, Authed: true, Admin: true}
	// K and E alone enable no class: the batches carry no notify bit.
	te.Notify.SetFlags(notify.Keyspace | notify.Keyevent)
	te.run(cl, "SET", "a", "1")
	te.run(cl, "DEL", "a")
	// A class without K or E still ships the context for replicas.
	te.Notify.SetFlags(notify.String)
	te.run(cl, "SET", "b", "1")
	if len(te.batches) != 3 {
		t.Fatalf("%d batches", len(te.batches))
	}
	for i, want := range []bool{false, false, true} {
		var ld storage.LogData
		storage.ReadBatch(te.batches[i], func(r storage.Record) {
			if r.Kind == storage.RecordLogData {
				ld, _ = storage.DecodeLogData(r.Key)
			}
		})
		if got := ld.Flags&storage.LogFlagNotify != 0; got != want {
			t.Errorf("batch %d (%v): notify bit %v, want %v", i, ld.Cmd, got, want)
		}
	}
}

func TestExtractSkipsBadContext(t *testing.T) {
	te := newTestEnv(t)
	te.Notify.SetFlags(notify.All)
	cl := &Client{ID: 1, Authed: true, Admin: true}
	te.run(cl, "SET", "k", "v")
	good := te.batches[0]
	// Rewrite the LogData record in place: version 9, then an unknown
	// command code with the notify bit.
	for _, mutate := range []func(ld []byte){
		func(ld []byte) { ld[0] = 9 },
		func(ld []byte) { ld[2], ld[3] = 0xff, 0xfe },
	} {
		b := append([]byte(nil), good...)
		storage.ReadBatch(b, func(r storage.Record) {
			if r.Kind == storage.RecordLogData {
				mutate(r.Key) // aliases b
			}
		})
		evs, _ := notify.Extract(b)
		if len(evs) != 0 {
			t.Errorf("events from a bad context: %+v", evs)
		}
	}
	if evs, err := notify.Extract(good[:len(good)-3]); err == nil {
		t.Errorf("truncated batch: no error, events %+v", evs)
	}
	if _, err := notify.Extract(nil); err == nil {
		t.Error("empty batch: no error")
	}
}
