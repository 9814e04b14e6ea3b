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

// redisLists are lists made in redis-server 7.0.15 by RPUSHing their
// elements one by one, in order, into an empty key, then DUMPed:
// testdata/lists/<file>.hex holds the payload in hex. Redis 7.0 writes
// every list as a quicklist 2; nodes is the number of its nodes. Redis's
// defaults held (list-max-listpack-size -2, nodes of up to 8 KB;
// list-compress-depth 0; rdbcompression yes, which compresses a node's
// string over 20 bytes when LZF saves space) except for two lists. For
// "compressed", list-compress-depth was 1, so that Redis keeps every node
// but the first and last LZF-compressed, and rdbcompression was no, so
// that only those nodes are compressed in the payload. For "plain-nodes",
// DEBUG QUICKLIST-PACKED-THRESHOLD was 10000, so that each element of
// 10000 bytes or more has a plain node of its own (by default, only one
// of 1 GiB or more does).
var redisLists = []struct {
	file  string
	nodes int
	elems []string
}{
	{file: "one", nodes: 1, elems: []string{"hello"}},
	{file: "strings", nodes: 1, elems: []string{
		"apple", "banana", "", "x y", "007", "+1", "-0", "1.5", " 1", "apple", noise(30, 1), strings.Repeat("ab", 30),
	}},
	{file: "ints", nodes: 1, elems: []string{
		"0", "1", "12", "13", "127", "128", "-1", "-128", "-129", "4095", "-4096", "4096", "-4097",
		"32767", "-32768", "32768", "-32769", "8388607", "-8388608", "8388608", "-8388609",
		"2147483647", "-2147483648", "2147483648", "-2147483649", "12345678901234",
		"9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809",
		"007", "-0", "+5", " 5", "1e3", "0x10", "12",
	}},
	{file: "long", nodes: 4, elems: []string{
		"short", noise(63, 2), noise(64, 3), noise(100, 4), noise(4095, 5), noise(4096, 6),
		noise(5000, 7), strings.Repeat("r", 6000), "tail",
	}},
	{file: "large-2000", nodes: 4, elems: func() []string {
		var elems []string
		for i := range 2000 {
			switch i % 4 {
			case 0:
				elems = append(elems, strconv.Itoa(i*7919-5000000))
			case 1:
				elems = append(elems, fmt.Sprintf("element:%04d", i))
			case 2:
				elems = append(elems, noise(40, uint32(i)))
			default:
				elems = append(elems, strconv.Itoa(i))
			}
		}
		return elems
	}()},
	{file: "compressed", nodes: 11, elems: func() []string {
		var elems []string
		for i := range 1200 {
			elems = append(elems, fmt.Sprintf("compressible element %05d %s", i, strings.Repeat("z", 40)))
		}
		return elems
	}()},
	{file: "plain-nodes", nodes: 7, elems: []string{
		"head", noise(9999, 8), noise(10000, 9), "mid", strings.Repeat("p", 100000), noise(30000, 10), "7", "tail",
	}},
}

// readListHex reads a payload from testdata/lists.
func readListHex(t testing.TB, file string) []byte {
	t.Helper()
	return readHexIn(t, "lists", file)
}

func TestDecodeRedisLists(t *testing.T) {
	for _, c := range redisLists {
		t.Run(c.file, func(t *testing.T) {
			payload := readListHex(t, c.file)
			if payload[0] != typeListQuicklist2 {
				t.Fatalf("RDB type %d, want %d", payload[0], typeListQuicklist2)
			}
			v, err := Decode(payload, 512<<20)
			if err != nil {
				t.Fatal(err)
			}
			want := membersOf(c.elems)
			if v.Type != TypeList || !slices.EqualFunc(v.List, want, bytes.Equal) || v.String != nil || v.Hash != nil || v.Set != nil {
				t.Fatalf("Decode = %v %d elements, want the %d RPUSHed in order", v.Type, len(v.List), len(want))
			}
			if _, err := DecodeString(payload, 512<<20); !errors.Is(err, ErrUnsupportedType) {
				t.Errorf("DecodeString: %v, want ErrUnsupportedType", err)
			}
			// maxLen bounds each node's string, at least as long as the
			// elements it holds.
			longest := 0
			for _, e := range c.elems {
				longest = max(longest, len(e))
			}
			if _, err := Decode(payload, int64(longest-1)); !errors.Is(err, ErrFormat) {
				t.Errorf("Decode with maxLen %d: %v, want ErrFormat", longest-1, err)
			}
			// Cairn's encoding of the same list decodes to it.
			back, err := Decode(EncodeList(v.List), 512<<20)
			if err != nil || back.Type != TypeList || !slices.EqualFunc(back.List, v.List, bytes.Equal) {
				t.Errorf("round trip: %v", err)
			}
		})
	}
}

