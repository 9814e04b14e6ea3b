package hll

import (
	"strconv"
	"testing"
)

// BenchmarkAddSparse adds elements to a sparse sketch of about two
// thousand bytes (a few hundred registers set), the costliest kind of
// update.
func BenchmarkAddSparse(b *testing.B) {
	v := New()
	for i := range 900 {
		v, _, _ = Add(v, []byte("seed"+strconv.Itoa(i)), DefaultSparseMaxBytes)
	}
	if Encoding(v) != Sparse {
		b.Fatal("not sparse")
	}
	b.ResetTimer()
	for i := range b.N {
		w := append([]byte(nil), v...)
		_, _, _ = Add(w, []byte("x"+strconv.Itoa(i)), DefaultSparseMaxBytes)
	}
}

// BenchmarkAddDense adds elements to a dense sketch.
func BenchmarkAddDense(b *testing.B) {
	v, _ := ToDense(New())
	for i := range b.N {
		v, _, _ = Add(v, []byte("x"+strconv.Itoa(i)), DefaultSparseMaxBytes)
	}
}

// BenchmarkCountDense estimates the cardinality of a dense sketch.
func BenchmarkCountDense(b *testing.B) {
	v, _ := ToDense(New())
	for i := range 10000 {
		v, _, _ = Add(v, []byte("x"+strconv.Itoa(i)), DefaultSparseMaxBytes)
	}
	b.ResetTimer()
	for range b.N {
		_, _ = Count(v)
	}
}
