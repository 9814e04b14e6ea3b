package storage

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestChunkedValuesMatchModel drives random whole writes, range writes,
// expiries, renames, deletions and flushes of long string values through batches
// of one to five operations (a later operation of a batch reads what the
// earlier ones wrote, as EXEC does), and checks after every operation and
// every commit that each key reads as a plain byte slice model says, in
// whole and in random ranges, and that no chunk record lies past its
// value's end or outlives its record. It runs with dropped chunks deleted
// one by one and, for values of two chunks or more, by a range deletion.
func TestChunkedValuesMatchModel(t *testing.T) {
	defer func(n uint32) { rangeDropChunks = n }(rangeDropChunks)
	for _, n := range []uint32{rangeDropChunks, 2} {
		rangeDropChunks = n
		t.Run(fmt.Sprintf("range-deletion-from-%d-chunks", n), testChunkedValuesMatchModel)
	}
}

func testChunkedValuesMatchModel(t *testing.T) {
	e, err := Open(Options{Dir: t.TempDir(), InlineValueMax: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rng := rand.New(rand.NewPCG(7, 11))
	keys := []string{"a", "b", "ab"} // "a" is a prefix of "ab"
	model := map[string][]byte{}     // live keys
	randBytes := func(n int) []byte {
		v := make([]byte, n)
		for i := range v {
			v[i] = byte(rng.IntN(255) + 1)
		}
		return v
	}
	length := func() int { // around the inline maximum and chunk boundaries
		switch rng.IntN(4) {
		case 0:
			return rng.IntN(1100)
		case 1:
			return max(0, chunkSize*rng.IntN(8)+rng.IntN(3)-1)
		default:
			return rng.IntN(6 * chunkSize)
		}
	}
	var log []string
	for round := 0; round < 300; round++ {
		b := e.NewTxnBatch()
		b.Context(LogData{Type: TypeString, Cmd: CmdSet})
		state := map[string]*Metadata{} // what the batch wrote: nil = deleted
		next := map[string][]byte{}
		for k, v := range model {
			next[k] = v
		}
		read := func(key string) (*Metadata, bool) {
			if m, ok := state[key]; ok {
				return m, m != nil
			}
			if slices.Contains(b.flush, "") {
				return nil, false
			}
			m, found, err := e.GetMeta("", []byte(key))
			if err != nil {
				t.Fatal(err)
			}
			if !found {
				return nil, false
			}
			return &m, true
		}
		for op := 1 + rng.IntN(5); op > 0; op-- {
			key := keys[rng.IntN(len(keys))]
			old, found := read(key)
			var oldp *Metadata
			if found {
				oldp = old
			}
			_, live := next[key]
			switch r := rng.IntN(11); {
			case r < 3:
				v := randBytes(length())
				log = append(log, fmt.Sprintf("set %s %d", key, len(v)))
				m := b.PutMeta("", []byte(key), oldp, Metadata{Type: TypeString, Value: v})
				m.Value = nil
				if !m.External() {
					m.Value = v
				}
				state[key], next[key] = &m, v
			case r < 7:
				off := int64(rng.IntN(8 * chunkSize))
				if rng.IntN(3) == 0 {
					off = int64(len(next[key])) // append
				}
				data := randBytes(rng.IntN(3 * chunkSize))
				log = append(log, fmt.Sprintf("write %s at %d, %d bytes (live %v)", key, off, len(data), live))
				m, err := e.WriteRange(b, "", []byte(key), oldp, live, off, data, Metadata{Type: TypeString})
				if err != nil {
					t.Fatalf("%v: %v", log, err)
				}
				m = b.PutMeta("", []byte(key), oldp, m)
				state[key] = &m
				v := append([]byte(nil), next[key]...)
				if int64(len(v)) < off+int64(len(data)) {
					v = append(v, make([]byte, off+int64(len(data))-int64(len(v)))...)
				}
				copy(v[off:], data)
				next[key] = v
			case r < 8 && found && live:
				log = append(log, "expire "+key)
				m := *old
				m.ExpireAt = 1 // long past: the next write starts afresh
				m = b.PutMeta("", []byte(key), oldp, m)
				state[key] = &m
				delete(next, key)
			case r < 9 && found:
				log = append(log, "del "+key)
				b.DeleteKey("", []byte(key), *old)
				state[key] = nil
				delete(next, key)
			case r == 10 && found && live:
				dst := keys[rng.IntN(len(keys))]
				if dst == key {
					break
				}
				log = append(log, "rename "+key+" "+dst)
				dold, dfound := read(dst)
				if !dfound {
					dold = nil
				}
				m := *old
				if m.Chunked() { // the value stays; dst's metadata names it
					b.ForgetKey("", []byte(key), *old)
				} else {
					b.DeleteKey("", []byte(key), *old)
					m.Value = next[key]
				}
				m = b.PutMeta("", []byte(dst), dold, m)
				if m.Chunked() {
					m.Value = nil
				}
				state[key], state[dst] = nil, &m
				next[dst] = next[key]
				delete(next, key)
			case r == 9 && rng.IntN(4) == 0:
				log = append(log, "flush")
				b.FlushNamespace("")
				clear(state)
				for _, k := range keys {
					state[k] = nil
				}
				clear(next)
			}
			// Reads inside the batch see its writes.
			for _, k := range keys {
				m, ok := read(k)
				if v, want := next[k]; want {
					if !ok {
						t.Fatalf("%v: %s missing in the batch", log, k)
					}
					checkValue(t, e, b, k, m, v, rng, log)
				}
			}
		}
		if _, err := e.Commit(b); err != nil {
			t.Fatal(err)
		}
		model = next
		chunks := chunkRecords(t, e, "")
		for _, k := range keys {
			m, found, err := e.GetMeta("", []byte(k))
			if err != nil {
				t.Fatal(err)
			}
			v, want := model[k]
			if want {
				if !found || m.Expired(2) {
					t.Fatalf("%v: %s missing after commit", log, k)
				}
				checkValue(t, e, nil, k, &m, v, rng, log)
			}
			if !found || !m.Chunked() {
				continue
			}
			for idx, n := range chunks[m.Version] {
				if n > chunkSize || uint64(idx)*chunkSize+uint64(n) > m.Size {
					t.Fatalf("%v: %s: chunk %d of %d bytes past its value (metadata %+v)", log, k, idx, n, m)
				}
			}
			delete(chunks, m.Version)
		}
		if len(chunks) > 0 {
			t.Fatalf("%v: chunks of no key's value left: %v", log, chunks)
		}
		if _, err := e.CheckValues(); err != nil {
			t.Fatalf("%v: CheckValues: %v", log, err)
		}
		if len(log) > 40 {
			log = log[len(log)-40:]
		}
	}
}

// checkValue checks that key's value m (read through batch b, nil: none)
// is v, whole and in a few random ranges.
func checkValue(t *testing.T, e *Engine, b *Batch, key string, m *Metadata, v []byte, rng *rand.Rand, log []string) {
	t.Helper()
	if !m.External() {
		if !bytes.Equal(m.Value, v) {
			t.Fatalf("%v: %s inline: %d bytes, want %d", log, key, len(m.Value), len(v))
		}
		return
	}
	got := *m
	if err := e.LoadValue(b, "", []byte(key), &got); err != nil {
		t.Fatalf("%v: %s: %v", log, key, err)
	}
	if !bytes.Equal(got.Value, v) {
		t.Fatalf("%v: %s: %d bytes, want %d (first difference at %d)", log, key, len(got.Value), len(v), firstDiff(got.Value, v))
	}
	for range 3 {
		from := rng.Int64N(int64(len(v)) + 1)
		to := from + rng.Int64N(int64(len(v))-from+1)
		r, err := e.LoadValueRange(b, "", []byte(key), m, from, to)
		if err != nil || !bytes.Equal(r, v[from:to]) {
			t.Fatalf("%v: %s range %d..%d: %v", log, key, from, to, err)
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestFormat1Values: a database of format 1, whose long values are one
// value record each, opens as format 2; such a value reads whole and in
// part, a range write moves it into chunks, and a deletion removes the
// old record.
func TestFormat1Values(t *testing.T) {
	dir := t.TempDir()
	e, err := Open(Options{Dir: dir, InlineValueMax: 8})
	if err != nil {
		t.Fatal(err)
	}
	long := []byte("0123456789abcdef")
	m := Metadata{Type: TypeString, Flags: FlagExternalValue, Size: uint64(len(long))}
	for _, k := range []string{"a", "b"} {
		if err := e.db.Set(valueKey("", []byte(k)), long, nil); err != nil {
			t.Fatal(err)
		}
		commitKey(t, e, "", k, func(b *Batch, old *Metadata) { b.PutMeta("", []byte(k), old, m) })
	}
	if err := e.db.Set(keyFormatVersion, []byte{0, 0, 0, 0, 0, 0, 0, 1}, nil); err != nil {
		t.Fatal(err)
	}
	e.Close()
	if e, err = Open(Options{Dir: dir, InlineValueMax: 8}); err != nil {
		t.Fatalf("open of format 1: %v", err)
	}
	defer e.Close()
	if v, err := e.getLocked(keyFormatVersion); err != nil || !bytes.Equal(v, []byte{0, 0, 0, 0, 0, 0, 0, 2}) {
		t.Fatalf("format record after opening format 1: %v, %v", v, err)
	}
	old, _, err := e.GetMeta("", []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := e.LoadValueRange(nil, "", []byte("a"), &old, 3, 6); err != nil || string(r) != "345" {
		t.Fatalf("range of a format-1 value: %q, %v", r, err)
	}
	commitKey(t, e, "", "a", func(b *Batch, old *Metadata) {
		m, err := e.WriteRange(b, "", []byte("a"), old, true, 20, []byte("XY"), *old)
		if err != nil {
			t.Fatal(err)
		}
		b.PutMeta("", []byte("a"), old, m)
	})
	got, _, err := e.GetMeta("", []byte("a"))
	if err == nil {
		err = e.LoadValue(nil, "", []byte("a"), &got)
	}
	if want := "0123456789abcdef\x00\x00\x00\x00XY"; err != nil || !got.Chunked() || string(got.Value) != want {
		t.Fatalf("after a range write: chunked %v, %q, %v; want %q", got.Chunked(), got.Value, err, want)
	}
	commitKey(t, e, "", "b", func(b *Batch, old *Metadata) { b.DeleteKey("", []byte("b"), *old) })
	for _, k := range []string{"a", "b"} {
		if _, err := e.getLocked(valueKey("", []byte(k))); err == nil {
			t.Errorf("the format-1 value record of %s outlived its write", k)
		}
	}
}

// TestCheckValues: CheckValues counts the chunk records of the values
// keys name, and reports a chunk that belongs to no value, or lies past
// its value's end, with ErrValueCheck.
func TestCheckValues(t *testing.T) {
	e, err := Open(Options{Dir: t.TempDir(), InlineValueMax: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var m Metadata
	commitKey(t, e, "ns", "k", func(b *Batch, old *Metadata) {
		m = b.PutMeta("ns", []byte("k"), old, Metadata{Type: TypeString, Value: bytes.Repeat([]byte("v"), chunkSize+10)})
	})
	if n, err := e.CheckValues(); n != 2 || err != nil {
		t.Fatalf("CheckValues = %d, %v; want 2 chunks", n, err)
	}
	for _, stray := range [][]byte{
		chunkKey(nil, "ns", m.Version+1, 0), // no value
		chunkKey(nil, "", m.Version, 0),     // no value in this namespace
		chunkKey(nil, "ns", m.Version, 2),   // past the end
	} {
		if err := e.db.Set(stray, []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := e.CheckValues(); !errors.Is(err, ErrValueCheck) {
			t.Errorf("with the stray chunk %q: %v", stray, err)
		}
		if err := e.db.Delete(stray, nil); err != nil {
			t.Fatal(err)
		}
	}
}