// qlNode is a node of a quicklist 2 as a payload holds it.
type qlNode struct {
	at   int // the offset of its kind in the payload
	kind uint64
	lzf  bool   // its string is LZF-compressed
	blob []byte // its string, decompressed
}

// quicklistNodes returns the nodes of a quicklist 2 payload.
func quicklistNodes(t testing.TB, payload []byte) []qlNode {
	t.Helper()
	r := reader{b: payload[1 : len(payload)-10]}
	n, err := r.plainLength()
	if err != nil {
		t.Fatal(err)
	}
	var nodes []qlNode
	for range n {
		at := len(payload) - 10 - len(r.b)
		kind, err := r.plainLength()
		if err != nil {
			t.Fatal(err)
		}
		lzf := r.b[0] == 0xc3
		blob, err := r.str(1 << 30)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, qlNode{at, kind, lzf, blob})
	}
	return nodes
}

// listpackKinds returns the encodings of a listpack's entries.
func listpackKinds(lp []byte) map[string]bool {
	kinds := map[string]bool{}
	for p := lpHeader; lp[p] != lpEnd; {
		first := lp[p]
		var name string
		var n int
		switch {
		case first&0x80 == lpUint7:
			name, n = "uint7", 1
		case first&0xc0 == lpStr6:
			name, n = "str6", 1+int(first&0x3f)
		case first&0xe0 == lpInt13:
			name, n = "int13", 2
		case first&0xf0 == lpStr12:
			name, n = "str12", 2+(int(first&0x0f)<<8|int(lp[p+1]))
		case first == lpStr32:
			name, n = "str32", 5+int(binary.LittleEndian.Uint32(lp[p+1:]))
		default:
			name = map[byte]string{lpInt16: "int16", lpInt24: "int24", lpInt32: "int32", lpInt64: "int64"}[first]
			n = map[byte]int{lpInt16: 3, lpInt24: 4, lpInt32: 5, lpInt64: 9}[first]
		}
		kinds[name] = true
		p += n + len(backlen(uint64(n)))
	}
	return kinds
}

// The payloads exercise what their names say: several nodes, plain and
// packed, compressed and not, and every listpack encoding.
func TestRedisListsCoverage(t *testing.T) {
	nodesOf := map[string][]qlNode{}
	for _, c := range redisLists {
		nodes := quicklistNodes(t, readListHex(t, c.file))
		if len(nodes) != c.nodes {
			t.Errorf("%s: %d nodes, want %d", c.file, len(nodes), c.nodes)
		}
		nodesOf[c.file] = nodes
	}
	for i, n := range nodesOf["compressed"] {
		if middle := i > 0 && i < len(nodesOf["compressed"])-1; n.lzf != middle || n.kind != qlPacked {
			t.Errorf("compressed: node %d of kind %d, LZF %v", i, n.kind, n.lzf)
		}
	}
	// Plain nodes, one compressed, between packed ones.
	var kinds []string
	for _, n := range nodesOf["plain-nodes"] {
		kinds = append(kinds, fmt.Sprintf("%d/%v", n.kind, n.lzf))
	}
	if got := strings.Join(kinds, " "); got != "2/false 2/false 1/false 2/false 1/true 1/false 2/false" {
		t.Errorf("plain-nodes: nodes of kind/LZF %s", got)
	}
	encodings := map[string]bool{}
	for _, file := range []string{"ints", "long"} {
		for _, n := range nodesOf[file] {
			for k := range listpackKinds(n.blob) {
				encodings[k] = true
			}
		}
	}
	for _, enc := range []string{"uint7", "str6", "int13", "str12", "str32", "int16", "int24", "int32", "int64"} {
		if !encodings[enc] {
			t.Errorf("ints and long hold no %s entry", enc)
		}
	}
}

