package tests

import (
	"fmt"
	"testing"
)

// TestObjectEncodingOnReplica writes keys whose OBJECT ENCODING depends on
// the command that wrote them (testdata/scripts/object.txt compares those
// with redis-server) and checks that a replica reports the same as its
// primary, the silent conversion of a bit write that changed nothing
// included.
func TestObjectEncodingOnReplica(t *testing.T) {
	primary := StartCairn(t)
	replica := startReplica(t, primary)
	p := primary.Raw()
	for _, c := range [][]string{
		{"SET", "int", "42"},
		{"SET", "embstr", "hello"},
		{"APPEND", "raw", "a"}, {"APPEND", "raw", "b"},
		{"INCRBYFLOAT", "float", "3"},
		{"SET", "quiet", "hi"}, {"SETBIT", "quiet", "0", "0"},
		{"SET", "copied", "7"}, {"COPY", "copied", "copy"},
	} {
		p.Do(c...)
	}
	waitCaughtUp(t, primary.Client(), replica.Client())
	r := replica.Raw()
	for key, want := range map[string]string{"int": "int", "embstr": "embstr", "raw": "raw", "float": "embstr", "quiet": "raw", "copy": "int"} {
		for name, c := range map[string]*RawConn{"primary": p, "replica": r} {
			if got := c.Do("OBJECT", "ENCODING", key); got != fmt.Sprintf("$%d\r\n%s\r\n", len(want), want) {
				t.Errorf("%s: OBJECT ENCODING %s = %q, want %q", name, key, got, want)
			}
		}
	}
	for _, c := range []*RawConn{p, r} {
		c.Expect(":2147483647\r\n", "OBJECT", "REFCOUNT", "copied")
		c.Expect(":1\r\n", "OBJECT", "REFCOUNT", "copy")
	}
}
