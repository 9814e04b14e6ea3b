package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// zm is a member of a sorted set and its score, as tests write them.
type zm struct {
	member string
	score  float64
}

var (
	inf     = math.Inf(1)
	negZero = math.Copysign(0, -1)
)

// redisZSets are sorted sets made in redis-server 7.0.15 by ZADDing their
// members one by one, in order, into an empty key (each score written as
// strconv.FormatFloat's shortest form: "-0", "+Inf"...) with
// zset-max-listpack-entries 128 (Redis's default) and
// zset-max-listpack-value as given (Redis's default 64 when 0), then
// DUMPed: testdata/zsets/<file>.hex holds the payload in hex. typ is the
// RDB type Redis chose.
var redisZSets = []struct {
	file          string
	typ           byte
	listpackValue int
	members       []zm
}{
	{file: "listpack-small", typ: typeZSetListpack, members: []zm{
		{"one", 1}, {"two", 2}, {"three", 3}, {"deux", 2}, {"", 0},
	}},
	{file: "listpack-scores", typ: typeZSetListpack, members: []zm{
		{"zero", 0}, {"negzero", negZero}, {"half", 0.5}, {"tenth", 0.1}, {"neg", -2.5},
		{"i127", 127}, {"i128", 128}, {"m4096", -4096}, {"i32768", 32768}, {"i8388608", 8388608},
		{"i2p31", 1 << 31}, {"m2p31m1", -1<<31 - 1}, {"p52m1", 1<<52 - 1}, {"p53", 1 << 53},
		{"big", 1e300}, {"tiny", 5e-324}, {"third", 1.0 / 3}, {"inf", inf}, {"minf", -inf},
		{"12", 12}, {"-7", 3.25}, {"max", math.MaxFloat64},
	}},
	{file: "skiplist-long-member", typ: typeZSet2, members: []zm{
		{"short", 1}, {noise(65, 1), 2.5}, {noise(300, 2), -inf}, {strings.Repeat("z", 5000), inf},
		{"42", 42}, {"-0", negZero}, {"m", 1e-300}, {"tie", 2.5},
	}},
	{file: "skiplist-200", typ: typeZSet2, members: func() []zm {
		var members []zm
		for i := range 200 {
			member := fmt.Sprintf("member:%03d", (i*37)%200)
			if i%50 == 0 {
				member = strconv.Itoa(1000000 + i)
			}
			var score float64
			switch i % 4 {
			case 0:
				score = float64(i%7 - 3) // ties
			case 1:
				score = float64(i) / 8
			case 2:
				score = float64(i*1000003 - 100000000)
			case 3:
				score = -float64(i) / 3
			}
			members = append(members, zm{member, score})
		}
		return members
	}()},
	{file: "listpack-lzf", typ: typeZSetListpack, listpackValue: 1000, members: []zm{
		{strings.Repeat("ab", 100), 1}, {strings.Repeat("xyz", 50), 2}, {strings.Repeat("ab", 99) + "c", 1.5}, {"n", 7},
	}},
}

// textScore is a score of a plain sorted set of typeZSet written as the
// text s: its length byte, then s.
func textScore(s string) string { return string([]byte{byte(len(s))}) + s }

// textZSetBody is the body of a payload of a plain sorted set of typeZSet
// whose members are pairs[i][0] and scores pairs[i][1], already written
// (see textScore; "\xfe" is +inf).
func textZSetBody(pairs ...[2]string) []byte {
	b := appendLen([]byte{typeZSet}, uint64(len(pairs)))
	for _, p := range pairs {
		b = appendString(b, []byte(p[0]))
		b = append(b, p[1]...)
	}
	return b
}

// zset2Body is the body of a payload of a sorted set 2 of the members,
// in that order.
func zset2Body(members ...zm) []byte {
	b := appendLen([]byte{typeZSet2}, uint64(len(members)))
	for _, m := range members {
		b = appendString(b, []byte(m.member))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(m.score))
	}
	return b
}

// zmembersOf converts zms to sorted set members, in the same order.
func zmembersOf(members []zm) []ZMember {
	out := make([]ZMember, len(members))
	for i, m := range members {
		out[i] = ZMember{[]byte(m.member), m.score}
	}
	return out
}

