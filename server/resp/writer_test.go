package resp

import (
	"bytes"
	"testing"
)

// TestResetReleasesLargeBuffers: after the reply to a big read has gone
// out, the connection keeps a small buffer, not one the size of the reply.
func TestResetReleasesLargeBuffers(t *testing.T) {
	w := NewWriter()
	w.BulkString("small")
	w.Reset()
	small := cap(w.Bytes())
	w.Bulk(bytes.Repeat([]byte("x"), 1<<20))
	if w.Len() < 1<<20 {
		t.Fatalf("Len = %d", w.Len())
	}
	w.Reset()
	if c := cap(w.Bytes()); c > maxRetained || w.Len() != 0 {
		t.Fatalf("after a 1 MB reply: cap %d, len %d (kept at most %d)", c, w.Len(), maxRetained)
	}
	w.BulkString("small")
	w.Reset()
	if c := cap(w.Bytes()); c < small {
		t.Fatalf("a small buffer is not kept: cap %d", c)
	}
	if got := string(w.Bytes()); got != "" {
		t.Fatalf("Bytes after Reset = %q", got)
	}
}
