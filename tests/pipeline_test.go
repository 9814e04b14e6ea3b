package tests

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestPipelinedWritesMatchRedis sends the event test's random string and
// key commands in pipelines of 1 to 64 requests, which Cairn runs as
// groups sharing one batch, to Cairn and to redis-server: every reply and
// every key's event sequence must be Redis's, and a replica of Cairn must
// end with the primary's keys. With all events, none or some of them
// enabled: a group writes a key's metadata once, unless events go with
// it (storage.Batch's held records).
func TestPipelinedWritesMatchRedis(t *testing.T) {
	seed, n := evSettings(t)
	for i, flags := range []string{"KEAnm", "", "Klzh"} {
		t.Run(fmt.Sprintf("events=%q", flags), func(t *testing.T) { pipelinedWrites(t, seed+int64(i), n, flags) })
	}
}

func pipelinedWrites(t *testing.T, seed int64, n int, flags string) {
	args := []string{"--notify-keyspace-events", flags}
	if flags == "" {
		args = append(args, diffSmallInline...) // values in chunk records
	}
	cairn := StartCairnEnv(t, leDebug, args...)
	replica := StartCairnEnv(t, leDebug, "--slaveof", "127.0.0.1 "+strconv.Itoa(cairn.Port))
	redis := StartRedis(t, "--notify-keyspace-events", flags)
	// So that both primaries count a replica's PSYNC and REPLCONF.
	waitLinkUp(t, StartRedis(t, "--replicaof", "127.0.0.1 "+strconv.Itoa(redis.Port)).Client())
	subs := []*evCollector{evSubscribe(t, "cairn", cairn), evSubscribe(t, "redis", redis)}
	conns := []*RawConn{cairn.Raw(), redis.Raw()}
	g := newEvGen(seed)
	sent, pipelines := 0, 0
	for sent < n {
		size := 1 + g.rng.IntN(64)
		var cmds [][]string
		var wire strings.Builder
		for range size {
			args, _ := g.command()
			cmds = append(cmds, args)
			fmt.Fprintf(&wire, "*%d\r\n", len(args))
			for _, a := range args {
				fmt.Fprintf(&wire, "$%d\r\n%s\r\n", len(a), a)
			}
		}
		replies := make([][]string, 2)
		for i, c := range conns {
			c.Send(wire.String())
			for range cmds {
				replies[i] = append(replies[i], c.Reply())
			}
		}
		for j, args := range cmds {
			// Relative TTLs can differ by the servers' clock skew.
			if name := strings.ToUpper(args[0]); name == "TTL" || name == "PTTL" {
				continue
			}
			// Hash replies may list fields in another order (diffKindOf).
			if replies[0][j] != replies[1][j] && diffCompare(diffKindOf(args), diffParse(replies[0][j]), diffParse(replies[1][j])) != "" {
				t.Fatalf("pipeline %d, request %d %q: cairn %q, redis %q", pipelines, j, args, replies[0][j], replies[1][j])
			}
		}
		sent += size
		pipelines++
	}
	// A key the stream set with a time already past may be reclaimed by
	// one server's active expiry before the end and not yet by the
	// other's: an access reclaims it on both, with the same events.
	for _, k := range evKeys {
		if got, want := conns[0].Do("EXISTS", k), conns[1].Do("EXISTS", k); got != want {
			t.Fatalf("EXISTS %s at the end: cairn %q, redis %q", k, got, want)
		}
	}
	marker := evMarker + "end"
	for _, c := range conns {
		c.Do("PUBLISH", marker, "x")
	}
	total := evSamePerKey(t, marker, subs[1], subs[0])
	// Grouped or not, every request counts as Redis counts it.
	checkSameCounters(t, conns[0], conns[1], diffStatsFields, "psubscribe", "ping", "client", "hello", "psync", "replconf")
	// Grouped writes share batches: far fewer batches than requests.
	batches := stat(t, cairn.Client(), "replication", "master_repl_offset")
	if batches*2 > int64(sent) {
		t.Errorf("%d batches for %d pipelined requests: the pipelines were not grouped", batches, sent)
	}
	for _, c := range conns {
		c.Do("SET", evMarker+"end", "x") // so the keyspace is never empty (compareData)
	}
	waitCaughtUp(t, cairn.Client(), replica.Client())
	compareData(t, "replica after the pipelines", cairn.Client(), replica.Client())
	checkValues(t, cairn, "on the primary")
	checkValues(t, replica, "on the replica")
	// Values of keys without a TTL (the servers' expiry times differ by
	// when each ran the command).
	ours, theirs := snapshot(t, cairn.Client()), snapshot(t, redis.Client())
	for k, st := range ours {
		if st.expireAt == -1 && theirs[k].expireAt == -1 && (st.typ != theirs[k].typ || st.val != theirs[k].val) {
			t.Errorf("key %s at the end: cairn %+v, redis %+v", k, st, theirs[k])
		}
	}
	t.Logf("seed %d: %d requests in %d pipelines, %d batches; %d events compared", seed, sent, pipelines, batches, total)
}