// A payload cut short, or with a node too many or too few, or a node of
// another kind, fails.
func TestDecodeCorruptRedisLists(t *testing.T) {
	for _, c := range redisLists {
		payload := readListHex(t, c.file)
		body := payload[:len(payload)-10]
		// Every prefix of the small payloads, 500 or so of the large.
		step := max(1, len(body)/500)
		for n := 0; n < len(body); n += step {
			if _, err := Decode(withFooter(body[:n], Version), 1<<30); !errors.Is(err, ErrFormat) {
				t.Fatalf("%s cut to %d bytes: %v, want ErrFormat", c.file, n, err)
			}
		}
		edit := func(what string, f func(b []byte)) {
			b := bytes.Clone(body)
			f(b)
			if _, err := Decode(withFooter(b, Version), 1<<30); !errors.Is(err, ErrFormat) {
				t.Errorf("%s with %s: %v, want ErrFormat", c.file, what, err)
			}
		}
		edit("a node more", func(b []byte) { b[1]++ })
		edit("a node less", func(b []byte) { b[1]-- })
		for i, n := range quicklistNodes(t, payload) {
			edit(fmt.Sprintf("node %d of kind 0", i), func(b []byte) { b[n.at] = 0 })
			edit(fmt.Sprintf("node %d of kind 3", i), func(b []byte) { b[n.at] = 3 })
		}
	}
}

// qlBody is the body of a payload of a quicklist (of type
// typeListQuicklist or typeListQuicklist2) of nodes already encoded: see
// ziplistNode, packedNode and plainNode.
func qlBody(typ byte, nodes ...[]byte) []byte {
	b := appendLen([]byte{typ}, uint64(len(nodes)))
	for _, n := range nodes {
		b = append(b, n...)
	}
	return b
}

// ziplistNode is a node of a quicklist of ziplists.
func ziplistNode(zl []byte) []byte { return appendString(nil, zl) }

// kindNode is a node of a quicklist 2 of the given kind.
func kindNode(kind uint64, blob []byte) []byte { return appendString(appendLen(nil, kind), blob) }

// packedNode is a node of a quicklist 2 holding a listpack.
func packedNode(lp []byte) []byte { return kindNode(qlPacked, lp) }

// plainNode is a node of a quicklist 2 holding one element.
func plainNode(e string) []byte { return kindNode(qlPlain, []byte(e)) }

type builtList struct {
	name    string
	payload []byte
	want    []string
}

// builtLists are lists built by hand in each form. redis-server 7.0.15's
// RESTORE (with sanitize-dump-payload yes and no) read the same lists as
// Decode.
func builtLists() []builtList {
	vals := ziplistValues
	return []builtList{
		{"plain list", withFooter([]byte("\x01\x06\xc0\xfb\xc1\x00\x80\xc2\x00\x00\x00\x80\x00\x03007"+
			"\xc3\t2\x01aa\xe0%\x00\x01aa"), Version), // the last 50 'a's, LZF-compressed
			[]string{"-5", "-32768", "-2147483648", "", "007", strings.Repeat("a", 50)}},
		{"plain list, an element twice", withFooter([]byte("\x01\x03\x01a\x01a\xc0\x01"), Version), []string{"a", "a", "1"}},
		{"ziplist", blobPayload(typeListZiplist, ziplist(vals)), vals},
		{"ziplist of one", blobPayload(typeListZiplist, ziplist([]string{"x"})), []string{"x"}},
		{"ziplist of unknown count", blobPayload(typeListZiplist, ziplist([]string{"a", "b", "a"}, func(h []byte) {
			binary.LittleEndian.PutUint16(h[8:], zlNoCount)
		})), []string{"a", "b", "a"}},
		{"quicklist of ziplists", withFooter(qlBody(typeListQuicklist,
			ziplistNode(ziplist(vals[:10])), ziplistNode(ziplist(vals[10:11])), ziplistNode(ziplist(vals[11:]))), Version), vals},
		{"quicklist of one ziplist", withFooter(qlBody(typeListQuicklist, ziplistNode(ziplist([]string{"1", "one"}))), Version),
			[]string{"1", "one"}},
		{"quicklist 2 of packed and plain nodes", withFooter(qlBody(typeListQuicklist2,
			packedNode(listpack(3, "\x81a", "\x05", "\xdf\xff")), plainNode(noise(300, 1)), plainNode("12"),
			packedNode(listpack(lpNoCount, "\x81a")), plainNode("b")), Version),
			[]string{"a", "5", "-1", noise(300, 1), "12", "a", "b"}},
		{"quicklist 2 of one plain node", withFooter(qlBody(typeListQuicklist2, plainNode("solo")), Version), []string{"solo"}},
	}
}