// sortedZ returns the members in Redis's order.
func sortedZ(members []zm) []ZMember {
	out := zmembersOf(members)
	slices.SortFunc(out, compareZMembers)
	return out
}

// sameZSet reports whether two lists of members are the same, in order,
// with scores of the same bits (-0 is not 0).
func sameZSet(a, b []ZMember) bool {
	return slices.EqualFunc(a, b, func(x, y ZMember) bool {
		return bytes.Equal(x.Member, y.Member) && math.Float64bits(x.Score) == math.Float64bits(y.Score)
	})
}

// readZSetHex reads a payload from testdata/zsets.
func readZSetHex(t testing.TB, file string) []byte {
	t.Helper()
	return readHexIn(t, "zsets", file)
}

// zsetMembersOf returns the members of v, without their scores.
func zsetMembersOf(v Value) [][]byte {
	out := make([][]byte, len(v.ZSet))
	for i, m := range v.ZSet {
		out[i] = m.Member
	}
	return out
}

func TestDecodeRedisZSets(t *testing.T) {
	for _, c := range redisZSets {
		t.Run(c.file, func(t *testing.T) {
			payload := readZSetHex(t, c.file)
			if payload[0] != c.typ {
				t.Fatalf("RDB type %d, want %d", payload[0], c.typ)
			}
			v, err := Decode(payload, 512<<20)
			if err != nil {
				t.Fatal(err)
			}
			want := sortedZ(c.members)
			if c.typ == typeZSetListpack {
				// A listpack holds a score as text, and Redis 7.0 writes
				// -0 as "0" (-0 + 0 is 0).
				for i := range want {
					want[i].Score += 0
				}
			}
			if v.Type != TypeZSet || !sameZSet(v.ZSet, want) || v.String != nil || v.Hash != nil || v.Set != nil || v.List != nil {
				t.Fatalf("Decode = %v %d members, want the %d ZADDed in Redis's order", v.Type, len(v.ZSet), len(want))
			}
			if _, err := DecodeString(payload, 512<<20); !errors.Is(err, ErrUnsupportedType) {
				t.Errorf("DecodeString: %v, want ErrUnsupportedType", err)
			}
			// maxLen bounds each member of a plain sorted set (and a
			// listpack's blob, longer than its members).
			longest := 0
			for _, m := range c.members {
				longest = max(longest, len(m.member))
			}
			if c.typ == typeZSet2 {
				if _, err := Decode(payload, int64(longest)); err != nil {
					t.Errorf("Decode with maxLen %d: %v", longest, err)
				}
			}
			if _, err := Decode(payload, int64(longest-1)); !errors.Is(err, ErrFormat) {
				t.Errorf("Decode with maxLen %d: %v, want ErrFormat", longest-1, err)
			}
			// Cairn's encoding of the same sorted set decodes to it.
			back, err := Decode(EncodeZSet(v.ZSet), 512<<20)
			if err != nil || back.Type != TypeZSet || !sameZSet(back.ZSet, v.ZSet) {
				t.Errorf("round trip: %v", err)
			}
		})
	}
}

// zset2Order returns the members of a sorted set 2 payload, in the
// payload's order, and the kinds of their strings.
func zset2Order(t testing.TB, payload []byte) ([]ZMember, map[string]bool) {
	t.Helper()
	r := reader{b: payload[1 : len(payload)-10]}
	n, err := r.plainLength()
	if err != nil {
		t.Fatal(err)
	}
	var members []ZMember
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
		m, err := r.str(1 << 20)
		if err != nil {
			t.Fatal(err)
		}
		score, err := r.take(8)
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, ZMember{m, math.Float64frombits(binary.LittleEndian.Uint64(score))})
	}
	return members, kinds
}

