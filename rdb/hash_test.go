package rdb

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// noise returns n letters and digits, the same for the same seed, that
// LZF cannot compress much.
func noise(n int, seed uint32) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	x := seed*2654435761 | 1
	for i := range b {
		x ^= x << 13 // xorshift32
		x ^= x >> 17
		x ^= x << 5
		b[i] = alphabet[x%uint32(len(alphabet))]
	}
	return string(b)
}

// redisHashes are hashes made in redis-server 7.0.15 by HSETting their
// pairs one by one, in order, into an empty key with
// hash-max-listpack-entries 128 (Redis's default) and
// hash-max-listpack-value as given (Redis's default 64 when 0), then
// DUMPed: testdata/hashes/<file>.hex holds the payload in hex. typ is the
// RDB type Redis chose.
var redisHashes = []struct {
	file          string
	typ           byte
	listpackValue int
	pairs         [][2]string
}{
	{file: "listpack-one", typ: typeHashListpack, pairs: [][2]string{{"k", "v"}}},
	{file: "listpack-ints", typ: typeHashListpack, pairs: [][2]string{
		{"zero", "0"}, {"twelve", "12"}, {"minus1", "-1"}, {"i127", "127"}, {"i128", "128"},
		{"i4095", "4095"}, {"m4096", "-4096"}, {"i4096", "4096"}, {"m4097", "-4097"},
		{"i32767", "32767"}, {"m32768", "-32768"}, {"i32768", "32768"}, {"i65536", "65536"},
		{"i8388607", "8388607"}, {"m8388608", "-8388608"}, {"i8388608", "8388608"},
		{"i2p31m1", "2147483647"}, {"i2p31", "2147483648"}, {"m2p31", "-2147483648"}, {"m2p31m1", "-2147483649"},
		{"big", "12345678901234"}, {"min64", "-9223372036854775808"}, {"max64", "9223372036854775807"},
		{"over64", "9223372036854775808"}, {"under64", "-9223372036854775809"},
		{"lead0", "007"}, {"neg0", "-0"}, {"plus", "+1"}, {"space", " 1"}, {"float", "1.5"}, {"empty", ""},
		{"0", "int field"}, {"-5", "a"}, {"300", "b"}, {"100000", "c"}, {"-9223372036854775808", "d"},
	}},
	{file: "listpack-long", typ: typeHashListpack, listpackValue: 20000, pairs: [][2]string{
		{"short", "x"}, {noise(64, 1), "64-byte field"}, {"s63", noise(63, 2)}, {"s64", noise(64, 3)},
		{"s4095", noise(4095, 4)}, {"s4096", noise(4096, 5)},
		// Entries of 16382 and 16383 bytes: Redis writes the length of
		// the second after it in 3 bytes, not 2.
		{"s16377", noise(16377, 6)}, {"s16378", noise(16378, 7)},
	}},
	{file: "listpack-lzf", typ: typeHashListpack, pairs: [][2]string{
		{"ab", strings.Repeat("ab", 30)}, {"xyz", strings.Repeat("xyz", 20)}, {"n", "7"}, {"m", "-70000"},
	}},
	{file: "hashtable-long-value", typ: typeHash, pairs: [][2]string{
		{"name", "cairn"}, {"big", noise(100, 9)}, {"n", "42"}, {"rep", strings.Repeat("z", 100)},
		{"m", "-2147483648"}, {"huge", "12345678901234"}, {"12", "int field"},
	}},
	{file: "hashtable-200", typ: typeHash, pairs: func() [][2]string {
		var pairs [][2]string
		for i := range 200 {
			field := fmt.Sprintf("field:%03d", i)
			if i%50 == 0 {
				field = strconv.Itoa(1000000 + i)
			}
			var value string
			switch i % 4 {
			case 0:
				value = strconv.Itoa(i*1000 - 100000)
			case 1:
				value = fmt.Sprintf("value-%d", i)
			case 2:
				value = strings.Repeat("r", 40) + strconv.Itoa(i)
			case 3:
				value = noise(30, uint32(i))
			}
			pairs = append(pairs, [2]string{field, value})
		}
		return pairs
	}()},
}

// readHex reads a payload from testdata/hashes.
func readHex(t testing.TB, file string) []byte {
	t.Helper()
	return readHexIn(t, "hashes", file)
}

// readHexIn returns the payload testdata/dir/file.hex holds in hex.
func readHexIn(t testing.TB, dir, file string) []byte {
	t.Helper()
	h, err := os.ReadFile(filepath.Join("testdata", dir, file+".hex"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(h)))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return b
}

// pairsOf converts pairs of strings to a hash.
func pairsOf(pairs [][2]string) [][2][]byte {
	out := make([][2][]byte, len(pairs))
	for i, p := range pairs {
		out[i] = [2][]byte{[]byte(p[0]), []byte(p[1])}
	}
	return out
}

