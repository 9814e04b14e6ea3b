package rdb

import (
	"encoding/hex"
	"fmt"
	"reflect"
	"testing"
)

// redisStreamDump is redis-server 7.0.15's DUMP of a stream with
// stream-node-max-entries 3: entries 1-1 to 7-1 (2-1 deleted; 3-1 and 6-1
// with another field), 100-0 with two long fields, group g1 (alice with
// two pending entries, bob with one; entries-read unknown) and g2
// (ENTRIESREAD 3, consumer carol).
const redisStreamDump = "13031000000000000000010000000000000001c33940400740000000180002014000078166020001020100200106827631030401032015400b0032200b8019000240240b827633038178027b010801ff1000000000000000040000000000000001c33a404011400000001800030100010101816602000102200a0600018276340304200b0001600b0035200b8019000240240b827636038178027b010801ff1000000000000000070000000000000001c3404340a310a300000013000201000101018166020001400a06000182763703042007055d01dfff0202401912dffb02816702e06e68656c6c6f20776f726c64e05a0a03700801ff07406400010102010802026731040181ffffffffffffffff0300000000000000010000000000000001a8f5da37a20100000100000000000000030000000000000001a8f5da37a20100000100000000000000040000000000000001a9f5da37a2010000010205616c696365a8f5da37a201000002000000000000000100000000000000010000000000000003000000000000000103626f62a9f5da37a20100000100000000000000040000000000000001026732406400030001056361726f6ca9f5da37a2010000000a00f95d8da79cac64e8"

func streamSummary(s *Stream) string {
	out := fmt.Sprintf("len=%d last=%v first=%v maxdel=%v added=%d\n", s.Length, s.LastID, s.FirstID, s.MaxDeleted, s.EntriesAdded)
	for _, e := range s.Entries {
		out += fmt.Sprintf("%v %q\n", e.ID, e.Pairs)
	}
	for _, g := range s.Groups {
		out += fmt.Sprintf("group %s last=%v read=%d\n", g.Name, g.LastID, g.EntriesRead)
		for _, p := range g.Pending {
			out += fmt.Sprintf("  pending %v %s %d\n", p.ID, p.Consumer, p.DeliveryCount)
		}
		for _, c := range g.Consumers {
			out += fmt.Sprintf("  consumer %s\n", c.Name)
		}
	}
	return out
}

func TestStreamDump(t *testing.T) {
	payload, err := hex.DecodeString(redisStreamDump)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Decode(payload, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if v.Type != TypeStream || len(v.Stream.Entries) != 7 || v.Stream.Entries[1].ID != (StreamID{3, 1}) {
		t.Fatalf("decoded %s", streamSummary(v.Stream))
	}
	if e := v.Stream.Entries[1]; fmt.Sprintf("%q", e.Pairs) != `["f" "v3" "x" "123"]` || e.Node != (StreamID{1, 1}) {
		t.Fatalf("entry 3-1: %q in node %v", e.Pairs, e.Node)
	}
	if tail := v.Stream.Tail; tail.Master != (StreamID{7, 1}) || tail.Live != 2 || tail.Deleted != 0 || fmt.Sprintf("%q", tail.Fields) != `["f"]` {
		t.Fatalf("tail node %+v", tail)
	}
	want := streamSummary(v.Stream)
	if g := v.Stream.Groups[0]; g.EntriesRead != -1 || len(g.Pending) != 3 || string(g.Pending[2].Consumer) != "bob" {
		t.Fatalf("group g1: %+v", g)
	}
	if g := v.Stream.Groups[1]; g.EntriesRead != 3 || string(g.Consumers[0].Name) != "carol" {
		t.Fatalf("group g2: %+v", g)
	}
	again, err := Decode(EncodeStream(v.Stream), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if got := streamSummary(again.Stream); got != want {
		t.Fatalf("re-encoded:\n%s\nwant:\n%s", got, want)
	}
	if !reflect.DeepEqual(again.Stream.Groups, v.Stream.Groups) {
		t.Fatalf("groups differ after a round trip")
	}
}
