package notify

import "fmt"

// Code identifies a keyspace event in a batch's events record. The
// numbering is part of the on-disk and replication format: append new
// codes, never renumber or reuse one.
type Code uint8

// Event codes, one per Redis event name Cairn publishes.
const (
	codeNone Code = iota
	CodeSet
	CodeDel
	CodeExpire
	CodeExpired
	CodePersist
	CodeNew
	CodeAppend
	CodeSetRange
	CodeIncrBy
	CodeIncrByFloat
	CodeRenameFrom
	CodeRenameTo
	CodeCopyTo
	CodeKeyMiss
	CodeSetBit
	CodeRestore
	CodeHSet
	CodeHDel
	CodeHIncrBy
	CodeHIncrByFloat
	CodeSAdd
	CodeSRem
	CodeSPop
	CodeSInterStore
	CodeSUnionStore
	CodeSDiffStore
	CodeLPush
	CodeRPush
	CodeLPop
	CodeRPop
	CodeLInsert
	CodeLSet
	CodeLRem
	CodeLTrim
	CodeSortStore
	CodeZAdd
	CodeZIncr
	CodeZRem
	CodeZRemRangeByScore
	CodeZRemRangeByRank
	CodeZRemRangeByLex
	CodeZPopMin
	CodeZPopMax
	CodeZUnionStore
	CodeZInterStore
	CodeZDiffStore
	CodeZRangeStore
	CodeGeoRadiusStore
	CodeGeoSearchStore
	CodePFAdd
	CodeXAdd
	CodeXDel
	CodeXTrim
	CodeXSetID
	CodeXGroupCreate
	CodeXGroupSetID
	CodeXGroupDestroy
	CodeXGroupCreateConsumer
	CodeXGroupDelConsumer
	codeCount
)

// codeInfo gives each code's Redis name and the flag that enables it.
var codeInfo = [codeCount]struct {
	name  string
	class Flags
}{
	CodeSet:                  {"set", String},
	CodeDel:                  {"del", Generic},
	CodeExpire:               {"expire", Generic},
	CodeExpired:              {"expired", Expired},
	CodePersist:              {"persist", Generic},
	CodeNew:                  {"new", New},
	CodeAppend:               {"append", String},
	CodeSetRange:             {"setrange", String},
	CodeIncrBy:               {"incrby", String},
	CodeIncrByFloat:          {"incrbyfloat", String},
	CodeRenameFrom:           {"rename_from", Generic},
	CodeRenameTo:             {"rename_to", Generic},
	CodeCopyTo:               {"copy_to", Generic},
	CodeKeyMiss:              {"keymiss", KeyMiss},
	CodeSetBit:               {"setbit", String},
	CodeRestore:              {"restore", Generic},
	CodeHSet:                 {"hset", Hash},
	CodeHDel:                 {"hdel", Hash},
	CodeHIncrBy:              {"hincrby", Hash},
	CodeHIncrByFloat:         {"hincrbyfloat", Hash},
	CodeSAdd:                 {"sadd", Set},
	CodeSRem:                 {"srem", Set},
	CodeSPop:                 {"spop", Set},
	CodeSInterStore:          {"sinterstore", Set},
	CodeSUnionStore:          {"sunionstore", Set},
	CodeSDiffStore:           {"sdiffstore", Set},
	CodeLPush:                {"lpush", List},
	CodeRPush:                {"rpush", List},
	CodeLPop:                 {"lpop", List},
	CodeRPop:                 {"rpop", List},
	CodeLInsert:              {"linsert", List},
	CodeLSet:                 {"lset", List},
	CodeLRem:                 {"lrem", List},
	CodeLTrim:                {"ltrim", List},
	CodeSortStore:            {"sortstore", List},
	CodeZAdd:                 {"zadd", ZSet},
	CodeZIncr:                {"zincr", ZSet},
	CodeZRem:                 {"zrem", ZSet},
	CodeZRemRangeByScore:     {"zremrangebyscore", ZSet},
	CodeZRemRangeByRank:      {"zremrangebyrank", ZSet},
	CodeZRemRangeByLex:       {"zremrangebylex", ZSet},
	CodeZPopMin:              {"zpopmin", ZSet},
	CodeZPopMax:              {"zpopmax", ZSet},
	CodeZUnionStore:          {"zunionstore", ZSet},
	CodeZInterStore:          {"zinterstore", ZSet},
	CodeZDiffStore:           {"zdiffstore", ZSet},
	CodeZRangeStore:          {"zrangestore", ZSet},
	CodeGeoRadiusStore:       {"georadiusstore", ZSet},
	CodeGeoSearchStore:       {"geosearchstore", ZSet},
	CodePFAdd:                {"pfadd", String},
	CodeXAdd:                 {"xadd", Stream},
	CodeXDel:                 {"xdel", Stream},
	CodeXTrim:                {"xtrim", Stream},
	CodeXSetID:               {"xsetid", Stream},
	CodeXGroupCreate:         {"xgroup-create", Stream},
	CodeXGroupSetID:          {"xgroup-setid", Stream},
	CodeXGroupDestroy:        {"xgroup-destroy", Stream},
	CodeXGroupCreateConsumer: {"xgroup-createconsumer", Stream},
	CodeXGroupDelConsumer:    {"xgroup-delconsumer", Stream},
}

// Valid reports whether c is a code this build knows.
func (c Code) Valid() bool { return c > codeNone && c < codeCount }

// Name returns the event's Redis name ("" for an unknown code).
func (c Code) Name() string {
	if !c.Valid() {
		return ""
	}
	return codeInfo[c].name
}

// Class returns the flag that enables the event (0 for an unknown code).
func (c Code) Class() Flags {
	if !c.Valid() {
		return 0
	}
	return codeInfo[c].class
}

// Event returns the event c publishes for key in namespace ns.
func (c Code) Event(ns string, key []byte) Event {
	return Event{Class: c.Class(), Name: c.Name(), Namespace: ns, Key: key}
}

// eventsTag is the first byte of an events record. LogData context
// records begin with their version (1), so the two never collide, and a
// reader that only knows context records skips this one as an unknown
// version.
const eventsTag byte = 0xE1

// EncodeRecordEvents returns the LogData record that announces the events
// of the metadata record written right after it in the same batch: the
// tag, then one byte per event code, in publication order. Keys are never
// copied into it; readers take them from the metadata record.
func EncodeRecordEvents(codes []Code) []byte {
	b := make([]byte, 1, 1+len(codes))
	b[0] = eventsTag
	for _, c := range codes {
		b = append(b, byte(c))
	}
	return b
}

// IsRecordEvents reports whether a LogData record is an events record.
func IsRecordEvents(b []byte) bool { return len(b) > 0 && b[0] == eventsTag }

// recordEvents returns the codes of an events record, one byte each, as
// they lie in the record: unknown codes are left for the reader to skip
// (Code.Valid), and reported in the error, so a newer primary's events
// never stop an older replica from publishing the ones it knows. A record
// without a code this build knows yields nil codes.
func recordEvents(b []byte) (codes []byte, err error) {
	if !IsRecordEvents(b) {
		return nil, fmt.Errorf("notify: not an events record")
	}
	known := false
	for _, x := range b[1:] {
		if Code(x).Valid() {
			known = true
		} else if err == nil {
			err = fmt.Errorf("notify: unknown event code %d skipped", x)
		}
	}
	if !known {
		return nil, err
	}
	return b[1:], err
}
