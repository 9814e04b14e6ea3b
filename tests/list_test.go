package tests

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// sendCommand sends args to r as a RESP multibulk without reading the
// reply (a blocking command's comes later).
func sendCommand(r *RawConn, args ...string) {
	r.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	r.Send(b.String())
}

// blockedClients returns INFO's blocked_clients of the node r talks to.
func blockedClients(t *testing.T, r *RawConn) int {
	t.Helper()
	info := r.Do("INFO", "clients")
	i := strings.Index(info, "blocked_clients:")
	if i < 0 {
		t.Fatalf("INFO clients without blocked_clients: %q", info)
	}
	rest := info[i+len("blocked_clients:"):]
	n, err := strconv.Atoi(rest[:strings.IndexByte(rest, '\r')])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The blocking list commands, scripted against Cairn and redis-server
// alike: who is served, in which order, with what, and which events each
// step publishes. The expectations are Redis's (the same script must
// pass against both).
func TestBlockingListsMatchRedis(t *testing.T) {
	runBlockingScript(t, func(t *testing.T, s *blockingScript) {
		a, b, w := s.a, s.b, s.w
		blocked, step := s.blocked, s.step

		// Two waiters on q2, served in the order they blocked, before
		// the writer's next command runs.
		sendCommand(a, "BLPOP", "q1", "q2", "0")
		blocked(1)
		sendCommand(b, "BRPOP", "q2", "0")
		blocked(2)
		w.Expect(":3\r\n", "RPUSH", "q2", "x", "y", "z")
		w.Expect(":1\r\n", "LLEN", "q2")
		if got := a.Reply(); got != "*2\r\n$2\r\nq2\r\n$1\r\nx\r\n" {
			t.Fatalf("BLPOP q1 q2: %q", got)
		}
		if got := b.Reply(); got != "*2\r\n$2\r\nq2\r\n$1\r\nz\r\n" {
			t.Fatalf("BRPOP q2: %q", got)
		}
		step("two pops after a push",
			"__keyevent@0__:rpush=q2", "__keyevent@0__:lpop=q2", "__keyevent@0__:rpop=q2")
		blocked(0)

		// A BLMOVE served by a push feeds a BLPOP on its destination.
		sendCommand(a, "BLMOVE", "s", "d", "LEFT", "RIGHT", "0")
		blocked(1)
		sendCommand(b, "BLPOP", "d", "0")
		blocked(2)
		w.Expect(":1\r\n", "LPUSH", "s", "v")
		w.Expect(":0\r\n", "EXISTS", "s", "d")
		if got := a.Reply(); got != "$1\r\nv\r\n" {
			t.Fatalf("BLMOVE s d: %q", got)
		}
		if got := b.Reply(); got != "*2\r\n$1\r\nd\r\n$1\r\nv\r\n" {
			t.Fatalf("BLPOP d: %q", got)
		}
		step("a chain of moves",
			"__keyevent@0__:lpush=s", "__keyevent@0__:rpush=d", "__keyevent@0__:lpop=s", "__keyevent@0__:del=s",
			"__keyevent@0__:lpop=d", "__keyevent@0__:del=d")

		// A transaction's pushes serve the waiter once it has run.
		sendCommand(a, "BLPOP", "m", "0")
		blocked(1)
		w.Expect("+OK\r\n", "MULTI")
		w.Expect("+QUEUED\r\n", "RPUSH", "m", "1")
		w.Expect("+QUEUED\r\n", "RPUSH", "m", "2")
		w.Expect("*2\r\n:1\r\n:2\r\n", "EXEC")
		w.Expect("*1\r\n$1\r\n2\r\n", "LRANGE", "m", "0", "-1")
		if got := a.Reply(); got != "*2\r\n$1\r\nm\r\n$1\r\n1\r\n" {
			t.Fatalf("BLPOP m: %q", got)
		}
		step("a transaction", "__keyevent@0__:rpush=m", "__keyevent@0__:rpush=m", "__keyevent@0__:lpop=m")

		// BLMPOP takes up to COUNT; a timeout replies a null.
		sendCommand(a, "BLMPOP", "0", "1", "mp", "RIGHT", "COUNT", "5")
		blocked(1)
		w.Expect(":3\r\n", "RPUSH", "mp", "a", "b", "c")
		if got := a.Reply(); got != "*2\r\n$2\r\nmp\r\n*3\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n" {
			t.Fatalf("BLMPOP: %q", got)
		}
		a.Expect("*-1\r\n", "BLPOP", "nothing", "0.05")
		a.Expect("*-1\r\n", "BLMOVE", "nothing", "d", "LEFT", "LEFT", "0.05")
		step("BLMPOP and timeouts", "__keyevent@0__:rpush=mp", "__keyevent@0__:rpop=mp", "__keyevent@0__:del=mp")

		// CLIENT UNBLOCK ends a wait as a timeout, or with an error.
		id := strings.TrimSuffix(strings.TrimPrefix(a.Do("CLIENT", "ID"), ":"), "\r\n")
		sendCommand(a, "BLPOP", "u", "0")
		blocked(1)
		w.Expect(":1\r\n", "CLIENT", "UNBLOCK", id)
		if got := a.Reply(); got != "*-1\r\n" {
			t.Fatalf("BLPOP after CLIENT UNBLOCK: %q", got)
		}
		sendCommand(a, "BRPOPLPUSH", "u", "d", "0")
		blocked(1)
		w.Expect(":1\r\n", "CLIENT", "UNBLOCK", id, "ERROR")
		if got := a.Reply(); got != "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n" {
			t.Fatalf("BRPOPLPUSH after CLIENT UNBLOCK ERROR: %q", got)
		}
		blocked(0)

		// A destination of the wrong type at serving time: the waiter
		// gets WRONGTYPE and the element stays.
		sendCommand(a, "BLMOVE", "v", "str", "LEFT", "LEFT", "0")
		blocked(1)
		w.Expect("+OK\r\n", "SET", "str", "s")
		w.Expect(":1\r\n", "RPUSH", "v", "e")
		if got := a.Reply(); !strings.HasPrefix(got, "-WRONGTYPE") {
			t.Fatalf("BLMOVE onto a string: %q", got)
		}
		w.Expect("*1\r\n$1\r\ne\r\n", "LRANGE", "v", "0", "-1")
		step("a wrong destination", "__keyevent@0__:set=str", "__keyevent@0__:rpush=v")
		blocked(0)

		// A list that arrives by RENAME, COPY or RESTORE serves
		// waiters too, after the command's own events.
		w.Expect(":2\r\n", "RPUSH", "src", "1", "2")
		sendCommand(a, "BLPOP", "renamed", "0")
		blocked(1)
		w.Expect("+OK\r\n", "RENAME", "src", "renamed")
		if got := a.Reply(); got != "*2\r\n$7\r\nrenamed\r\n$1\r\n1\r\n" {
			t.Fatalf("BLPOP of a renamed list: %q", got)
		}
		sendCommand(a, "BRPOP", "copied", "0")
		blocked(1)
		w.Expect(":1\r\n", "COPY", "renamed", "copied")
		if got := a.Reply(); got != "*2\r\n$6\r\ncopied\r\n$1\r\n2\r\n" {
			t.Fatalf("BRPOP of a copied list: %q", got)
		}
		dump := w.Do("DUMP", "renamed")
		payload := dump[strings.Index(dump, "\r\n")+2 : len(dump)-2]
		sendCommand(a, "BLMPOP", "0", "2", "nothing", "restored", "LEFT", "COUNT", "9")
		blocked(1)
		w.Expect("+OK\r\n", "RESTORE", "restored", "0", payload)
		if got := a.Reply(); got != "*2\r\n$8\r\nrestored\r\n*1\r\n$1\r\n2\r\n" {
			t.Fatalf("BLMPOP of a restored list: %q", got)
		}
		step("lists arriving by RENAME, COPY and RESTORE",
			"__keyevent@0__:rpush=src", "__keyevent@0__:rename_from=src", "__keyevent@0__:rename_to=renamed",
			"__keyevent@0__:lpop=renamed", "__keyevent@0__:copy_to=copied", "__keyevent@0__:rpop=copied",
			"__keyevent@0__:del=copied", "__keyevent@0__:restore=restored", "__keyevent@0__:lpop=restored",
			"__keyevent@0__:del=restored")
		blocked(0)

		// Becoming a replica ends every wait with an error.
		sendCommand(a, "BLPOP", "r1", "0")
		sendCommand(b, "BLMOVE", "r2", "d", "LEFT", "LEFT", "0")
		blocked(2)
		w.Expect("+OK\r\n", "REPLICAOF", "127.0.0.1", strconv.Itoa(freePort(t)))
		for _, c := range []*RawConn{a, b} {
			if got := c.Reply(); got != "-UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)\r\n" {
				t.Fatalf("a wait when the node became a replica: %q", got)
			}
		}
		w.Expect("+OK\r\n", "REPLICAOF", "NO", "ONE")
	})
}

// Consumers block on a queue while producers push to it, with a replica:
// every element reaches exactly one consumer, a consumer killed while it
// waits loses nothing, and the replica ends with the same (empty) queue.
func TestBlockingQueueDeliversOnce(t *testing.T) {
	p := StartCairnEnv(t, leDebug)
	r := StartCairnEnv(t, leDebug, "--slaveof", "127.0.0.1 "+strconv.Itoa(p.Port))
	cx := ctx(t)
	// A waiter killed before anything is pushed: the first element must
	// still reach a live consumer.
	victim := p.Raw()
	victimID := strings.TrimSuffix(strings.TrimPrefix(victim.Do("CLIENT", "ID"), ":"), "\r\n")
	sendCommand(victim, "BLPOP", "queue", "0")
	admin := p.Raw()
	waitFor(t, 10*time.Second, "the victim blocked", func() bool { return blockedClients(t, admin) == 1 })
	admin.Expect(":1\r\n", "CLIENT", "KILL", "ID", victimID)

	const consumers, producers, perProducer = 4, 2, 500
	got := make(chan string, producers*perProducer+consumers)
	errs := make(chan error, consumers+producers)
	var wg sync.WaitGroup
	for range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := p.Client(func(o *redis.Options) { o.ReadTimeout = -1 })
			for {
				kv, err := c.BLPop(cx, 0, "queue", "other").Result()
				if err != nil {
					errs <- err
					return
				}
				if kv[1] == "stop" {
					return
				}
				got <- kv[1]
			}
		}()
	}
	var pw sync.WaitGroup
	for w := range producers {
		pw.Add(1)
		go func() {
			defer pw.Done()
			c := p.Client()
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			for i := 0; i < perProducer; {
				n := min(1+rng.IntN(3), perProducer-i)
				var batch []any
				for j := range n {
					batch = append(batch, fmt.Sprintf("p%d-%d", w, i+j))
				}
				cmd := c.RPush
				if rng.IntN(2) == 0 {
					cmd = c.LPush
				}
				if err := cmd(cx, "queue", batch...).Err(); err != nil {
					errs <- err
					return
				}
				i += n
			}
		}()
	}
	pw.Wait()
	pc := p.Client()
	for range consumers {
		must(t, pc.RPush(cx, "other", "stop").Err())
	}
	wg.Wait()
	close(got)
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	var all []string
	for v := range got {
		all = append(all, v)
	}
	slices.Sort(all)
	if len(all) != producers*perProducer || len(slices.Compact(slices.Clone(all))) != len(all) {
		t.Fatalf("consumers got %d elements (%d distinct), want %d once each", len(all), len(slices.Compact(slices.Clone(all))), producers*perProducer)
	}
	must(t, pc.Set(cx, "marker", "1", 0).Err())
	rc := r.Client()
	waitFor(t, 10*time.Second, "the replica has the marker", func() bool { return rc.Exists(cx, "marker").Val() == 1 })
	for _, n := range []*Node{p, r} {
		if k := n.Client().Exists(cx, "queue", "other").Val(); k != 0 {
			t.Fatalf("%d queues left on %s", k, n.Addr())
		}
		checkValues(t, n, "after the queue drained")
	}
}

