package rdb

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// RDB object types of a sorted set. Redis 7.0 writes typeZSet2 for a
// sorted set it holds as a skiplist and typeZSetListpack for a small one;
// the plain sorted set with scores as text (before Redis 4.0) and the
// ziplist (before 7.0) are still read.
const (
	typeZSet         = 3
	typeZSet2        = 5
	typeZSetZiplist  = 12
	typeZSetListpack = 17
)

// A score of a plain sorted set of typeZSet is a length byte, then that
// many bytes of decimal text; three lengths stand for scores of their
// own, with no text.
const (
	scoreNaN    = 253
	scorePosInf = 254
	scoreNegInf = 255
)

// ZMember is a member of a sorted set and its score: never NaN, and
// maybe -0 (which Redis orders as 0, and keeps but for the listpacks it
// writes) or infinite.
type ZMember struct {
	Member []byte
	Score  float64
}

// compareZMembers orders members as Redis orders a sorted set: by score,
// then members of equal scores (-0 equals 0) by their bytes.
func compareZMembers(a, b ZMember) int {
	return cmp.Or(cmp.Compare(a.Score, b.Score), bytes.Compare(a.Member, b.Member))
}

// EncodeZSet returns the DUMP payload of the sorted set whose members and
// their scores are given, in that order, as an RDB sorted set 2 (the form
// Redis 7.0 writes for a sorted set it holds as a skiplist, highest score
// first; Redis reads the members in any order, and re-encodes a small
// sorted set as it restores it). Each member is written as EncodeString
// writes a string, and each score as the 8 bytes of its IEEE 754 binary64
// form, little-endian, so -0 and the infinities keep their values. A
// sorted set has at least one member, no member twice and no NaN score:
// a payload without members, with a member twice or with a NaN score is
// one that Decode and Redis reject.
func EncodeZSet(members []ZMember) []byte {
	size := 20
	for _, m := range members {
		size += len(m.Member) + 13
	}
	out := make([]byte, 0, size)
	out = append(out, typeZSet2)
	out = appendLen(out, uint64(len(members)))
	for _, m := range members {
		out = appendString(out, m.Member)
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(m.Score))
	}
	return appendFooter(out)
}

// zset reads the members of a plain RDB sorted set: their count, then
// each member as a string and its score, as 8 bytes of binary64 for a
// sorted set 2 (v2), else as text (see textScore). The members may come
// in any order; they are returned in Redis's.
func (r *reader) zset(v2 bool, maxLen int64) ([]ZMember, error) {
	n, err := r.plainLength()
	if err != nil {
		return nil, err
	}
	// Each member takes at least a byte and its score at least one (8 in
	// a sorted set 2), so a count the bytes left cannot hold fails before
	// anything is allocated for it.
	least := uint64(2)
	if v2 {
		least = 9
	}
	if n > uint64(len(r.b))/least {
		return nil, fmt.Errorf("sorted set of %d members in %d bytes", n, len(r.b))
	}
	members := make([]ZMember, 0, n)
	for i := uint64(0); i < n; i++ {
		m, err := r.boundedStr(maxLen)
		if err != nil {
			return nil, err
		}
		var score float64
		if v2 {
			var b []byte
			if b, err = r.take(8); err == nil {
				score = math.Float64frombits(binary.LittleEndian.Uint64(b))
			}
		} else {
			score, err = r.textScore()
		}
		if err != nil {
			return nil, err
		}
		members = append(members, ZMember{m, score})
	}
	if err := checkZMembers(members); err != nil {
		return nil, err
	}
	slices.SortFunc(members, compareZMembers)
	return members, nil
}

// textScore reads a score written as text: a length byte, either one of
// scoreNaN, scorePosInf and scoreNegInf, or the length of the decimal
// text that follows (see parseScore).
func (r *reader) textScore() (float64, error) {
	b, err := r.take(1)
	if err != nil {
		return 0, err
	}
	switch b[0] {
	case scoreNaN:
		return math.NaN(), nil // which checkZMembers reports
	case scorePosInf:
		return math.Inf(1), nil
	case scoreNegInf:
		return math.Inf(-1), nil
	}
	text, err := r.take(uint64(b[0]))
	if err != nil {
		return 0, err
	}
	return parseScore(text)
}

// parseScore returns the score whose decimal text is s, in a form Redis
// writes ("1.5", "-0", "inf", "1.0000000000000001e+300") or another that
// strconv.ParseFloat reads: all of s must be the number, which must not
// overflow, and without underscores (which C's strtod, Redis's parser,
// would stop at). A NaN is returned, for checkZMembers to report.
func parseScore(s []byte) (float64, error) {
	v, err := strconv.ParseFloat(string(s), 64)
	if err != nil || bytes.IndexByte(s, '_') >= 0 {
		return 0, fmt.Errorf("score %s not a number", quote(s))
	}
	return v, nil
}

// zsetMembers pairs the entries of a ziplist or listpack: member, score,
// member, score... A score is an integer entry or the decimal text of a
// double (see parseScore). The pairs must be in Redis's order, which the
// ziplist or listpack of a sorted set keeps.
func zsetMembers(entries [][]byte, err error) ([]ZMember, error) {
	if err != nil {
		return nil, err
	}
	if len(entries)%2 != 0 {
		return nil, fmt.Errorf("sorted set of %d entries, an odd number", len(entries))
	}
	members := make([]ZMember, 0, len(entries)/2)
	for i := 0; i < len(entries); i += 2 {
		score, err := parseScore(entries[i+1])
		if err != nil {
			return nil, err
		}
		members = append(members, ZMember{entries[i], score})
	}
	if err := checkZMembers(members); err != nil {
		return nil, err
	}
	for i := 1; i < len(members); i++ {
		if compareZMembers(members[i-1], members[i]) > 0 {
			return nil, fmt.Errorf("member %s out of order", quote(members[i].Member))
		}
	}
	return members, nil
}

// checkZMembers reports a sorted set without members, with a member twice
// or with a NaN score.
func checkZMembers(members []ZMember) error {
	if len(members) == 0 {
		return errors.New("empty sorted set")
	}
	seen := make(map[string]struct{}, len(members))
	for _, m := range members {
		if math.IsNaN(m.Score) {
			return fmt.Errorf("member %s with a NaN score", quote(m.Member))
		}
		if _, dup := seen[string(m.Member)]; dup {
			return fmt.Errorf("member %s twice", quote(m.Member))
		}
		seen[string(m.Member)] = struct{}{}
	}
	return nil
}
