package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// redisSets are sets made in redis-server 7.0.15 by SADDing their
// members one by one, in order, into an empty key with Redis's default
// set-max-intset-entries 512, then DUMPed: testdata/sets/<file>.hex holds
// the payload in hex. typ is the RDB type Redis chose, and for an intset
// size is the size of its entries.
var redisSets = []struct {
	file    string
	typ     byte
	size    uint32
	members []string
}{
	{file: "intset-16", typ: typeSetIntset, size: isInt16, members: []string{
		"5", "-1", "0", "32767", "-32768", "100", "-300",
	}},
	{file: "intset-32", typ: typeSetIntset, size: isInt32, members: []string{
		"1", "-2", "32768", "-32769", "2147483647", "-2147483648", "70000", "-5",
	}},
	{file: "intset-64", typ: typeSetIntset, size: isInt64, members: []string{
		"7", "-7", "40000", "-40", "2147483648", "-2147483649", "12345678901234",
		"9223372036854775807", "-9223372036854775808", "-32768",
	}},
	{file: "strings", typ: typeSet, members: []string{
		"apple", "banana", "", "x y", "007", "+1", "-0", "12", "-5", "70000", "-2147483648",
		"2147483648", "1.5", strings.Repeat("ab", 30), noise(30, 1),
	}},
	{file: "ints-600", typ: typeSet, members: func() []string {
		var members []string
		for i := range 600 {
			v := int64(i-300) * 1000003
			if i%150 == 0 {
				v = 1<<40 + int64(i)
			}
			members = append(members, strconv.FormatInt(v, 10))
		}
		return members
	}()},
	{file: "long-member", typ: typeSet, members: []string{
		"short", noise(300, 5), noise(20000, 6), strings.Repeat("z", 5000), "42",
	}},
}

// readSetHex reads a payload from testdata/sets.
func readSetHex(t testing.TB, file string) []byte {
	t.Helper()
	return readHexIn(t, "sets", file)
}

// membersOf converts strings to set members.
func membersOf(members []string) [][]byte {
	out := make([][]byte, len(members))
	for i, m := range members {
		out[i] = []byte(m)
	}
	return out
}

// sameSet reports whether two lists of members, each without a member
// twice, hold the same members in any order.
func sameSet(a, b [][]byte) bool {
	m := make(map[string]bool, len(a))
	for _, x := range a {
		m[string(x)] = true
	}
	if len(m) != len(a) || len(a) != len(b) {
		return false
	}
	for _, x := range b {
		if !m[string(x)] {
			return false
		}
	}
	return true
}

