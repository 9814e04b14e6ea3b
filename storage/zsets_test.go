package storage

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestScoreKeyOrder checks that ScoreKey orders scores as numbers do,
// -0 as 0, and that scoreFromKey inverts it.
func TestScoreKeyOrder(t *testing.T) {
	scores := []float64{math.Inf(-1), -math.MaxFloat64, -1e300, -2.5, -1, -math.SmallestNonzeroFloat64, 0, math.SmallestNonzeroFloat64, 0.1, 1, 1.5, 1e300, math.MaxFloat64, math.Inf(1)}
	for i, s := range scores {
		if got := scoreFromKey(ScoreKey(s)); got != s {
			t.Errorf("scoreFromKey(ScoreKey(%g)) = %g", s, got)
		}
		if i > 0 && bytes.Compare(ScoreKey(scores[i-1]), ScoreKey(s)) >= 0 {
			t.Errorf("ScoreKey(%g) does not sort before ScoreKey(%g)", scores[i-1], s)
		}
	}
	if !bytes.Equal(ScoreKey(math.Copysign(0, -1)), ScoreKey(0)) {
		t.Errorf("-0 and 0 have different keys")
	}
}

// TestZSetsMatchModel adds, rescores and removes members of a sorted set
// in random batches, plain and transaction ones (whose later reads see
// their own records), with score bounds in the metadata tight, loose or
// none, and checks that ScanZSet reads the model in both
// directions from every kind of position, that ZScore reads each score,
// and after every commit that CheckValues finds the member and score
// records agreeing.
func TestZSetsMatchModel(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	rng := rand.New(rand.NewPCG(3, 5))
	type pair struct {
		m string
		s float64
	}
	sorted := func(model map[string]float64) []pair {
		var ps []pair
		for m, s := range model {
			ps = append(ps, pair{m, s})
		}
		slices.SortFunc(ps, func(a, b pair) int {
			if c := cmp.Compare(a.s, b.s); c != 0 {
				return c
			}
			return cmp.Compare(a.m, b.m)
		})
		return ps
	}
	scores := []float64{math.Inf(-1), -3, -1.5, math.Copysign(0, -1), 0, 1, 2, 2.5, 1e10, math.Inf(1)}
	check := func(b *Batch, m *Metadata, model map[string]float64, when string) {
		t.Helper()
		if m == nil {
			if len(model) != 0 {
				t.Fatalf("%s: no metadata for %d members", when, len(model))
			}
			return
		}
		want := sorted(model)
		if m.Size != uint64(len(want)) {
			t.Fatalf("%s: metadata counts %d, want %d", when, m.Size, len(want))
		}
		for _, p := range want {
			s, ok, err := e.ZScore(b, "", m, []byte(p.m))
			if err != nil || !ok || math.Float64bits(s) != math.Float64bits(p.s) {
				t.Fatalf("%s: ZScore(%q) = %g %v %v, want %g", when, p.m, s, ok, err, p.s)
			}
		}
		var byName []pair
		if err := e.ScanZMembers(b, "", m, nil, func(member []byte, s float64) bool {
			byName = append(byName, pair{string(member), s})
			return true
		}); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if !slices.IsSortedFunc(byName, func(a, b pair) int { return cmp.Compare(a.m, b.m) }) || len(byName) != len(want) {
			t.Fatalf("%s: ScanZMembers reads %v", when, byName)
		}
		for _, p := range byName {
			if s, ok := model[p.m]; !ok || math.Float64bits(s) != math.Float64bits(p.s) {
				t.Fatalf("%s: ScanZMembers reads %q with %g", when, p.m, p.s)
			}
		}
		if _, ok, _ := e.ZScore(b, "", m, []byte("absent")); ok {
			t.Fatalf("%s: ZScore of an absent member found it", when)
		}
		positions := []*ZPos{nil, {Score: 0}, {Score: 0, After: true}, {Score: 2, Member: []byte("m3")}, {Score: 2, Member: []byte("m3"), After: true}, {Score: math.Inf(1), After: true}}
		for _, from := range positions {
			for _, reverse := range []bool{false, true} {
				var got []pair
				err := e.ScanZSet(b, "", m, from, reverse, func(member []byte, s float64) bool {
					got = append(got, pair{string(member), s})
					return true
				})
				if err != nil {
					t.Fatalf("%s: %v", when, err)
				}
				var w []pair
				for _, p := range want {
					var past bool // p is at or past from
					if from == nil {
						past = !reverse
					} else {
						c := cmp.Compare(p.s, from.Score)
						if c == 0 && from.Member != nil {
							c = cmp.Compare(p.m, string(from.Member))
						}
						past = c > 0 || c == 0 && !from.After
					}
					if from == nil || past != reverse {
						w = append(w, p)
					}
				}
				if reverse {
					slices.Reverse(w)
				}
				if len(got) != len(w) {
					t.Fatalf("%s: from %+v reverse %v reads %v, want %v", when, from, reverse, got, w)
				}
				for i := range got {
					if got[i].m != w[i].m || math.Float64bits(got[i].s) != math.Float64bits(w[i].s) {
						t.Fatalf("%s: from %+v reverse %v reads %v, want %v", when, from, reverse, got, w)
					}
				}
			}
		}
	}
	model := map[string]float64{}
	var meta *Metadata
	for round := range 200 {
		txn := rng.IntN(2) == 0
		var b *Batch
		if txn {
			b = e.NewTxnBatch()
			b.Context(LogData{Type: TypeZSet, Cmd: CmdZAdd})
		} else {
			b = e.NewBatch(LogData{Type: TypeZSet, Cmd: CmdZAdd})
		}
		next := map[string]float64{}
		for k, v := range model {
			next[k] = v
		}
		var m *Metadata
		if meta != nil {
			mm := *meta
			m = &mm
		}
		ops := 1
		if txn {
			ops = 1 + rng.IntN(4)
		}
		for op := range ops {
			var desc string
			switch r := rng.IntN(10); {
			case r < 7 || m == nil: // add or rescore some members
				nm := Metadata{Type: TypeZSet, Version: NewHashID()}
				if m != nil {
					nm = *m
				}
				seen := map[string]bool{}
				for range 1 + rng.IntN(6) {
					member := fmt.Sprintf("m%d", rng.IntN(12))
					if seen[member] {
						continue // a plain batch does not read its own writes
					}
					seen[member] = true
					s := scores[rng.IntN(len(scores))]
					old, had := next[member]
					b.PutZMember("", nm.Version, []byte(member), old, had, s)
					if !had {
						nm.Size++
					}
					next[member] = s
				}
				nm = b.PutMeta("", []byte("z"), m, setBounds(rng, nm, next))
				m = &nm
				desc = "add"
			case r < 9: // remove some members
				nm := *m
				for member, s := range next {
					if rng.IntN(3) == 0 {
						b.DeleteZMember("", nm.Version, []byte(member), s)
						delete(next, member)
						nm.Size--
					}
				}
				if nm.Size == 0 {
					b.DeleteKey("", []byte("z"), *m)
					m = nil
				} else {
					nm = b.PutMeta("", []byte("z"), m, setBounds(rng, nm, next))
					m = &nm
				}
				desc = "remove"
			default:
				b.DeleteKey("", []byte("z"), *m)
				m, next = nil, map[string]float64{}
				desc = "delete"
			}
			if txn {
				check(b, m, next, fmt.Sprintf("round %d op %d (%s), in the batch", round, op, desc))
			}
		}
		if _, err := e.Commit(b); err != nil {
			t.Fatal(err)
		}
		model, meta = next, m
		check(nil, meta, model, fmt.Sprintf("round %d, committed", round))
		if _, err := e.CheckValues(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}

// setBounds gives the sorted set m of members model score bounds that
// hold them all: none, the exact lowest and highest scores, or looser
// ones.
func setBounds(rng *rand.Rand, m Metadata, model map[string]float64) Metadata {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range model {
		lo, hi = min(lo, s), max(hi, s)
	}
	switch rng.IntN(3) {
	case 0:
		m.ZLow, m.ZHigh = 0, 0
	case 1:
		m.ZLow, m.ZHigh = ScoreBound(lo), ScoreBound(hi)
	default:
		m.ZLow, m.ZHigh = ScoreBound(math.Inf(-1)), ScoreBound(hi)
	}
	return m
}
