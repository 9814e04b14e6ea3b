package tests

import (
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// checkValues fails t unless DEBUG CHECK-VALUES (a node started with
// leDebug) finds every chunk and hash-field record where its key's
// metadata says.
func checkValues(t *testing.T, n *Node, what string) {
	t.Helper()
	if got := n.Raw().Do("DEBUG", "CHECK-VALUES"); len(got) == 0 || got[0] != ':' {
		t.Fatalf("DEBUG CHECK-VALUES %s: %q", what, got)
	}
}

// Twenty clients, half of them pipelining (so their requests run as
// groups sharing a batch), increment five fields of one hash and add
// fields of their own, while others read it: every increment lands once,
// HLEN counts every field, readers never see a count go backwards, and a
// replica ends with the same hash.
func TestHashConcurrentWrites(t *testing.T) {
	p := StartCairnEnv(t, leDebug)
	r := startReplica(t, p)
	const clients, each = 20, 300
	cx := ctx(t)
	var wg sync.WaitGroup
	errs := make(chan error, clients+1)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := p.Client()
			for j := 0; j < each; j += 10 {
				if i%2 == 0 {
					for k := j; k < j+10; k++ {
						if err := c.HIncrBy(cx, "h", "f"+strconv.Itoa(k%5), 1).Err(); err != nil {
							errs <- err
							return
						}
						if err := c.HSet(cx, "h", fmt.Sprintf("c%d:%d", i, k), k).Err(); err != nil {
							errs <- err
							return
						}
					}
					continue
				}
				pipe := c.Pipeline()
				for k := j; k < j+10; k++ {
					pipe.HIncrBy(cx, "h", "f"+strconv.Itoa(k%5), 1)
					pipe.HSet(cx, "h", fmt.Sprintf("c%d:%d", i, k), k)
				}
				if _, err := pipe.Exec(cx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	stop := make(chan struct{})
	go func() { // a reader: the field count never goes backwards
		c := p.Client()
		last := int64(0)
		for {
			select {
			case <-stop:
				errs <- nil
				return
			default:
			}
			n, err := c.HLen(cx, "h").Result()
			if err == nil && n < last {
				err = fmt.Errorf("HLEN went from %d to %d", last, n)
			}
			if err != nil {
				errs <- err
				return
			}
			last = n
		}
	}()
	wg.Wait()
	close(stop)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	pc := p.Client()
	sum := int64(0)
	for f := range 5 {
		n, err := pc.HGet(cx, "h", "f"+strconv.Itoa(f)).Int64()
		must(t, err)
		sum += n
	}
	if sum != clients*each {
		t.Fatalf("the increments sum to %d, want %d", sum, clients*each)
	}
	if n := pc.HLen(cx, "h").Val(); n != 5+clients*each {
		t.Fatalf("HLEN = %d, want %d", n, 5+clients*each)
	}
	waitCaughtUp(t, pc, r.Client())
	want := pc.HGetAll(cx, "h").Val()
	got := r.Client().HGetAll(cx, "h").Val()
	if len(got) != len(want) {
		t.Fatalf("replica's hash has %d fields, primary's %d", len(got), len(want))
	}
	for f, v := range want {
		if got[f] != v {
			t.Fatalf("field %s: replica %q, primary %q", f, got[f], v)
		}
	}
	checkValues(t, p, "after the writes")
}

// Hashes survive SIGTERM and, with sync on, kill -9: every acknowledged
// HSET is there after the restart, with its hash's TTL.
func TestHashSurvivesRestartAndKill9(t *testing.T) {
	n := StartCairnEnv(t, leDebug, "--rocksdb.write_options.sync", "yes")
	cx := ctx(t)
	c := n.Client()
	must(t, c.HSet(cx, "big", "a", "1", "b", "2").Err())
	must(t, c.Expire(cx, "big", time.Hour).Err())
	acked := make(chan string, 100000)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := n.Client()
			for i := 0; ; i++ {
				select {
				case <-quit:
					return
				default:
				}
				f := fmt.Sprintf("w%d:%d", w, i)
				if err := c.HSet(cx, fmt.Sprintf("h%d", i%7), f, f).Err(); err != nil {
					return
				}
				acked <- f
			}
		}()
	}
	waitFor(t, 30*time.Second, "acknowledged HSETs", func() bool { return len(acked) > 500 })
	n.Signal(syscall.SIGKILL, 10*time.Second)
	close(quit)
	wg.Wait()
	close(acked)
	n.Restart()
	c = n.Client()
	count := 0
	for f := range acked {
		var w, i int
		if _, err := fmt.Sscanf(f, "w%d:%d", &w, &i); err != nil {
			t.Fatal(err)
		}
		if v, err := c.HGet(cx, fmt.Sprintf("h%d", i%7), f).Result(); err != nil || v != f {
			t.Fatalf("acknowledged HSET of %s lost after kill -9: %q %v", f, v, err)
		}
		count++
	}
	if got := c.HGetAll(cx, "big").Val(); len(got) != 2 || got["a"] != "1" || got["b"] != "2" {
		t.Fatalf("big after kill -9: %v", got)
	}
	if ttl := c.TTL(cx, "big").Val(); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("TTL of big after kill -9: %v", ttl)
	}
	n.Stop()
	n.Restart()
	if got := n.Client().HLen(cx, "big").Val(); got != 2 {
		t.Fatalf("HLEN big after SIGTERM and restart: %d", got)
	}
	checkValues(t, n, "after the restarts")
	t.Logf("%d acknowledged HSETs survived kill -9", count)
}