// sortedInts returns the members, all integers, in ascending order.
func sortedInts(t testing.TB, members []string) [][]byte {
	t.Helper()
	vs := make([]int64, len(members))
	for i, m := range members {
		v, err := strconv.ParseInt(m, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		vs[i] = v
	}
	slices.Sort(vs)
	out := make([][]byte, len(vs))
	for i, v := range vs {
		out[i] = strconv.AppendInt(nil, v, 10)
	}
	return out
}

func TestDecodeRedisSets(t *testing.T) {
	for _, c := range redisSets {
		t.Run(c.file, func(t *testing.T) {
			payload := readSetHex(t, c.file)
			if payload[0] != c.typ {
				t.Fatalf("RDB type %d, want %d", payload[0], c.typ)
			}
			v, err := Decode(payload, 512<<20)
			if err != nil {
				t.Fatal(err)
			}
			want := membersOf(c.members)
			if v.Type != TypeSet || !sameSet(v.Set, want) || v.String != nil || v.Hash != nil {
				t.Fatalf("Decode = %v %d members, want the %d SADDed", v.Type, len(v.Set), len(want))
			}
			// An intset holds its members in ascending order.
			if c.typ == typeSetIntset && !slices.EqualFunc(v.Set, sortedInts(t, c.members), bytes.Equal) {
				t.Errorf("intset members %q, want them in ascending order", v.Set)
			}
			if _, err := DecodeString(payload, 512<<20); !errors.Is(err, ErrUnsupportedType) {
				t.Errorf("DecodeString: %v, want ErrUnsupportedType", err)
			}
			// maxLen bounds each member of a plain set (and an intset's
			// blob, longer than its members).
			longest := 0
			for _, m := range c.members {
				longest = max(longest, len(m))
			}
			if c.typ == typeSet {
				if _, err := Decode(payload, int64(longest)); err != nil {
					t.Errorf("Decode with maxLen %d: %v", longest, err)
				}
			}
			if _, err := Decode(payload, int64(longest-1)); !errors.Is(err, ErrFormat) {
				t.Errorf("Decode with maxLen %d: %v, want ErrFormat", longest-1, err)
			}
			// Cairn's encoding of the same set decodes to it in order.
			back, err := Decode(EncodeSet(v.Set), 512<<20)
			if err != nil || back.Type != TypeSet || !slices.EqualFunc(back.Set, v.Set, bytes.Equal) {
				t.Errorf("round trip: %v", err)
			}
		})
	}
}

// The payloads exercise what their names say: each intset entry size,
// and plain sets of integer, LZF and plain strings.
func TestRedisSetsCoverage(t *testing.T) {
	for _, c := range redisSets {
		r := reader{b: readSetHex(t, c.file)[1:]}
		if c.typ == typeSetIntset {
			blob, err := r.str(1 << 20)
			if err != nil {
				t.Fatal(err)
			}
			if size := binary.LittleEndian.Uint32(blob); size != c.size {
				t.Errorf("%s: entries of %d bytes, want %d", c.file, size, c.size)
			}
			continue
		}
		n, err := r.plainLength()
		if err != nil {
			t.Fatal(err)
		}
		if n != uint64(len(c.members)) {
			t.Errorf("%s: %d members, want %d", c.file, n, len(c.members))
		}
		kinds := map[string]bool{}
		for range n {
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
		want := map[string]int{"strings": 3, "ints-600": 2, "long-member": 3}[c.file]
		if len(kinds) != want {
			t.Errorf("%s holds %v strings, want %d kinds", c.file, kinds, want)
		}
	}
}

// intset builds an intset of the values with entries of size bytes.
func intset(size uint32, values ...int64) []byte {
	is := binary.LittleEndian.AppendUint32(nil, size)
	is = binary.LittleEndian.AppendUint32(is, uint32(len(values)))
	for _, v := range values {
		for i := range size {
			is = append(is, byte(v>>(8*i)))
		}
	}
	return is
}

type builtSet struct {
	name    string
	payload []byte
	want    []string
}

// builtSets are intsets and listpacks built by hand. redis-server 7.0.15's
// RESTORE (with sanitize-dump-payload yes) read the same intsets as
// Decode; it does not know the listpack set of Redis 7.2.
func builtSets() []builtSet {
	return []builtSet{
		{"intset of one", blobPayload(typeSetIntset, intset(isInt16, 7)), []string{"7"}},
		{"intset wider than needed", blobPayload(typeSetIntset, intset(isInt64, -3, 0, 300)),
			[]string{"-3", "0", "300"}},
		{"intset at the edges of 32 bits", blobPayload(typeSetIntset, intset(isInt32, -1<<31, -1, 1<<31-1)),
			[]string{"-2147483648", "-1", "2147483647"}},
		{"listpack", blobPayload(typeSetListpack, listpack(8,
			"\x85apple", "\x80", "\x05", "\xdf\xff", "\xf1\x00\x80", "\xf3\x00\x00\x00\x80",
			"\xf4\xff\xff\xff\xff\xff\xff\xff\x7f", "\xe0\x40"+strings.Repeat("L", 64))),
			[]string{"apple", "", "5", "-1", "-32768", "-2147483648", "9223372036854775807", strings.Repeat("L", 64)}},
		{"listpack of one", blobPayload(typeSetListpack, listpack(1, "\x81a")), []string{"a"}},
		{"listpack of unknown count", blobPayload(typeSetListpack, listpack(lpNoCount, "\x81a", "\x0c")),
			[]string{"a", "12"}},
	}
}

func TestDecodeBuiltSets(t *testing.T) {
	for _, c := range builtSets() {
		v, err := Decode(c.payload, 1<<20)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if want := membersOf(c.want); v.Type != TypeSet || !slices.EqualFunc(v.Set, want, bytes.Equal) {
			t.Errorf("%s: %v %q, want %q", c.name, v.Type, v.Set, want)
		}
	}
}

func TestEncodeSet(t *testing.T) {
	for _, c := range []struct {
		name    string
		members []string
		want    string // the payload without its footer, if given
	}{
		{"one member", []string{"a"}, "\x02\x01\x01a"},
		{"integers", []string{"1", "-1", "300", "70000", "12345678901", "007"},
			"\x02\x06\xc0\x01\xc0\xff\xc1\x2c\x01\xc2\x70\x11\x01\x00\x0b12345678901\x03007"},
		{"empty member", []string{"", "x"}, "\x02\x02\x00\x01x"},
		{"long", []string{noise(70, 1), noise(20000, 2), noise(70000, 3)}, ""},
		{"many", func() []string {
			var members []string
			for i := range 1000 {
				members = append(members, fmt.Sprint(i*i))
			}
			return members
		}(), ""},
	} {
		members := membersOf(c.members)
		payload := EncodeSet(members)
		if c.want != "" && string(payload[:len(payload)-10]) != c.want {
			t.Errorf("%s: EncodeSet = %q, want %q", c.name, payload[:len(payload)-10], c.want)
		}
		if !bytes.Equal(payload, withFooter(payload[:len(payload)-10], Version)) {
			t.Errorf("%s: wrong footer", c.name)
		}
		v, err := Decode(payload, 512<<20)
		if err != nil || v.Type != TypeSet || !slices.EqualFunc(v.Set, members, bytes.Equal) {
			t.Errorf("%s: round trip %v", c.name, err)
		}
	}
}

func TestSetType(t *testing.T) {
	if TypeSet.String() != "set" || TypeSet == TypeHash || TypeSet == TypeString {
		t.Errorf("TypeSet = %d %q", TypeSet, TypeSet)
	}
}

func TestDecodeSetErrors(t *testing.T) { checkDecodeCases(t, setErrors(), TypeSet) }

// setErrors are bodies of payloads and the error Decode returns for them
// with maxLen 255; a few valid ones (nil) show that the others fail for
// the reason their names say.
func setErrors() []decodeCase {
	lp := func(entries ...string) []byte { return listpack(len(entries), entries...) }
	goodLP := lp("\x81a", "\x81b")
	goodIS := intset(isInt16, -1, 2)
	edit := func(b []byte, f func([]byte) []byte) []byte { return f(bytes.Clone(b)) }
	return []decodeCase{
		{"stream 3", []byte("\x15\x01"), ErrUnsupportedType},

		{"set", []byte("\x02\x02\x01a\xc0\x01"), nil},
		{"empty set", []byte("\x02\x00"), ErrFormat},
		{"member twice", []byte("\x02\x02\x01a\x01a"), ErrFormat},
		{"integer member twice", []byte("\x02\x02\x011\xc0\x01"), ErrFormat},
		{"fewer members than counted", []byte("\x02\x03\x01a\x01b"), ErrFormat},
		{"count beyond the bytes", []byte("\x02\x80\xff\xff\xff\xff\x01a"), ErrFormat},
		{"encoded count", []byte("\x02\xc0\x01\x01a"), ErrFormat},
		{"truncated count", []byte("\x02\x80\x00"), ErrFormat},
		{"member past the end", []byte("\x02\x01\x05ab"), ErrFormat},
		{"set with trailing bytes", []byte("\x02\x01\x01a!"), ErrFormat},
		{"member longer than maxLen", []byte("\x02\x01\x41\x00" + strings.Repeat("m", 256)), ErrFormat},

		{"intset", blobPayloadBody(typeSetIntset, goodIS), nil},
		{"intset with trailing bytes", append(blobPayloadBody(typeSetIntset, goodIS), 0), ErrFormat},
		{"intset blob not a string", []byte("\x0b\x82"), ErrFormat},
		{"intset too short", blobPayloadBody(typeSetIntset, goodIS[:7]), ErrFormat},
		{"empty intset", blobPayloadBody(typeSetIntset, intset(isInt16)), ErrFormat},
		{"intset of 1-byte entries", blobPayloadBody(typeSetIntset, intset(1, 1, 2)), ErrFormat},
		{"intset of 3-byte entries", blobPayloadBody(typeSetIntset, intset(3, 1, 2)), ErrFormat},
		{"intset of 0-byte entries", blobPayloadBody(typeSetIntset, intset(0)), ErrFormat},
		{"intset of 16-byte entries", blobPayloadBody(typeSetIntset, intset(16, 1)), ErrFormat},
		{"intset count too big", blobPayloadBody(typeSetIntset, edit(goodIS, func(b []byte) []byte { b[4]++; return b })), ErrFormat},
		{"intset count too small", blobPayloadBody(typeSetIntset, edit(goodIS, func(b []byte) []byte { b[4]--; return b })), ErrFormat},
		{"intset count of 2^32-1", blobPayloadBody(typeSetIntset, edit(goodIS, func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[4:], 1<<32-1)
			return b
		})), ErrFormat},
		{"intset blob with a stray byte", blobPayloadBody(typeSetIntset, append(bytes.Clone(goodIS), 0)), ErrFormat},
		{"intset truncated entry", blobPayloadBody(typeSetIntset, goodIS[:len(goodIS)-1]), ErrFormat},
		{"intset descending", blobPayloadBody(typeSetIntset, intset(isInt32, 2, -1)), ErrFormat},
		{"intset entry twice", blobPayloadBody(typeSetIntset, intset(isInt64, -5, 3, 3, 9)), ErrFormat},
		{"intset longer than maxLen", blobPayloadBody(typeSetIntset, intset(isInt64, slices.Collect(func(yield func(int64) bool) {
			for i := range int64(40) {
				yield(i)
			}
		})...)), ErrFormat},

		{"listpack", blobPayloadBody(typeSetListpack, goodLP), nil},
		{"listpack with trailing bytes", append(blobPayloadBody(typeSetListpack, goodLP), 0), ErrFormat},
		{"listpack blob not a string", []byte("\x14\x82"), ErrFormat},
		{"empty listpack", blobPayloadBody(typeSetListpack, lp()), ErrFormat},
		{"listpack member twice", blobPayloadBody(typeSetListpack, lp("\x81a", "\x81b", "\x81a")), ErrFormat},
		{"listpack integer member twice", blobPayloadBody(typeSetListpack, lp("\x0c", "\x81b", "\x8212")), ErrFormat},
		{"listpack count wrong", blobPayloadBody(typeSetListpack, listpack(3, "\x81a", "\x81b")), ErrFormat},
		{"listpack total wrong", blobPayloadBody(typeSetListpack, edit(goodLP, func(b []byte) []byte { b[0]++; return b })), ErrFormat},
		{"listpack wrong back-length", blobPayloadBody(typeSetListpack, edit(goodLP, func(b []byte) []byte { b[8] = 3; return b })), ErrFormat},
		{"listpack without terminator", blobPayloadBody(typeSetListpack, edit(goodLP, func(b []byte) []byte { b[len(b)-1] = 0; return b })), ErrFormat},
		{"listpack string past the end", blobPayloadBody(typeSetListpack, lp("\x81a", "\x85b")), ErrFormat},
		{"listpack longer than maxLen", blobPayloadBody(typeSetListpack, lp("\x81a", "\xe1\x00"+strings.Repeat("v", 256))), ErrFormat},
	}
}

