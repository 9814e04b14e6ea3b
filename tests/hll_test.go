package tests

import (
	"slices"
	"strconv"
	"testing"
)

// TestHyperLogLogReplica checks that a replica holds a primary's
// HyperLogLogs byte for byte: sparse and dense values, the cache PFCOUNT
// writes back on the primary, and PFMERGE's result; that PFCOUNT on a
// replica answers from a stale cache without writing (the replica keeps
// the primary's bytes); and that replicas publish pfadd as the primary
// does.
func TestHyperLogLogReplica(t *testing.T) {
	p := StartCairn(t, "--notify-keyspace-events", "KEA")
	r := startReplica(t, p, "--notify-keyspace-events", "KEA")
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	waitLinkUp(t, rc)
	events := subscribeEvents(t, rc, "__keyevent@0__:pf*")

	elems := make([]any, 0, 3000)
	for i := range 3000 {
		elems = append(elems, "e"+strconv.Itoa(i))
	}
	must(t, pc.PFAdd(cx, "small", "a", "b", "c").Err())
	must(t, pc.PFAdd(cx, "big", elems...).Err())
	must(t, pc.PFMerge(cx, "merged", "small", "big").Err())
	waitCaughtUp(t, pc, rc)

	// A replica's PFCOUNT computes a stale cache and leaves it stale.
	for _, key := range []string{"small", "big", "merged"} {
		before := rc.Get(cx, key).Val()
		got := rc.PFCount(cx, key).Val()
		if after := rc.Get(cx, key).Val(); after != before || len(after) < 16 || after[15]&0x80 == 0 {
			t.Fatalf("PFCOUNT %s wrote on the replica, or the cache was not stale", key)
		}
		if want := pc.PFCount(cx, key).Val(); got != want { // writes the cache on the primary
			t.Fatalf("PFCOUNT %s: replica %d, primary %d", key, got, want)
		}
	}
	waitCaughtUp(t, pc, rc)
	for _, key := range []string{"small", "big", "merged"} {
		pv, rv := pc.Get(cx, key).Val(), rc.Get(cx, key).Val()
		if pv != rv || len(pv) < 16 || pv[15]&0x80 != 0 {
			t.Fatalf("%s: replica's bytes differ from the primary's or the cache is stale (%d, %d bytes)", key, len(pv), len(rv))
		}
	}
	if enc := rc.Do(cx, "PFDEBUG", "ENCODING", "big").Err(); enc == nil {
		t.Fatal("PFDEBUG (a write) ran on a replica")
	}
	got := events.until(rc)
	want := []string{"__keyevent@0__:pfadd=small", "__keyevent@0__:pfadd=big", "__keyevent@0__:pfadd=merged"}
	if !slices.Equal(got, want) {
		t.Fatalf("replica events %q, want %q", got, want)
	}
}
