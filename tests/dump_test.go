package tests

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestDumpRestoreWithRedis: values move both ways between Cairn and
// redis-server 7.0.15 with DUMP and RESTORE, whatever encoding each side
// chose (Redis writes small integers in binary and compresses long
// values with LZF; Cairn compresses nothing), and Redis's MIGRATE moves
// keys into Cairn (it sends RESTORE).
func TestDumpRestoreWithRedis(t *testing.T) {
	cairn, redis := StartCairn(t), StartRedis(t)
	c, r := cairn.Raw(), redis.Raw()
	rng := rand.New(rand.NewPCG(7, 7))
	random := make([]byte, 3000)
	for i := range random {
		random[i] = byte(rng.IntN(256))
	}
	values := []string{"0", "-1", "127", "128", "-32768", "2147483647", "2147483648", "-9223372036854775808",
		"007", "+5", "", "hello", "a\r\nb\x00c", strings.Repeat("a", 50), strings.Repeat("abc", 40000),
		string(random)}
	for i, v := range values {
		key := "dr:" + strconv.Itoa(i)
		for _, dir := range []struct {
			name     string
			from, to *RawConn
		}{{"redis to cairn", r, c}, {"cairn to redis", c, r}} {
			if got := dir.from.Do("SET", key, v); got != "+OK\r\n" {
				t.Fatalf("SET = %q", got)
			}
			dump := diffParse(dir.from.Do("DUMP", key))
			if dump.kind != '$' || dump.null {
				t.Fatalf("%s: DUMP of %q: %+v", dir.name, v, dump)
			}
			if got := dir.to.Do("RESTORE", key, "0", dump.str, "REPLACE"); got != "+OK\r\n" {
				t.Fatalf("%s: RESTORE of %q = %q", dir.name, v, got)
			}
			if got := diffParse(dir.to.Do("GET", key)); got.str != v {
				t.Fatalf("%s: %q restored as %q", dir.name, v, got.str)
			}
		}
	}

	// Sorted sets: listpacks and skiplists of Redis's, with every kind of
	// score, restore in Cairn with the same members, scores and encoding,
	// and Cairn's restore in Redis.
	long := strings.Repeat("m", 70)
	big := []string{}
	for i := range 200 {
		big = append(big, strconv.Itoa(i%7)+"."+strconv.Itoa(i), "m"+strconv.Itoa(i))
	}
	for i, pairs := range [][]string{
		{"1", "a", "2", "b", "2", "c"},
		{"-inf", "lo", "inf", "hi", "-0", "z", "0.1", "tenth", "1e300", "huge", "-2.5", "neg", "12345678901", "int"},
		{"1", long, "-0", "negzero", "3.5", "x"},
		big,
	} {
		key := "drz:" + strconv.Itoa(i)
		for _, dir := range []struct {
			name     string
			from, to *RawConn
		}{{"redis to cairn", r, c}, {"cairn to redis", c, r}} {
			dir.from.Do("DEL", key)
			if got := diffParse(dir.from.Do(append([]string{"ZADD", key}, pairs...)...)); got.n != int64(len(pairs)/2) {
				t.Fatalf("%s: ZADD %s = %+v", dir.name, key, got)
			}
			dump := diffParse(dir.from.Do("DUMP", key))
			if dump.kind != '$' || dump.null {
				t.Fatalf("%s: DUMP of %s: %+v", dir.name, key, dump)
			}
			if got := dir.to.Do("RESTORE", key, "0", dump.str, "REPLACE"); got != "+OK\r\n" {
				t.Fatalf("%s: RESTORE of %s = %q", dir.name, key, got)
			}
			for _, cmd := range [][]string{{"ZRANGE", key, "0", "-1", "WITHSCORES"}, {"OBJECT", "ENCODING", key}} {
				if want, got := dir.from.Do(cmd...), dir.to.Do(cmd...); got != want {
					t.Fatalf("%s: %q after RESTORE: %q, want %q", dir.name, cmd, got, want)
				}
			}
		}
	}

	// MIGRATE from Redis: the key leaves Redis and arrives in Cairn with
	// its TTL.
	r.Expect("+OK\r\n", "SET", "migrated", "payload", "EX", "1000")
	r.Expect("+OK\r\n", "MIGRATE", "127.0.0.1", strconv.Itoa(cairn.Port), "migrated", "0", "5000")
	r.Expect(":0\r\n", "EXISTS", "migrated")
	c.Expect("$7\r\npayload\r\n", "GET", "migrated")
	if ttl := diffParse(c.Do("TTL", "migrated")); ttl.n < 990 || ttl.n > 1000 {
		t.Fatalf("TTL on Cairn after MIGRATE = %d", ttl.n)
	}
}
