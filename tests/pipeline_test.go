package tests

import (
	"fmt"
	"strings"
	"testing"
)

// TestPipelinedWritesMatchRedis sends the event test's random string and
// key commands in pipelines of 1 to 64 requests, which Cairn runs as
// groups sharing one batch, to Cairn and to redis-server: every reply and
// every key's event sequence must be Redis's.
func TestPipelinedWritesMatchRedis(t *testing.T) {
	seed, n := evSettings(t)
	cairn := StartCairn(t, "--notify-keyspace-events", "KEAnm")
	redis := StartRedis(t, "--notify-keyspace-events", "KEAnm")
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
	checkSameCounters(t, conns[0], conns[1], diffStatsFields, "psubscribe", "ping", "client", "hello")
	// Grouped writes share batches: far fewer batches than requests.
	batches := stat(t, cairn.Client(), "replication", "master_repl_offset")
	if batches*2 > int64(sent) {
		t.Errorf("%d batches for %d pipelined requests: the pipelines were not grouped", batches, sent)
	}
	t.Logf("seed %d: %d requests in %d pipelines, %d batches; %d events compared", seed, sent, pipelines, batches, total)
}
