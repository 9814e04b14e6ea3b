package storage

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestHashFieldsMatchModel writes hashes in random transaction batches
// (field writes and deletions, key deletions small and large, COPY, a
// namespace flush) and checks, after every operation, that what the
// batch reads (GetField, ScanFields, from its own records over the
// database's) is the model's, and after every commit that the database
// is the model and CheckValues finds no stray record.
func TestHashFieldsMatchModel(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	rng := rand.New(rand.NewPCG(3, 5))
	keys := []string{"h1", "h2", "h"}
	model := map[string]map[string]string{}
	meta := map[string]Metadata{} // the committed metadata of the model's keys

	check := func(b *Batch, state map[string]*Metadata, want map[string]map[string]string, when string) {
		t.Helper()
		for _, key := range keys {
			m := state[key]
			if m == nil {
				if _, live := want[key]; live {
					t.Fatalf("%s: %s has no metadata", when, key)
				}
				continue
			}
			got := map[string]string{}
			err := e.ScanFields(b, "", m, nil, func(f, v []byte) bool {
				got[string(f)] = string(v)
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, want[key]) {
				t.Fatalf("%s: %s scans as %v, want %v", when, key, got, want[key])
			}
			if uint64(len(got)) != m.Size {
				t.Fatalf("%s: %s has %d fields, metadata counts %d", when, key, len(got), m.Size)
			}
			for _, f := range []string{"f0", "f1", "f7", "zz"} {
				v, found, err := e.GetField(b, "", m, []byte(f))
				if err != nil {
					t.Fatal(err)
				}
				if w, ok := want[key][f]; ok != found || string(v) != w {
					t.Fatalf("%s: %s field %s is %q %v, want %q %v", when, key, f, v, found, w, ok)
				}
			}
			// A scan from a start field sees the fields at or after it.
			var from []string
			_ = e.ScanFields(b, "", m, []byte("f5"), func(f, _ []byte) bool {
				from = append(from, string(f))
				return true
			})
			var wantFrom []string
			for f := range want[key] {
				if f >= "f5" {
					wantFrom = append(wantFrom, f)
				}
			}
			slices.Sort(wantFrom)
			if !slices.Equal(from, wantFrom) {
				t.Fatalf("%s: %s scans from f5 as %v, want %v", when, key, from, wantFrom)
			}
		}
	}

	for round := range 200 {
		b := e.NewTxnBatch()
		b.Context(LogData{Type: TypeHash, Cmd: CmdHSet})
		state := map[string]*Metadata{}
		for k, m := range meta {
			state[k] = &m
		}
		next := map[string]map[string]string{}
		for k, h := range model {
			next[k] = maps.Clone(h)
		}
		for op := range 1 + rng.IntN(6) {
			key := keys[rng.IntN(len(keys))]
			old := state[key]
			var desc string
			switch r := rng.IntN(20); {
			case r < 9: // write fields, to a new hash if none
				m := Metadata{Type: TypeHash, Version: NewHashID()}
				if old != nil {
					m = *old
				}
				if next[key] == nil {
					next[key] = map[string]string{}
				}
				n := 1 + rng.IntN(4)
				if rng.IntN(8) == 0 {
					n = rangeDropFields + rng.IntN(40) // past the point-deletion limit
				}
				for range n {
					f, v := fmt.Sprintf("f%d", rng.IntN(n+8)), fmt.Sprint(rng.IntN(100))
					if _, ok := next[key][f]; !ok {
						m.Size++
					}
					next[key][f] = v
					b.PutField("", m.Version, []byte(f), []byte(v))
				}
				m = b.PutMeta("", []byte(key), old, m)
				state[key] = &m
				desc = fmt.Sprintf("write %d fields of %s", n, key)
			case r < 13 && old != nil: // delete fields, the key with the last
				m := *old
				for f := range next[key] {
					if rng.IntN(3) == 0 {
						delete(next[key], f)
						b.PutField("", m.Version, []byte(f), nil)
						m.Size--
					}
				}
				if m.Size == 0 {
					b.DeleteKey("", []byte(key), *old)
					delete(next, key)
					state[key] = nil
				} else {
					m = b.PutMeta("", []byte(key), old, m)
					state[key] = &m
				}
				desc = "delete fields of " + key
			case r < 16 && old != nil: // delete the key
				b.DeleteKey("", []byte(key), *old)
				delete(next, key)
				state[key] = nil
				desc = "delete " + key
			case r < 19 && old != nil: // copy it over another key
				dst := keys[rng.IntN(len(keys))]
				if dst == key {
					continue
				}
				m := *old
				m.Version = NewHashID()
				if _, err := e.CopyFields(b, "", old, m.Version); err != nil {
					t.Fatal(err)
				}
				m = b.PutMeta("", []byte(dst), state[dst], m)
				state[dst] = &m
				next[dst] = maps.Clone(next[key])
				desc = fmt.Sprintf("copy %s to %s", key, dst)
			case r == 19:
				b.FlushNamespace("")
				clear(next)
				clear(state)
				desc = "flush"
			default:
				continue
			}
			check(b, state, next, fmt.Sprintf("round %d op %d (%s), in the batch", round, op, desc))
		}
		if _, err := e.Commit(b); err != nil {
			t.Fatal(err)
		}
		model = next
		clear(meta)
		for k, m := range state {
			if m != nil {
				meta[k] = *m
			}
		}
		check(nil, state, model, fmt.Sprintf("round %d, committed", round))
		if _, err := e.CheckValues(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	if hits, _ := e.members.stats(); hits == 0 {
		t.Fatal("the member cache answered no read: the model did not check it")
	}
}

// TestMovedValueReplacesHash: a chunked string moved over a hash (RENAME
// writes its metadata alone) deletes the hash's fields, as any other
// write over a hash does.
func TestMovedValueReplacesHash(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	commit := func(b *Batch) {
		t.Helper()
		if _, err := e.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	h := Metadata{Type: TypeHash, Version: NewHashID(), Size: 2}
	b := e.NewBatch(LogData{Type: TypeHash, Cmd: CmdHSet})
	b.PutField("", h.Version, []byte("a"), []byte("1"))
	b.PutField("", h.Version, []byte("b"), []byte("2"))
	b.PutMeta("", []byte("dst"), nil, h)
	commit(b)
	// The string "src", chunked, then renamed over "dst".
	b = e.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
	s := b.PutMeta("", []byte("src"), nil, Metadata{Type: TypeString, Value: make([]byte, 2*e.InlineValueMax())})
	commit(b)
	b = e.NewBatch(LogData{Type: TypeString, Cmd: CmdRename})
	b.ForgetKey("", []byte("src"), s)
	s.Value = nil
	b.PutMeta("", []byte("dst"), &h, s)
	commit(b)
	if _, err := e.CheckValues(); err != nil {
		t.Fatal(err)
	}
}

// TestMemberCacheReadersNeverGoBack: readers of a member that hold no
// lock (as HGET does) never read an older value after a newer one while
// a writer keeps replacing it, and read the last one once it stops: the
// member cache never serves a record older than one Pebble gave.
func TestMemberCacheReadersNeverGoBack(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	field := []byte("f")
	var m Metadata
	write := func(i uint64) {
		commitKey(t, e, "", "h", func(b *Batch, old *Metadata) {
			if old == nil {
				m = Metadata{Type: TypeHash, Version: NewHashID(), Size: 1}
			}
			b.PutField("", m.Version, field, binary.BigEndian.AppendUint64(nil, i))
			m = b.PutMeta("", []byte("h"), old, m)
		})
	}
	write(0)
	memberReadHook = func() { time.Sleep(20 * time.Microsecond) }
	defer func() { memberReadHook = nil }()
	const last = 500
	done := make(chan struct{})
	errs := make(chan error, 4)
	rm := m // the readers' copy: the writer keeps writing m
	for range cap(errs) {
		go func() {
			var seen uint64
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				v, found, err := e.GetField(nil, "", &rm, field)
				if err != nil || !found || len(v) != 8 {
					errs <- fmt.Errorf("GetField: %x %v %v", v, found, err)
					return
				}
				got := binary.BigEndian.Uint64(v)
				if got < seen {
					errs <- fmt.Errorf("read %d after %d", got, seen)
					return
				}
				seen = got
			}
		}()
	}
	for i := uint64(1); i <= last; i++ {
		write(i)
	}
	close(done)
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	v, _, err := e.GetField(nil, "", &m, field)
	if err != nil || binary.BigEndian.Uint64(v) != last {
		t.Fatalf("after the writes: %x, %v; want %d", v, err, last)
	}
	if hits, _ := e.members.stats(); hits == 0 {
		t.Fatal("the member cache answered no read")
	}
}
