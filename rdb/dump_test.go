package rdb

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// Payloads redis-server 7.0.15 returned for DUMP of these values.
var redisDumps = []struct {
	value   string
	payload string
}{
	{"123", "\x00\xc0{\n\x00H\xe2S\xe1\x00zg\xb9"},
	{"-5", "\x00\xc0\xfb\n\x00I\xc4\xc6\xf4\xd7&?h"},
	{"hello", "\x00\x05hello\n\x00cr\xdfve4 \n"},
	{"", "\x00\x00\n\x00]\x9b\\@\x0f\x7f\xa2\xda"},
	{"12345678901", "\x00\x0b12345678901\n\x000NR\xd7'\x17e\x10"},
	// 50 'a's, LZF-compressed.
	{strings.Repeat("a", 50), "\x00\xc3\t2\x01aa\xe0%\x00\x01aa\n\x00\t\xacH\xb9\xab\x15\xfb\xc9"},
}

func TestChecksumIsRedisCRC64(t *testing.T) {
	if got := checksum([]byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %#x, want 0xe9c6d914c4b8d9ca (Redis's test vector)", got)
	}
}

func TestDecodeRedisPayloads(t *testing.T) {
	for _, c := range redisDumps {
		got, err := DecodeString([]byte(c.payload), 512<<20)
		if err != nil || string(got) != c.value {
			t.Errorf("DecodeString(%q) = %q, %v; want %q", c.payload, got, err, c.value)
		}
	}
}

// Cairn writes what Redis writes, except that it never compresses.
func TestEncodeMatchesRedis(t *testing.T) {
	for _, c := range redisDumps {
		got := EncodeString([]byte(c.value))
		if len(c.value) <= 20 && string(got) != c.payload {
			t.Errorf("EncodeString(%q) = %q, Redis %q", c.value, got, c.payload)
		}
		back, err := DecodeString(got, 512<<20)
		if err != nil || string(back) != c.value {
			t.Errorf("round trip of %q: %q, %v", c.value, back, err)
		}
	}
	for _, v := range []string{"0", "127", "-128", "128", "32767", "-32769", "2147483647", "2147483648",
		"-2147483648", "007", "+1", "-0", " 1", strings.Repeat("x", 70), strings.Repeat("y", 20000), strings.Repeat("z", 70000)} {
		back, err := DecodeString(EncodeString([]byte(v)), 512<<20)
		if err != nil || string(back) != v {
			t.Errorf("round trip of %q: %q, %v", v, back, err)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	good := []byte(redisDumps[2].payload)
	flip := func(i int) []byte {
		b := bytes.Clone(good)
		b[i] ^= 1
		return b
	}
	for _, c := range []struct {
		name    string
		payload []byte
		want    error
	}{
		{"short", []byte("\x00\x01a\n\x00"), ErrChecksum},
		{"flipped value", flip(3), ErrChecksum},
		{"flipped crc", flip(len(good) - 1), ErrChecksum},
		{"newer version", withFooter([]byte("\x00\x05hello"), 11), ErrChecksum},
		{"no value", withFooter([]byte(""), 10), ErrFormat},
		{"hash", withFooter([]byte("\x04\x01"), 10), ErrUnsupportedType},
		{"unknown type", withFooter([]byte("\x63"), 10), ErrFormat},
		{"length past the end", withFooter([]byte("\x00\x05hel"), 10), ErrFormat},
		{"32-bit length past the end", withFooter([]byte("\x00\x80\xff\xff\xff\xff"), 10), ErrFormat},
		{"unknown length form", withFooter([]byte("\x00\x82"), 10), ErrFormat},
		{"unknown encoding", withFooter([]byte("\x00\xc4"), 10), ErrFormat},
		{"truncated int16", withFooter([]byte("\x00\xc1\x01"), 10), ErrFormat},
		{"LZF longer than allowed", withFooter([]byte("\x00\xc3\x02\x81\x00\x00\x00\x01\x00\x00\x00\x00\x00aa"), 10), ErrFormat},
		{"LZF reference before the start", withFooter([]byte("\x00\xc3\x02\x05\x20\x05"), 10), ErrFormat},
		{"LZF short output", withFooter([]byte("\x00\xc3\x02\x05\x01ab"), 10), ErrFormat},
	} {
		if _, err := DecodeString(c.payload, 1<<20); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// Older versions are accepted; bytes after the value are ignored.
	if v, err := DecodeString(withFooter([]byte("\x00\x02hitrailing"), 6), 1<<20); err != nil || string(v) != "hi" {
		t.Errorf("version 6 with trailing bytes: %q, %v", v, err)
	}
}

// withFooter appends an RDB version and the CRC of everything before it.
func withFooter(body []byte, version uint16) []byte {
	b := append(bytes.Clone(body), byte(version), byte(version>>8))
	c := checksum(b)
	for i := 0; i < 8; i++ {
		b = append(b, byte(c>>(8*i)))
	}
	return b
}

// FuzzDecodeString: any value body, given a valid footer (a fuzzer cannot
// forge CRCs, so the target adds it), decodes or fails with one of the
// sentinel errors, never panics, and what decodes encodes back to a
// payload that decodes to the same value. The seeds are Redis's payloads'
// bodies and testdata/fuzz/FuzzDecodeString.
func FuzzDecodeString(f *testing.F) {
	for _, c := range redisDumps {
		f.Add([]byte(c.payload[:len(c.payload)-10]))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := DecodeString(withFooter(body, Version), 1<<20)
		if err != nil {
			if !errors.Is(err, ErrChecksum) && !errors.Is(err, ErrFormat) && !errors.Is(err, ErrUnsupportedType) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		back, err := DecodeString(EncodeString(v), 1<<20)
		if err != nil || !bytes.Equal(back, v) {
			t.Fatalf("re-encoding %q: %q, %v", v, back, err)
		}
	})
}