// The payloads exercise what their names say: plain and LZF-compressed
// listpack blobs, scores of each listpack integer width and as text, and
// sorted sets 2 of plain, integer and LZF members, which Redis writes
// highest score first.
func TestRedisZSetsCoverage(t *testing.T) {
	if p := readZSetHex(t, "listpack-lzf"); p[1] != 0xc3 {
		t.Errorf("listpack-lzf: blob encoding 0x%02x, want LZF", p[1])
	}
	if p := readZSetHex(t, "listpack-small"); p[1] == 0xc3 {
		t.Errorf("listpack-small: blob compressed")
	}
	r := reader{b: readZSetHex(t, "listpack-scores")[1:]}
	blob, err := r.str(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	kinds := listpackKinds(blob)
	for _, enc := range []string{"uint7", "str6", "int13", "int24", "int32", "int64"} {
		if !kinds[enc] {
			t.Errorf("listpack-scores has no %s entry", enc)
		}
	}
	for _, file := range []string{"skiplist-long-member", "skiplist-200"} {
		members, kinds := zset2Order(t, readZSetHex(t, file))
		if !slices.IsSortedFunc(members, func(a, b ZMember) int { return compareZMembers(b, a) }) {
			t.Errorf("%s: members not from the highest score down", file)
		}
		if want := map[string]int{"skiplist-long-member": 3, "skiplist-200": 2}[file]; len(kinds) != want {
			t.Errorf("%s holds %v strings, want %d kinds", file, kinds, want)
		}
	}
}

// A payload cut short, or with a member too many or too few, fails.
func TestDecodeCorruptRedisZSets(t *testing.T) {
	for _, c := range redisZSets {
		payload := readZSetHex(t, c.file)
		body := payload[:len(payload)-10]
		step := max(1, len(body)/500)
		for n := 0; n < len(body); n += step {
			if _, err := Decode(withFooter(body[:n], Version), 1<<30); !errors.Is(err, ErrFormat) {
				t.Fatalf("%s cut to %d bytes: %v, want ErrFormat", c.file, n, err)
			}
		}
		if c.typ != typeZSet2 {
			continue
		}
		for _, d := range []int{1, -1} {
			b := bytes.Clone(body)
			b[1] += byte(d)
			if _, err := Decode(withFooter(b, Version), 1<<30); !errors.Is(err, ErrFormat) {
				t.Errorf("%s with a count off by %d: %v, want ErrFormat", c.file, d, err)
			}
		}
	}
}

type builtZSet struct {
	name    string
	payload []byte
	want    []zm // in Redis's order
}

// builtZSets are sorted sets built by hand in each form. redis-server
// 7.0.15's RESTORE (with sanitize-dump-payload yes and no) read the same
// members and scores as Decode (ZRANGE ... WITHSCORES), except that a -0
// read from a plain sorted set became 0: Redis re-encodes these small
// sorted sets as listpacks, where it writes -0 as "0" (it keeps the "-0"
// of a listpack it reads).
func builtZSets() []builtZSet {
	ts := textScore
	return []builtZSet{
		{"plain, scores as text", withFooter(textZSetBody([2]string{"a", ts("1.5")}, [2]string{"b", "\xfe"},
			[2]string{"c", "\xff"}, [2]string{"d", ts("-0")}, [2]string{"e", ts("3")},
			[2]string{"f", ts("0.10000000000000001")}, [2]string{"12", ts("-12")}), Version),
			[]zm{{"c", -inf}, {"12", -12}, {"d", negZero}, {"f", 0.1}, {"a", 1.5}, {"e", 3}, {"b", inf}}},
		{"plain, scores as other text", withFooter(textZSetBody([2]string{"a", ts("1e3")}, [2]string{"b", ts("-Infinity")},
			[2]string{"c", ts("+inf")}, [2]string{"d", ts("4.9406564584124654e-324")}, [2]string{"e", ts("0x1p-2")}), Version),
			[]zm{{"b", -inf}, {"d", 5e-324}, {"e", 0.25}, {"a", 1000}, {"c", inf}}},
		{"plain of one, scores as text", withFooter(textZSetBody([2]string{"solo", ts("7")}), Version), []zm{{"solo", 7}}},
		{"sorted set 2 in no order", withFooter(zset2Body(zm{"b", 0}, zm{"z", -inf}, zm{"a", negZero}, zm{"7", 1e-300},
			zm{"y", inf}, zm{"", 0.5}), Version),
			[]zm{{"z", -inf}, {"a", negZero}, {"b", 0}, {"7", 1e-300}, {"", 0.5}, {"y", inf}}},
		{"ziplist", blobPayload(typeZSetZiplist, ziplist([]string{"e", "-inf", "m2p31", "-2147483648", "i8", "-128",
			"a", "1", "b", "1.5", "7", "2", "imm", "12", "d", "300", "i16", "32767", "i24", "8388607",
			"i64", "4503599627370495", noise(300, 1), "5e15", "c", "inf"})),
			[]zm{{"e", -inf}, {"m2p31", -1 << 31}, {"i8", -128}, {"a", 1}, {"b", 1.5}, {"7", 2}, {"imm", 12}, {"d", 300},
				{"i16", 32767}, {"i24", 8388607}, {"i64", 1<<52 - 1}, {noise(300, 1), 5e15}, {"c", inf}}},
		{"ziplist of one", blobPayload(typeZSetZiplist, ziplist([]string{"a", "0"})), []zm{{"a", 0}}},
		{"ziplist of unknown count", blobPayload(typeZSetZiplist, ziplist([]string{"a", "1", "b", "1"}, func(h []byte) {
			binary.LittleEndian.PutUint16(h[8:], zlNoCount)
		})), []zm{{"a", 1}, {"b", 1}}},
		{"listpack", blobPayload(typeZSetListpack, listpack(14, "\x81n", "\x84-inf", "\x81b", "\xf1\x00\x80",
			"\x81a", "\xd0\x00", "\x81c", "\x84-2.5", "\x81d", "\x05", "\x81e", "\xf2\xff\xff\x7f",
			"\x81p", "\x83inf")),
			[]zm{{"n", -inf}, {"b", -32768}, {"a", -4096}, {"c", -2.5}, {"d", 5}, {"e", 8388607}, {"p", inf}}},
		{"listpack of equal scores", blobPayload(typeZSetListpack, listpack(6, "\x81a", "\x01", "\x81b", "\x01", "\x82ba", "\x831.0")),
			[]zm{{"a", 1}, {"b", 1}, {"ba", 1}}},
		{"listpack of -0 and 0", blobPayload(typeZSetListpack, listpack(4, "\x81a", "\x00", "\x81b", "\x82-0")),
			[]zm{{"a", 0}, {"b", negZero}}},
		{"listpack of unknown count", blobPayload(typeZSetListpack, listpack(lpNoCount, "\x80", "\x0c")), []zm{{"", 12}}},
	}
}

func TestDecodeBuiltZSets(t *testing.T) {
	for _, c := range builtZSets() {
		v, err := Decode(c.payload, 1<<20)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if want := zmembersOf(c.want); v.Type != TypeZSet || !sameZSet(v.ZSet, want) {
			t.Errorf("%s: %v %v, want %v", c.name, v.Type, v.ZSet, want)
		}
	}
}

// redis-server 7.0.15's RESTORE (with sanitize-dump-payload yes and no)
// read EncodeZSet's payloads of these sorted sets and of those of
// redisZSets, the members in the order given, in Redis's order or in its
// reverse: ZRANGE ... WITHSCORES returned their members and scores in
// Decode's order, and Redis's DUMP of what it restored decoded to them.
func TestEncodeZSet(t *testing.T) {
	for _, c := range []struct {
		name    string
		members []zm
		want    string // the payload without its footer, if given
	}{
		{"one member", []zm{{"a", 1}}, "\x05\x01\x01a\x00\x00\x00\x00\x00\x00\xf0\x3f"},
		{"integer members and special scores", []zm{{"1", negZero}, {"300", inf}, {"-1", -inf}, {"x", 0.1}},
			"\x05\x04\xc0\x01\x00\x00\x00\x00\x00\x00\x00\x80" + "\xc1\x2c\x01\x00\x00\x00\x00\x00\x00\xf0\x7f" +
				"\xc0\xff\x00\x00\x00\x00\x00\x00\xf0\xff" + "\x01x\x9a\x99\x99\x99\x99\x99\xb9\x3f"},
		{"empty member", []zm{{"", 0}, {"x", 0}}, "\x05\x02\x00" + strings.Repeat("\x00", 8) + "\x01x" + strings.Repeat("\x00", 8)},
		{"long", []zm{{noise(70, 1), 3}, {noise(20000, 2), 2}, {noise(70000, 3), 1}, {strings.Repeat("q", 100000), 1}}, ""},
		{"many", func() []zm {
			var members []zm
			for i := range 1000 {
				members = append(members, zm{fmt.Sprint(i * i), float64(i%10) / 4})
			}
			return members
		}(), ""},
	} {
		members := zmembersOf(c.members)
		payload := EncodeZSet(members)
		if c.want != "" && string(payload[:len(payload)-10]) != c.want {
			t.Errorf("%s: EncodeZSet = %q, want %q", c.name, payload[:len(payload)-10], c.want)
		}
		if !bytes.Equal(payload, withFooter(payload[:len(payload)-10], Version)) {
			t.Errorf("%s: wrong footer", c.name)
		}
		if got, _ := zset2Order(t, payload); !sameZSet(got, members) {
			t.Errorf("%s: members not written in the order given", c.name)
		}
		v, err := Decode(payload, 512<<20)
		if err != nil || v.Type != TypeZSet || !sameZSet(v.ZSet, sortedZ(c.members)) {
			t.Errorf("%s: round trip %v", c.name, err)
		}
	}
}

func TestZSetType(t *testing.T) {
	if TypeZSet.String() != "zset" || TypeZSet == TypeList || TypeZSet == TypeSet || TypeZSet == TypeHash || TypeZSet == TypeString {
		t.Errorf("TypeZSet = %d %q", TypeZSet, TypeZSet)
	}
}

func TestDecodeZSetErrors(t *testing.T) { checkDecodeCases(t, zsetErrors(), TypeZSet) }

// zsetErrors are bodies of payloads and the error Decode returns for them
// with maxLen 255; a few valid ones (nil) show that the others fail for
// the reason their names say. redis-server 7.0.15's RESTORE (with
// sanitize-dump-payload yes) rejects them too, except: bytes after the
// value (which it ignores); a score as text that only starts with a
// number or overflows (it reads " 1", "1x" and "0x10" as numbers,
// "1e400" as inf); in a listpack or ziplist, scores not in order (it
// keeps them out of order), a NaN score (it keeps it) or one that is no
// number (it reads "abc" as 0); and a string longer than 255 bytes.
// With sanitize-dump-payload no, a listpack of an odd count crashed it.
func zsetErrors() []decodeCase {
	lp := func(entries ...string) []byte { return listpack(len(entries), entries...) }
	goodLP := lp("\x81a", "\x01", "\x81b", "\x831.5")
	zipl := ziplist([]string{"a", "1", "b", "1.5"})
	ts := textScore
	text := func(score string) []byte { return textZSetBody([2]string{"a", score}) }
	edit := func(b []byte, f func([]byte) []byte) []byte { return f(bytes.Clone(b)) }
	negNaN := math.Float64frombits(0xfff8000000000001)
	signaling := math.Float64frombits(0x7ff0000000000001)
	return []decodeCase{
		{"zset", textZSetBody([2]string{"a", ts("1")}, [2]string{"b", "\xfe"}), nil},
		{"zset 2", zset2Body(zm{"a", 1}, zm{"b", -inf}), nil},
		{"empty zset", []byte("\x03\x00"), ErrFormat},
		{"empty zset 2", []byte("\x05\x00"), ErrFormat},
		{"zset without a count", []byte("\x03"), ErrFormat},
		{"member twice", textZSetBody([2]string{"a", ts("1")}, [2]string{"a", ts("1")}), ErrFormat},
		{"zset 2 member twice", zset2Body(zm{"a", 1}, zm{"b", 2}, zm{"a", 3}), ErrFormat},
		{"integer member twice", []byte("\x05\x02\x0212" + strings.Repeat("\x00", 8) + "\xc0\x0c" + strings.Repeat("\x00", 8)), ErrFormat},
		{"NaN score", text("\xfd"), ErrFormat},
		{"NaN score as text", text(ts("nan")), ErrFormat},
		{"zset 2 NaN score", zset2Body(zm{"a", 1}, zm{"b", math.NaN()}), ErrFormat},
		{"zset 2 negative NaN score", zset2Body(zm{"b", negNaN}), ErrFormat},
		{"zset 2 signaling NaN score", zset2Body(zm{"b", signaling}), ErrFormat},
		{"empty score text", text(ts("")), ErrFormat},
		{"score text not a number", text(ts("abc")), ErrFormat},
		{"score text after a space", text(ts(" 1")), ErrFormat},
		{"score text with trailing bytes", text(ts("1x")), ErrFormat},
		{"score text with an underscore", text(ts("0x1_0p0")), ErrFormat},
		{"score text overflowing", text(ts("1e400")), ErrFormat},
		{"score text past the end", text("\x051.5"), ErrFormat},
		{"score missing", []byte("\x03\x01\x01a"), ErrFormat},
		{"zset 2 score cut short", zset2Body(zm{"a", 1}, zm{"b", 2})[:21], ErrFormat},
		{"fewer members than counted", edit(zset2Body(zm{"a", 1}, zm{"b", 2}), func(b []byte) []byte { b[1]++; return b }), ErrFormat},
		{"count beyond the bytes", []byte("\x05\x80\xff\xff\xff\xff\x01a"), ErrFormat},
		{"encoded count", []byte("\x05\xc0\x01\x01a" + strings.Repeat("\x00", 8)), ErrFormat},
		{"truncated count", []byte("\x05\x80\x00"), ErrFormat},
		{"member past the end", []byte("\x03\x01\x05ab"), ErrFormat},
		{"zset with trailing bytes", append(text(ts("1")), '!'), ErrFormat},
		{"zset 2 with trailing bytes", append(zset2Body(zm{"a", 1}), 0), ErrFormat},
		{"member longer than maxLen", zset2Body(zm{strings.Repeat("m", 256), 1}), ErrFormat},

		{"listpack", blobPayloadBody(typeZSetListpack, goodLP), nil},
		{"listpack with trailing bytes", append(blobPayloadBody(typeZSetListpack, goodLP), 0), ErrFormat},
		{"listpack blob not a string", []byte("\x11\x82"), ErrFormat},
		{"empty listpack", blobPayloadBody(typeZSetListpack, lp()), ErrFormat},
		{"listpack of an odd count", blobPayloadBody(typeZSetListpack, lp("\x81a", "\x01", "\x81b")), ErrFormat},
		{"listpack member twice", blobPayloadBody(typeZSetListpack, lp("\x81a", "\x01", "\x81a", "\x02")), ErrFormat},
		{"listpack integer member twice", blobPayloadBody(typeZSetListpack, lp("\x0c", "\x01", "\x8212", "\x02")), ErrFormat},
		{"listpack scores out of order", blobPayloadBody(typeZSetListpack, lp("\x81b", "\x02", "\x81a", "\x01")), ErrFormat},
		{"listpack members of a score out of order", blobPayloadBody(typeZSetListpack, lp("\x81b", "\x02", "\x81a", "\x822.")), ErrFormat},
		{"listpack NaN score", blobPayloadBody(typeZSetListpack, lp("\x81a", "\x83nan")), ErrFormat},
		{"listpack score not a number", blobPayloadBody(typeZSetListpack, lp("\x81a", "\x83abc")), ErrFormat},
		{"listpack empty score", blobPayloadBody(typeZSetListpack, lp("\x81a", "\x80")), ErrFormat},
		{"listpack count wrong", blobPayloadBody(typeZSetListpack, listpack(3, "\x81a", "\x01")), ErrFormat},
		{"listpack wrong back-length", blobPayloadBody(typeZSetListpack, edit(goodLP, func(b []byte) []byte { b[8] = 3; return b })), ErrFormat},
		{"listpack without terminator", blobPayloadBody(typeZSetListpack, edit(goodLP, func(b []byte) []byte { b[len(b)-1] = 0; return b })), ErrFormat},
		{"listpack longer than maxLen", blobPayloadBody(typeZSetListpack, lp("\x81a", "\x01", "\xe1\x00"+strings.Repeat("v", 256), "\x02")), ErrFormat},

		{"ziplist", blobPayloadBody(typeZSetZiplist, zipl), nil},
		{"ziplist with trailing bytes", append(blobPayloadBody(typeZSetZiplist, zipl), 0), ErrFormat},
		{"ziplist blob not a string", []byte("\x0c\x82"), ErrFormat},
		{"empty ziplist", blobPayloadBody(typeZSetZiplist, ziplist(nil)), ErrFormat},
		{"ziplist of an odd count", blobPayloadBody(typeZSetZiplist, ziplist([]string{"a", "1", "b"})), ErrFormat},
		{"ziplist member twice", blobPayloadBody(typeZSetZiplist, ziplist([]string{"1", "1", "1", "2"})), ErrFormat},
		{"ziplist scores out of order", blobPayloadBody(typeZSetZiplist, ziplist([]string{"b", "2", "a", "1"})), ErrFormat},
		{"ziplist NaN score", blobPayloadBody(typeZSetZiplist, ziplist([]string{"a", "NaN"})), ErrFormat},
		{"ziplist score not a number", blobPayloadBody(typeZSetZiplist, ziplist([]string{"a", "1.5.1"})), ErrFormat},
		{"ziplist count wrong", blobPayloadBody(typeZSetZiplist, edit(zipl, func(b []byte) []byte { b[8]++; return b })), ErrFormat},
		{"ziplist tail wrong", blobPayloadBody(typeZSetZiplist, edit(zipl, func(b []byte) []byte { b[4]++; return b })), ErrFormat},
		{"ziplist cut short", blobPayloadBody(typeZSetZiplist, zipl[:len(zipl)-1]), ErrFormat},
		{"ziplist longer than maxLen", blobPayloadBody(typeZSetZiplist, ziplist([]string{strings.Repeat("z", 250), "1"})), ErrFormat},
	}
}

// A payload of a few bytes that claims huge counts or lengths fails
// without allocating for them.
func TestDecodeZSetHugeClaims(t *testing.T) {
	lzfGiB := "\xc3\x02\x80\x40\x00\x00\x00\x01aa" // 2 bytes said to expand to 1 GiB
	checkBoundedDecode(t, []namedBody{
		{"2^40 members", []byte("\x05\x81\x00\x00\x01\x00\x00\x00\x00\x00\x01a\x00\x00\x00\x00\x00\x00\x00\x00")},
		{"2^32-1 members", []byte("\x05\x80\xff\xff\xff\xff\x01a\x00\x00\x00\x00\x00\x00\x00\x00")},
		{"2^32-1 members with scores as text", []byte("\x03\x80\xff\xff\xff\xff\x01a\x011")},
		{"LZF member of 1 GiB", []byte("\x05\x01" + lzfGiB + "\x00\x00\x00\x00\x00\x00\x00\x00")},
		{"LZF listpack of 1 GiB", []byte("\x11" + lzfGiB)},
		{"LZF ziplist of 1 GiB", []byte("\x0c" + lzfGiB)},
		{"listpack count 65534", blobPayloadBody(typeZSetListpack, listpack(65534, "\x81a", "\x01"))},
		{"ziplist count 65534", blobPayloadBody(typeZSetZiplist, ziplist([]string{"a", "1"}, func(h []byte) {
			binary.LittleEndian.PutUint16(h[8:], 65534)
		}))},
	})
}

// Decoded sorted sets do not share memory with the payload, and appending
// to one member does not overwrite the next.
func TestDecodeZSetOwnsMemory(t *testing.T) {
	payloads := map[string][]byte{
		"listpack":                 readZSetHex(t, "listpack-scores"),
		"LZF listpack":             readZSetHex(t, "listpack-lzf"),
		"sorted set 2":             readZSetHex(t, "skiplist-long-member"),
		"sorted set 2 of 200":      readZSetHex(t, "skiplist-200"),
		"scores as text":           builtZSets()[0].payload,
		"ziplist":                  builtZSets()[4].payload,
		"listpack built":           builtZSets()[7].payload,
		"sorted set 2 in no order": builtZSets()[3].payload,
	}
	checkOwnsMemory(t, payloads, zsetMembersOf)
}
