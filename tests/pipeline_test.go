package tests

import (
	"fmt"
	"slices"
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
			if replies[0][j] != replies[1][j] {
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
	var perKey [2]map[string][]string
	total := 0
	for i, c := range conns {
		c.Do("PUBLISH", marker, "x")
		perKey[i] = map[string][]string{}
		for _, e := range subs[i].until(t, marker) {
			perKey[i][evKeyOf(e)] = append(perKey[i][evKeyOf(e)], e.channel+" "+e.payload)
			total++
		}
	}
	for key, want := range perKey[1] {
		if got := perKey[0][key]; !slices.Equal(got, want) {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Errorf("key %q: cairn's events differ from redis's at #%d:\n cairn %q\n redis %q", key, i,
				got[i:min(len(got), i+6)], want[i:min(len(want), i+6)])
		}
	}
	if len(perKey[0]) != len(perKey[1]) {
		t.Errorf("events for %d keys on cairn, %d on redis", len(perKey[0]), len(perKey[1]))
	}
	// Grouped writes share batches: far fewer batches than requests.
	batches := stat(t, cairn.Client(), "replication", "master_repl_offset")
	if batches*2 > int64(sent) {
		t.Errorf("%d batches for %d pipelined requests: the pipelines were not grouped", batches, sent)
	}
	t.Logf("seed %d: %d requests in %d pipelines, %d batches; %d events compared", seed, sent, pipelines, batches, total)
}
