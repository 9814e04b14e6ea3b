package commands

import (
	"bytes"
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
	store.SetCommitHook(func(_ uint64, repr []byte) { te.batches = append(te.batches, bytes.Clone(repr)) })
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

// ev renders one event as the two messages K and E publish.
func ev(db, key, name string) []string {
	return []string{"__keyspace@" + db + "__:" + key + "=" + name, "__keyevent@" + db + "__:" + name + "=" + key}
}

func TestEventsOnPrimaryMatchExtractedEvents(t *testing.T) {
	te := newTestEnv(t)
	te.Notify.SetFlags(notify.Keyspace | notify.Keyevent | notify.All | notify.New)
	rec := &recorder{}
	te.PubSub.Subscribe(rec, pubsub.KindPattern, []byte("__key*"))
	cl := &Client{ID: 1, Authed: true, Admin: true}
	tenant := &Client{ID: 2, Authed: true, Namespace: "tenant A"}
	past := fmt.Sprint(time.Now().Add(-time.Hour).UnixMilli())
	script := []struct {
		cl   *Client
		args []string
	}{
		{cl, []string{"SET", "k1", "v"}},
		{cl, []string{"SET", "k1", "v", "NX"}},        // condition fails: nothing
		{cl, []string{"SET", "k2", "v", "XX"}},        // condition fails: nothing
		{cl, []string{"SET", "k1", "w", "XX", "GET"}}, // writes: set
		{cl, []string{"SET", "bin\x00key\xff", "v", "EX", "100"}},
		{cl, []string{"APPEND", "k1", "x"}},
		{cl, []string{"INCR", "n"}},
		{cl, []string{"UNLINK", "n"}},
		{cl, []string{"DEL", "k1", "missing", "bin\x00key\xff", "k1"}},
		{cl, []string{"DEL", "missing"}}, // nothing deleted: no batch
		{cl, []string{"MSET", "a", "1", "b", "2", "a", "3"}},
		{cl, []string{"RENAME", "a", "b"}},
		{cl, []string{"SET", "old", "v", "PXAT", past}}, // stored already expired
		{cl, []string{"GET", "old"}},                    // reclaims it: expired
		{cl, []string{"MULTI"}},
		{cl, []string{"INCRBYFLOAT", "f", "1.5"}},
		{cl, []string{"COPY", "f", "b", "REPLACE"}},
		{cl, []string{"EXPIRE", "f", "-1"}},
		{cl, []string{"EXEC"}},
		{tenant, []string{"SET", "k1", "t"}},
		{tenant, []string{"DEL", "k1"}},
	}
	for _, s := range script {
		te.run(s.cl, s.args...)
	}
	var want []string
	for _, e := range [][3]string{
		{"0", "k1", "new"}, {"0", "k1", "set"},
		{"0", "k1", "set"},
		{"0", "bin\x00key\xff", "new"}, {"0", "bin\x00key\xff", "set"}, {"0", "bin\x00key\xff", "expire"},
		{"0", "k1", "append"},
		{"0", "n", "new"}, {"0", "n", "incrby"},
		{"0", "n", "del"},
		{"0", "k1", "del"}, {"0", "bin\x00key\xff", "del"},
		{"0", "a", "new"}, {"0", "a", "set"}, {"0", "b", "new"}, {"0", "b", "set"}, {"0", "a", "set"},
		{"0", "b", "new"}, {"0", "a", "rename_from"}, {"0", "b", "rename_to"},
		{"0", "old", "new"}, {"0", "old", "set"}, {"0", "old", "expire"},
		{"0", "old", "expired"},
		{"0", "f", "new"}, {"0", "f", "incrbyfloat"}, {"0", "b", "new"}, {"0", "b", "copy_to"}, {"0", "f", "del"},
		{"ns:tenant%20A", "k1", "new"}, {"ns:tenant%20A", "k1", "set"},
		{"ns:tenant%20A", "k1", "del"},
	} {
		want = append(want, ev(e[0], e[1], e[2])...)
	}
	if got := rec.events(); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("primary published\n%q\nwant\n%q", got, want)
	}
	if got := extracted(t, te.batches); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("batches carry\n%q\nwant\n%q", got, want)
	}
}

