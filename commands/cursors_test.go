package commands

import "testing"

// TestCursorsStayBelow2To53: cursors must survive a client that holds
// them in a float64 (node-redis), so they stay below 2^53, also where the
// count would pass it; a saved cursor resumes at its key, in its
// namespace only.
func TestCursorsStayBelow2To53(t *testing.T) {
	var tbl cursorTable
	for i := range 100_000 {
		c := tbl.save("", []byte{byte(i)})
		if c == 0 || c > maxCursor || float64(c) != float64(int64(c)) || uint64(float64(c)) != c {
			t.Fatalf("cursor %d is 0 or not exact as a float64", c)
		}
	}
	tbl.next = maxCursor - 2
	var last uint64
	for i := range 5 {
		last = tbl.save("ns", []byte{'k', byte(i)})
		if last == 0 || last > maxCursor {
			t.Fatalf("cursor %d after the count reached 2^53", last)
		}
	}
	if got := tbl.resume("ns", last); string(got) != "k\x04" {
		t.Fatalf("resume = %q, want k\\x04", got)
	}
	if got := tbl.resume("other", last); got != nil {
		t.Fatalf("resume in another namespace = %q, want nil", got)
	}
}
