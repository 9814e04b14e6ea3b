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
