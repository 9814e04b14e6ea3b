package commands

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/server/resp"
)

// Key specs of Redis commands Cairn does not have, for the searches
// (keyword, key count, a limited range) that Cairn's own commands do not
// use; the expected keys below are redis-server 7.0.15's COMMAND GETKEYS
// replies to the same lines.
var (
	xreadSpec = &Spec{Arity: -4, KeySpecs: []KeySpec{
		{Flags: KeyRO | KeyAccess, Begin: AfterKeyword("STREAMS", 1), Find: Range(-1, 1, 2)},
	}}
	georadiusSpec = &Spec{Arity: -6, KeySpecs: []KeySpec{
		Key(1, KeyRO|KeyAccess),
		{Flags: KeyOW | KeyUpdate, Begin: AfterKeyword("STORE", 6), Find: Range(0, 1, 0)},
		{Flags: KeyOW | KeyUpdate, Begin: AfterKeyword("STOREDIST", 6), Find: Range(0, 1, 0)},
	}}
)

// TestKeyRefs checks the key search of every kind of key spec against
// Redis's answers; nil keys stand for Redis's "Invalid arguments" error.
func TestKeyRefs(t *testing.T) {
	for _, c := range []struct {
		spec *Spec
		line string
		keys []string
	}{
		{xreadSpec, "xread streams a b 0 0", []string{"a", "b"}},
		{xreadSpec, "xread count 1 streams a b c 0 0 0", []string{"a", "b", "c"}},
		{xreadSpec, "xread count 1 streams a b c 0 0", []string{"a", "b"}},
		{Lookup([]byte("zunionstore")), "zunionstore d 2 a b", []string{"d", "a", "b"}},
		{Lookup([]byte("zunionstore")), "zunionstore d 0 a b", nil},
		{Lookup([]byte("zunionstore")), "zunionstore d 3 a b", nil},
		{Lookup([]byte("zunionstore")), "zunionstore d x a b", nil},
		{georadiusSpec, "georadius k 1 2 3 m store d", []string{"k", "d"}},
		{Lookup([]byte("georadius")), "georadius k 1 2 3 m store d storedist e", []string{"k", "d", "e"}},
		{Lookup([]byte("georadiusbymember")), "georadiusbymember k m 3 km store d", []string{"k", "d"}},
		{georadiusSpec, "georadius k 1 2 3 m STOREDIST d", []string{"k", "d"}},
		{georadiusSpec, "georadius k 1 2 3 m", []string{"k"}},
		{georadiusSpec, "georadius k 1 2 3 m store", []string{"k"}},
		{georadiusSpec, "georadius k 1 2 3 store d store e", []string{"k", "e"}},
		{Lookup([]byte("mset")), "mset a 1 b", []string{"a", "b"}},
		{Lookup([]byte("bitop")), "bitop and d s1 s2", []string{"d", "s1", "s2"}},
	} {
		args := bytesArgs(c.line)
		refs, ok := c.spec.keyRefs(args)
		var keys []string
		for _, r := range refs {
			keys = append(keys, string(args[r.pos]))
		}
		if !ok || len(keys) == 0 {
			keys = nil
		}
		if !slices.Equal(keys, c.keys) {
			t.Errorf("%s: keys %q, want %q", c.line, keys, c.keys)
		}
	}
}

// TestWriteKeySpecs compares the RESP2 key specs of XREAD (a keyword
// search and a limited range) and ZUNIONSTORE (a key count) with
// redis-server 7.0.15's COMMAND INFO.
func TestWriteKeySpecs(t *testing.T) {
	for _, c := range []struct {
		spec *Spec
		want string
	}{
		{xreadSpec, "*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$7\r\nkeyword\r\n" +
			"$4\r\nspec\r\n*4\r\n$7\r\nkeyword\r\n$7\r\nSTREAMS\r\n$9\r\nstartfrom\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n" +
			"$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:-1\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:2\r\n"},
		{Lookup([]byte("zunionstore")), "*2\r\n*6\r\n$5\r\nflags\r\n*2\r\n+OW\r\n+update\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n" +
			"$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n" +
			"$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n" +
			"*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n" +
			"$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:2\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$6\r\nkeynum\r\n$4\r\nspec\r\n*6\r\n" +
			"$9\r\nkeynumidx\r\n:0\r\n$8\r\nfirstkey\r\n:1\r\n$7\r\nkeystep\r\n:1\r\n"},
	} {
		c2 := &Ctx{W: resp.NewWriter()}
		writeKeySpecs(c2, c.spec.KeySpecs)
		if got := string(c2.W.Bytes()); got != c.want {
			t.Errorf("key specs %q, want %q", got, c.want)
		}
	}
}

func bytesArgs(line string) [][]byte {
	var args [][]byte
	for _, f := range strings.Fields(line) {
		args = append(args, []byte(f))
	}
	return args
}

// TestSpecKeys checks the keys that transactions, pipelined groups,
// scripts and CLIENT TRACKING lock or record: a command that counts its
// keys, or names one after a keyword (GEORADIUS ... STORE), gives them
// all, beyond the legacy key positions.
func TestSpecKeys(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"SET k v", "[k]"},
		{"MSET a 1 b 2", "[a b]"},
		{"ZUNIONSTORE d 2 a b WEIGHTS 1 2", "[d a b]"},
		{"ZINTERSTORE d 1 a", "[d a]"},
		{"ZUNIONSTORE d x a", "[d]"}, // a bad count: the command fails on it
		{"ZUNIONSTORE d 5 a", "[d]"},
		{"SINTERCARD 2 a b LIMIT 1", "[a b]"},
		{"ZUNION 3 a b c WITHSCORES", "[a b c]"},
		{"LMPOP 2 a b LEFT", "[a b]"},
		{"BZMPOP 0 2 a b MIN", "[a b]"},
		{"ZRANGESTORE d s 0 -1", "[d s]"},
		{"GEORADIUS k 1 2 3 km STORE d", "[k d]"},
		{"GEORADIUSBYMEMBER k m 3 km COUNT 1 STOREDIST d", "[k d]"},
		{"GEORADIUS k 1 2 3 km WITHDIST", "[k]"},
		{"GEOSEARCHSTORE d s FROMMEMBER m BYRADIUS 1 km", "[d s]"},
	} {
		args := bytes.Fields([]byte(tc.line))
		if got := fmt.Sprintf("%s", Lookup(args[0]).Keys(args)); got != tc.want {
			t.Errorf("Keys(%q) = %s, want %s", tc.line, got, tc.want)
		}
	}
}
