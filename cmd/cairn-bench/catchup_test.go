package main

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const redisPrimaryInfo = "# Replication\r\nrole:master\r\nconnected_slaves:1\r\n" +
	"slave0:ip=127.0.0.1,port=6380,state=online,offset=11861768,lag=0\r\n" +
	"master_failover_state:no-failover\r\nmaster_replid:4f0c1a\r\nmaster_replid2:0000\r\n" +
	"master_repl_offset:11861768\r\nsecond_repl_offset:-1\r\nrepl_backlog_active:1\r\n"

const redisReplicaInfo = "# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\nmaster_port:6379\r\n" +
	"master_link_status:up\r\nmaster_last_io_seconds_ago:0\r\nmaster_sync_in_progress:0\r\n" +
	"slave_read_repl_offset:11861768\r\nslave_repl_offset:11861700\r\nslave_priority:100\r\n" +
	"slave_read_only:1\r\nconnected_slaves:0\r\nmaster_repl_offset:11861700\r\n"

// Cairn's INFO replication of a replica during a full sync (LF only, as a
// server might send).
const cairnSyncingInfo = "# Replication\nrole:slave\nmaster_host:127.0.0.1\nmaster_port:6666\n" +
	"master_link_status:down\nmaster_sync_in_progress:1\nslave_repl_offset:0\nmaster_repl_offset:0\n"

func TestParseInfo(t *testing.T) {
	m := parseInfo([]byte(redisPrimaryInfo + "\r\n# Other\r\nweird line\r\n:novalue\r\nurl:http://x:1\r\nrole:again\r\n"))
	for k, want := range map[string]string{
		"role":               "again", // the last one wins
		"master_repl_offset": "11861768",
		"slave0":             "ip=127.0.0.1,port=6380,state=online,offset=11861768,lag=0",
		"url":                "http://x:1", // split at the first colon
		"second_repl_offset": "-1",
	} {
		if m[k] != want {
			t.Errorf("%s = %q, want %q", k, m[k], want)
		}
	}
	for _, k := range []string{"# Replication", "weird line", "", "# Other"} {
		if _, ok := m[k]; ok {
			t.Errorf("field %q should have been skipped", k)
		}
	}
}