func TestDecodeBuiltLists(t *testing.T) {
	for _, c := range builtLists() {
		v, err := Decode(c.payload, 1<<20)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if want := membersOf(c.want); v.Type != TypeList || !slices.EqualFunc(v.List, want, bytes.Equal) {
			t.Errorf("%s: %v %q, want %q", c.name, v.Type, v.List, want)
		}
	}
}

// redis-server 7.0.15's RESTORE (with sanitize-dump-payload yes and no)
// read EncodeList's payloads of these lists and of those of redisLists:
// LRANGE returned their elements, and Redis's DUMP of what it restored
// decoded to them.
func TestEncodeList(t *testing.T) {
	for _, c := range []struct {
		name  string
		elems []string
		want  string // the payload without its footer, if given
	}{
		{"one element", []string{"a"}, "\x01\x01\x01a"},
		{"integers", []string{"1", "-1", "300", "70000", "12345678901", "007"},
			"\x01\x06\xc0\x01\xc0\xff\xc1\x2c\x01\xc2\x70\x11\x01\x00\x0b12345678901\x03007"},
		{"empty and repeated elements", []string{"", "x", "", "x"}, "\x01\x04\x00\x01x\x00\x01x"},
		{"long", []string{noise(70, 1), noise(20000, 2), noise(70000, 3), strings.Repeat("q", 100000)}, ""},
		{"many", func() []string {
			var elems []string
			for i := range 10000 {
				elems = append(elems, fmt.Sprint(i*i-5000))
			}
			return elems
		}(), ""},
	} {
		elems := membersOf(c.elems)
		payload := EncodeList(elems)
		if c.want != "" && string(payload[:len(payload)-10]) != c.want {
			t.Errorf("%s: EncodeList = %q, want %q", c.name, payload[:len(payload)-10], c.want)
		}
		if !bytes.Equal(payload, withFooter(payload[:len(payload)-10], Version)) {
			t.Errorf("%s: wrong footer", c.name)
		}
		v, err := Decode(payload, 512<<20)
		if err != nil || v.Type != TypeList || !slices.EqualFunc(v.List, elems, bytes.Equal) {
			t.Errorf("%s: round trip %v", c.name, err)
		}
	}
}

func TestListType(t *testing.T) {
	if TypeList.String() != "list" || TypeList == TypeSet || TypeList == TypeHash || TypeList == TypeString {
		t.Errorf("TypeList = %d %q", TypeList, TypeList)
	}
}

func TestDecodeListErrors(t *testing.T) { checkDecodeCases(t, listErrors(), TypeList) }

