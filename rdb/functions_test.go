package rdb

import (
	"bytes"
	"errors"
	"testing"
)

// shapeLib and shapeDump are a library and redis-server 7.0.15's FUNCTION
// DUMP of it, whose code Redis compressed with LZF.
const (
	shapeLib  = "#!lua name=shape\nredis.register_function{function_name=\"sf\", callback=function() return 1 end, flags={\"no-writes\", \"allow-stale\"}, description=\"d\"}\nredis.register_function(\"sg\", function() return 1 end)"
	shapeDump = "\xf5\xc3@\x99@\xca\x1f#!lua name=shape\nredis.register_\bfunction{\xc0\b\x00_`+\x0e\"sf\", callback=\xc0\x1c\x1f() return 1 end, flags={\"no-writ\x01es 5\x00\" 5\x12ow-stale\"}, descrip@e\x04=\"d\"}\xe0\x0f\x82\x03(\"sg >\xe0\rk\x01d)\n\x00x\x87\x92\xa2~\x1e\x81\xdf"
	lib1      = "#!lua name=lib1\nredis.register_function(\"f1\", function() return 1 end)"
	lib1Dump  = "\xf5@F#!lua name=lib1\nredis.register_function(\"f1\", function() return 1 end)\n\x00\xe9u\x03\x95\xfe\xe1\xf3)"
)

func TestEncodeFunctionsMatchesRedis(t *testing.T) {
	for _, tc := range []struct{ code, dump string }{{shapeLib, shapeDump}, {lib1, lib1Dump}, {"", "\n\x00]\x9b\\@\x0f\x7f\xa2\xda"}} {
		var codes [][]byte
		if tc.code != "" {
			codes = [][]byte{[]byte(tc.code)}
		}
		if got := EncodeFunctions(codes); string(got) != tc.dump {
			t.Errorf("EncodeFunctions(%.20q):\n got  %q\n want %q", tc.code, got, tc.dump)
		}
		back, err := DecodeFunctions([]byte(tc.dump), 1<<20)
		if err != nil || len(back) != len(codes) || len(codes) == 1 && !bytes.Equal(back[0], codes[0]) {
			t.Errorf("DecodeFunctions of Redis's dump of %.20q: %q, %v", tc.code, back, err)
		}
	}
}

func TestDecodeFunctionsErrors(t *testing.T) {
	if _, err := DecodeFunctions([]byte("x"), 1<<20); !errors.Is(err, ErrChecksum) {
		t.Errorf("short payload: %v", err)
	}
	bad := EncodeString([]byte("v")) // a string's payload is not a library's
	if _, err := DecodeFunctions(bad, 1<<20); err == nil || err.Error() != "given type is not a function" {
		t.Errorf("a string payload: %v", err)
	}
}

// TestLZFRoundTrip: what lzfCompress writes, lzfDecompress reads back.
func TestLZFRoundTrip(t *testing.T) {
	inputs := [][]byte{bytes.Repeat([]byte("a"), 1000), bytes.Repeat([]byte("abcdefgh"), 300), []byte(shapeLib)}
	seed := uint32(1)
	rnd := make([]byte, 5000)
	for i := range rnd {
		seed = seed*1103515245 + 12345
		rnd[i] = "abcd"[seed>>16&3]
	}
	inputs = append(inputs, rnd)
	for _, in := range inputs {
		c := lzfCompress(in, len(in)-4)
		if c == nil {
			t.Fatalf("%.20q did not compress", in)
		}
		back, err := lzfDecompress(c, len(in))
		if err != nil || !bytes.Equal(back, in) {
			t.Fatalf("%.20q: round trip failed: %v", in, err)
		}
	}
	if c := lzfCompress([]byte("abcdefghijklmnopqrstuvwxyz"), 22); c != nil {
		t.Errorf("incompressible input compressed: %q", c)
	}
}
