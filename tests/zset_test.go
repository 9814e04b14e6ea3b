package tests

import (
	"slices"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestBlockingSortedSetsMatchRedis runs one script of blocked sorted-set
// pops against Cairn and redis-server alike and checks every reply and
// keyspace event: waiters served in the order they blocked, from either
// end; a waiter on a list and one on a sorted set at the same key, each
// served only by its own type; a transaction's ZADD serving a BZMPOP;
// and a timeout.
func TestBlockingSortedSetsMatchRedis(t *testing.T) {
	runBlockingScript(t, func(t *testing.T, s *blockingScript) {
		a, b, w := s.a, s.b, s.w
		blocked, step, reply := s.blocked, s.step, s.reply

		// Two waiters on z2, the first for the lowest score, the
		// second for the highest, before the writer's next command.
		sendCommand(a, "BZPOPMIN", "z1", "z2", "0")
		blocked(1)
		sendCommand(b, "BZPOPMAX", "z2", "0")
		blocked(2)
		w.Expect(":3\r\n", "ZADD", "z2", "1", "a", "2", "b", "3.5", "c")
		w.Expect(":1\r\n", "ZCARD", "z2")
		reply(a, "BZPOPMIN z1 z2", "*3\r\n$2\r\nz2\r\n$1\r\na\r\n$1\r\n1\r\n")
		reply(b, "BZPOPMAX z2", "*3\r\n$2\r\nz2\r\n$1\r\nc\r\n$3\r\n3.5\r\n")
		step("two pops after an add",
			"__keyevent@0__:zadd=z2", "__keyevent@0__:zpopmin=z2", "__keyevent@0__:zpopmax=z2")
		blocked(0)

		// A list's waiter and a sorted set's on one key: a sorted set
		// there serves only the second, a list only the first.
		sendCommand(a, "BLPOP", "k", "0")
		blocked(1)
		sendCommand(b, "BZPOPMIN", "k", "0")
		blocked(2)
		w.Expect(":1\r\n", "ZADD", "k", "7", "m")
		reply(b, "BZPOPMIN k", "*3\r\n$1\r\nk\r\n$1\r\nm\r\n$1\r\n7\r\n")
		blocked(1)
		w.Expect(":1\r\n", "RPUSH", "k", "e")
		reply(a, "BLPOP k", "*2\r\n$1\r\nk\r\n$1\r\ne\r\n")
		step("each type's waiter",
			"__keyevent@0__:zadd=k", "__keyevent@0__:zpopmin=k", "__keyevent@0__:del=k",
			"__keyevent@0__:rpush=k", "__keyevent@0__:lpop=k", "__keyevent@0__:del=k")

		// A transaction's adds serve a BZMPOP once it has run.
		sendCommand(a, "BZMPOP", "0", "2", "m1", "m2", "MAX", "COUNT", "2")
		blocked(1)
		w.Expect("+OK\r\n", "MULTI")
		w.Expect("+QUEUED\r\n", "ZADD", "m2", "1", "x")
		w.Expect("+QUEUED\r\n", "ZADD", "m2", "2", "y", "3", "z")
		w.Expect("*2\r\n:1\r\n:2\r\n", "EXEC")
		reply(a, "BZMPOP", "*2\r\n$2\r\nm2\r\n*2\r\n*2\r\n$1\r\nz\r\n$1\r\n3\r\n*2\r\n$1\r\ny\r\n$1\r\n2\r\n")
		w.Expect("*1\r\n$1\r\nx\r\n", "ZRANGE", "m2", "0", "-1")
		step("a transaction's adds",
			"__keyevent@0__:zadd=m2", "__keyevent@0__:zadd=m2", "__keyevent@0__:zpopmax=m2")

		// A store serves a waiter too.
		sendCommand(a, "BZPOPMIN", "st", "0")
		blocked(1)
		w.Expect(":1\r\n", "ZUNIONSTORE", "st", "1", "m2")
		reply(a, "BZPOPMIN st", "*3\r\n$2\r\nst\r\n$1\r\nx\r\n$1\r\n1\r\n")
		step("a store", "__keyevent@0__:zunionstore=st", "__keyevent@0__:zpopmin=st", "__keyevent@0__:del=st")

		// A timeout answers a null array.
		a.Expect("*-1\r\n", "BZPOPMIN", "nosuch", "0.01")
		a.Expect("*-1\r\n", "BZMPOP", "0.01", "1", "nosuch", "MIN")
	})
}

// TestZSetSurvivesKill9: acknowledged adds, increments, removals and range
// removals of a sorted set large enough to be a skiplist survive kill -9
// with sync on, and its member and score records agree afterwards.
func TestZSetSurvivesKill9(t *testing.T) {
	p := StartCairnEnv(t, leDebug, "--rocksdb.write_options.sync", "yes")
	cx := ctx(t)
	c := p.Client()
	want := map[string]float64{}
	for i := range 300 {
		m := "m" + strconv.Itoa(i%200)
		switch i % 4 {
		case 0, 1:
			must(t, c.ZAdd(cx, "z", redis.Z{Score: float64(i % 17), Member: m}).Err())
			want[m] = float64(i % 17)
		case 2:
			must(t, c.ZIncrBy(cx, "z", 0.5, m).Err())
			want[m] += 0.5
		default:
			must(t, c.ZRem(cx, "z", m).Err())
			delete(want, m)
		}
	}
	must(t, c.ZRemRangeByScore(cx, "z", "(15", "+inf").Err())
	for m, s := range want {
		if s > 15 {
			delete(want, m)
		}
	}
	p.Kill()
	p.Restart()
	c = p.Client()
	got := c.ZRangeWithScores(cx, "z", 0, -1).Val()
	if len(got) != len(want) {
		t.Fatalf("after kill -9: %d members, want %d", len(got), len(want))
	}
	if !slices.IsSortedFunc(got, func(x, y redis.Z) int {
		if x.Score != y.Score {
			return int(x.Score*2) - int(y.Score*2)
		}
		return 0
	}) {
		t.Fatalf("after kill -9: not in score order: %v", got[:min(5, len(got))])
	}
	for _, z := range got {
		if s, ok := want[z.Member.(string)]; !ok || s != z.Score {
			t.Fatalf("after kill -9: %v, want score %v (present %v)", z, s, ok)
		}
	}
	checkValues(t, p, "after kill -9")
}