// listErrors are bodies of payloads and the error Decode returns for them
// with maxLen 255; a few valid ones (nil) show that the others fail for
// the reason their names say. redis-server 7.0.15's RESTORE (with
// sanitize-dump-payload yes) rejects them too, except those with bytes
// after the value (which it ignores, as it does a node too many), a
// string that runs into the footer (which it reads), an empty node among
// others (which it skips) and a string longer than 255 bytes.
func listErrors() []decodeCase {
	lp := func(entries ...string) []byte { return listpack(len(entries), entries...) }
	goodLP := lp("\x81a", "\x81b")
	zipl := ziplist([]string{"a", "b"})
	ql := qlBody(typeListQuicklist, ziplistNode(zipl), ziplistNode(ziplist([]string{"c"})))
	ql2 := qlBody(typeListQuicklist2, packedNode(goodLP), plainNode("c"))
	edit := func(b []byte, f func([]byte) []byte) []byte { return f(bytes.Clone(b)) }
	return []decodeCase{
		{"list", []byte("\x01\x02\x01a\xc0\x01"), nil},
		{"empty list", []byte("\x01\x00"), ErrFormat},
		{"list without a count", []byte("\x01"), ErrFormat},
		{"fewer elements than counted", []byte("\x01\x03\x01a\x01b"), ErrFormat},
		{"count beyond the bytes", []byte("\x01\x80\xff\xff\xff\xff\x01a"), ErrFormat},
		{"encoded count", []byte("\x01\xc0\x01\x01a"), ErrFormat},
		{"truncated count", []byte("\x01\x80\x00"), ErrFormat},
		{"element past the end", []byte("\x01\x01\x05ab"), ErrFormat},
		{"list with trailing bytes", []byte("\x01\x01\x01a!"), ErrFormat},
		{"element longer than maxLen", []byte("\x01\x01\x41\x00" + strings.Repeat("e", 256)), ErrFormat},

		{"ziplist", blobPayloadBody(typeListZiplist, zipl), nil},
		{"ziplist with trailing bytes", append(blobPayloadBody(typeListZiplist, zipl), 0), ErrFormat},
		{"ziplist blob not a string", []byte("\x0a\x82"), ErrFormat},
		{"empty ziplist", blobPayloadBody(typeListZiplist, ziplist(nil)), ErrFormat},
		{"ziplist count wrong", blobPayloadBody(typeListZiplist, edit(zipl, func(b []byte) []byte { b[8]++; return b })), ErrFormat},
		{"ziplist cut short", blobPayloadBody(typeListZiplist, zipl[:len(zipl)-1]), ErrFormat},
		{"ziplist longer than maxLen", blobPayloadBody(typeListZiplist, ziplist([]string{strings.Repeat("z", 250)})), ErrFormat},

		{"quicklist", ql, nil},
		{"quicklist of no nodes", []byte("\x0e\x00"), ErrFormat},
		{"quicklist without a count", []byte("\x0e"), ErrFormat},
		{"quicklist with an empty node", qlBody(typeListQuicklist, ziplistNode(zipl), ziplistNode(ziplist(nil))), ErrFormat},
		{"quicklist of an empty node", qlBody(typeListQuicklist, ziplistNode(ziplist(nil))), ErrFormat},
		{"quicklist of fewer nodes than counted", edit(ql, func(b []byte) []byte { b[1]++; return b }), ErrFormat},
		{"quicklist of more nodes than counted", edit(ql, func(b []byte) []byte { b[1]--; return b }), ErrFormat},
		{"quicklist node count beyond the bytes", []byte("\x0e\x80\xff\xff\xff\xff\x01a"), ErrFormat},
		{"quicklist encoded node count", append([]byte("\x0e\xc0\x01"), ziplistNode(zipl)...), ErrFormat},
		{"quicklist node cut short", ql[:len(ql)-1], ErrFormat},
		{"quicklist node not a ziplist", qlBody(typeListQuicklist, ziplistNode(goodLP)), ErrFormat},
		{"quicklist node a bad ziplist", qlBody(typeListQuicklist, ziplistNode(edit(zipl, func(b []byte) []byte { b[4]++; return b }))), ErrFormat},
		{"quicklist with trailing bytes", append(bytes.Clone(ql), 0), ErrFormat},
		{"quicklist node longer than maxLen", qlBody(typeListQuicklist, ziplistNode(ziplist([]string{"a", strings.Repeat("z", 250)}))), ErrFormat},

		{"quicklist 2", ql2, nil},
		{"quicklist 2 of no nodes", []byte("\x12\x00"), ErrFormat},
		{"quicklist 2 without a count", []byte("\x12"), ErrFormat},
		{"quicklist 2 with an empty node", qlBody(typeListQuicklist2, packedNode(goodLP), packedNode(lp())), ErrFormat},
		{"quicklist 2 of an empty node", qlBody(typeListQuicklist2, packedNode(lp())), ErrFormat},
		{"quicklist 2 of an empty plain node", qlBody(typeListQuicklist2, plainNode("")), ErrFormat},
		{"quicklist 2 with an empty plain node", qlBody(typeListQuicklist2, plainNode("a"), plainNode("")), ErrFormat},
		{"quicklist 2 node of kind 3", qlBody(typeListQuicklist2, packedNode(goodLP), kindNode(3, goodLP)), ErrFormat},
		{"quicklist 2 node of kind 0", qlBody(typeListQuicklist2, kindNode(0, goodLP)), ErrFormat},
		{"quicklist 2 node of kind 2^32+2", qlBody(typeListQuicklist2, kindNode(1<<32+qlPacked, goodLP)), ErrFormat},
		{"quicklist 2 node of an encoded kind", qlBody(typeListQuicklist2, append([]byte{0xc0, qlPacked}, appendString(nil, goodLP)...)), ErrFormat},
		{"quicklist 2 node without its kind", []byte("\x12\x01"), ErrFormat},
		{"quicklist 2 node without its string", []byte("\x12\x01\x02"), ErrFormat},
		{"quicklist 2 packed node not a listpack", qlBody(typeListQuicklist2, packedNode(zipl)), ErrFormat},
		{"quicklist 2 packed node a bad listpack", qlBody(typeListQuicklist2, packedNode(listpack(3, "\x81a", "\x81b"))), ErrFormat},
		{"quicklist 2 of fewer nodes than counted", edit(ql2, func(b []byte) []byte { b[1]++; return b }), ErrFormat},
		{"quicklist 2 of more nodes than counted", edit(ql2, func(b []byte) []byte { b[1]--; return b }), ErrFormat},
		{"quicklist 2 node count beyond the bytes", []byte("\x12\x80\xff\xff\xff\xff\x02\x01a"), ErrFormat},
		{"quicklist 2 encoded node count", append([]byte("\x12\xc0\x01"), plainNode("a")...), ErrFormat},
		{"quicklist 2 node cut short", ql2[:len(ql2)-1], ErrFormat},
		{"quicklist 2 with trailing bytes", append(bytes.Clone(ql2), 0), ErrFormat},
		{"quicklist 2 plain node longer than maxLen", qlBody(typeListQuicklist2, plainNode(strings.Repeat("p", 256))), ErrFormat},
		{"quicklist 2 packed node longer than maxLen", qlBody(typeListQuicklist2, packedNode(lp("\x81a", "\xe1\x00"+strings.Repeat("v", 256)))), ErrFormat},
		{"quicklist 2 LZF node longer than maxLen", []byte("\x12\x01\x02\xc3\x03\x41\x2c\x01aa"), ErrFormat},
	}
}