func TestKeyMissIsPublishedButNotWritten(t *testing.T) {
	te := newTestEnv(t)
	te.Notify.SetFlags(notify.Keyevent | notify.KeyMiss | notify.All)
	rec := &recorder{}
	te.PubSub.Subscribe(rec, pubsub.KindPattern, []byte("__key*"))
	cl := &Client{ID: 1, Authed: true, Admin: true}
	for _, args := range [][]string{{"GET", "x"}, {"MGET", "x", "y"}, {"EXISTS", "x"}, {"TTL", "x"}, {"TYPE", "x"},
		{"STRLEN", "x"}, {"GETRANGE", "x", "0", "1"}, {"GETDEL", "x"}, {"GETEX", "x"}, {"COPY", "x", "y"},
		{"GETSET", "x", "1"}, {"INCR", "y"}, {"GET", "x"}} {
		te.run(cl, args...)
	}
	want := []string{"keymiss=x", "keymiss=x", "keymiss=y", "keymiss=x", "keymiss=x", "keymiss=x", "keymiss=x",
		"keymiss=x", "keymiss=x", "keymiss=x", "keymiss=x", "keymiss=x", "set=x", "incrby=y"}
	var got []string
	for _, e := range rec.events() {
		got = append(got, strings.TrimPrefix(e, "__keyevent@0__:"))
	}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("published\n%q\nwant\n%q", got, want)
	}
	// keymiss never travels; the writes do.
	wantBatches := append(ev("0", "x", "set"), ev("0", "y", "incrby")...)
	if got := extracted(t, te.batches); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", wantBatches) {
		t.Fatalf("batches carry %q, want %q", got, wantBatches)
	}
}

// firstLogData returns the first LogData record of a batch: its context.
func firstLogData(b []byte) (ld []byte) {
	storage.ReadBatch(b, func(r storage.Record) {
		if ld == nil && r.Kind == storage.RecordLogData {
			ld = r.Key
		}
	})
	return ld
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
		ld, _ := storage.DecodeLogData(firstLogData(te.batches[i]))
		if got := ld.Flags&storage.LogFlagNotify != 0; got != want {
			t.Errorf("batch %d (%v): notify bit %v, want %v", i, ld.Cmd, got, want)
		}
	}
	// Only the enabled class travels: "set", not "new".
	evs, err := notify.Extract(te.batches[2])
	if err != nil || len(evs) != 1 || evs[0].Name != "set" {
		t.Errorf("extracted %+v, %v; want one set", evs, err)
	}
}

func TestExtractSkipsBadContext(t *testing.T) {
	te := newTestEnv(t)
	te.Notify.SetFlags(notify.All)
	cl := &Client{ID: 1, Authed: true, Admin: true}
	te.run(cl, "SET", "k", "v")
	good := te.batches[0]
	// Rewrite records in place: the context's version, the notify bit,
	// or the event code.
	for i, mutate := range []func(ld []byte){
		func(ld []byte) {
			if !notify.IsRecordEvents(ld) {
				ld[0] = 9
			}
		},
		func(ld []byte) {
			if !notify.IsRecordEvents(ld) {
				ld[4] = 0
			}
		},
		func(ld []byte) {
			if notify.IsRecordEvents(ld) {
				ld[1] = 0xfe
			}
		},
	} {
		b := append([]byte(nil), good...)
		storage.ReadBatch(b, func(r storage.Record) {
			if r.Kind == storage.RecordLogData {
				mutate(r.Key) // aliases b
			}
		})
		evs, _ := notify.Extract(b)
		if len(evs) != 0 {
			t.Errorf("mutation %d: events from a bad context: %+v", i, evs)
		}
	}
	if evs, err := notify.Extract(good[:len(good)-3]); err == nil {
		t.Errorf("truncated batch: no error, events %+v", evs)
	}
	if _, err := notify.Extract(nil); err == nil {
		t.Error("empty batch: no error")
	}
}
