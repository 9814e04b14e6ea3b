package commands

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/pubsub"
)

// TestKeyspaceHitsAndMisses replays testdata/keyspace_hits.txt: for each
// command, the keyspace hits and misses redis-server 7.0.15 counted for it.
func TestKeyspaceHitsAndMisses(t *testing.T) {
	data, err := os.ReadFile("testdata/keyspace_hits.txt")
	if err != nil {
		t.Fatal(err)
	}
	cl := &Client{ID: 1, Authed: true, Admin: true}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "|")
		if len(f) != 3 {
			t.Fatalf("testdata/keyspace_hits.txt:%d: %q", i+1, line)
		}
		wantHits, _ := strconv.ParseInt(f[1], 10, 64)
		wantMisses, _ := strconv.ParseInt(f[2], 10, 64)
		te := newTestEnv(t)
		te.run(cl, "SET", "a", "1")
		te.run(cl, "SET", "b", "2")
		reply := te.run(cl, strings.Fields(f[0])...)
		hits, misses := te.Stats.KeyspaceHits.Load(), te.Stats.KeyspaceMisses.Load()
		if hits != wantHits || misses != wantMisses {
			t.Errorf("%s (reply %q): hits %d, misses %d; want %d, %d", f[0], reply, hits, misses, wantHits, wantMisses)
		}
	}
}

// TestScanTypeReadsEachKey: SCAN with TYPE reads each key it matches, as
// Redis 7.0 does: a hit for a live key; for an expired one, "expired"
// (the key is reclaimed), then a miss and "keymiss", inside EXEC too.
// Without TYPE, SCAN reclaims expired keys and counts nothing.
func TestScanTypeReadsEachKey(t *testing.T) {
	te := newTestEnv(t)
	te.Notify.SetFlags(notify.Keyevent | notify.KeyMiss | notify.Expired)
	rec := &recorder{}
	te.PubSub.Subscribe(rec, pubsub.KindPattern, []byte("__key*"))
	cl := &Client{ID: 1, Authed: true, Admin: true}
	past := fmt.Sprint(time.Now().Add(-time.Hour).UnixMilli())
	steps := []struct {
		args         []string
		reply        string
		hits, misses int64 // after the step
		events       []string
	}{
		{[]string{"SET", "live", "v"}, "+OK\r\n", 0, 0, nil},
		{[]string{"SET", "old1", "v", "PXAT", past}, "+OK\r\n", 0, 0, nil},
		{[]string{"SCAN", "0", "TYPE", "hash", "COUNT", "100"}, "*2\r\n$1\r\n0\r\n*0\r\n", 1, 1,
			[]string{"expired=old1", "keymiss=old1"}},
		{[]string{"SET", "old2", "v", "PXAT", past}, "+OK\r\n", 1, 1, nil},
		{[]string{"SCAN", "0", "MATCH", "old*", "COUNT", "100"}, "*2\r\n$1\r\n0\r\n*0\r\n", 1, 1,
			[]string{"expired=old2"}},
		{[]string{"SET", "old3", "v", "PXAT", past}, "+OK\r\n", 1, 1, nil},
		{[]string{"MULTI"}, "+OK\r\n", 1, 1, nil},
		{[]string{"SCAN", "0", "TYPE", "string"}, "+QUEUED\r\n", 1, 1, nil},
		{[]string{"EXEC"}, "*1\r\n*2\r\n$1\r\n0\r\n*1\r\n$4\r\nlive\r\n", 2, 2,
			[]string{"expired=old3", "keymiss=old3"}},
	}
	for _, s := range steps {
		rec.got = nil
		if got := te.run(cl, s.args...); got != s.reply {
			t.Fatalf("%v: reply %q, want %q", s.args, got, s.reply)
		}
		var events []string
		for _, e := range rec.events() {
			events = append(events, strings.TrimPrefix(e, "__keyevent@0__:"))
		}
		if !slices.Equal(events, s.events) {
			t.Errorf("%v: published %q, want %q", s.args, events, s.events)
		}
		if h, m := te.Stats.KeyspaceHits.Load(), te.Stats.KeyspaceMisses.Load(); h != s.hits || m != s.misses {
			t.Errorf("%v: hits %d, misses %d; want %d, %d", s.args, h, m, s.hits, s.misses)
		}
	}
	if got := te.run(cl, "DBSIZE"); got != ":1\r\n" {
		t.Errorf("DBSIZE after the scans reclaimed three keys: %q", got)
	}
}
