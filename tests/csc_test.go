package tests

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisClientSideCacheOnReplica runs go-redis's own client-side
// cache (ClientSideCacheConfig: RESP3, CLIENT TRACKING on each pooled
// connection, invalidation pushes) against a Cairn replica, as an
// application would: every write on the primary (SET, APPEND, INCR, DEL,
// an expiry, FLUSHALL) must reach the cache, so that a read of the
// replica soon returns the new value; reads in between must be served
// from memory. Without working invalidations the cache serves the old
// value for ever and the test times out; without tracking the cache is
// never hit.
func TestGoRedisClientSideCacheOnReplica(t *testing.T) {
	primary := StartCairn(t)
	replica := startReplica(t, primary)
	pc := primary.Client()
	waitCaughtUp(t, pc, replica.Client())
	cached := redis.NewClient(&redis.Options{Addr: replica.Addr(), Protocol: 3,
		ClientSideCacheConfig: &redis.ClientSideCacheConfig{MaxEntries: 1000}})
	defer cached.Close()
	c := ctx(t)
	r := rand.New(rand.NewPCG(7, 7))

	const rounds = 300
	want := map[string]string{} // "" for a missing key
	for i := range rounds {
		key := "k" + strconv.Itoa(r.IntN(5))
		switch op := r.IntN(10); {
		case i%50 == 49:
			// Every key the cache may hold must read as missing next.
			must(t, pc.FlushAll(c).Err())
			for k := range want {
				want[k] = ""
			}
		case op < 4:
			v := fmt.Sprint(i)
			must(t, pc.Set(c, key, v, 0).Err())
			want[key] = v
		case op < 5:
			must(t, pc.Append(c, key, "+").Err())
			want[key] += "+"
		case op < 6:
			must(t, pc.Set(c, key, "10", 0).Err())
			must(t, pc.Incr(c, key).Err())
			want[key] = "11"
		case op < 7:
			must(t, pc.Del(c, key).Err())
			want[key] = ""
		case op < 8:
			must(t, pc.Set(c, key, "short", 5*time.Millisecond).Err())
			want[key] = "" // read once it has expired
		default:
			// No write: the next reads must be hits.
		}
		for k, v := range want {
			waitFor(t, 10*time.Second, fmt.Sprintf("round %d: cached GET %s = %q", i, k, v), func() bool {
				got, err := cached.Get(c, k).Result()
				if err == redis.Nil {
					got, err = "", nil
				}
				return err == nil && got == v
			})
		}
	}
	st := cached.CSCStats()
	t.Logf("go-redis client-side cache: %+v", st)
	if st.Hits < rounds {
		t.Errorf("the cache was hit %d times in %d rounds: tracking is not in use", st.Hits, rounds)
	}
}