// A payload of a few bytes that claims huge counts or lengths fails
// without allocating for them.
func TestDecodeListHugeClaims(t *testing.T) {
	lzfGiB := "\xc3\x02\x80\x40\x00\x00\x00\x01aa" // 2 bytes said to expand to 1 GiB
	checkBoundedDecode(t, []namedBody{
		{"2^40 elements", []byte("\x01\x81\x00\x00\x01\x00\x00\x00\x00\x00\x01a\x01b")},
		{"2^32-1 elements", []byte("\x01\x80\xff\xff\xff\xff\x01a\x01b")},
		{"2^32-1 ziplist nodes", []byte("\x0e\x80\xff\xff\xff\xff\x01a")},
		{"2^32-1 quicklist 2 nodes", []byte("\x12\x80\xff\xff\xff\xff\x02\x01a")},
		{"2^40 quicklist 2 nodes", []byte("\x12\x81\x00\x00\x01\x00\x00\x00\x00\x00\x02\x01a")},
		{"LZF element of 1 GiB", []byte("\x01\x01" + lzfGiB)},
		{"LZF ziplist of 1 GiB", []byte("\x0a" + lzfGiB)},
		{"LZF ziplist node of 1 GiB", []byte("\x0e\x01" + lzfGiB)},
		{"LZF packed node of 1 GiB", []byte("\x12\x01\x02" + lzfGiB)},
		{"LZF plain node of 1 GiB", []byte("\x12\x01\x01" + lzfGiB)},
		{"ziplist count 65534", blobPayloadBody(typeListZiplist, ziplist([]string{"a", "b"}, func(h []byte) {
			binary.LittleEndian.PutUint16(h[8:], 65534)
		}))},
		{"packed node count 65534", qlBody(typeListQuicklist2, packedNode(listpack(65534, "\x81a", "\x81b")))},
	})
}

// Decoded lists do not share memory with the payload, and appending to
// one element does not overwrite the next.
func TestDecodeListOwnsMemory(t *testing.T) {
	payloads := map[string][]byte{
		"quicklist 2 of listpacks": readListHex(t, "long"),
		"quicklist 2 compressed":   readListHex(t, "strings"),
		"quicklist 2 plain nodes":  readListHex(t, "plain-nodes"),
	}
	for _, c := range builtLists()[:6] { // plain, ziplist and quicklist
		payloads[c.name] = c.payload
	}
	checkOwnsMemory(t, payloads, func(v Value) [][]byte { return v.List })
}
