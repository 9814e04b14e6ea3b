package scripting

import (
	"errors"
	"testing"

	"github.com/cairnkv/cairn/server/resp"
	lua "github.com/yuin/gopher-lua"
)

// TestReplyRoundTrip converts replies to Lua values and back, as a
// script returning redis.call's result does: each reply, in the client's
// protocol, comes back as Redis sends it.
func TestReplyRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		reply       string
		proto       int // the client's
		scriptProto int // redis.setresp
		want        string
	}{
		{"+OK\r\n", 2, 2, "+OK\r\n"},
		{"-ERR bad thing\r\n", 2, 2, "-ERR bad thing\r\n"},
		{"-NOCODE\r\n", 2, 2, "-ERR NOCODE\r\n"},
		{":-42\r\n", 2, 2, ":-42\r\n"},
		{"$3\r\nabc\r\n", 2, 2, "$3\r\nabc\r\n"},
		{"$0\r\n\r\n", 2, 2, "$0\r\n\r\n"},
		{"$-1\r\n", 2, 2, "$-1\r\n"},
		{"$-1\r\n", 3, 2, "_\r\n"},
		{"*-1\r\n", 2, 2, "$-1\r\n"},
		{"*3\r\n:1\r\n$1\r\nx\r\n*1\r\n+ok\r\n", 2, 2, "*3\r\n:1\r\n$1\r\nx\r\n*1\r\n+ok\r\n"},
		// A null bulk is false in Lua, which does not end a table.
		{"*3\r\n:1\r\n$-1\r\n:3\r\n", 2, 2, "*3\r\n:1\r\n$-1\r\n:3\r\n"},
		// A RESP3 null is nil, which does.
		{"*3\r\n:1\r\n_\r\n:3\r\n", 2, 3, "*1\r\n:1\r\n"},
		// RESP3 replies a script asked for with redis.setresp(3).
		{"_\r\n", 3, 3, "_\r\n"},
		{"#t\r\n", 3, 3, "#t\r\n"},
		{"#f\r\n", 2, 3, ":0\r\n"},
		{"#f\r\n", 2, 2, "$-1\r\n"},
		{"#t\r\n", 2, 2, ":1\r\n"},
		{",1.5\r\n", 3, 3, ",1.5\r\n"},
		{",1.5\r\n", 2, 3, "$3\r\n1.5\r\n"},
		{"(12345678901234567890\r\n", 3, 3, "(12345678901234567890\r\n"},
		{"(12345678901234567890\r\n", 2, 3, "$20\r\n12345678901234567890\r\n"},
		{"%1\r\n$1\r\na\r\n:1\r\n", 3, 3, "%1\r\n$1\r\na\r\n:1\r\n"},
		{"%1\r\n$1\r\na\r\n:1\r\n", 2, 3, "*2\r\n$1\r\na\r\n:1\r\n"},
		{"~1\r\n$1\r\na\r\n", 3, 3, "~1\r\n$1\r\na\r\n"},
		{"=7\r\ntxt:abc\r\n", 3, 3, "=7\r\ntxt:abc\r\n"},
		{"=7\r\ntxt:abc\r\n", 2, 3, "$3\r\nabc\r\n"},
		{"!5\r\nX bad\r\n", 3, 3, "-X bad\r\n"},
	} {
		L := lua.NewState()
		v, rest, err := parseReply(L, []byte(tc.reply))
		if err != nil || len(rest) != 0 {
			t.Errorf("parseReply(%q): rest %q, %v", tc.reply, rest, err)
			continue
		}
		w := resp.NewWriter()
		w.Proto = tc.proto
		writeReply(w, v, tc.scriptProto)
		if got := string(w.Bytes()); got != tc.want {
			t.Errorf("%q (client RESP%d, script RESP%d): got %q, want %q", tc.reply, tc.proto, tc.scriptProto, got, tc.want)
		}
		L.Close()
	}
}

// TestParseReplyRejectsMalformed: a truncated or invalid reply is an
// error, never a panic or a partial value.
func TestParseReplyRejectsMalformed(t *testing.T) {
	for _, in := range []string{"", "+", "+OK", ":x\r\n", "$5\r\nab\r\n", "$-2\r\n", "*2\r\n:1\r\n", "*-2\r\n",
		"%1\r\n:1\r\n", "?\r\n", ",x\r\n", "=2\r\nab\r\n", "*99999999999\r\n"} {
		L := lua.NewState()
		if v, _, err := parseReply(L, []byte(in)); err == nil {
			t.Errorf("parseReply(%q) = %v, want an error", in, v)
		}
		L.Close()
	}
}

// FuzzParseReply: any bytes give a value or an error, never a panic.
func FuzzParseReply(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "*2\r\n$1\r\na\r\n%1\r\n:1\r\n#t\r\n", "=7\r\ntxt:abc\r\n", "*1\r\n*1\r\n*1\r\n_\r\n"} {
		f.Add([]byte(s))
	}
	L := lua.NewState()
	defer L.Close()
	f.Fuzz(func(t *testing.T, b []byte) {
		v, _, err := parseReply(L, b)
		if err == nil {
			w := resp.NewWriter()
			writeReply(w, v, 3)
		}
	})
}

// FuzzCompile: any body compiles or gives an ErrInvalid error, never a
// panic.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{"return 1", "#!lua flags=no-writes\nreturn 1", "return +", "local t = {", "#!", "#!lua flags=,\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := Compile(b); err != nil && !errors.Is(err, ErrInvalid) {
			t.Fatalf("Compile(%q): %v does not match ErrInvalid", b, err)
		}
	})
}
