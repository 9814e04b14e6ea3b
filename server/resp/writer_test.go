package resp

import (
	"bytes"
	"errors"
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

// TestBulkFill: a filled bulk string encodes as Bulk does, and a failed
// fill leaves the earlier replies as they were.
func TestBulkFill(t *testing.T) {
	w := NewWriter()
	w.OK()
	if err := w.BulkFill(5, func(dst []byte) error { copy(dst, "hello"); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := w.BulkFill(0, func([]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := w.BulkFill(1<<20, func([]byte) error { return boom }); err != boom {
		t.Fatalf("BulkFill with a failing fill = %v", err)
	}
	if got, want := string(w.Bytes()), "+OK\r\n$5\r\nhello\r\n$0\r\n\r\n"; got != want {
		t.Fatalf("replies = %q, want %q", got, want)
	}
	b := w.Detach()
	if string(b) != "+OK\r\n$5\r\nhello\r\n$0\r\n\r\n" || w.Len() != 0 {
		t.Fatalf("Detach returned %q and left %d bytes", b, w.Len())
	}
	w.OK()
	if string(b[:5]) != "+OK\r\n" || string(w.Bytes()) != "+OK\r\n" {
		t.Fatal("the writer wrote into the detached buffer")
	}
}