// Lists survive a restart and, with sync on, kill -9: every acknowledged
// push is there, in order, and the records fit the metadata.
func TestListSurvivesKill9(t *testing.T) {
	p := StartCairnEnv(t, leDebug, "--rocksdb.write_options.sync", "yes")
	cx := ctx(t)
	c := p.Client()
	var want []string
	for i := range 300 {
		v := strconv.Itoa(i)
		switch i % 3 {
		case 0:
			must(t, c.RPush(cx, "l", v).Err())
			want = append(want, v)
		case 1:
			must(t, c.LPush(cx, "l", v).Err())
			want = append([]string{v}, want...)
		default:
			must(t, c.LInsert(cx, "l", "BEFORE", want[len(want)/2], v).Err())
			want = slices.Insert(want, len(want)/2, v)
		}
	}
	must(t, c.LTrim(cx, "l", 5, -6).Err())
	want = want[5 : len(want)-5]
	must(t, c.LRem(cx, "l", 0, want[7]).Err())
	want = slices.Delete(want, 7, 8)
	p.Kill()
	p.Restart()
	c = p.Client()
	if got := c.LRange(cx, "l", 0, -1).Val(); !slices.Equal(got, want) {
		t.Fatalf("after kill -9: %d elements %q..., want %d", len(got), got[:min(5, len(got))], len(want))
	}
	checkValues(t, p, "after kill -9")
}