// sameHash reports whether two hashes hold the same pairs, in any order.
func sameHash(a, b [][2][]byte) bool {
	m := make(map[string]string, len(a))
	for _, p := range a {
		m[string(p[0])] = string(p[1])
	}
	if len(m) != len(a) || len(a) != len(b) {
		return false
	}
	for _, p := range b {
		if v, ok := m[string(p[0])]; !ok || v != string(p[1]) {
			return false
		}
	}
	return true
}

func sameOrder(a, b [][2][]byte) bool {
	return slices.EqualFunc(a, b, func(x, y [2][]byte) bool {
		return bytes.Equal(x[0], y[0]) && bytes.Equal(x[1], y[1])
	})
}

func TestDecodeRedisHashes(t *testing.T) {
	for _, c := range redisHashes {
		t.Run(c.file, func(t *testing.T) {
			payload := readHex(t, c.file)
			if payload[0] != c.typ {
				t.Fatalf("RDB type %d, want %d", payload[0], c.typ)
			}
			v, err := Decode(payload, 512<<20)
			if err != nil {
				t.Fatal(err)
			}
			want := pairsOf(c.pairs)
			if v.Type != TypeHash || !sameHash(v.Hash, want) {
				t.Fatalf("Decode = %v %d pairs, want the %d HSET", v.Type, len(v.Hash), len(want))
			}
			// A listpack keeps the order of insertion.
			if c.typ == typeHashListpack && !sameOrder(v.Hash, want) {
				t.Errorf("listpack pairs out of order")
			}
			if _, err := DecodeString(payload, 512<<20); !errors.Is(err, ErrUnsupportedType) {
				t.Errorf("DecodeString: %v, want ErrUnsupportedType", err)
			}
			// maxLen bounds each field and value (and a listpack's blob,
			// longer than its entries).
			longest := 0
			for _, p := range want {
				longest = max(longest, len(p[0]), len(p[1]))
			}
			if c.typ == typeHash {
				if _, err := Decode(payload, int64(longest)); err != nil {
					t.Errorf("Decode with maxLen %d: %v", longest, err)
				}
			}
			if _, err := Decode(payload, int64(longest-1)); !errors.Is(err, ErrFormat) {
				t.Errorf("Decode with maxLen %d: %v, want ErrFormat", longest-1, err)
			}
			// Cairn's encoding of the same hash decodes to it in order.
			back, err := Decode(EncodeHash(v.Hash), 512<<20)
			if err != nil || !sameOrder(back.Hash, v.Hash) {
				t.Errorf("round trip: %v", err)
			}
		})
	}
}

// The payloads exercise what their names say: LZF-compressed listpack
// blobs and hash strings, plain ones, and every listpack integer width.
func TestRedisHashesCoverage(t *testing.T) {
	lzfBlob := readHex(t, "listpack-lzf")
	if lzfBlob[1] != 0xc3 {
		t.Errorf("listpack-lzf: blob encoding 0x%02x, want LZF", lzfBlob[1])
	}
	if plain := readHex(t, "listpack-long"); plain[1] == 0xc3 {
		t.Errorf("listpack-long: blob compressed")
	}
	r := reader{b: readHex(t, "listpack-ints")[1:]}
	blob, err := r.str(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for p := lpHeader; blob[p] != lpEnd; {
		first := blob[p]
		var name string
		var n int
		switch {
		case first < 0x80:
			name, n = "uint7", 1
		case first&0xc0 == lpStr6:
			name, n = "str6", 1+int(first&0x3f)
		case first&0xe0 == lpInt13:
			name, n = "int13", 2
		default:
			name = map[byte]string{lpInt16: "int16", lpInt24: "int24", lpInt32: "int32", lpInt64: "int64"}[first]
			n = map[byte]int{lpInt16: 3, lpInt24: 4, lpInt32: 5, lpInt64: 9}[first]
		}
		if name == "" {
			t.Fatalf("unexpected encoding 0x%02x", first)
		}
		seen[name] = true
		p += n + len(backlen(uint64(n)))
	}
	for _, enc := range []string{"uint7", "str6", "int13", "int16", "int24", "int32", "int64"} {
		if !seen[enc] {
			t.Errorf("listpack-ints has no %s entry", enc)
		}
	}
	// The plain hashes hold plain, integer and LZF strings.
	for _, file := range []string{"hashtable-200", "hashtable-long-value"} {
		r := reader{b: readHex(t, file)[1:]}
		n, err := r.plainLength()
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]bool{}
		for range 2 * n {
			switch first := r.b[0]; {
			case first >= 0xc0 && first <= 0xc2:
				kinds["integer"] = true
			case first == 0xc3:
				kinds["LZF"] = true
			default:
				kinds["plain"] = true
			}
			if _, err := r.str(1 << 20); err != nil {
				t.Fatal(err)
			}
		}
		if len(kinds) != 3 {
			t.Errorf("%s holds only %v strings", file, kinds)
		}
	}
}

