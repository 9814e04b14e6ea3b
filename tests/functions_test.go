package tests

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// Libraries the function tests load: "reader" has a no-writes function,
// "writer" a function that writes; "counter" keeps a count in an upvalue.
const (
	readerLib  = "#!lua name=reader\nredis.register_function{function_name='rget', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}}"
	writerLib  = "#!lua name=writer\nredis.register_function('wset', function(keys, args) return redis.call('set', keys[1], args[1]) end)"
	counterLib = "#!lua name=counter\nlocal n = 0\nredis.register_function{function_name='count', callback=function() n = n + 1 return n end, flags={'no-writes'}}"
	spinLib    = "#!lua name=spin\nredis.register_function{function_name='spin', callback=function() while true do end end, flags={'no-writes'}}\n" +
		"redis.register_function('spinw', function() redis.call('set', 'spun', '1') while true do end end)"
)

// fcallExpect checks the raw reply of FCALL name with one key and
// arguments.
func fcallExpect(t *testing.T, r *RawConn, want, cmd, name string, args ...string) {
	t.Helper()
	r.Expect(want, append([]string{cmd, name, "1"}, args...)...)
}

// TestFunctionsReplicate: libraries reach a replica by full sync and by
// streaming; FUNCTION DELETE, FLUSH and RESTORE reach it too; on the
// replica a no-writes function runs and one that may write gets Redis's
// READONLY error; a library the replica reloads keeps its Lua state when
// its code did not change.
func TestFunctionsReplicate(t *testing.T) {
	p := StartCairn(t)
	pr := p.Raw()
	pr.Expect("$6\r\nreader\r\n", "FUNCTION", "LOAD", readerLib)
	pr.Expect("+OK\r\n", "SET", "k", "v")

	r := startReplica(t, p) // a full sync carries "reader"
	pc, rc := p.Client(), r.Client()
	waitCaughtUp(t, pc, rc)
	rr := r.Raw()
	fcallExpect(t, rr, "$1\r\nv\r\n", "FCALL", "rget", "k")
	if !strings.Contains(r.Log.String(), "loaded function libraries after a full sync: libraries=1") {
		t.Fatalf("the replica's log does not say it loaded the library after its full sync:\n%s", r.Log.Tail(20))
	}
	fcallExpect(t, rr, "$1\r\nv\r\n", "FCALL_RO", "rget", "k")

	pr.Expect("$6\r\nwriter\r\n", "FUNCTION", "LOAD", writerLib)
	fcallExpect(t, pr, "+OK\r\n", "FCALL", "wset", "k", "w")
	waitCaughtUp(t, pc, rc)
	fcallExpect(t, rr, "$1\r\nw\r\n", "FCALL", "rget", "k")
	fcallExpect(t, rr, "-READONLY You can't write against a read only replica.\r\n", "FCALL", "wset", "k", "x")
	rr.Expect("-READONLY You can't write against a read only replica.\r\n", "FUNCTION", "LOAD", counterLib)
	if got := rr.Do("FUNCTION", "LIST", "LIBRARYNAME", "writer"); !strings.Contains(got, "wset") {
		t.Fatalf("FUNCTION LIST on the replica: %q", got)
	}

	pr.Expect("+OK\r\n", "FUNCTION", "DELETE", "reader")
	waitCaughtUp(t, pc, rc)
	fcallExpect(t, rr, "-ERR Function not found\r\n", "FCALL", "rget", "k")
	pr.Expect("+OK\r\n", "FUNCTION", "FLUSH")
	waitCaughtUp(t, pc, rc)
	rr.Expect("*0\r\n", "FUNCTION", "LIST")

	// A restored dump reaches the replica as well.
	pr.Expect("$6\r\nreader\r\n", "FUNCTION", "LOAD", readerLib)
	dump := pr.Do("FUNCTION", "DUMP")
	pr.Expect("+OK\r\n", "FUNCTION", "FLUSH")
	payload := dump[strings.Index(dump, "\r\n")+2 : len(dump)-2]
	pr.Expect("+OK\r\n", "FUNCTION", "RESTORE", payload)
	pr.Expect("$7\r\ncounter\r\n", "FUNCTION", "LOAD", counterLib)
	waitCaughtUp(t, pc, rc)
	fcallExpect(t, rr, "$1\r\nw\r\n", "FCALL", "rget", "k")
	rr.Expect(":1\r\n", "FCALL", "count", "0")
	// Another library's load leaves the counter's state alone.
	pr.Expect("$6\r\nwriter\r\n", "FUNCTION", "LOAD", writerLib)
	waitCaughtUp(t, pc, rc)
	rr.Expect(":2\r\n", "FCALL", "count", "0")
}

