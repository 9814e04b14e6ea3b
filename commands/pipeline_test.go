package commands

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/pubsub"
	"github.com/cairnkv/cairn/server/resp"
	"github.com/cairnkv/cairn/storage"
)

// group runs the requests as one pipelined group and returns the replies.
func (te *testEnv) group(cl *Client, reqs ...string) string {
	w := resp.NewWriter()
	var rs [][][]byte
	for _, r := range reqs {
		var args [][]byte
		for _, a := range strings.Fields(r) {
			args = append(args, []byte(a))
		}
		if !Groupable(args) {
			panic("not groupable: " + r)
		}
		rs = append(rs, args)
	}
	te.DispatchGroup(cl, w, rs)
	return string(w.Bytes())
}

func TestPipelinedGroupCommitsOnce(t *testing.T) {
	te := newTestEnv(t)
	te.Notify.SetFlags(notify.Keyevent | notify.All)
	rec := &recorder{}
	te.PubSub.Subscribe(rec, pubsub.KindPattern, []byte("__key*"))
	cl := &Client{ID: 1, Authed: true, Admin: true}
	got := te.group(cl, "SET a 1", "INCR a", "GET a", "APPEND b x", "RENAME b c", "GET b", "MSET d 1 e 2", "DEL d e a", "EXISTS a c")
	want := "+OK\r\n:2\r\n$1\r\n2\r\n:1\r\n+OK\r\n$-1\r\n+OK\r\n:3\r\n:1\r\n"
	if got != want {
		t.Fatalf("replies %q, want %q", got, want)
	}
	if len(te.batches) != 1 {
		t.Fatalf("%d batches committed, want 1", len(te.batches))
	}
	evs := fmt.Sprint(rec.events())
	wantEvs := "[__keyevent@0__:set=a __keyevent@0__:incrby=a __keyevent@0__:append=b __keyevent@0__:rename_from=b " +
		"__keyevent@0__:rename_to=c __keyevent@0__:set=d __keyevent@0__:set=e __keyevent@0__:del=d __keyevent@0__:del=e __keyevent@0__:del=a]"
	if evs != wantEvs {
		t.Fatalf("events %s, want %s", evs, wantEvs)
	}
	// The one batch carries the same events, for replicas.
	var carried []string
	for _, m := range extracted(t, te.batches) {
		if strings.HasPrefix(m, "__keyevent@") {
			carried = append(carried, m)
		}
	}
	if got := fmt.Sprint(carried); got != wantEvs {
		t.Fatalf("the batch carries %s, want %s", got, wantEvs)
	}
	if n := te.Store.DBSize(""); n != 1 {
		t.Fatalf("DBSIZE %d, want 1 (c)", n)
	}
	// Fewer than two writes: one by one, as always.
	te.group(cl, "GET c", "SET f 1", "GET f")
	if len(te.batches) != 2 {
		t.Fatalf("%d batches after a one-write group, want 2", len(te.batches))
	}
}

// TestPipelinedStreamGroup: stream writes share a group's batch too, and
// each sees the ones before it: a trim reads the entries the group added.
func TestPipelinedStreamGroup(t *testing.T) {
	te := newTestEnv(t)
	cl := &Client{ID: 1, Authed: true, Admin: true}
	got := te.group(cl, "XADD s 1-1 a 1", "XADD s 2-1 a 2", "XADD s MAXLEN 2 3-1 a 3", "XLEN s", "XDEL s 2-1", "XRANGE s - +", "XTRIM s MAXLEN 0")
	want := "$3\r\n1-1\r\n$3\r\n2-1\r\n$3\r\n3-1\r\n:2\r\n:1\r\n*1\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\na\r\n$1\r\n3\r\n:1\r\n"
	if got != want {
		t.Fatalf("replies %q, want %q", got, want)
	}
	if len(te.batches) != 1 {
		t.Fatalf("%d batches committed, want 1", len(te.batches))
	}
}

func TestPipelinedGroupFailedCommit(t *testing.T) {
	te := newTestEnv(t)
	te.Notify.SetFlags(notify.Keyevent | notify.All)
	rec := &recorder{}
	te.PubSub.Subscribe(rec, pubsub.KindPattern, []byte("__key*"))
	cl := &Client{ID: 1, Authed: true, Admin: true}
	te.run(cl, "SET", "a", "old")
	te.Store.SetCommitFault(func(*storage.Batch) error { return errors.New("disk on fire") })
	got := te.group(cl, "SET a new", "GET a", "INCR n")
	te.Store.SetCommitFault(nil)
	if strings.Count(got, ": disk on fire\r\n") != 3 || !strings.HasPrefix(got, "-ERR storage: commit ") {
		t.Fatalf("replies %q: want the error three times", got)
	}
	if got := te.run(cl, "MGET", "a", "n"); got != "*2\r\n$3\r\nold\r\n$-1\r\n" {
		t.Fatalf("after the failed group: %q", got)
	}
	if evs := rec.events(); len(evs) != 1 { // the first SET's only
		t.Fatalf("events %q", evs)
	}
}