func TestParseReplInfo(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       replInfo
		err        string
	}{
		{"redis primary", redisPrimaryInfo, replInfo{role: "master", offset: 11861768}, ""},
		{"redis replica", redisReplicaInfo, replInfo{role: "slave", offset: 11861700, linkUp: true}, ""},
		{"cairn syncing", cairnSyncingInfo, replInfo{role: "slave", syncing: true}, ""},
		{"no role", "# Replication\r\nmaster_repl_offset:3\r\n", replInfo{}, "no role"},
		{"odd role", "role:sentinel\r\n", replInfo{}, "unknown role"},
		{"primary without offset", "role:master\r\nslave_repl_offset:3\r\n", replInfo{}, "no master_repl_offset"},
		{"replica without offset", "role:slave\r\nmaster_repl_offset:3\r\n", replInfo{}, "no slave_repl_offset"},
		{"bad offset", "role:master\r\nmaster_repl_offset:12x\r\n", replInfo{}, "not an integer"},
	} {
		got, err := parseReplInfo([]byte(tc.text))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: got %+v, %v; want an error with %q", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

func TestInfoText(t *testing.T) {
	if b, err := infoText(Value{Kind: '$', Str: []byte("role:master")}); err != nil || string(b) != "role:master" {
		t.Errorf("bulk: %q, %v", b, err)
	}
	if b, err := infoText(Value{Kind: '=', Str: []byte("txt:role:master")}); err != nil || string(b) != "role:master" {
		t.Errorf("verbatim: %q, %v", b, err)
	}
	for _, v := range []Value{{Kind: '$', Null: true}, {Kind: '+', Str: []byte("OK")}, {Kind: '-', Str: []byte("ERR")}} {
		if _, err := infoText(v); err == nil {
			t.Errorf("%v: no error", v)
		}
	}
}

// command returns the arguments of a command frame as strings.
func command(v Value) []string {
	var args []string
	for _, e := range v.Elems {
		args = append(args, string(e.Str))
	}
	return args
}

func bulk(s string) []byte { return AppendFrame(nil, Value{Kind: '$', Str: []byte(s)}) }

// fakePair is a primary and a replica in the test's process. The primary
// answers SET (counting each in its offset) and INFO replication; the
// replica answers INFO replication with an offset that a goroutine moves
// towards the primary's by at most step every millisecond, after delay.
type fakePair struct {
	primary, replica string
	pOff, rOff       atomic.Int64
	sets             atomic.Int64
	onSet            func(key string) // called for each SET, before its reply
	// onCommand, if set, answers the primary's commands other than SET
	// and INFO: it returns the reply's bytes, or nil for an error reply.
	onCommand   func(args []string) []byte
	onReplica   func(c net.Conn, rd *Reader, args []string) bool
	replicaRole string
}

func newFakePair(t *testing.T, step int64, delay time.Duration) *fakePair {
	f := &fakePair{replicaRole: "slave"}
	f.primary = fakeServer(t, func(c net.Conn, rd *Reader) {
		for {
			v, err := rd.ReadFrame()
			if err != nil {
				return
			}
			args := command(v)
			var out []byte
			switch strings.ToUpper(args[0]) {
			case "SET":
				f.pOff.Add(1)
				f.sets.Add(1)
				if f.onSet != nil {
					f.onSet(args[1])
				}
				out = []byte("+OK\r\n")
			case "INFO":
				out = bulk(fmt.Sprintf("# Replication\r\nrole:master\r\nmaster_repl_offset:%d\r\n", f.pOff.Load()))
			default:
				if f.onCommand != nil {
					out = f.onCommand(args)
				}
				if out == nil {
					out = []byte("-ERR unknown command\r\n")
				}
			}
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	})
	f.replica = fakeServer(t, func(c net.Conn, rd *Reader) {
		for {
			v, err := rd.ReadFrame()
			if err != nil {
				return
			}
			args := command(v)
			if f.onReplica != nil && f.onReplica(c, rd, args) {
				return
			}
			var out []byte
			switch strings.ToUpper(args[0]) {
			case "INFO":
				out = bulk(fmt.Sprintf("# Replication\r\nrole:%s\r\nmaster_link_status:up\r\nslave_repl_offset:%d\r\nmaster_repl_offset:%[2]d\r\n", f.replicaRole, f.rOff.Load()))
			default:
				out = []byte("-ERR unknown command\r\n")
			}
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	})
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		var behindSince time.Time
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			p, r := f.pOff.Load(), f.rOff.Load()
			if p == r {
				behindSince = time.Time{}
				continue
			}
			if behindSince.IsZero() {
				behindSince = time.Now()
			}
			if time.Since(behindSince) >= delay {
				f.rOff.Store(min(p, r+step))
			}
		}
	}()
	return f
}

func catchupCfg(f *fakePair) *catchupConfig {
	cm := testCommon(f.primary)
	return &catchupConfig{
		common:    cm,
		replFlags: replFlags{primary: f.primary, replica: f.replica},
		conns:     5, requests: 1003, pipeline: 7, keyspace: 50, size: 3,
		poll: time.Millisecond, catchupLimit: 5 * time.Second, prefix: "k:",
	}
}

// TestCatchupFake runs the catchup mode against a fake pair whose replica
// applies at most 20 offsets a millisecond, starting 30 ms after it falls
// behind.
func TestCatchupFake(t *testing.T) {
	f := newFakePair(t, 20, 30*time.Millisecond)
	f.pOff.Store(100)
	var keys keySet
	f.onSet = func(k string) { keys.add(k) }
	cfg := catchupCfg(f)
	cfg.quiet = true
	r, err := runCatchup(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Sets != 1003 || f.sets.Load() != 1003 || r.StoppedEarly {
		t.Errorf("sets %d (server saw %d), stopped early %v; want 1003", r.Sets, f.sets.Load(), r.StoppedEarly)
	}
	if r.StartOffset != 100 || r.EndOffset != 1103 || !r.CaughtUp {
		t.Errorf("offsets %d -> %d, caught up %v; want 100 -> 1103, true", r.StartOffset, r.EndOffset, r.CaughtUp)
	}
	if r.CatchupMillis <= 0 || r.Polls < 2 || r.LagAtLoadEnd <= 0 {
		t.Errorf("catch-up %.2f ms in %d polls, lag at the end %d: want a wait", r.CatchupMillis, r.Polls, r.LagAtLoadEnd)
	}
	if n := keys.len(); n != 50 {
		t.Errorf("%d distinct keys written, want -keyspace 50", n)
	}
	if !strings.Contains(writeTableString(r), "replica caught up") {
		t.Errorf("the table lacks the catch-up row:\n%s", writeTableString(r))
	}
}

// TestCatchupNotCaughtUp checks the report of a replica that never
// reaches the primary's offset.
func TestCatchupNotCaughtUp(t *testing.T) {
	f := newFakePair(t, 0, 0) // never applies anything
	cfg := catchupCfg(f)
	cfg.quiet = true
	cfg.requests = 10
	cfg.catchupLimit = 100 * time.Millisecond
	r, err := runCatchup(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.CaughtUp || r.LagAtLoadEnd != 10 || r.CatchupMillis < 100 {
		t.Errorf("caught up %v, lag %d, waited %.1f ms; want false, 10, at least 100", r.CaughtUp, r.LagAtLoadEnd, r.CatchupMillis)
	}
	if !strings.Contains(writeTableString(r), "NOT caught up") {
		t.Errorf("the table does not say so:\n%s", writeTableString(r))
	}
}

// TestCatchupRoles checks that a -replica that is not a replica is
// refused before any load.
func TestCatchupRoles(t *testing.T) {
	f := newFakePair(t, 1000, 0)
	f.replicaRole = "master"
	cfg := catchupCfg(f)
	cfg.quiet = true
	_, err := runCatchup(cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "not slave") {
		t.Fatalf("got %v, want a role error", err)
	}
	if f.sets.Load() != 0 {
		t.Errorf("%d SETs were sent", f.sets.Load())
	}
}

func writeTableString(r report) string {
	var b strings.Builder
	writeTable(&b, r)
	return b.String()
}

// keySet is a set of strings safe for concurrent use.
type keySet struct {
	mu   sync.Mutex
	keys map[string]bool
}

func (m *keySet) add(k string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.keys == nil {
		m.keys = make(map[string]bool)
	}
	m.keys[k] = true
}

func (m *keySet) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.keys)
}