func TestBacklen(t *testing.T) {
	for _, c := range []struct {
		n    uint64
		want string
	}{
		{0, "\x00"}, {127, "\x7f"}, {128, "\x01\x80"}, {16382, "\x7f\xfe"},
		{16383, "\x00\xff\xff"}, {2097150, "\x7f\xff\xfe"}, {2097151, "\x00\xff\xff\xff"},
		{268435455, "\x00\xff\xff\xff\xff"}, {1 << 32, "\x10\x80\x80\x80\x80"},
	} {
		if got := backlen(c.n); string(got) != c.want {
			t.Errorf("backlen(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// ziplist builds a ziplist of the entries as Redis 6 writes them: each
// canonical int64 in the smallest integer encoding, other strings with
// the shortest length. Options change the header.
func ziplist(entries []string, opts ...func(header []byte)) []byte {
	zl := make([]byte, zlHeader)
	last, prevSize := zlHeader, 0
	for _, e := range entries {
		start := len(zl)
		if prevSize < zlBigPrev {
			zl = append(zl, byte(prevSize))
		} else {
			zl = binary.LittleEndian.AppendUint32(append(zl, zlBigPrev), uint32(prevSize))
		}
		v, err := strconv.ParseInt(e, 10, 64)
		switch {
		case err != nil || strconv.FormatInt(v, 10) != e:
			switch n := len(e); {
			case n < 1<<6:
				zl = append(zl, byte(n))
			case n < 1<<14:
				zl = append(zl, zlStr14|byte(n>>8), byte(n))
			default:
				zl = binary.BigEndian.AppendUint32(append(zl, zlStr32), uint32(n))
			}
			zl = append(zl, e...)
		case v >= 0 && v <= 12:
			zl = append(zl, zlImmediate+byte(v))
		case v >= -1<<7 && v < 1<<7:
			zl = append(zl, zlInt8, byte(v))
		case v >= -1<<15 && v < 1<<15:
			zl = binary.LittleEndian.AppendUint16(append(zl, zlInt16), uint16(v))
		case v >= -1<<23 && v < 1<<23:
			zl = append(zl, zlInt24, byte(v), byte(v>>8), byte(v>>16))
		case v >= -1<<31 && v < 1<<31:
			zl = binary.LittleEndian.AppendUint32(append(zl, zlInt32), uint32(v))
		default:
			zl = binary.LittleEndian.AppendUint64(append(zl, zlInt64), uint64(v))
		}
		last, prevSize = start, len(zl)-start
	}
	zl = append(zl, zlEnd)
	binary.LittleEndian.PutUint32(zl, uint32(len(zl)))
	binary.LittleEndian.PutUint32(zl[4:], uint32(last))
	binary.LittleEndian.PutUint16(zl[8:], uint16(min(len(entries), zlNoCount)))
	for _, o := range opts {
		o(zl)
	}
	return zl
}

// rawZiplist builds a ziplist of entries already encoded, with the
// header's tail offset and count.
func rawZiplist(tail uint32, count uint16, entries string) []byte {
	zl := binary.LittleEndian.AppendUint32(nil, uint32(zlHeader+len(entries)+1))
	zl = binary.LittleEndian.AppendUint32(zl, tail)
	zl = binary.LittleEndian.AppendUint16(zl, count)
	return append(append(zl, entries...), zlEnd)
}

// zipmap builds a zipmap of the pairs, with free bytes (zeros) after each
// value.
func zipmap(free int, pairs ...[2]string) []byte {
	zm := []byte{byte(min(len(pairs), zmNoCount))}
	length := func(n int) {
		if n < zmBigLen {
			zm = append(zm, byte(n))
		} else {
			zm = binary.LittleEndian.AppendUint32(append(zm, zmBigLen), uint32(n))
		}
	}
	for _, p := range pairs {
		length(len(p[0]))
		zm = append(zm, p[0]...)
		length(len(p[1]))
		zm = append(zm, byte(free))
		zm = append(zm, p[1]...)
		zm = append(zm, make([]byte, free)...)
	}
	return append(zm, zmEnd)
}

// listpack builds a listpack of raw entries (encoding and data, without
// their back-lengths) with the header's count.
func listpack(count int, entries ...string) []byte {
	lp := make([]byte, lpHeader)
	for _, e := range entries {
		lp = append(append(lp, e...), backlen(uint64(len(e)))...)
	}
	lp = append(lp, lpEnd)
	binary.LittleEndian.PutUint32(lp, uint32(len(lp)))
	binary.LittleEndian.PutUint16(lp[4:], uint16(count))
	return lp
}

// blobPayload is the payload of a hash of type typ held in blob.
func blobPayload(typ byte, blob []byte) []byte {
	return withFooter(appendString([]byte{typ}, blob), Version)
}

// ziplistValues are integers at each edge of each ziplist encoding and
// strings at each edge of each length form.
var ziplistValues = []string{
	"0", "12", "13", "-1", "127", "-128", "128", "-129", "32767", "-32768", "32768", "-32769",
	"8388607", "-8388608", "8388608", "-8388609", "2147483647", "-2147483648", "2147483648",
	"-2147483649", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
	"", "007", strings.Repeat("a", 63), strings.Repeat("b", 64), noise(300, 1),
	strings.Repeat("c", 16383), strings.Repeat("d", 16384),
}

// ziplistHash is a hash whose values are ziplistValues and whose fields
// are the same values preceded by "f".
func ziplistHash() [][2]string {
	var pairs [][2]string
	for _, v := range ziplistValues {
		pairs = append(pairs, [2]string{"f" + v, v})
	}
	// Integer fields, after a long entry (a 5-byte previous length).
	return append(pairs, [2]string{"5", noise(260, 2)}, [2]string{"-300", "x"})
}

func flatten(pairs [][2]string) []string {
	var out []string
	for _, p := range pairs {
		out = append(out, p[0], p[1])
	}
	return out
}

// Ziplists, zipmaps and listpacks built by hand; redis-server 7.0.15's
// RESTORE (with sanitize-dump-payload yes) read the same ziplist and
// zipmap hashes as Decode.
func TestDecodeBuiltHashes(t *testing.T) {
	for _, c := range builtHashes() {
		v, err := Decode(c.payload, 1<<20)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if want := pairsOf(c.want); v.Type != TypeHash || !sameOrder(v.Hash, want) {
			t.Errorf("%s: %v %q, want %q", c.name, v.Type, v.Hash, want)
		}
	}
}

type builtHash struct {
	name    string
	payload []byte
	want    [][2]string
}

func builtHashes() []builtHash {
	zhash := ziplistHash()
	return []builtHash{
		{"ziplist", blobPayload(typeHashZiplist, ziplist(flatten(zhash))), zhash},
		{"ziplist one pair", blobPayload(typeHashZiplist, ziplist([]string{"a", "1"})), [][2]string{{"a", "1"}}},
		{"ziplist of unknown count", blobPayload(typeHashZiplist, ziplist([]string{"a", "b"}, func(h []byte) {
			binary.LittleEndian.PutUint16(h[8:], zlNoCount)
		})), [][2]string{{"a", "b"}}},
		{"ziplist of small 5-byte previous lengths", blobPayload(typeHashZiplist, rawZiplist(13, 2, "\x00\x01a"+"\xfe\x03\x00\x00\x00\x01b")),
			[][2]string{{"a", "b"}}},
		{"zipmap", blobPayload(typeHashZipmap, zipmap(0, [2]string{"name", "cairn"}, [2]string{"empty", ""},
			[2]string{"12", "34"}, [2]string{noise(300, 3), noise(254, 4)})),
			[][2]string{{"name", "cairn"}, {"empty", ""}, {"12", "34"}, {noise(300, 3), noise(254, 4)}}},
		{"zipmap with free bytes", blobPayload(typeHashZipmap, zipmap(4, [2]string{"a", "b"}, [2]string{"c", "d"})),
			[][2]string{{"a", "b"}, {"c", "d"}}},
		{"zipmap of unknown count", blobPayload(typeHashZipmap, func() []byte {
			zm := zipmap(0, [2]string{"a", "b"})
			zm[0] = zmNoCount
			return zm
		}()), [][2]string{{"a", "b"}}},
		{"listpack of unknown count", blobPayload(typeHashListpack, listpack(lpNoCount, "\x81a", "\x05")),
			[][2]string{{"a", "5"}}},
		{"listpack of 13-bit integers", blobPayload(typeHashListpack, listpack(4, "\x81a", "\xdf\xff", "\x81b", "\xd0\x00")),
			[][2]string{{"a", "-1"}, {"b", "-4096"}}},
		{"listpack of a 12-bit string", blobPayload(typeHashListpack, listpack(2, "\xe0\x01a", "\x9f"+strings.Repeat("v", 31))),
			[][2]string{{"a", strings.Repeat("v", 31)}}},
		{"listpack of a 32-bit string", blobPayload(typeHashListpack, listpack(2, "\xf0\x01\x00\x00\x00a", "\x81v")),
			[][2]string{{"a", "v"}}},
	}
}

func TestEncodeHash(t *testing.T) {
	for _, c := range []struct {
		name  string
		pairs [][2]string
		want  string // the payload without its footer, if given
	}{
		{"one pair", [][2]string{{"a", "b"}}, "\x04\x01\x01a\x01b"},
		{"integers", [][2]string{{"1", "-1"}, {"300", "70000"}, {"12345678901", "007"}},
			"\x04\x03\xc0\x01\xc0\xff\xc1\x2c\x01\xc2\x70\x11\x01\x00\x0b12345678901\x03007"},
		{"empty values", [][2]string{{"", ""}, {"x", ""}}, "\x04\x02\x00\x00\x01x\x00"},
		{"long", [][2]string{{noise(70, 1), noise(20000, 2)}, {"b", noise(70000, 3)}}, ""},
		{"many", func() [][2]string {
			var pairs [][2]string
			for i := range 100 {
				pairs = append(pairs, [2]string{strconv.Itoa(i), fmt.Sprint(i * i)})
			}
			return pairs
		}(), ""},
	} {
		pairs := pairsOf(c.pairs)
		payload := EncodeHash(pairs)
		if c.want != "" && string(payload[:len(payload)-10]) != c.want {
			t.Errorf("%s: EncodeHash = %q, want %q", c.name, payload[:len(payload)-10], c.want)
		}
		if !bytes.Equal(payload, withFooter(payload[:len(payload)-10], Version)) {
			t.Errorf("%s: wrong footer", c.name)
		}
		v, err := Decode(payload, 512<<20)
		if err != nil || v.Type != TypeHash || !sameOrder(v.Hash, pairs) {
			t.Errorf("%s: round trip %v", c.name, err)
		}
	}
}

func TestDecodeString(t *testing.T) {
	for _, c := range redisDumps {
		v, err := Decode([]byte(c.payload), 512<<20)
		if err != nil || v.Type != TypeString || string(v.String) != c.value || v.Hash != nil {
			t.Errorf("Decode(%q) = %+v, %v; want %q", c.payload, v, err, c.value)
		}
	}
	if v, err := Decode(withFooter([]byte("\x00\x05hello"), 5), 5); err != nil || string(v.String) != "hello" {
		t.Errorf("maxLen 5: %q, %v", v.String, err)
	}
	if _, err := Decode(withFooter([]byte("\x00\x05hello"), 5), 4); !errors.Is(err, ErrFormat) {
		t.Errorf("maxLen 4: %v, want ErrFormat", err)
	}
	if TypeString.String() != "string" || TypeHash.String() != "hash" || Type(9).String() != "Type(9)" {
		t.Errorf("Type.String: %v %v %v", TypeString, TypeHash, Type(9))
	}
}

func TestDecodeHashErrors(t *testing.T) { checkDecodeCases(t, hashErrors(), TypeHash) }

// decodeCase is a payload body and the error Decode returns for it with
// maxLen 255 (nil: it decodes).
type decodeCase struct {
	name string
	body []byte
	want error
}

// namedBody is a payload body and its name.
type namedBody struct {
	name string
	body []byte
}

// checkBoundedDecode checks that each body, a payload claiming far more
// than it holds, fails with ErrFormat having allocated under 16 KB.
func checkBoundedDecode(t *testing.T, cases []namedBody) {
	t.Helper()
	for _, c := range cases {
		payload := withFooter(c.body, Version)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Decode(payload, 1<<30)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", c.name, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 16<<10 {
			t.Errorf("%s: %d bytes allocated", c.name, n)
		}
	}
}

// checkDecodeCases checks Decode on each case; a case that decodes must
// give a value of type typ.
func checkDecodeCases(t *testing.T, cases []decodeCase, typ Type) {
	t.Helper()
	for _, c := range cases {
		v, err := Decode(withFooter(c.body, Version), 255)
		if c.want == nil {
			if err != nil || v.Type != typ {
				t.Errorf("%s: %+v, %v", c.name, v, err)
			}
			continue
		}
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// hashErrors are bodies of payloads and the error Decode returns for them
// with maxLen 255; a few valid ones (nil) show that the others fail for
// the reason their names say.
func hashErrors() []decodeCase {
	lp := func(entries ...string) []byte { return listpack(len(entries), entries...) }
	goodLP := lp("\x81a", "\x81b")
	zipl := ziplist([]string{"a", "b"})
	edit := func(b []byte, f func([]byte) []byte) []byte { return f(bytes.Clone(b)) }
	return []decodeCase{
		{"module 1", []byte("\x06\x01"), ErrUnsupportedType},
		{"module", []byte("\x07\x01"), ErrUnsupportedType},
		{"stream", []byte("\x0f\x01"), ErrUnsupportedType},
		{"stream 2 cut short", []byte("\x13\x01"), ErrFormat},
		{"stream 3 (Redis 7.2)", []byte("\x15\x01"), ErrUnsupportedType},
		{"unknown type", []byte("\x63"), ErrFormat},
		{"string with trailing bytes", []byte("\x00\x02hi!"), ErrFormat},

		{"empty hash", []byte("\x04\x00"), ErrFormat},
		{"field twice", []byte("\x04\x02\x01a\x01b\x01a\x01c"), ErrFormat},
		{"integer field twice", []byte("\x04\x02\x0212\x01b\xc0\x0c\x01c"), ErrFormat},
		{"fewer pairs than counted", []byte("\x04\x03\x01a\x01b\x01c\x01d"), ErrFormat},
		{"field without a value", []byte("\x04\x01\x01a"), ErrFormat},
		{"hash with trailing bytes", []byte("\x04\x01\x01a\x01b!"), ErrFormat},
		{"encoded count", []byte("\x04\xc0\x01\x01a\x01b"), ErrFormat},
		{"truncated count", []byte("\x04\x80\x00"), ErrFormat},
		{"value past the end", []byte("\x04\x01\x01a\x05b"), ErrFormat},
		{"value longer than maxLen", []byte("\x04\x01\x01a\x41\x00" + strings.Repeat("v", 256)), ErrFormat},

		{"listpack", blobPayloadBody(typeHashListpack, goodLP), nil},
		{"listpack with trailing bytes", append(blobPayloadBody(typeHashListpack, goodLP), 0), ErrFormat},
		{"listpack blob not a string", []byte("\x10\x82"), ErrFormat},
		{"listpack too short", blobPayloadBody(typeHashListpack, []byte("\x06\x00\x00\x00\x00\x00")), ErrFormat},
		{"empty listpack", blobPayloadBody(typeHashListpack, lp()), ErrFormat},
		{"listpack of an odd count", blobPayloadBody(typeHashListpack, lp("\x81a", "\x81b", "\x81c")), ErrFormat},
		{"listpack field twice", blobPayloadBody(typeHashListpack, lp("\x81a", "\x81b", "\x81a", "\x81c")), ErrFormat},
		{"listpack integer field twice", blobPayloadBody(typeHashListpack, lp("\x0c", "\x81b", "\x8212", "\x81c")), ErrFormat},
		{"listpack total too big", blobPayloadBody(typeHashListpack, edit(goodLP, func(b []byte) []byte { b[0]++; return b })), ErrFormat},
		{"listpack total too small", blobPayloadBody(typeHashListpack, edit(goodLP, func(b []byte) []byte { b[0]--; return b })), ErrFormat},
		{"listpack without terminator", blobPayloadBody(typeHashListpack, edit(goodLP, func(b []byte) []byte { b[len(b)-1] = 0; return b })), ErrFormat},
		{"listpack terminator before the end", blobPayloadBody(typeHashListpack, edit(goodLP, func(b []byte) []byte {
			b = append(b, 0x01, 0x01, lpEnd)
			b[0] += 3
			return b
		})), ErrFormat},
		{"listpack count too big", blobPayloadBody(typeHashListpack, listpack(4, "\x81a", "\x81b")), ErrFormat},
		{"listpack count too small", blobPayloadBody(typeHashListpack, listpack(0, "\x81a", "\x81b")), ErrFormat},
		{"listpack wrong back-length", blobPayloadBody(typeHashListpack, edit(goodLP, func(b []byte) []byte { b[8] = 3; return b })), ErrFormat},
		{"listpack unknown encoding", blobPayloadBody(typeHashListpack, lp("\x81a", "\xf5")), ErrFormat},
		{"listpack string past the end", blobPayloadBody(typeHashListpack, lp("\x81a", "\x85b")), ErrFormat},
		{"listpack 12-bit string past the end", blobPayloadBody(typeHashListpack, lp("\x81a", "\xe0")), ErrFormat},
		{"listpack 32-bit string of 4 GiB", blobPayloadBody(typeHashListpack, lp("\x81a", "\xf0\xff\xff\xff\xffb")), ErrFormat},
		{"listpack truncated int64", blobPayloadBody(typeHashListpack, lp("\x81a", "\xf4\x01\x02")), ErrFormat},
		{"listpack entry without back-length", blobPayloadBody(typeHashListpack, []byte("\x0a\x00\x00\x00\x02\x00\x01\x01\x02\xff")), ErrFormat},
		{"listpack longer than maxLen", blobPayloadBody(typeHashListpack, lp("\x81a", "\xe1\x00"+strings.Repeat("v", 256))), ErrFormat},

		{"ziplist", blobPayloadBody(typeHashZiplist, zipl), nil},
		{"ziplist too short", blobPayloadBody(typeHashZiplist, zipl[:10]), ErrFormat},
		{"empty ziplist", blobPayloadBody(typeHashZiplist, ziplist(nil)), ErrFormat},
		{"ziplist of an odd count", blobPayloadBody(typeHashZiplist, ziplist([]string{"a", "b", "c"})), ErrFormat},
		{"ziplist field twice", blobPayloadBody(typeHashZiplist, ziplist([]string{"1", "b", "1", "c"})), ErrFormat},
		{"ziplist total wrong", blobPayloadBody(typeHashZiplist, edit(zipl, func(b []byte) []byte { b[0]++; return b })), ErrFormat},
		{"ziplist tail wrong", blobPayloadBody(typeHashZiplist, edit(zipl, func(b []byte) []byte { b[4]++; return b })), ErrFormat},
		{"ziplist count wrong", blobPayloadBody(typeHashZiplist, edit(zipl, func(b []byte) []byte { b[8]++; return b })), ErrFormat},
		{"ziplist without terminator", blobPayloadBody(typeHashZiplist, edit(zipl, func(b []byte) []byte { b[len(b)-1] = 0; return b })), ErrFormat},
		{"ziplist terminator before the end", blobPayloadBody(typeHashZiplist, edit(zipl, func(b []byte) []byte {
			b = append(b, 0x03, 0x01, zlEnd)
			b[0] += 3
			return b
		})), ErrFormat},
		{"ziplist wrong previous length", blobPayloadBody(typeHashZiplist, edit(zipl, func(b []byte) []byte { b[13] = 2; return b })), ErrFormat},
		{"ziplist first entry with a previous", blobPayloadBody(typeHashZiplist, edit(zipl, func(b []byte) []byte { b[10] = 1; return b })), ErrFormat},
		{"ziplist unknown encoding", blobPayloadBody(typeHashZiplist, edit(zipl, func(b []byte) []byte { b[11] = 0xc1; return b })), ErrFormat},
		{"ziplist string past the end", blobPayloadBody(typeHashZiplist, edit(zipl, func(b []byte) []byte { b[14] = 2; return b })), ErrFormat},
		{"ziplist 32-bit string of 4 GiB", blobPayloadBody(typeHashZiplist, rawZiplist(13, 2, "\x00\x01a"+"\x03\x80\xff\xff\xff\xff")), ErrFormat},
		{"ziplist truncated int64", blobPayloadBody(typeHashZiplist, rawZiplist(13, 2, "\x00\x01a"+"\x03\xe0\x01\x02")), ErrFormat},
		{"ziplist truncated previous length", blobPayloadBody(typeHashZiplist, rawZiplist(13, 2, "\x00\x01a"+"\xfe\x03\x00\x00")), ErrFormat},
		{"ziplist truncated 14-bit length", blobPayloadBody(typeHashZiplist, rawZiplist(13, 2, "\x00\x01a"+"\x03\x40")), ErrFormat},
		{"ziplist entry without encoding", blobPayloadBody(typeHashZiplist, rawZiplist(13, 2, "\x00\x01a"+"\x03")), ErrFormat},

		{"zipmap", blobPayloadBody(typeHashZipmap, zipmap(0, [2]string{"a", "b"})), nil},
		{"zipmap too short", blobPayloadBody(typeHashZipmap, []byte("\xff")), ErrFormat},
		{"empty zipmap", blobPayloadBody(typeHashZipmap, []byte("\x00\xff")), ErrFormat},
		{"zipmap count wrong", blobPayloadBody(typeHashZipmap, []byte("\x02\x01a\x01\x00b\xff")), ErrFormat},
		{"zipmap field twice", blobPayloadBody(typeHashZipmap, zipmap(1, [2]string{"a", "b"}, [2]string{"a", "c"})), ErrFormat},
		{"zipmap without terminator", blobPayloadBody(typeHashZipmap, []byte("\x01\x01a\x01\x00b\x00")), ErrFormat},
		{"zipmap terminator before the end", blobPayloadBody(typeHashZipmap, []byte("\x01\x01a\x01\x00b\xff\x01\xff")), ErrFormat},
		{"zipmap field without a value", blobPayloadBody(typeHashZipmap, []byte("\x01\x01a\x01\x00b\x01c\xff")), ErrFormat},
		{"zipmap value without free count", blobPayloadBody(typeHashZipmap, []byte("\x01\x01a\x01\xff")), ErrFormat},
		{"zipmap value past the end", blobPayloadBody(typeHashZipmap, []byte("\x01\x01a\x05\x00b\xff")), ErrFormat},
		{"zipmap free bytes past the end", blobPayloadBody(typeHashZipmap, []byte("\x01\x01a\x01\x03b\xff")), ErrFormat},
		{"zipmap 32-bit length of 4 GiB", blobPayloadBody(typeHashZipmap, []byte("\x01\x01a\xfe\xff\xff\xff\xff\x00b\xff")), ErrFormat},
		{"zipmap truncated 32-bit length", blobPayloadBody(typeHashZipmap, []byte("\x01\x01a\xfe\xff\xff\xff")), ErrFormat},
	}
}

// blobPayloadBody is blobPayload without the footer.
func blobPayloadBody(typ byte, blob []byte) []byte {
	return appendString([]byte{typ}, blob)
}

// A payload of a few bytes that claims huge counts or lengths fails
// without allocating for them.
func TestDecodeHugeClaims(t *testing.T) {
	checkBoundedDecode(t, []namedBody{
		{"2^40 pairs", []byte("\x04\x81\x00\x00\x01\x00\x00\x00\x00\x00\x01a\x01b")},
		{"2^32-1 pairs", []byte("\x04\x80\xff\xff\xff\xff\x01a\x01b")},
		{"LZF field of 1 GiB", []byte("\x04\x01\xc3\x02\x80\x40\x00\x00\x00\x01aa\x01b")},
		{"LZF listpack of 1 GiB", []byte("\x10\xc3\x02\x80\x40\x00\x00\x00\x01aa")},
		{"listpack count 65534", blobPayloadBody(typeHashListpack, listpack(65534, "\x81a", "\x81b"))},
		{"ziplist count 65534", blobPayloadBody(typeHashZiplist, ziplist([]string{"a", "b"}, func(h []byte) {
			binary.LittleEndian.PutUint16(h[8:], 65534)
		}))},
		{"zipmap count 253", blobPayloadBody(typeHashZipmap, []byte("\xfd\x01a\x01\x00b\xff"))},
	})
}

// Decoded hashes do not share memory with the payload, and appending to
// one entry does not overwrite the next.
func TestDecodeOwnsMemory(t *testing.T) {
	for _, file := range []string{"listpack-ints", "hashtable-long-value"} {
		payload := readHex(t, file)
		v, err := Decode(payload, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Decode(payload, 1<<20)
		clear(payload)
		_ = append(v.Hash[0][0], strings.Repeat("garbage", 10)...)
		if !sameOrder(v.Hash, want.Hash) {
			t.Errorf("%s: the decoded hash changed", file)
		}
	}
}

// FuzzDecode: any value body, given a valid footer (a fuzzer cannot forge
// CRCs, so the target adds it), decodes or fails with one of the sentinel
// errors, never panics, and what decodes is a valid value that encodes
// back to a payload that decodes to the same value, in the same order.
// The seeds are the bodies of the smaller payloads in testdata/hashes,
// testdata/sets, testdata/lists, testdata/zsets and redisDumps, and
// testdata/fuzz/FuzzDecode (some of the same, and hashes, sets, lists and
// sorted sets built by hand).
func FuzzDecode(f *testing.F) {
	for _, c := range redisHashes {
		if p := readHex(f, c.file); len(p) < 1000 { // large inputs slow the fuzzer down
			f.Add(p[:len(p)-10])
		}
	}
	for _, c := range redisSets {
		if p := readSetHex(f, c.file); len(p) < 1000 {
			f.Add(p[:len(p)-10])
		}
	}
	for _, c := range redisLists {
		if p := readListHex(f, c.file); len(p) < 1000 {
			f.Add(p[:len(p)-10])
		}
	}
	for _, c := range redisZSets {
		if p := readZSetHex(f, c.file); len(p) < 1000 {
			f.Add(p[:len(p)-10])
		}
	}
	for _, c := range redisDumps {
		f.Add([]byte(c.payload[:len(c.payload)-10]))
	}
	if p, err := hex.DecodeString(redisStreamDump); err == nil {
		f.Add(p[:len(p)-10])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := Decode(withFooter(body, Version), 1<<20)
		if err != nil {
			if !errors.Is(err, ErrChecksum) && !errors.Is(err, ErrFormat) && !errors.Is(err, ErrUnsupportedType) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		switch v.Type {
		case TypeString:
			back, err := Decode(EncodeString(v.String), 1<<20)
			if err != nil || back.Type != TypeString || !bytes.Equal(back.String, v.String) {
				t.Fatalf("re-encoding %q: %q, %v", v.String, back.String, err)
			}
		case TypeHash:
			if err := checkPairs(v.Hash); err != nil {
				t.Fatalf("decoded an invalid hash: %v", err)
			}
			back, err := Decode(EncodeHash(v.Hash), 1<<20)
			if err != nil || back.Type != TypeHash || !sameOrder(back.Hash, v.Hash) {
				t.Fatalf("re-encoding %q: %q, %v", v.Hash, back.Hash, err)
			}
		case TypeSet:
			if err := checkMembers(v.Set); err != nil {
				t.Fatalf("decoded an invalid set: %v", err)
			}
			back, err := Decode(EncodeSet(v.Set), 1<<20)
			if err != nil || back.Type != TypeSet || !slices.EqualFunc(back.Set, v.Set, bytes.Equal) {
				t.Fatalf("re-encoding %q: %q, %v", v.Set, back.Set, err)
			}
		case TypeList:
			if err := checkElements(v.List); err != nil {
				t.Fatalf("decoded an invalid list: %v", err)
			}
			back, err := Decode(EncodeList(v.List), 1<<20)
			if err != nil || back.Type != TypeList || !slices.EqualFunc(back.List, v.List, bytes.Equal) {
				t.Fatalf("re-encoding %q: %q, %v", v.List, back.List, err)
			}
		case TypeZSet:
			if err := checkZMembers(v.ZSet); err != nil {
				t.Fatalf("decoded an invalid sorted set: %v", err)
			}
			if !slices.IsSortedFunc(v.ZSet, compareZMembers) {
				t.Fatalf("decoded a sorted set out of order: %v", v.ZSet)
			}
			back, err := Decode(EncodeZSet(v.ZSet), 1<<20)
			if err != nil || back.Type != TypeZSet || !sameZSet(back.ZSet, v.ZSet) {
				t.Fatalf("re-encoding %v: %v, %v", v.ZSet, back.ZSet, err)
			}
		case TypeStream:
			back, err := Decode(EncodeStream(v.Stream), 1<<20)
			if err != nil || back.Type != TypeStream || streamSummary(back.Stream) != streamSummary(v.Stream) {
				t.Fatalf("re-encoding %s: %v", streamSummary(v.Stream), err)
			}
		default:
			t.Fatalf("decoded type %v", v.Type)
		}
	})
}
