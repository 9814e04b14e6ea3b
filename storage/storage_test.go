package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// openTest opens an engine in dir with small caches, so that tests
// exercise the row and member caches and their evictions too.
func openTest(t testing.TB, dir string) *Engine {
	t.Helper()
	e, err := Open(Options{Dir: dir, RowCacheBytes: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// commitKey commits, under key's lock, the batch f makes for key in ns
// given its current metadata (nil when absent), and returns the batch's
// size in bytes.
func commitKey(t testing.TB, e *Engine, ns, key string, f func(b *Batch, old *Metadata)) int {
	t.Helper()
	unlock := e.Locks.Lock(ns, []byte(key))
	defer unlock()
	old, found, err := e.GetMeta(ns, []byte(key))
	if err != nil {
		t.Fatal(err)
	}
	var op *Metadata
	if found {
		op = &old
	}
	b := e.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
	f(b, op)
	size := len(b.b.Repr())
	if _, err := e.Commit(b); err != nil {
		t.Fatal(err)
	}
	return size
}

func TestLogDataRoundTrip(t *testing.T) {
	cases := []LogData{
		{},
		{Type: TypeString, Cmd: CmdSet},
		{Type: TypeString, Cmd: CmdDel, Flags: LogFlagNotify},
		{Type: TypeStream, Cmd: Command(0xfffe), Flags: 0xff},
	}
	for _, l := range cases {
		got, err := DecodeLogData(l.Encode())
		if err != nil || got != l {
			t.Errorf("round trip of %+v: got %+v, %v", l, got, err)
		}
	}
	// Longer records of version 1 decode (later fields are ignored).
	ext := append(LogData{Type: TypeString, Cmd: CmdSet}.Encode(), 9, 9, 9)
	if got, err := DecodeLogData(ext); err != nil || got.Cmd != CmdSet {
		t.Errorf("extended record: %+v %v", got, err)
	}
	if _, err := DecodeLogData([]byte{2, 1, 0, 1, 0}); !errors.Is(err, ErrUnknownLogData) {
		t.Errorf("unknown version: %v", err)
	}
	for _, bad := range [][]byte{nil, {1}, {1, 1, 0}} {
		if _, err := DecodeLogData(bad); err == nil {
			t.Errorf("short record %x decoded", bad)
		}
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	cases := []Metadata{
		{Type: TypeString, Value: []byte("hello")},
		{Type: TypeString, ExpireAt: 1700000000000, Value: []byte{}},
		{Type: TypeHash, ExpireAt: 5, Version: 7, Size: 3},
		{Type: TypeString, Flags: FlagExternalValue, ExpireAt: 9, Size: 1 << 40},
		{Type: TypeList, Version: 11, Size: 2, Head: ListStart - 5},
	}
	for _, m := range cases {
		got, err := decodeMetadata(m.encode(nil))
		if err != nil || got.Type != m.Type || got.ExpireAt != m.ExpireAt || got.Version != m.Version ||
			got.Size != m.Size || got.Head != m.Head || !bytes.Equal(got.Value, m.Value) {
			t.Errorf("round trip of %+v: got %+v, %v", m, got, err)
		}
	}
	if _, err := decodeMetadata([]byte{1, 0}); err == nil {
		t.Error("short metadata decoded")
	}
	if _, err := decodeMetadata((&Metadata{Type: TypeHash}).encode(nil)[:12]); err == nil {
		t.Error("truncated hash metadata decoded")
	}
	if _, err := decodeMetadata((&Metadata{Type: TypeList}).encode(nil)[:26]); err == nil {
		t.Error("list metadata without its head decoded")
	}
}

func TestMetaKeyRoundTrip(t *testing.T) {
	for _, c := range []struct{ ns, key string }{{"", "k"}, {"tenant", "a:b"}, {"x", ""}, {"\xff", "\x00\xff"}} {
		ns, key, err := DecodeMetaKey(metaKey(c.ns, []byte(c.key)))
		if err != nil || string(ns) != c.ns || string(key) != c.key {
			t.Errorf("%q/%q: got %q/%q %v", c.ns, c.key, ns, key, err)
		}
	}
	if _, _, err := DecodeMetaKey([]byte{prefixMeta, 5, 'a'}); err == nil {
		t.Error("truncated key decoded")
	}
}

func TestCommitCountsOffsetsAndReopen(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir)
	put := func(ns, key string, expire int64) {
		commitKey(t, e, ns, key, func(b *Batch, old *Metadata) {
			b.PutMeta(ns, []byte(key), old, Metadata{Type: TypeString, Value: []byte("v"), ExpireAt: expire})
		})
	}
	put("", "a", 0)
	put("", "b", 10)
	put("", "b", 20) // overwrite: same key count, expiry index moves
	put("ns1", "a", 0)
	if got := e.KeyCounts(); got[""] != (KeyCount{Keys: 2, Expires: 1, expireSum: sum128{lo: 20}}) || got["ns1"] != (KeyCount{Keys: 1}) {
		t.Fatalf("counts = %+v", got)
	}
	var due []string
	e.ScanExpiring("", 0, 100, func(ms int64, key []byte) bool { due = append(due, string(key)); return true })
	if len(due) != 1 || due[0] != "b" {
		t.Fatalf("expiry index = %v", due)
	}
	offset := e.Offset()
	if offset != 4 {
		t.Fatalf("offset = %d, want 4", offset)
	}
	if n, _, err := e.ExpireSlice(1000, 10, nil); err != nil || n != 1 {
		t.Fatalf("ExpireSlice = %d, %v", n, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openTest(t, dir)
	defer e.Close()
	if got := e.KeyCounts(); got[""] != (KeyCount{Keys: 1}) || got["ns1"] != (KeyCount{Keys: 1}) {
		t.Fatalf("counts after reopen = %+v", got)
	}
	if e.Offset() != offset+1 {
		t.Fatalf("offset after reopen = %d, want %d", e.Offset(), offset+1)
	}
}

func TestCommitHookSeesBatchesInOffsetOrder(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	var offsets []uint64
	var reprs [][]byte
	e.SetCommitHook(func(off uint64, repr []byte) {
		offsets = append(offsets, off)
		reprs = append(reprs, bytes.Clone(repr))
	})
	for i := 0; i < 3; i++ {
		b := e.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
		b.PutMeta("", []byte{byte('a' + i)}, nil, Metadata{Type: TypeString, Value: []byte("v")})
		if _, err := e.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	if len(offsets) != 3 || offsets[0] != 1 || offsets[2] != 3 {
		t.Fatalf("offsets = %v", offsets)
	}
	// The repr is a complete batch: LogData first, then records, with the
	// offset inside it.
	b := pebble.Batch{}
	if err := b.SetRepr(reprs[1]); err != nil {
		t.Fatal(err)
	}
	r := b.Reader()
	kind, ld, _, ok, err := r.Next()
	if !ok || err != nil || kind != pebble.InternalKeyKindLogData {
		t.Fatalf("first record kind %v ok=%v err=%v", kind, ok, err)
	}
	if l, err := DecodeLogData(ld); err != nil || l.Cmd != CmdSet {
		t.Fatalf("LogData = %+v %v", l, err)
	}
	found := false
	for {
		kind, k, v, ok, err := r.Next()
		if !ok || err != nil {
			break
		}
		if kind == pebble.InternalKeyKindSet && bytes.Equal(k, keyReplOffset) {
			found = binary.BigEndian.Uint64(v) == 2
		}
	}
	if !found {
		t.Fatal("batch 2 does not carry offset 2")
	}
}

func TestCommitFaultAppliesNothing(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	e.SetCommitFault(func(*Batch) error { return ErrInjectedFault })
	b := e.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
	b.PutMeta("", []byte("k"), nil, Metadata{Type: TypeString, Value: []byte("v")})
	if _, err := e.Commit(b); !errors.Is(err, ErrInjectedFault) {
		t.Fatalf("commit error = %v", err)
	}
	if _, found, _ := e.GetMeta("", []byte("k")); found || e.DBSize("") != 0 || e.Offset() != 0 {
		t.Fatal("a failed commit left data behind")
	}
}

func TestSecondOpenIsLocked(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir)
	defer e.Close()
	if _, err := Open(Options{Dir: dir}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v", err)
	}
}

func TestUnknownFormatRefused(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir)
	e.db.Set(keyFormatVersion, binary.BigEndian.AppendUint64(nil, 99), pebble.Sync)
	e.Close()
	if _, err := Open(Options{Dir: dir}); !errors.Is(err, ErrFormat) {
		t.Fatalf("open of format 99: %v", err)
	}
}

func FuzzDecodeLogData(f *testing.F) {
	f.Add(LogData{Type: TypeString, Cmd: CmdSet}.Encode())
	f.Add([]byte{})
	f.Add([]byte{2, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := DecodeLogData(b)
		if err == nil && !bytes.Equal(l.Encode(), b[:logDataLen]) {
			t.Fatalf("decode/encode mismatch for %x", b)
		}
	})
}

func FuzzDecodeMetadata(f *testing.F) {
	f.Add((&Metadata{Type: TypeString, Value: []byte("v")}).encode(nil))
	f.Add((&Metadata{Type: TypeHash, Version: 1, Size: 2}).encode(nil))
	f.Add((&Metadata{Type: TypeString, Flags: FlagExternalValue, Size: 70000}).encode(nil))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeMetadata(b)
		if err == nil && (m.Type != TypeString || m.External()) && !bytes.Equal(m.encode(nil), b[:m.encodedLen()]) {
			t.Fatalf("decode/encode mismatch for %x", b)
		}
	})
}

// BenchmarkCommitSet measures one SET's storage work: the metadata read
// and the commit of its batch (LogData, record, offset), over 100,000 keys.
func BenchmarkCommitSet(b *testing.B) {
	e, err := Open(Options{Dir: b.TempDir(), RowCacheBytes: 32 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	val := make([]byte, 3)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		key := binary.BigEndian.AppendUint32([]byte("key:"), uint32(i%100000))
		unlock := e.Locks.Lock("", key)
		old, found, err := e.GetMeta("", key)
		if err != nil {
			b.Fatal(err)
		}
		var op *Metadata
		if found {
			op = &old
		}
		batch := e.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
		batch.PutMeta("", key, op, Metadata{Type: TypeString, Value: val})
		if _, err := e.Commit(batch); err != nil {
			b.Fatal(err)
		}
		unlock()
	}
}

// TestSSTablesKeepToOneKeyspace checks that flushes and compactions never
// put two keyspaces in one sstable: every commit writes the internal
// offset and count records beside its user keys, and a table spanning both
// would make each compaction rewrite all data in between.
func TestSSTablesKeepToOneKeyspace(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	for round := range 3 {
		for i := range 200 {
			b := e.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
			key := []byte{byte('a' + round), byte(i)}
			b.PutMeta("", key, nil, Metadata{Type: TypeString, ExpireAt: 1 << 50, Value: []byte("v")})
			if _, err := e.Commit(b); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.db.Compact(context.Background(), []byte{0}, []byte{0xff}, true); err != nil {
		t.Fatal(err)
	}
	levels, err := e.db.SSTables()
	if err != nil {
		t.Fatal(err)
	}
	spaces := map[byte]bool{}
	for level, tables := range levels {
		for _, tbl := range tables {
			lo, hi := tbl.Smallest.UserKey, tbl.Largest.UserKey
			if lo[0] != hi[0] {
				t.Errorf("L%d table %s spans keyspaces %q..%q", level, tbl.FileNum, lo, hi)
			}
			spaces[lo[0]] = true
		}
	}
	for _, p := range []byte{prefixInternal, prefixMeta, prefixExpire} {
		if !spaces[p] {
			t.Errorf("no sstable holds keyspace %q (tables: %v)", p, levels)
		}
	}
}

// TestCachedMetaReadsAllocateNothing checks that the read every write does
// first (GetMeta) and a read-only command's read (ReadMeta) allocate
// nothing when the row cache has the key.
func TestCachedMetaReadsAllocateNothing(t *testing.T) {
	e, err := Open(Options{Dir: t.TempDir(), RowCacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	b := e.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
	b.PutMeta("", []byte("key:1"), nil, Metadata{Type: TypeString, Value: []byte("value")})
	if _, err := e.Commit(b); err != nil {
		t.Fatal(err)
	}
	key := []byte("key:1")
	for name, read := range map[string]func(string, []byte) (Metadata, bool, error){"GetMeta": e.GetMeta, "ReadMeta": e.ReadMeta} {
		allocs := testing.AllocsPerRun(100, func() {
			if m, found, err := read("", key); !found || err != nil || string(m.Value) != "value" {
				t.Fatalf("%s: %q, %v, %v", name, m.Value, found, err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s of a cached key: %v allocations, want 0", name, allocs)
		}
	}
}

// TestExpireSliceResumes checks that expiry slices resume where the last
// one ended, so that they do not step over the tombstones of the entries
// they deleted, that each deletes its keys in one commit, and that an
// entry written behind that point (an absolute time in the past) is
// reclaimed by the next slice all the same.
func TestExpireSliceResumes(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	put := func(key string, expire int64) {
		b := e.NewBatch(LogData{Type: TypeString, Cmd: CmdSet})
		b.PutMeta("", []byte(key), nil, Metadata{Type: TypeString, Value: []byte("v"), ExpireAt: expire})
		if _, err := e.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 100 {
		put(fmt.Sprintf("k%d", i), int64(1+i))
	}
	now := int64(1000)
	total := 0
	for range 10 {
		before := e.Offset()
		n, more, err := e.ExpireSlice(now, 10, nil)
		if err != nil || n != 10 {
			t.Fatalf("ExpireSlice = %d, %v, %v; want 10", n, more, err)
		}
		if commits := e.Offset() - before; commits != 1 {
			t.Fatalf("a slice of 10 keys took %d commits; want 1", commits)
		}
		total += n
	}
	if n, more, err := e.ExpireSlice(now, 10, nil); n != 0 || more || err != nil {
		t.Fatalf("after %d deletions, ExpireSlice = %d, %v, %v; want 0, false", total, n, more, err)
	}
	if from := e.expireFrom[""]; from != 100 {
		t.Fatalf("the next scan starts at %d; want 100", from)
	}
	put("behind", 50)
	if n, _, err := e.ExpireSlice(now+1, 10, nil); n != 1 || err != nil {
		t.Fatalf("an entry written behind the scan's start: ExpireSlice = %d, %v; want 1", n, err)
	}
	if from := e.expireFrom[""]; from != 50 {
		t.Fatalf("the next scan starts at %d; want 50", from)
	}
	if c := e.KeyCounts()[""]; c != (KeyCount{}) {
		t.Fatalf("counts after expiring everything: %+v", c)
	}
}

// chunkRecords returns the lengths of the chunk records of ns, by value
// ID and chunk number.
func chunkRecords(t testing.TB, e *Engine, ns string) map[uint64]map[uint32]int {
	t.Helper()
	p := chunkPrefix(ns)
	got := map[uint64]map[uint32]int{}
	err := e.scanPrefixLocked(p, func(k, v []byte) bool {
		id := binary.BigEndian.Uint64(k[len(p):])
		if got[id] == nil {
			got[id] = map[uint32]int{}
		}
		got[id][chunkIndex(k)] = len(v)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestExternalValues: a string longer than InlineValueMax lives in chunk
// records; a TTL change rewrites the metadata alone, and shrinking,
// deleting or flushing the key drops the chunks.
func TestExternalValues(t *testing.T) {
	e, err := Open(Options{Dir: t.TempDir(), InlineValueMax: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	key := []byte("k")
	commit := func(_ string, f func(b *Batch, old *Metadata)) int { return commitKey(t, e, "", "k", f) }
	valueRecord := func() bool { t.Helper(); return len(chunkRecords(t, e, "")) > 0 }
	check := func(what string, external bool, value string, expireAt int64) {
		t.Helper()
		m, found, err := e.GetMeta("", key)
		if err != nil || !found {
			t.Fatalf("%s: found %v, %v", what, found, err)
		}
		if m.External() != external || valueRecord() != external || m.ExpireAt != expireAt {
			t.Fatalf("%s: external %v, value record %v, expire %d; want %v, %v, %d", what, m.External(), valueRecord(), m.ExpireAt, external, external, expireAt)
		}
		if external {
			if m.Value != nil || m.Size != uint64(len(value)) {
				t.Fatalf("%s: read metadata has value %q and size %d", what, m.Value, m.Size)
			}
			if err := e.LoadValue(nil, "", key, &m); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		if string(m.Value) != value {
			t.Fatalf("%s: value %q, want %q", what, m.Value, value)
		}
	}
	long := strings.Repeat("0123456789abcdef", 8) // over the 8-byte inline maximum
	commit("set long", func(b *Batch, old *Metadata) {
		b.PutMeta("", key, old, Metadata{Type: TypeString, Value: []byte(long)})
	})
	check("a long value", true, long, 0)
	size := commit("expire", func(b *Batch, old *Metadata) {
		m := *old
		m.ExpireAt = 1 << 50
		b.PutMeta("", key, old, m)
	})
	check("after a TTL change", true, long, 1<<50)
	if size > 100 {
		t.Errorf("the TTL change's batch holds %d bytes: it rewrote the value", size)
	}
	commit("set short", func(b *Batch, old *Metadata) {
		b.PutMeta("", key, old, Metadata{Type: TypeString, Value: []byte("short")})
	})
	check("a short value", false, "short", 0)
	commit("set long again", func(b *Batch, old *Metadata) {
		b.PutMeta("", key, old, Metadata{Type: TypeString, Value: []byte(long + long)})
	})
	check("a long value again", true, long+long, 0)
	commit("delete", func(b *Batch, old *Metadata) { b.DeleteKey("", key, *old) })
	if valueRecord() {
		t.Fatal("the value record outlived its key")
	}
	commit("set long, then flush", func(b *Batch, old *Metadata) {
		b.PutMeta("", key, old, Metadata{Type: TypeString, Value: []byte(long)})
	})
	commit("flush", func(b *Batch, _ *Metadata) { b.FlushNamespace("") })
	if valueRecord() || e.DBSize("") != 0 {
		t.Fatalf("after a flush: value record %v, dbsize %d", valueRecord(), e.DBSize(""))
	}
	if _, err := decodeMetadata([]byte{byte(TypeString), FlagExternalValue, 0, 0, 0, 0, 0, 0, 0, 0, 1}); err == nil {
		t.Error("external metadata without its 8-byte size decoded")
	}
}
