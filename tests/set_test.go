package tests

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// Ten clients move members between two sets with SMOVE while a reader
// checks, with SUNION and SINTER (each reads both sets under their
// locks), that every member is in exactly one of them; a replica ends
// with the same sets, and no member record is left behind.
func TestSetConcurrentMoves(t *testing.T) {
	p := StartCairnEnv(t, leDebug)
	r := startReplica(t, p)
	cx := ctx(t)
	pc := p.Client()
	const members = 100
	var all []any
	for i := range members {
		all = append(all, fmt.Sprintf("m%03d", i))
	}
	must(t, pc.SAdd(cx, "a", all...).Err())
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for w := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := p.Client()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for range 300 {
				src, dst := "a", "b"
				if rng.IntN(2) == 0 {
					src, dst = dst, src
				}
				if err := c.SMove(cx, src, dst, fmt.Sprintf("m%03d", rng.IntN(members))).Err(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	stop := make(chan struct{})
	go func() {
		c := p.Client()
		for {
			select {
			case <-stop:
				errs <- nil
				return
			default:
			}
			union, err := c.SUnion(cx, "a", "b").Result()
			if err == nil && len(union) != members {
				err = fmt.Errorf("SUNION a b has %d members, want %d", len(union), members)
			}
			if err == nil {
				var inter []string
				if inter, err = c.SInter(cx, "a", "b").Result(); err == nil && len(inter) != 0 {
					err = fmt.Errorf("SINTER a b: %v", inter)
				}
			}
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	a, b := pc.SMembers(cx, "a").Val(), pc.SMembers(cx, "b").Val()
	if len(a)+len(b) != members {
		t.Fatalf("a has %d members, b %d: want %d in all", len(a), len(b), members)
	}
	rc := r.Client()
	waitCaughtUp(t, pc, rc)
	for key, want := range map[string][]string{"a": a, "b": b} {
		got := rc.SMembers(cx, key).Val()
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("replica's %s: %v, primary's %v", key, got, want)
		}
	}
	checkValues(t, p, "after the moves")
}
