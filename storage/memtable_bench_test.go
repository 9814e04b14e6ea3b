package storage

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/go-hclog"
)

// BenchmarkPebbleInsert measures Pebble alone, without the engine: keys of
// a 100,000-key space, in random order, written in batches of one or 16
// into a DB on vfs.NewMem() without a WAL, for three memtable sizes. Its
// time per key (ns/op divided by the batch size) is the floor under a SET
// that docs/performance.md compares with Redis's whole SET: the skiplist
// insert, with the flushes and compactions it causes.
//
//	go test -run '^$' -bench PebbleInsert -benchtime 100000x ./storage
func BenchmarkPebbleInsert(b *testing.B) {
	for _, mb := range []int{4, 16, 64} {
		for _, batch := range []int{1, 16} {
			b.Run(fmt.Sprintf("memtable=%dMB/batch=%d", mb, batch), func(b *testing.B) {
				db := openMemPebble(b, mb)
				r := rand.New(rand.NewPCG(1, 2))
				key, val := make([]byte, 0, 32), make([]byte, 30)
				write := func() {
					bt := db.NewBatch()
					for range batch {
						key = fmt.Appendf(key[:0], "m\x00key:%012d", r.IntN(100_000))
						_ = bt.Set(key, val, nil)
					}
					if err := db.Apply(bt, pebble.NoSync); err != nil {
						b.Fatal(err)
					}
					bt.Close()
				}
				for range 300_000 / batch { // every key in the memtable, and some flushed
					write()
				}
				b.ResetTimer()
				for range b.N {
					write()
				}
			})
		}
	}
}

// BenchmarkPebbleGet measures a Pebble Get without the engine, once
// 100,000 random draws from a 100,000-key space are in the memtable: of
// keys of that space (about two in three were written), or of keys never
// written. It is what a command pays to read metadata the row cache does
// not have, such as a new key's SET (docs/performance.md).
//
//	go test -run '^$' -bench PebbleGet -benchtime 200000x ./storage
func BenchmarkPebbleGet(b *testing.B) {
	for _, absent := range []bool{false, true} {
		b.Run(fmt.Sprintf("absent=%v", absent), func(b *testing.B) {
			db := openMemPebble(b, 16)
			r := rand.New(rand.NewPCG(1, 2))
			key, val := make([]byte, 0, 32), make([]byte, 30)
			for range 100_000 {
				key = fmt.Appendf(key[:0], "m\x00key:%012d", r.IntN(100_000))
				if err := db.Set(key, val, pebble.NoSync); err != nil {
					b.Fatal(err)
				}
			}
			suffix := ""
			if absent {
				suffix = "x" // sorts between two written keys
			}
			b.ResetTimer()
			for range b.N {
				key = fmt.Appendf(key[:0], "m\x00key:%012d%s", r.IntN(100_000), suffix)
				if _, closer, err := db.Get(key); err == nil {
					closer.Close()
				}
			}
		})
	}
}

// openMemPebble opens a Pebble DB in memory, without a WAL, with a
// memtable of mb MB, closed when b ends.
func openMemPebble(b *testing.B, mb int) *pebble.DB {
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem(), MemTableSize: uint64(mb) << 20,
		DisableWAL: true, FormatMajorVersion: pebble.FormatNewest, Logger: pebbleLogger{l: hclog.NewNullLogger(), fatal: func(err error) { b.Error(err) }}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}
