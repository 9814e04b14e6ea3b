package tests

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestScriptAtomicOnPrimaryAndReplica: a script's writes are one atomic
// batch. Concurrent scripts increment two keys together while readers on
// the primary and on a replica never see them apart; the replica gets the
// same data, and subscribers on both nodes get each script's events in
// the script's order, once, after its commit.
func TestScriptAtomicOnPrimaryAndReplica(t *testing.T) {
	p := StartCairn(t, "--notify-keyspace-events", "KEA")
	r := startReplica(t, p, "--notify-keyspace-events", "KEA")
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	waitCaughtUp(t, pc, rc)
	onPrimary := subscribeEvents(t, p.Client(), "__keyevent@0__:*")
	onReplica := subscribeEvents(t, r.Client(), "__keyevent@0__:*")

	// Events: in the script's order, one per write.
	script := redis.NewScript(`
redis.call('set', KEYS[1], ARGV[1])
redis.call('incr', KEYS[2])
redis.call('del', KEYS[1], 'missing')
redis.call('append', KEYS[2], '0')
return redis.call('get', KEYS[2])`)
	got, err := script.Run(cx, pc, []string{"a", "n"}, "v").Result()
	if err != nil || got != "10" {
		t.Fatalf("script: %v, %v; want 10", got, err)
	}
	want := []string{"__keyevent@0__:set=a", "__keyevent@0__:incrby=n", "__keyevent@0__:del=a", "__keyevent@0__:append=n"}
	expectEvents(t, "the script's events on the primary", onPrimary.until(pc), want...)
	expectEvents(t, "the script's events on the replica", onReplica.until(pc), want...)

	// Atomicity: x and y always equal to any reader (MGET) on either
	// node, while scripts and, as a reference, MULTI/EXEC transactions
	// increment both.
	const writers, perWriter = 4, 150
	incrBoth := redis.NewScript(`redis.call('incr', KEYS[1]); return redis.call('incr', KEYS[2])`)
	var wg sync.WaitGroup
	errs := make(chan error, writers+2)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := p.Client()
			defer c.Close()
			for i := 0; i < perWriter; i++ {
				var err error
				if w%2 == 0 {
					err = incrBoth.Run(cx, c, []string{"x", "y"}).Err()
				} else {
					_, err = c.TxPipelined(cx, func(tx redis.Pipeliner) error {
						tx.Incr(cx, "x")
						tx.Incr(cx, "y")
						return nil
					})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	var readers sync.WaitGroup
	for _, node := range []*Node{p, r} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			c := node.Client()
			defer c.Close()
			for reads := 0; reads < 100000; reads++ {
				select {
				case <-done:
					return
				default:
				}
				vals, err := c.MGet(cx, "x", "y").Result()
				if err != nil {
					errs <- err
					return
				}
				if vals[0] != vals[1] {
					errs <- fmt.Errorf("node %d: x=%v y=%v", node.Port, vals[0], vals[1])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	waitCaughtUp(t, pc, rc)
	total := strconv.Itoa(writers * perWriter)
	for _, c := range []*redis.Client{pc, rc} {
		if vals, err := c.MGet(cx, "x", "y").Result(); err != nil || vals[0] != total || vals[1] != total {
			t.Fatalf("after the scripts: %v, %v; want %s twice", vals, err, total)
		}
	}
	compareData(t, "after the scripts", pc, rc)
}

// TestScriptUndeclaredKeysUnderContention: scripts that touch keys they
// did not declare, while MSETs, transactions and other scripts hold those
// keys' locks, are run again under every lock when they meet one taken:
// each script's increments land exactly once, and a script that publishes
// before it meets the taken lock publishes once (the abandoned run's
// message is dropped with its writes).
func TestScriptUndeclaredKeysUnderContention(t *testing.T) {
	n := StartCairn(t)
	cx := ctx(t)
	sub := n.Client().Subscribe(cx, "done")
	if _, err := sub.Receive(cx); err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	// KEYS[1] is declared; c1..c4 are not.
	script := redis.NewScript(`
if ARGV[1] == 'publish' then redis.call('publish', 'done', KEYS[1]) end
for i = 1, 4 do redis.call('incr', 'c' .. i) end
redis.call('incr', KEYS[1])
return redis.call('get', 'c1')`)
	const workers, rounds = 6, 60
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := n.Client()
			defer c.Close()
			for i := 0; i < rounds; i++ {
				var err error
				switch {
				case w == 0:
					// Holds c1..c4's locks in one MSET-like transaction.
					_, err = c.TxPipelined(cx, func(tx redis.Pipeliner) error {
						for k := 1; k <= 4; k++ {
							tx.IncrBy(cx, "c"+strconv.Itoa(k), 0)
						}
						return nil
					})
				case w == 1 && i%10 == 0:
					err = script.Run(cx, c, []string{"own" + strconv.Itoa(w)}, "publish").Err()
				default:
					err = script.Run(cx, c, []string{"own" + strconv.Itoa(w)}, "").Err()
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	scripts := (workers - 1) * rounds
	for k := 1; k <= 4; k++ {
		if v, err := n.Client().Get(cx, "c"+strconv.Itoa(k)).Int(); err != nil || v != scripts {
			t.Fatalf("c%d = %d, %v; want %d (one increment per script)", k, v, err, scripts)
		}
	}
	for w := 1; w < workers; w++ {
		if v, err := n.Client().Get(cx, "own"+strconv.Itoa(w)).Int(); err != nil || v != rounds {
			t.Fatalf("own%d = %d, %v; want %d", w, v, err, rounds)
		}
	}
	// One message per publishing script, then the marker.
	must(t, n.Client().Publish(cx, "done", "marker").Err())
	got := 0
	for {
		m, err := sub.ReceiveMessage(cx)
		if err != nil {
			t.Fatal(err)
		}
		if m.Payload == "marker" {
			break
		}
		got++
	}
	if got != rounds/10 {
		t.Fatalf("the publishing script published %d times, want %d", got, rounds/10)
	}
	// Some runs met a taken lock and were run again.
	if reruns := stat(t, n.Client(), "stats", "script_reruns"); reruns == 0 {
		t.Fatalf("script_reruns = 0: no script met a taken lock")
	} else {
		t.Logf("script_reruns = %d of %d scripts", reruns, scripts)
	}
}

// TestScriptOnReplica: a replica runs read-only scripts and refuses a
// script's write with READONLY, where the script was; a script whose
// shebang does not declare no-writes is refused before it runs.
func TestScriptOnReplica(t *testing.T) {
	p := StartCairn(t)
	r := startReplica(t, p)
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	must(t, pc.Set(cx, "k", "v", 0).Err())
	waitCaughtUp(t, pc, rc)
	raw := r.Raw()
	raw.Expect("$1\r\nv\r\n", "EVAL", "return redis.call('get', KEYS[1])", "1", "k")
	raw.Expect("$1\r\nv\r\n", "EVAL_RO", "return redis.call('get', KEYS[1])", "1", "k")
	raw.Expect("-READONLY You can't write against a read only replica. script: c879d0f610a7c3fd6d97d912e0c91f1e140ecfbb, on @user_script:1.\r\n",
		"EVAL", "return redis.call('set', 'k', 'x')", "0")
	raw.Expect("-READONLY You can't write against a read only replica.\r\n", "EVAL", "#!lua\nreturn 1", "0")
	raw.Expect(":1\r\n", "EVAL", "#!lua flags=no-writes\nreturn 1", "0")
	if v, err := rc.Get(cx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("GET k on the replica: %q, %v", v, err)
	}
}

// TestScriptKillBusyAndShutdown: a script running past
// busy-reply-threshold makes other clients' commands fail with BUSY;
// SCRIPT KILL stops it while it has not written, and refuses once it has.
// SIGTERM then stops the server anyway, and the killed script's write,
// never acknowledged, is not there after a restart.
func TestScriptKillBusyAndShutdown(t *testing.T) {
	n := StartCairn(t, "--busy-reply-threshold", "200")
	other := n.Raw()
	other.Expect("-NOTBUSY No scripts in execution right now.\r\n", "SCRIPT", "KILL")

	looper := n.Raw()
	looper.Send("EVAL \"while true do end\" 0\r\n")
	waitFor(t, 20*time.Second, "BUSY", func() bool {
		return other.Do("PING") == "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
	})
	other.Expect("+OK\r\n", "SCRIPT", "KILL")
	if got := looper.Reply(); got != "-ERR Script killed by user with SCRIPT KILL... script: 694a5fe1ddb97a4c6a1bf299d9537c7d3d0f84e7, on @user_script:1.\r\n" {
		t.Fatalf("the killed script's reply: %q", got)
	}
	other.Expect("+PONG\r\n", "PING")

	writer := n.Raw()
	writer.Send("EVAL \"redis.call('set', 'z', '1') while true do end\" 0\r\n")
	// Not polled with SCRIPT KILL, which could kill the script before
	// its write (TestScriptKilledInTransaction says more).
	waitFor(t, 20*time.Second, "the writing script to run", func() bool {
		return strings.HasPrefix(other.Do("PING"), "-BUSY")
	})
	other.Expect("-UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.\r\n", "SCRIPT", "KILL")
	n.Stop() // SIGTERM: the server kills the script and exits
	n.Restart()
	c := n.Client()
	if ex, err := c.Exists(ctx(t), "z").Result(); err != nil || ex != 0 {
		t.Fatalf("EXISTS z after the killed script: %d, %v; want 0", ex, err)
	}
	if strings.Contains(n.Log.String(), "panic") {
		t.Fatal("the server panicked")
	}
}

// TestScriptKilledInTransaction: SCRIPT KILL stops a script inside EXEC
// that has not written, and the transaction's other writes commit, as in
// Redis; a script in EXEC that has written cannot be killed, and when
// SIGTERM stops it the whole transaction is dropped, never acknowledged.
func TestScriptKilledInTransaction(t *testing.T) {
	n := StartCairn(t, "--busy-reply-threshold", "100")
	other := n.Raw()
	tx := n.Raw()
	tx.Expect("+OK\r\n", "MULTI")
	tx.Expect("+QUEUED\r\n", "SET", "ma", "1")
	tx.Expect("+QUEUED\r\n", "EVAL", "while true do end", "0")
	tx.Send("EXEC\r\n")
	waitFor(t, 20*time.Second, "SCRIPT KILL to find the script", func() bool {
		return other.Do("SCRIPT", "KILL") == "+OK\r\n"
	})
	want := "*2\r\n+OK\r\n-ERR Script killed by user with SCRIPT KILL... script: 694a5fe1ddb97a4c6a1bf299d9537c7d3d0f84e7, on @user_script:1.\r\n"
	if got := tx.Reply(); got != want {
		t.Fatalf("EXEC: %q, want %q", got, want)
	}
	other.Expect("$1\r\n1\r\n", "GET", "ma")

	mon := n.Raw()
	mon.Expect("+OK\r\n", "MONITOR")
	tx.Expect("+OK\r\n", "MULTI")
	tx.Expect("+QUEUED\r\n", "SET", "mb", "1")
	tx.Expect("+QUEUED\r\n", "EVAL", "redis.call('set', 'mz', '1') while true do end", "0")
	tx.Send("EXEC\r\n")
	// Polling with SCRIPT KILL could kill the script before its first
	// write, and a GET that looks for running scripts before the script
	// starts waits for the EXEC's locks, which the endless script never
	// gives back (awaitScripts). So the GETs start once MONITOR shows
	// the script's write; BUSY comes once it has run 100 ms.
	awaitMonitorLine(mon, `[0 lua] "set" "mz" "1"`)
	waitFor(t, 20*time.Second, "the writing script to run", func() bool {
		return strings.HasPrefix(other.Do("GET", "mb"), "-BUSY")
	})
	if got := other.Do("SCRIPT", "KILL"); !strings.HasPrefix(got, "-UNKILLABLE") {
		t.Fatalf("SCRIPT KILL of a script that wrote: %q", got)
	}
	n.Stop()
	n.Restart()
	if ex, err := n.Client().Exists(ctx(t), "mb", "mz").Result(); err != nil || ex != 0 {
		t.Fatalf("EXISTS mb mz after the stopped transaction: %d, %v; want 0", ex, err)
	}
}

// awaitMonitorLine reads the MONITOR connection mon until a line holds
// want (a read past its deadline fails the test).
func awaitMonitorLine(mon *RawConn, want string) {
	for !strings.Contains(mon.Reply(), want) {
	}
}

// TestBusyScriptAnswersLockWaiters: commands waiting for a key lock that a
// script holds get BUSY once the script has run past busy-reply-threshold,
// as Redis answers every command sent while a script runs: a command
// alone, a pipelined group (each of its commands) and EXEC (with
// EXECABORT). After SCRIPT KILL the keys serve as usual.
func TestBusyScriptAnswersLockWaiters(t *testing.T) {
	n := StartCairn(t, "--busy-reply-threshold", "1000")
	mon := n.Raw()
	mon.Expect("+OK\r\n", "MONITOR")
	looper := n.Raw()
	looper.Send("EVAL \"redis.call('get', KEYS[1]) while true do end\" 1 held\r\n")
	// MONITOR shows the script's GET once it holds the lock of held.
	awaitMonitorLine(mon, `[0 lua] "get" "held"`)

	single := n.Raw()
	single.Send("GET held\r\n")
	group := n.Raw()
	group.Send("*3\r\n$3\r\nSET\r\n$4\r\nheld\r\n$1\r\n1\r\n*3\r\n$3\r\nSET\r\n$5\r\nother\r\n$1\r\n2\r\n")
	tx := n.Raw()
	tx.Expect("+OK\r\n", "MULTI")
	tx.Expect("+QUEUED\r\n", "SET", "held", "x")
	tx.Send("EXEC\r\n")

	const busy = "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
	if got := single.Reply(); got != busy {
		t.Fatalf("GET held: %q, want BUSY", got)
	}
	for i := 0; i < 2; i++ {
		if got := group.Reply(); got != busy {
			t.Fatalf("pipelined SET %d: %q, want BUSY", i, got)
		}
	}
	if got := tx.Reply(); got != "-EXECABORT Transaction discarded because of: "+busy[1:] {
		t.Fatalf("EXEC: %q", got)
	}
	single.Expect("+OK\r\n", "SCRIPT", "KILL")
	if got := looper.Reply(); !strings.HasPrefix(got, "-ERR Script killed by user with SCRIPT KILL...") {
		t.Fatalf("the killed script's reply: %q", got)
	}
	single.Expect("$-1\r\n", "GET", "held")
	group.Expect("$-1\r\n", "GET", "other")
	tx.Expect("-ERR EXEC without MULTI\r\n", "EXEC")
}
