package storage

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestListsMatchModel pushes to and removes from both ends of a list in
// random batches, plain and transaction ones (whose range deletions the
// batch's own later reads do not see), with removals below and above the
// range-deletion limit, and checks after every operation that ScanList
// reads the model from every position, and after every commit that
// CheckValues finds each element record within the list's range and no
// other.
func TestListsMatchModel(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	rng := rand.New(rand.NewPCG(7, 11))
	var model []string
	var meta *Metadata
	check := func(b *Batch, m *Metadata, want []string, when string) {
		t.Helper()
		if m == nil {
			if len(want) != 0 {
				t.Fatalf("%s: no metadata for %d elements", when, len(want))
			}
			return
		}
		if m.Size != uint64(len(want)) {
			t.Fatalf("%s: metadata counts %d, want %d", when, m.Size, len(want))
		}
		for _, from := range []uint64{0, 1, m.Size / 2, m.Size - 1, m.Size} {
			var got []string
			err := e.ScanList(b, "", m, from, func(pos uint64, v []byte) bool {
				if pos != from+uint64(len(got)) {
					t.Fatalf("%s: position %d after %d elements from %d", when, pos, len(got), from)
				}
				got = append(got, string(v))
				return true
			})
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			if w := want[min(from, m.Size):]; !slices.Equal(got, w) {
				t.Fatalf("%s: from %d reads %q, want %q", when, from, got, w)
			}
		}
	}
	for round := range 150 {
		txn := rng.IntN(2) == 0
		var b *Batch
		if txn {
			b = e.NewTxnBatch()
			b.Context(LogData{Type: TypeList, Cmd: CmdRPush})
		} else {
			b = e.NewBatch(LogData{Type: TypeList, Cmd: CmdRPush})
		}
		next := slices.Clone(model)
		var m *Metadata
		if meta != nil {
			mm := *meta
			m = &mm
		}
		ops := 1
		if txn {
			ops = 1 + rng.IntN(5)
			// Elements read ahead for pops before the operations must
			// not hide what the operations write (takeAhead, below).
			if m != nil && rng.IntN(2) == 0 {
				left := rng.IntN(2) == 0
				pos := uint64(0)
				if !left {
					pos = m.Size - 1
				}
				if err := e.ReadListAhead(b, "", m, left, pos); err != nil {
					t.Fatal(err)
				}
			}
		}
		var desc string
		for op := range ops {
			switch r := rng.IntN(10); {
			case r < 5 || m == nil: // push some at one end
				nm := Metadata{Type: TypeList, Version: NewHashID(), Head: ListStart}
				if m != nil {
					nm = *m
				}
				n := 1 + rng.IntN(5)
				if rng.IntN(6) == 0 {
					n = rangeDropFields + rng.IntN(50)
				}
				left := rng.IntN(2) == 0
				for i := range n {
					v := fmt.Sprintf("r%d-%d", round, i)
					if left {
						nm.Head--
						b.PutField("", nm.Version, ListIndex(nm.Head), []byte(v))
						next = append([]string{v}, next...)
					} else {
						b.PutField("", nm.Version, ListIndex(nm.Head+nm.Size), []byte(v))
						next = append(next, v)
					}
					nm.Size++
				}
				nm = b.PutMeta("", []byte("l"), m, nm)
				m = &nm
				desc = fmt.Sprintf("push %d (left %v)", n, left)
			case r < 9: // remove some from one end, or both
				nm := *m
				from, to := uint64(rng.IntN(int(nm.Size)+1)), nm.Size
				if rng.IntN(2) == 0 {
					from, to = 0, from
				}
				if to-from == nm.Size {
					b.DeleteKey("", []byte("l"), *m)
					m, next = nil, nil
					desc = "remove all"
					break
				}
				b.DeleteListRange("", &nm, from, to)
				next = slices.Delete(next, int(from), int(to))
				if from == 0 {
					nm.Head += to
				}
				nm.Size -= to - from
				nm = b.PutMeta("", []byte("l"), m, nm)
				m = &nm
				desc = fmt.Sprintf("remove [%d, %d)", from, to)
			default: // delete the key
				b.DeleteKey("", []byte("l"), *m)
				m, next = nil, nil
				desc = "delete"
			}
			if txn { // only a transaction batch reads its own records
				check(b, m, next, fmt.Sprintf("round %d op %d (%s), in the batch", round, op, desc))
			}
		}
		if txn && m != nil { // what a pop takes: read ahead or not, the model's
			for pos := range m.Size {
				v, found, err := e.TakeField(b, "", m, ListIndex(m.Head+pos))
				if err != nil || !found || string(v) != next[pos] {
					t.Fatalf("round %d: TakeField of position %d: %q, %v, %v; want %q", round, pos, v, found, err, next[pos])
				}
			}
		}
		if _, err := e.Commit(b); err != nil {
			t.Fatal(err)
		}
		model, meta = next, m
		check(nil, meta, model, fmt.Sprintf("round %d, committed (last: %s)", round, desc))
		if _, err := e.CheckValues(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}