// TestFunctionsSurviveRestartAndKill9: libraries survive SIGTERM and,
// with sync on, kill -9, and the server logs how many it loaded.
func TestFunctionsSurviveRestartAndKill9(t *testing.T) {
	p := StartCairn(t, "--rocksdb.write_options.sync", "yes")
	pr := p.Raw()
	pr.Expect("$6\r\nreader\r\n", "FUNCTION", "LOAD", readerLib)
	pr.Expect("$7\r\ncounter\r\n", "FUNCTION", "LOAD", counterLib)
	pr.Expect("+OK\r\n", "SET", "k", "v")
	p.Stop()
	p.Restart()
	pr = p.Raw()
	fcallExpect(t, pr, "$1\r\nv\r\n", "FCALL", "rget", "k")
	pr.Expect("$6\r\nwriter\r\n", "FUNCTION", "LOAD", writerLib)
	p.Signal(syscall.SIGKILL, 10*time.Second)
	p.Restart()
	pr = p.Raw()
	fcallExpect(t, pr, "+OK\r\n", "FCALL", "wset", "k", "z")
	pr.Expect(":1\r\n", "FCALL", "count", "0")
	if !strings.Contains(p.Log.String(), "loaded function libraries: libraries=3") {
		t.Fatalf("the log does not say 3 libraries loaded:\n%s", p.Log.Tail(20))
	}
}

// TestFunctionKillAndBusy: a function running past busy-reply-threshold
// makes other clients' commands fail with Redis's BUSY error for
// functions; SCRIPT KILL refuses it, FUNCTION STATS shows it, FUNCTION
// KILL stops it; one that wrote cannot be killed, and SIGTERM still
// stops the server.
func TestFunctionKillAndBusy(t *testing.T) {
	n := StartCairn(t, "--busy-reply-threshold", "100")
	other := n.Raw()
	other.Expect("$4\r\nspin\r\n", "FUNCTION", "LOAD", spinLib)
	other.Expect("-NOTBUSY No scripts in execution right now.\r\n", "FUNCTION", "KILL")
	const busy = "-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n"

	looper := n.Raw()
	looper.Send("FCALL spin 0\r\n")
	waitFor(t, 20*time.Second, "BUSY", func() bool { return other.Do("PING") == busy })
	other.Expect(busy, "GET", "k")
	other.Expect(busy, "FCALL", "spin", "0")
	other.Expect(busy, "SCRIPT", "KILL")
	if got := other.Do("FUNCTION", "STATS"); !strings.HasPrefix(got, "*4\r\n$14\r\nrunning_script\r\n*6\r\n$4\r\nname\r\n$4\r\nspin\r\n$7\r\ncommand\r\n*3\r\n$5\r\nFCALL\r\n$4\r\nspin\r\n$1\r\n0\r\n$11\r\nduration_ms\r\n:") {
		t.Fatalf("FUNCTION STATS while spin runs: %q", got)
	}
	other.Expect("+OK\r\n", "FUNCTION", "KILL")
	if got := looper.Reply(); got != "-ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:2.\r\n" {
		t.Fatalf("the killed function's reply: %q", got)
	}
	other.Expect("+PONG\r\n", "PING")

	// An EVAL that runs long: FUNCTION KILL names SCRIPT KILL.
	looper.Send("EVAL \"while true do end\" 0\r\n")
	const busyEval = "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
	waitFor(t, 20*time.Second, "BUSY", func() bool { return other.Do("PING") == busyEval })
	other.Expect(busyEval, "FUNCTION", "KILL")
	other.Expect(busyEval, "FUNCTION", "STATS")
	other.Expect("+OK\r\n", "SCRIPT", "KILL")
	looper.Reply()

	writer := n.Raw()
	writer.Send("FCALL spinw 0\r\n")
	waitFor(t, 20*time.Second, "the writing function to run", func() bool {
		return other.Do("PING") == busy
	})
	const unkillable = "-UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.\r\n"
	other.Expect(unkillable, "FUNCTION", "KILL")
	other.Expect(unkillable, "SCRIPT", "KILL")
	n.Stop()
	n.Restart()
	c := n.Client()
	if ex, err := c.Exists(ctx(t), "spun").Result(); err != nil || ex != 0 {
		t.Fatalf("EXISTS spun after the killed function: %d, %v; want 0", ex, err)
	}
	if strings.Contains(n.Log.String(), "panic") {
		t.Fatal("the server panicked")
	}
}

