package tests

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// runToExit runs bin/cairn with args in dir and returns its exit code and
// output; it must exit by itself within the guard time.
func runToExit(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(c, cairnBin(t), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if c.Err() != nil {
		t.Fatalf("cairn %v did not exit: %s", args, out)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

func TestStartsOnEmbeddedDefaults(t *testing.T) {
	if c, err := net.DialTimeout("tcp", "127.0.0.1:6666", 200*time.Millisecond); err == nil {
		c.Close()
		t.Fatal("port 6666 is already in use on this machine; the default-port test needs it free")
	}
	dir := t.TempDir()
	n := &Node{t: t, Name: "cairn", Port: 6666, Dir: dir, bin: cairnBin(t)}
	n.start()
	t.Cleanup(n.Kill)
	rdb := n.Client()
	if err := rdb.Set(ctx(t), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cairn-data")); err != nil {
		t.Fatalf("default data dir ./cairn-data not created: %v", err)
	}
	n.Stop()
}

func TestInvalidValuesStopStartup(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "bad.conf")
	os.WriteFile(conf, []byte("port 7000\nhz notanumber\n"), 0o644)
	events := filepath.Join(dir, "events.conf")
	os.WriteFile(events, []byte("# notify\nnotify-keyspace-events KEq\n"), 0o644)
	noCmd := filepath.Join(dir, "nocmd.conf")
	os.WriteFile(noCmd, []byte("rename-command keys \"\"\nrename-command keys k2\n"), 0o644)
	taken := filepath.Join(dir, "taken.conf")
	os.WriteFile(taken, []byte("rename-command get set\n"), 0o644)
	cases := []struct {
		args []string
		want []string // substrings of the one-line error
	}{
		{[]string{"--port", "99999"}, []string{"port", "99999"}},
		{[]string{"--slave-read-only", "maybe"}, []string{"slave-read-only", "maybe"}},
		{[]string{"--maxclients", "lots"}, []string{"maxclients", "lots"}},
		{[]string{"-c", conf}, []string{"hz", "notanumber", "bad.conf:2"}},
		{[]string{"--no-such-option", "1"}, []string{"no-such-option"}},
		// Values other packages validate fail as early, on stderr even
		// with logs going to a file, and name where they came from.
		{[]string{"-c", events, "--log-dir", filepath.Join(dir, "logs")},
			[]string{"notify-keyspace-events", "KEq", "events.conf:2", "Invalid event class character"}},
		{[]string{"--notify-keyspace-events", "Z"}, []string{"flag --notify-keyspace-events", `"Z"`}},
		{[]string{"--slave-read-only", "no"}, []string{"flag --slave-read-only", `"no"`, "read-only"}},
		{[]string{"--port", "0"}, []string{"port", `"0"`}},
		{[]string{"-c", noCmd}, []string{"nocmd.conf:2", "rename-command", "No such command in rename-command", `"keys"`}},
		{[]string{"-c", taken}, []string{"taken.conf:1", "rename-command", "Target command name already exists", `"set"`}},
	}
	for _, c := range cases {
		data := filepath.Join(dir, "d")
		code, out := runToExit(t, dir, append(c.args, "--dir", data)...)
		if code != 1 {
			t.Errorf("cairn %v: exit code %d, want 1; output:\n%s", c.args, code, out)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Errorf("cairn %v: the data dir was created (%v) before the configuration was checked", c.args, err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 1 {
			t.Errorf("cairn %v: want a one-line error, got:\n%s", c.args, out)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("cairn %v: error %q does not mention %q", c.args, out, w)
			}
		}
	}
}

func TestSecondServerOnSameDirRefused(t *testing.T) {
	n := StartCairn(t)
	code, out := runToExit(t, n.Dir, "--port", fmt.Sprint(freePort(t)), "--dir", filepath.Join(n.Dir, "data"))
	if code != 1 || !strings.Contains(out, "in use by another cairn process") {
		t.Fatalf("second server: exit %d, output:\n%s", code, out)
	}
	if err := n.Client().Ping(ctx(t)).Err(); err != nil {
		t.Fatalf("first server hurt: %v", err)
	}
}

// TestBindOptionalAddress binds, as Redis does, a list where an address
// the host lacks is optional ("-"): the server serves on the others. The
// same address without "-" stops start-up with an error naming it.
func TestBindOptionalAddress(t *testing.T) {
	const absent = "192.0.2.1" // TEST-NET-1: assigned to no interface here
	n := StartCairn(t, "--bind", "127.0.0.1", "-"+absent, "--log-level", "fatal")
	if err := n.Client().Ping(ctx(t)).Err(); err != nil {
		t.Fatal(err)
	}
	got, err := n.Client().ConfigGet(ctx(t), "bind").Result()
	if err != nil || got["bind"] != "127.0.0.1 -"+absent {
		t.Errorf("CONFIG GET bind = %v, %v", got, err)
	}
	n.Stop()

	dir := t.TempDir()
	code, out := runToExit(t, dir, "--bind", "127.0.0.1", absent, "--port", fmt.Sprint(freePort(t)), "--dir", filepath.Join(dir, "d"), "--log-level", "warning")
	if code != 1 || !strings.Contains(out, "bind "+absent) || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("a bind address the host lacks: exit %d, output:\n%s", code, out)
	}
}

// TestRenameCommand starts a server whose kvrocks.conf renames GET and
// disables KEYS, as redis.conf's rename-command does, and checks that the
// renames survive CONFIG REWRITE and a restart.
func TestRenameCommand(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "kvrocks.conf")
	os.WriteFile(conf, []byte("# hide the dangerous ones\nrename-command KEYS \"\"\nrename-command get FETCH\n"), 0o644)
	n := StartCairn(t, "-c", conf)
	check := func() {
		t.Helper()
		rdb := n.Client()
		defer rdb.Close()
		c := ctx(t)
		if err := rdb.Set(c, "k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			args []any
			want string // the reply, or the error text
		}{
			{[]any{"fetch", "k"}, "v"},
			{[]any{"FeTcH", "k"}, "v"},
			{[]any{"get", "k"}, "ERR unknown command 'get', with args beginning with: 'k' "},
			{[]any{"keys", "*"}, "ERR unknown command 'keys', with args beginning with: '*' "},
			// The command keeps its own name in errors, as in Redis.
			{[]any{"fetch"}, "ERR wrong number of arguments for 'get' command"},
		} {
			got, err := rdb.Do(c, tc.args...).Text()
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("%v = %q, want %q", tc.args, got, tc.want)
			}
		}
		cmds, err := rdb.TxPipelined(c, func(p redis.Pipeliner) error {
			p.Do(c, "fetch", "k")
			return nil
		})
		if err != nil || cmds[0].(*redis.Cmd).Val() != "v" {
			t.Errorf("FETCH in MULTI: %v %v", cmds, err)
		}
	}
	check()
	if err := n.Client().ConfigRewrite(ctx(t)).Err(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(conf); !strings.Contains(string(data), "rename-command get FETCH\n") {
		t.Fatalf("CONFIG REWRITE lost the rename-command lines:\n%s", data)
	}
	n.Stop()
	n.Restart()
	check()
}

func TestConfigFileFlagsAndKvrocksOptions(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "kvrocks.conf")
	os.WriteFile(conf, []byte(strings.Join([]string{
		"# a kvrocks.conf with options Cairn does not implement",
		"workers 8",
		"rocksdb.max_open_files 4096",
		"maxclients 77",
		"hz 11",
		"requirepass \"from file\"",
	}, "\n")+"\n"), 0o644)
	n := StartCairn(t, "-c", conf, "--hz", "12")
	rdb := n.Client(func(o *redis.Options) { o.Password = "from file" })
	got, err := rdb.ConfigGet(ctx(t), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if got["maxclients"] != "77" || got["hz"] != "12" || got["requirepass"] != "from file" {
		t.Fatalf("file/flag layering wrong: maxclients=%q hz=%q requirepass=%q", got["maxclients"], got["hz"], got["requirepass"])
	}
	for _, name := range []string{"workers", "rocksdb.max_open_files"} {
		if strings.Count(n.Log.String(), name) != 1 {
			t.Errorf("want exactly one warning naming %s; log:\n%s", name, n.Log.String())
		}
	}
}

func TestConfigSetAndRewrite(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "cairn.conf")
	orig := "# my comment\nhz 10\nrocksdb.max_open_files 100\nworkers 4\n\nmaxclients 100\n"
	os.WriteFile(conf, []byte(orig), 0o644)
	n := StartCairn(t, "-c", conf)
	rdb := n.Client()
	c := ctx(t)
	if err := rdb.ConfigSet(c, "maxclients", "200").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Do(c, "CONFIG", "SET", "hz", "20", "log-level", "warning").Err(); err != nil {
		t.Fatal(err)
	}
	// An invalid pair leaves the valid one unapplied.
	err := rdb.Do(c, "CONFIG", "SET", "hz", "30", "port", "1").Err()
	if err == nil || !strings.Contains(err.Error(), "port") {
		t.Fatalf("CONFIG SET with an immutable option: %v", err)
	}
	if v := rdb.ConfigGet(c, "hz").Val()["hz"]; v != "20" {
		t.Fatalf("hz after failed multi-set = %q, want 20", v)
	}
	if err := rdb.ConfigRewrite(c).Err(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(conf)
	text := string(data)
	for _, want := range []string{"# my comment", "hz 20", "maxclients 200", "workers 4", "log-level warning"} {
		if !strings.Contains(text, want) {
			t.Errorf("rewritten file lacks %q:\n%s", want, text)
		}
	}
	n.Stop()
	n.Restart()
	if v := n.Client().ConfigGet(ctx(t), "maxclients").Val()["maxclients"]; v != "200" {
		t.Fatalf("maxclients after restart from rewritten file = %q", v)
	}
}

func TestRewriteWithoutConfigFile(t *testing.T) {
	n := StartCairn(t)
	err := n.Client().ConfigRewrite(ctx(t)).Err()
	if err == nil || err.Error() != "ERR The server is running without a config file" {
		t.Fatalf("got %v", err)
	}
}

func TestSIGTERMFinishesAndPersists(t *testing.T) {
	n := StartCairn(t)
	rdb := n.Client()
	c := ctx(t)
	for i := 0; i < 1000; i++ {
		if err := rdb.Set(c, fmt.Sprintf("key:%d", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rdb.Set(c, "ttl", "v", time.Hour)
	start := time.Now()
	n.Stop()
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
	n.Restart()
	rdb = n.Client()
	if got := rdb.DBSize(c).Val(); got != 1001 {
		t.Fatalf("DBSIZE after restart = %d, want 1001", got)
	}
	if got := rdb.Get(c, "key:999").Val(); got != "999" {
		t.Fatalf("key:999 = %q", got)
	}
	if ttl := rdb.TTL(c, "ttl").Val(); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("TTL after restart = %v", ttl)
	}
}

func TestKill9WithSyncLosesNoAcknowledgedWrite(t *testing.T) {
	n := StartCairn(t, "--rocksdb.write_options.sync", "yes")
	w := startAckedWriters(t, n, 8, 5000)
	n.Signal(syscall.SIGKILL, 10*time.Second)
	acked := w.stop()
	n.Restart()
	expectAcknowledged(t, n, acked, "kill -9")
}

// ackedWriters are clients that SET distinct keys (w<writer>:<i> to
// itself) one after another, each until a write fails (the server went
// away), it has made its writes or stop is called, recording every key
// whose write was acknowledged.
type ackedWriters struct {
	acked chan string
	quit  chan struct{}
	wg    sync.WaitGroup
}

// startAckedWriters starts writers clients of each writes and returns once
// more than 500 writes were acknowledged.
func startAckedWriters(t *testing.T, n *Node, writers, each int) *ackedWriters {
	t.Helper()
	c := ctx(t)
	a := &ackedWriters{acked: make(chan string, writers*each), quit: make(chan struct{})}
	for w := range writers {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			rdb := n.Client()
			for i := range each {
				select {
				case <-a.quit:
					return
				default:
				}
				k := fmt.Sprintf("w%d:%d", w, i)
				if err := rdb.Set(c, k, k, 0).Err(); err != nil {
					return // cut off: not acknowledged
				}
				a.acked <- k
			}
		}()
	}
	waitFor(t, 30*time.Second, "some acknowledged writes", func() bool { return len(a.acked) > 500 })
	return a
}

// stop stops the writers and returns the keys of their acknowledged writes.
func (a *ackedWriters) stop() []string {
	close(a.quit)
	a.wg.Wait()
	close(a.acked)
	var keys []string
	for k := range a.acked {
		keys = append(keys, k)
	}
	return keys
}

// expectAcknowledged fails the test unless every key of an acknowledged
// write reads back as itself from n after what happened.
func expectAcknowledged(t *testing.T, n *Node, keys []string, what string) {
	t.Helper()
	rdb, c := n.Client(), ctx(t)
	for _, k := range keys {
		if v, err := rdb.Get(c, k).Result(); err != nil || v != k {
			t.Fatalf("acknowledged write %s lost after %s: %q %v", k, what, v, err)
		}
	}
	t.Logf("%d acknowledged writes survived %s", len(keys), what)
}

// With sync no, Pebble keeps the WAL's last block in memory until it fills;
// the engine writes it out and syncs it in the background once a second,
// so a write made before a quiet spell survives kill -9 once INFO's
// wal_synced_offset has reached the write's offset (master_repl_offset).
func TestKill9WithoutSyncKeepsWritesTheBackgroundSyncCovered(t *testing.T) {
	n := StartCairn(t)
	rdb := n.Client()
	c := ctx(t)
	if err := rdb.Set(c, "quiet", "spell", 0).Err(); err != nil {
		t.Fatal(err)
	}
	off, _ := strconv.ParseUint(infoField(t, rdb, "replication", "master_repl_offset"), 10, 64)
	waitFor(t, 20*time.Second, "the background WAL sync to cover the write", func() bool {
		synced, _ := strconv.ParseUint(infoField(t, rdb, "persistence", "wal_synced_offset"), 10, 64)
		return synced >= off
	})
	n.Kill()
	n.Restart()
	if v, err := n.Client().Get(c, "quiet").Result(); err != nil || v != "spell" {
		t.Fatalf("a write the background sync covered was lost to kill -9: %q %v", v, err)
	}
}

// A WAL write or sync that fails, as on a failing disk, is fatal at once:
// the server logs it and exits with status 1 while writers are busy, the
// writes it cut off get no reply, and with sync yes every acknowledged
// write is there after a restart.
func TestWALFaultIsFatalAndLosesNoAcknowledgedWrite(t *testing.T) {
	n := StartCairnEnv(t, []string{"CAIRN_DEBUG_FAULTS=1"}, "--rocksdb.write_options.sync", "yes")
	w := startAckedWriters(t, n, 8, 20000)
	injectFault(t, n, "WAL-FAULT")
	code, exited := n.WaitExit(20 * time.Second)
	if !exited || code != 1 {
		t.Fatalf("after a WAL fault under load: exited %v, code %d, want 1; log:\n%s", exited, code, n.Log.String())
	}
	acked := w.stop()
	if log := n.Log.String(); !strings.Contains(log, "fatal storage error") || !strings.Contains(log, "injected disk fault") {
		t.Fatalf("the log does not report the fault:\n%s", log)
	}
	n.Restart()
	expectAcknowledged(t, n, acked, "a WAL fault")
}

// With sync no, Pebble writes the WAL out in the background, a 32 KB
// block at a time, after the replies: a fault there is fatal all the
// same, at once, not at some later commit.
func TestWALFaultWithoutSyncIsFatal(t *testing.T) {
	n := StartCairnEnv(t, []string{"CAIRN_DEBUG_FAULTS=1"})
	rdb := n.Client()
	c := ctx(t)
	if err := rdb.Set(c, "before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	injectFault(t, n, "WAL-FAULT")
	// A value larger than a block makes the write-out happen now; it
	// fails, and a reply may or may not come first.
	rdb.Set(c, "after", strings.Repeat("v", 64<<10), 0)
	code, exited := n.WaitExit(20 * time.Second)
	if !exited || code != 1 {
		t.Fatalf("after a WAL fault: exited %v, code %d, want 1; log:\n%s", exited, code, n.Log.String())
	}
	if !strings.Contains(n.Log.String(), "fatal storage error") {
		t.Fatalf("the log does not report the fault:\n%s", n.Log.String())
	}
	n.Restart()
	if got := n.Client().Ping(c).Val(); got != "PONG" {
		t.Fatalf("PING after restart = %q", got)
	}
}

// A flush that fails as on a full disk is fatal too: left to Pebble's
// retries, memtables would pile up until writes stalled for good.
func TestTableFaultIsFatal(t *testing.T) {
	n := StartCairnEnv(t, []string{"CAIRN_DEBUG_FAULTS=1"})
	rdb := n.Client()
	c := ctx(t)
	if err := rdb.Set(c, "before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	injectFault(t, n, "TABLE-FAULT")
	// 24 MB of values overflow the 16 MB memtable, whose flush then
	// writes an sstable.
	val := strings.Repeat("v", 1<<20)
	for i := range 24 {
		if rdb.Set(c, fmt.Sprintf("big:%d", i), val, 0).Err() != nil {
			break // cut off by the exit
		}
	}
	code, exited := n.WaitExit(20 * time.Second)
	if !exited || code != 1 {
		t.Fatalf("after an sstable fault: exited %v, code %d, want 1; log:\n%s", exited, code, n.Log.String())
	}
	if log := n.Log.String(); !strings.Contains(log, "fatal storage error") || !strings.Contains(log, "no space left on device") {
		t.Fatalf("the log does not report the fault:\n%s", log)
	}
	n.Restart()
	if v, err := n.Client().Get(c, "before").Result(); err != nil || v != "1" {
		t.Fatalf("before = %q %v after restart", v, err)
	}
}

// injectFault arms DEBUG <fault> 1. Its reply may be lost if a concurrent
// write meets the fault first and the server exits, but an error reply
// (DEBUG disabled) fails the test.
func injectFault(t *testing.T, n *Node, fault string) {
	t.Helper()
	err := n.Client().Do(ctx(t), "DEBUG", fault, "1").Err()
	if _, isReply := err.(redis.Error); isReply {
		t.Fatalf("DEBUG WAL-FAULT: %v", err)
	}
}

func TestConcurrentIncrIsAtomic(t *testing.T) {
	n := StartCairn(t)
	c := ctx(t)
	const clients, each = 50, 1000
	errs := make(chan error, clients)
	for i := 0; i < clients; i++ {
		go func() {
			rdb := n.Client()
			for j := 0; j < each; j++ {
				if err := rdb.Incr(c, "counter").Err(); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for i := 0; i < clients; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := n.Client().Get(c, "counter").Val(); got != "50000" {
		t.Fatalf("counter = %s, want 50000", got)
	}
}

func TestConcurrentSetNXHasOneWinner(t *testing.T) {
	n := StartCairn(t)
	c := ctx(t)
	for round := 0; round < 20; round++ {
		key := fmt.Sprintf("lock:%d", round)
		const clients = 20
		wins := make(chan bool, clients)
		start := make(chan struct{})
		for i := 0; i < clients; i++ {
			rdb := n.Client()
			go func(i int) {
				<-start
				ok, err := rdb.SetNX(c, key, i, 0).Result()
				wins <- err == nil && ok
			}(i)
		}
		close(start)
		won := 0
		for i := 0; i < clients; i++ {
			if <-wins {
				won++
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d SET NX winners, want 1", round, won)
		}
	}
}

func TestMaxClientsAndIdleTimeout(t *testing.T) {
	n := StartCairn(t)
	admin := n.Raw()
	if got := admin.Do("CONFIG", "SET", "maxclients", "2"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	// The harness's own connections (its start-up probe) may still be
	// closing: wait until admin is the only client.
	waitFor(t, 10*time.Second, "admin alone", func() bool {
		return strings.Contains(admin.Do("INFO", "clients"), "connected_clients:1\r\n")
	})
	second := n.Raw()
	if got := second.Do("PING"); got != "+PONG\r\n" {
		t.Fatal(got)
	}
	third := n.Raw()
	if got := third.Reply(); got != "-ERR max number of clients reached\r\n" {
		t.Fatalf("third client got %q", got)
	}
	if !third.Closed() {
		t.Fatal("rejected client left open")
	}
	if got := admin.Do("CONFIG", "SET", "maxclients", "100"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	sub := n.Raw()
	if got := sub.Do("SUBSCRIBE", "news"); got != "*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n" {
		t.Fatal(got)
	}
	if got := admin.Do("CONFIG", "SET", "timeout", "1"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	// The subscriber reads a command under the new timeout too.
	if got := sub.Do("PING"); got != "*2\r\n$4\r\npong\r\n$0\r\n\r\n" {
		t.Fatal(got)
	}
	idle := n.Raw()
	idle.Do("PING")
	if !idle.Closed() {
		t.Fatal("idle client not closed after timeout")
	}
	// Subscribers are spared, as in Redis: it outlived the idle client.
	if got := n.Raw().Do("PUBLISH", "news", "still there"); got != ":1\r\n" {
		t.Fatalf("PUBLISH to the subscriber: %q", got)
	}
	if got := sub.Reply(); got != "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$11\r\nstill there\r\n" {
		t.Fatalf("subscriber got %q", got)
	}
}

func TestLogLevelChangesAtRuntime(t *testing.T) {
	n := StartCairn(t, "--log-level", "warning")
	rdb := n.Client()
	c := ctx(t)
	rdb.Do(c, "SHUTDOWN", "ABORT") // logs nothing either way
	if err := rdb.ConfigSet(c, "log-level", "debug").Err(); err != nil {
		t.Fatal(err)
	}
	// A protocol error is logged at debug level.
	r := n.Raw()
	r.Send("*1\r\n$x\r\n")
	r.Reply()
	waitFor(t, 10*time.Second, "a debug line in the log", func() bool { return strings.Contains(n.Log.String(), "[DEBUG]") })
}

// TestSaveMakesWritesDurable: with sync off, SAVE returns once every
// write acknowledged before it is on disk, so kill -9 right after it
// loses none (without it, up to a second of writes can go). LASTSAVE and
// INFO persistence report the save.
func TestSaveMakesWritesDurable(t *testing.T) {
	n := StartCairn(t)
	r := n.Raw()
	before := diffParse(r.Do("LASTSAVE")).n
	var pipe strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&pipe, "SET durable:%d %d\r\n", i, i)
	}
	r.Send(pipe.String())
	for range 1000 {
		if got := r.Reply(); got != "+OK\r\n" {
			t.Fatalf("SET = %q", got)
		}
	}
	if got := r.Do("SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE = %q", got)
	}
	info := r.Do("INFO", "persistence")
	for _, want := range []string{"rdb_changes_since_last_save:0\r\n", "rdb_saves:1\r\n", "rdb_last_bgsave_status:ok\r\n"} {
		if !strings.Contains(info, want) {
			t.Fatalf("INFO persistence after SAVE lacks %q:\n%s", want, info)
		}
	}
	if after := diffParse(r.Do("LASTSAVE")).n; after < before {
		t.Fatalf("LASTSAVE went from %d to %d", before, after)
	}
	n.Kill()
	n.Restart()
	if got := n.Raw().Do("DBSIZE"); got != ":1000\r\n" {
		t.Fatalf("after SAVE and kill -9: DBSIZE = %q, want 1000", got)
	}
}
