package tests

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// infoField returns one field of INFO.
func infoField(t *testing.T, rdb *redis.Client, section, field string) string {
	t.Helper()
	info, err := rdb.Info(ctx(t), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return v
		}
	}
	return ""
}

func TestLazyExpiryHidesKeys(t *testing.T) {
	n := StartCairn(t, "--hz", "1")
	rdb := n.Client()
	c := ctx(t)
	rdb.Set(c, "live", "1", 0)
	rdb.Set(c, "gone", "1", 0)
	rdb.PExpire(c, "gone", 200*time.Millisecond)
	waitFor(t, 10*time.Second, "gone to expire", func() bool { return rdb.Exists(c, "gone").Val() == 0 })
	checks := []struct {
		name string
		got  any
		want any
	}{
		{"GET", rdb.Get(c, "gone").Err(), redis.Nil},
		{"TYPE", rdb.Type(c, "gone").Val(), "none"},
		{"TTL", rdb.TTL(c, "gone").Val(), time.Duration(-2)},
		{"KEYS", fmt.Sprint(rdb.Keys(c, "*").Val()), "[live]"},
		{"STRLEN", rdb.StrLen(c, "gone").Val(), int64(0)},
		{"DEL", rdb.Del(c, "gone").Val(), int64(0)},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s on an expired key: got %v, want %v", ch.name, ch.got, ch.want)
		}
	}
	keys, _, err := rdb.Scan(c, 0, "*", 100).Result()
	if err != nil || fmt.Sprint(keys) != "[live]" {
		t.Errorf("SCAN: %v %v", keys, err)
	}
	for i := 0; i < 20; i++ {
		if k := rdb.RandomKey(c).Val(); k != "live" {
			t.Fatalf("RANDOMKEY returned %q", k)
		}
	}
	// SET over an expired key makes a fresh key without a TTL.
	rdb.Set(c, "gone", "again", 0)
	if ttl := rdb.TTL(c, "gone").Val(); ttl != -1 {
		t.Fatalf("TTL after SET over expired key = %v", ttl)
	}
}

func TestActiveExpiryReclaimsKeys(t *testing.T) {
	n := StartCairn(t, "--hz", "50")
	rdb := n.Client()
	c := ctx(t)
	const total = 2000
	pipe := rdb.Pipeline()
	for i := 0; i < total; i++ {
		pipe.Set(c, "k:"+strconv.Itoa(i), "v", 300*time.Millisecond)
	}
	pipe.Set(c, "keeper", "v", 0)
	if _, err := pipe.Exec(c); err != nil {
		t.Fatal(err)
	}
	// Nobody touches the keys: only the active cycle can bring DBSIZE down.
	waitFor(t, 30*time.Second, "active expiry to reclaim every key", func() bool { return rdb.DBSize(c).Val() == 1 })
	if got := infoField(t, rdb, "stats", "expired_keys"); got != strconv.Itoa(total) {
		t.Fatalf("expired_keys = %s, want %d", got, total)
	}
	if got := infoField(t, rdb, "keyspace", "db0"); got != "keys=1,expires=0,avg_ttl=0" {
		t.Fatalf("keyspace db0 = %q", got)
	}
	// Reclaimed keys stay gone after a restart.
	n.Stop()
	n.Restart()
	if got := n.Client().DBSize(c).Val(); got != 1 {
		t.Fatalf("DBSIZE after restart = %d", got)
	}
}

func TestExpiryDoesNotDeleteReplacedKey(t *testing.T) {
	n := StartCairn(t, "--hz", "100")
	rdb := n.Client()
	c := ctx(t)
	for i := 0; i < 200; i++ {
		k := "race:" + strconv.Itoa(i)
		rdb.Set(c, k, "old", 50*time.Millisecond)
		rdb.Set(c, k, "new", 0) // replaces the TTL'd value before it expires
	}
	rdb.Set(c, "marker", "v", 100*time.Millisecond)
	waitFor(t, 10*time.Second, "the marker to be reclaimed", func() bool { return rdb.DBSize(c).Val() == 200 })
	for i := 0; i < 200; i++ {
		if v := rdb.Get(c, "race:"+strconv.Itoa(i)).Val(); v != "new" {
			t.Fatalf("race:%d = %q", i, v)
		}
	}
}