// TestFunctionUpvaluesAndConcurrency: a library's functions keep their
// upvalues from one call to the next, and calls from many clients at
// once each count once. A library's load-time redis.log is logged.
func TestFunctionUpvaluesAndConcurrency(t *testing.T) {
	n := StartCairn(t)
	r := n.Raw()
	r.Expect("$7\r\ncounter\r\n", "FUNCTION", "LOAD", counterLib)
	const clients, calls = 4, 10
	done := make(chan error, clients)
	for range clients {
		c := n.Raw()
		go func() {
			for range calls {
				if got := c.Do("FCALL", "count", "0"); !strings.HasPrefix(got, ":") {
					done <- &unexpected{got}
					return
				}
			}
			done <- nil
		}()
	}
	for range clients {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	r.Expect(":41\r\n", "FCALL", "count", "0")

	// A library's load-time redis.log reaches the server log.
	r.Expect("$6\r\nlogger\r\n", "FUNCTION", "LOAD", "#!lua name=logger\nredis.log(redis.LOG_WARNING, 'logger is loading')\n"+
		"redis.register_function('nop', function() return 0 end)")
	waitFor(t, 5*time.Second, "the load-time log line", func() bool { return strings.Contains(n.Log.String(), "logger is loading") })
}

type unexpected struct{ reply string }

func (u *unexpected) Error() string { return "unexpected reply " + u.reply }

// TestFunctionsUnderClientPause: CLIENT PAUSE WRITE holds back FCALL of a
// function that may write (also FCALL_RO of one, which then fails) and
// lets a no-writes function run, as Redis derives FCALL's flags from its
// function's.
func TestFunctionsUnderClientPause(t *testing.T) {
	n := StartCairn(t)
	r := n.Raw()
	r.Expect("$6\r\nreader\r\n", "FUNCTION", "LOAD", readerLib)
	r.Expect("$6\r\nwriter\r\n", "FUNCTION", "LOAD", writerLib)
	r.Expect("+OK\r\n", "CLIENT", "PAUSE", "100000", "WRITE")
	fcallExpect(t, r, "$-1\r\n", "FCALL", "rget", "k")
	w := n.Raw()
	w.Send("FCALL wset 1 k v\r\n")
	waitFor(t, 10*time.Second, "FCALL to wait in the pause", func() bool {
		return strings.Contains(r.Do("CLIENT", "LIST"), "cmd=fcall ")
	})
	fcallExpect(t, r, "$-1\r\n", "FCALL", "rget", "k")
	r.Expect("+OK\r\n", "CLIENT", "UNPAUSE")
	if got := w.Reply(); got != "+OK\r\n" {
		t.Fatalf("the held FCALL: %q", got)
	}
	fcallExpect(t, r, "$1\r\nv\r\n", "FCALL", "rget", "k")
}

// TestFunctionDumpRestoreWithRedis: a FUNCTION DUMP of Cairn's restores
// into redis-server and one of Redis's into Cairn, several libraries and a
// code long enough to be compressed included.
func TestFunctionDumpRestoreWithRedis(t *testing.T) {
	c, r := StartCairn(t).Raw(), StartRedis(t).Raw()
	long := "#!lua name=long\n" + strings.Repeat("-- a comment that repeats itself\n", 40) +
		"redis.register_function('lf', function() return 'long' end)"
	for _, lib := range []string{readerLib, writerLib, long} {
		if got := c.Do("FUNCTION", "LOAD", lib); !strings.HasPrefix(got, "$") {
			t.Fatalf("FUNCTION LOAD on Cairn: %q", got)
		}
	}
	bulk := func(reply string) string { return reply[strings.Index(reply, "\r\n")+2 : len(reply)-2] }
	cdump := bulk(c.Do("FUNCTION", "DUMP"))
	if !strings.Contains(cdump, "\xf5\xc3") {
		t.Fatalf("no library of the dump is LZF-compressed: %q", cdump)
	}
	r.Expect("+OK\r\n", "FUNCTION", "RESTORE", cdump)
	r.Expect("$4\r\nlong\r\n", "FCALL", "lf", "0")
	fcallExpect(t, r, "+OK\r\n", "FCALL", "wset", "k", "v")
	fcallExpect(t, r, "$1\r\nv\r\n", "FCALL", "rget", "k")
	// Redis lists its libraries in another order: its dump restores in
	// Cairn all the same, in place of Cairn's (FLUSH).
	rdump := bulk(r.Do("FUNCTION", "DUMP"))
	c.Expect("+OK\r\n", "FUNCTION", "FLUSH")
	c.Expect("$4\r\nlong\r\n", "FUNCTION", "LOAD", strings.Replace(long, "'long'", "'mine'", 1))
	c.Expect("+OK\r\n", "FUNCTION", "RESTORE", rdump, "FLUSH")
	c.Expect("$4\r\nlong\r\n", "FCALL", "lf", "0")
	fcallExpect(t, c, "+OK\r\n", "FCALL", "wset", "k", "w")
	if got := bulk(c.Do("FUNCTION", "DUMP")); got != cdump {
		t.Fatalf("Cairn's dump after restoring Redis's differs from its first:\n%q\n%q", got, cdump)
	}
}