// Hashes that expire go with all their fields, a small one (deleted field
// by field) and a large one (by a range deletion), on the primary and on
// a replica, which publishes expired for each as the primary does.
func TestHashExpiry(t *testing.T) {
	p := StartCairnEnv(t, leDebug, "--notify-keyspace-events", "KEA")
	r := StartCairnEnv(t, leDebug, "--notify-keyspace-events", "KEA", "--slaveof", "127.0.0.1 "+strconv.Itoa(p.Port))
	cx := ctx(t)
	pc, rc := p.Client(), r.Client()
	waitLinkUp(t, rc) // a full sync disconnects keyspace subscribers
	sub := rc.Subscribe(cx, "__keyevent@0__:expired")
	defer sub.Close()
	if _, err := sub.Receive(cx); err != nil {
		t.Fatal(err)
	}
	must(t, pc.HSet(cx, "small", "a", "1", "b", "2").Err())
	args := []any{}
	for i := range 200 {
		args = append(args, fmt.Sprintf("f%03d", i), i)
	}
	must(t, pc.HSet(cx, "large", args...).Err())
	must(t, pc.PExpire(cx, "small", 300*time.Millisecond).Err())
	must(t, pc.PExpire(cx, "large", 300*time.Millisecond).Err())
	got := map[string]bool{}
	for len(got) < 2 {
		msg, err := sub.ReceiveMessage(cx)
		if err != nil {
			t.Fatalf("waiting for the replica's expired events: %v (got %v)", err, got)
		}
		got[msg.Payload] = true
	}
	if !got["small"] || !got["large"] {
		t.Fatalf("expired events on the replica: %v", got)
	}
	for _, c := range []*redis.Client{pc, rc} {
		if n := c.Exists(cx, "small", "large").Val(); n != 0 {
			t.Fatalf("EXISTS after expiry: %d", n)
		}
	}
	checkValues(t, p, "on the primary after expiry")
	checkValues(t, r, "on the replica after expiry")
}

// HRANDFIELD draws existing fields, distinct for a positive count, with
// repeats for a negative one, and spread over the hash; HSCAN pages
// through a hash too large for a listpack, every field once.
func TestHashRandomFieldsAndScan(t *testing.T) {
	n := StartCairn(t)
	c, cx := n.Client(), ctx(t)
	const size = 1000
	args := []any{}
	for i := range size {
		args = append(args, fmt.Sprintf("f%04d", i), i)
	}
	must(t, c.HSet(cx, "h", args...).Err())
	if enc := c.ObjectEncoding(cx, "h").Val(); enc != "hashtable" {
		t.Fatalf("OBJECT ENCODING of %d fields: %s", size, enc)
	}
	exists := func(f string) bool { return len(f) == 5 && f[0] == 'f' && f[1:] < fmt.Sprintf("%04d", size) }
	for range 20 {
		fs, err := c.HRandFieldWithValues(cx, "h", 10).Result()
		must(t, err)
		seen := map[string]bool{}
		for _, kv := range fs {
			if !exists(kv.Key) || kv.Value != strconv.Itoa(mustAtoi(t, kv.Key[1:])) || seen[kv.Key] {
				t.Fatalf("HRANDFIELD h 10 WITHVALUES: %v", fs)
			}
			seen[kv.Key] = true
		}
		if len(fs) != 10 {
			t.Fatalf("HRANDFIELD h 10: %d fields", len(fs))
		}
	}
	fs, err := c.HRandField(cx, "h", -2*size).Result()
	must(t, err)
	distinct := map[string]bool{}
	for _, f := range fs {
		if !exists(f) {
			t.Fatalf("HRANDFIELD h -%d returned %q", 2*size, f)
		}
		distinct[f] = true
	}
	// 2,000 draws with repeats from 1,000 fields hit ~865 distinct ones.
	if len(fs) != 2*size || len(distinct) < 700 {
		t.Fatalf("HRANDFIELD h -%d: %d fields, %d distinct", 2*size, len(fs), len(distinct))
	}
	one := map[string]bool{}
	for range 200 {
		f, err := c.Do(cx, "HRANDFIELD", "h").Text()
		must(t, err)
		one[f] = true
	}
	if len(one) < 120 { // ~181 expected
		t.Fatalf("200 HRANDFIELD h gave %d distinct fields", len(one))
	}
	seen := map[string]int{}
	var cursor uint64
	pages := 0
	for {
		kv, next, err := c.HScan(cx, "h", cursor, "", 100).Result()
		must(t, err)
		for i := 0; i < len(kv); i += 2 {
			seen[kv[i]]++
		}
		pages++
		if next == 0 {
			break
		}
		cursor = next
	}
	if len(seen) != size || pages < 10 {
		t.Fatalf("HSCAN COUNT 100: %d fields in %d pages", len(seen), pages)
	}
	for f, n := range seen {
		if n != 1 {
			t.Fatalf("HSCAN returned %s %d times", f, n)
		}
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	must(t, err)
	return n
}