// Ten clients move elements between two lists with LMOVE and RPOPLPUSH
// (from either end, onto either end, sometimes within one list) while a
// reader checks, in transactions, that the two lists always hold every
// element exactly once; a replica ends with the same lists, and no
// element record is left outside its list.
func TestListConcurrentMoves(t *testing.T) {
	p := StartCairnEnv(t, leDebug)
	r := StartCairnEnv(t, leDebug, "--slaveof", "127.0.0.1 "+strconv.Itoa(p.Port))
	cx := ctx(t)
	pc := p.Client()
	const elements = 200
	var all []any
	for i := range elements {
		all = append(all, fmt.Sprintf("e%03d", i))
	}
	must(t, pc.RPush(cx, "a", all...).Err())
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for w := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := p.Client()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			sides := []string{"LEFT", "RIGHT"}
			for range 300 {
				src, dst := "a", "b"
				switch rng.IntN(5) {
				case 0:
					src, dst = dst, src
				case 1:
					dst = src // a rotation
				}
				var err error
				if rng.IntN(4) == 0 {
					err = c.Do(cx, "RPOPLPUSH", src, dst).Err()
				} else {
					err = c.LMove(cx, src, dst, sides[rng.IntN(2)], sides[rng.IntN(2)]).Err()
				}
				if err != nil && err != redis.Nil {
					errs <- err
					return
				}
			}
		}()
	}
	stop := make(chan struct{})
	go func() {
		c := p.Client()
		for {
			select {
			case <-stop:
				errs <- nil
				return
			default:
			}
			var a, b *redis.StringSliceCmd
			_, err := c.TxPipelined(cx, func(pipe redis.Pipeliner) error {
				a = pipe.LRange(cx, "a", 0, -1)
				b = pipe.LRange(cx, "b", 0, -1)
				return nil
			})
			if err == nil {
				both := append(a.Val(), b.Val()...)
				slices.Sort(both)
				if len(both) != elements || len(slices.Compact(both)) != elements {
					err = fmt.Errorf("a and b hold %d elements (%d distinct), want each of %d once", len(a.Val())+len(b.Val()), len(slices.Compact(both)), elements)
				}
			}
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	must(t, pc.Set(cx, "marker", "1", 0).Err())
	rc := r.Client()
	waitFor(t, 10*time.Second, "the replica has the marker", func() bool { return rc.Exists(cx, "marker").Val() == 1 })
	for _, k := range []string{"a", "b"} {
		if pl, rl := pc.LRange(cx, k, 0, -1).Val(), rc.LRange(cx, k, 0, -1).Val(); !slices.Equal(pl, rl) {
			t.Fatalf("list %s: primary %d elements, replica %d, or in another order", k, len(pl), len(rl))
		}
	}
	checkValues(t, p, "after the moves")
	checkValues(t, r, "on the replica after the moves")
}

// A push wakes only the clients blocked on that key in its own
// namespace.
func TestBlockingListsKeepToNamespaces(t *testing.T) {
	n := StartCairn(t, "--requirepass", "admin")
	admin := n.Raw()
	admin.Expect("+OK\r\n", "AUTH", "admin")
	admin.Expect("+OK\r\n", "NAMESPACE", "ADD", "ns1", "t1")
	admin.Expect("+OK\r\n", "NAMESPACE", "ADD", "ns2", "t2")
	a, b := n.Raw(), n.Raw()
	a.Expect("+OK\r\n", "AUTH", "t1")
	b.Expect("+OK\r\n", "AUTH", "t2")
	sendCommand(a, "BLPOP", "q", "0")
	waitFor(t, 10*time.Second, "a blocked", func() bool { return blockedClients(t, admin) == 1 })
	b.Expect(":1\r\n", "RPUSH", "q", "ns2")         // ns2's q: a waits on ns1's
	admin.Expect(":1\r\n", "RPUSH", "q", "default") // the default namespace's
	b.Expect(":1\r\n", "LLEN", "q")
	admin.Expect(":1\r\n", "LLEN", "q")
	if got := blockedClients(t, admin); got != 1 {
		t.Fatalf("%d blocked clients after pushes to other namespaces, want 1", got)
	}
	writer := n.Raw()
	writer.Expect("+OK\r\n", "AUTH", "t1")
	writer.Expect(":1\r\n", "RPUSH", "q", "ns1")
	if got := a.Reply(); got != "*2\r\n$1\r\nq\r\n$3\r\nns1\r\n" {
		t.Fatalf("BLPOP in ns1: %q", got)
	}
	writer.Expect(":0\r\n", "EXISTS", "q")
}