// A payload of a few bytes that claims huge counts or lengths fails
// without allocating for them.
func TestDecodeSetHugeClaims(t *testing.T) {
	checkBoundedDecode(t, []namedBody{
		{"2^40 members", []byte("\x02\x81\x00\x00\x01\x00\x00\x00\x00\x00\x01a\x01b")},
		{"2^32-1 members", []byte("\x02\x80\xff\xff\xff\xff\x01a\x01b")},
		{"LZF member of 1 GiB", []byte("\x02\x01\xc3\x02\x80\x40\x00\x00\x00\x01aa")},
		{"LZF intset of 1 GiB", []byte("\x0b\xc3\x02\x80\x40\x00\x00\x00\x01aa")},
		{"intset of 2^32-1 entries", blobPayloadBody(typeSetIntset, []byte("\x08\x00\x00\x00\xff\xff\xff\xff\x01\x00\x00\x00\x00\x00\x00\x00"))},
		{"intset of 2^29 entries", blobPayloadBody(typeSetIntset, []byte("\x08\x00\x00\x00\x00\x00\x00\x20\x01\x00\x00\x00\x00\x00\x00\x00"))},
		{"listpack count 65534", blobPayloadBody(typeSetListpack, listpack(65534, "\x81a", "\x81b"))},
	})
}

// Decoded sets do not share memory with the payload, and appending to
// one member does not overwrite the next.
func TestDecodeSetOwnsMemory(t *testing.T) {
	payloads := map[string][]byte{
		"intset":   readSetHex(t, "intset-16"),
		"strings":  readSetHex(t, "strings"),
		"listpack": builtSets()[3].payload,
	}
	checkOwnsMemory(t, payloads, func(v Value) [][]byte { return v.Set })
}

// checkOwnsMemory checks, for each named payload, that the members of the
// value it decodes to (members picks them) share no memory with it:
// clearing the payload, or appending to one member, changes no member.
func checkOwnsMemory(t *testing.T, payloads map[string][]byte, members func(Value) [][]byte) {
	t.Helper()
	for name, payload := range payloads {
		v, err := Decode(payload, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Decode(bytes.Clone(payload), 1<<20)
		clear(payload)
		got := members(v)
		for i := range got {
			_ = append(got[i], strings.Repeat("garbage", 10)...)
		}
		if !slices.EqualFunc(got, members(want), bytes.Equal) {
			t.Errorf("%s: the decoded value changed", name)
		}
	}
}
