package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// A sorted set keeps two field records (fields.go) per member, both
// named by the set's ID: a member record, zsetMemberTag | member, whose
// value is the score (the float64's bits, 8 bytes big endian), which
// ZSCORE and ZADD read; and a score record, zsetScoreTag | ScoreKey(score)
// | member, whose value is empty (or negativeZero for a score of -0,
// which ScoreKey orders as 0), which sort by score, then member, as
// Redis orders a sorted set, and which ranges and ranks walk. Metadata.Size
// counts members, so the set has twice as many records. Deleting, renaming,
// copying and replicating a sorted set need nothing of their own: they
// handle every field record of an ID alike.

// The tags of a sorted set's two kinds of field records.
const (
	zsetMemberTag byte = 0
	zsetScoreTag  byte = 1
)

// errZSetCorrupt is wrapped by the errors of sorted-set records that do
// not fit each other or their metadata.
var errZSetCorrupt = errors.New("sorted set records do not fit their metadata")

// ScoreKey returns the 8 bytes that order score s among others as numbers
// order: the float's bits with the sign bit flipped for a positive
// number and every bit flipped for a negative one. -0 is ordered as 0, as
// Redis compares scores. s is never NaN.
func ScoreKey(s float64) []byte { return appendScoreKey(make([]byte, 0, 8), s) }

func appendScoreKey(dst []byte, s float64) []byte {
	if s == 0 {
		s = 0 // -0 orders as 0
	}
	u := math.Float64bits(s)
	if u&(1<<63) != 0 {
		u = ^u
	} else {
		u |= 1 << 63
	}
	return binary.BigEndian.AppendUint64(dst, u)
}

// ScoreBound returns score s as Metadata.ZLow and ZHigh hold it.
func ScoreBound(s float64) uint64 { return binary.BigEndian.Uint64(ScoreKey(s)) }

// scoreFromKey inverts appendScoreKey.
func scoreFromKey(k []byte) float64 {
	u := binary.BigEndian.Uint64(k)
	if u&(1<<63) != 0 {
		u &^= 1 << 63
	} else {
		u = ^u
	}
	return math.Float64frombits(u)
}

func zsetMemberField(member []byte) []byte {
	return append(append(make([]byte, 0, 1+len(member)), zsetMemberTag), member...)
}

func zsetScoreField(s float64, member []byte) []byte {
	f := append(make([]byte, 0, 9+len(member)), zsetScoreTag)
	return append(appendScoreKey(f, s), member...)
}

// ZScore returns the score of member in the sorted set m of ns and
// whether it has the member, reading what batch b (nil: none) wrote
// before the database.
func (e *Engine) ZScore(b *Batch, ns string, m *Metadata, member []byte) (float64, bool, error) {
	v, ok, err := e.GetField(b, ns, m, zsetMemberField(member))
	if err != nil || !ok {
		return 0, false, err
	}
	if len(v) != 8 {
		return 0, false, fmt.Errorf("storage: score of %q has %d bytes: %w", member, len(v), errZSetCorrupt)
	}
	return math.Float64frombits(binary.BigEndian.Uint64(v)), true, nil
}

// PutZMember writes member of the sorted set whose ID is id with score s,
// replacing its old score when had is set. The caller keeps the set's
// metadata (its member count) right in the same batch.
func (b *Batch) PutZMember(ns string, id uint64, member []byte, old float64, had bool, s float64) {
	if had && math.Float64bits(old) == math.Float64bits(s) {
		return
	}
	if had && old != s { // 0 and -0 share a score record
		b.PutField(ns, id, zsetScoreField(old, member), nil)
	}
	b.PutField(ns, id, zsetMemberField(member), binary.BigEndian.AppendUint64(make([]byte, 0, 8), math.Float64bits(s)))
	v := []byte{}
	if s == 0 && math.Signbit(s) {
		v = negativeZero
	}
	b.PutField(ns, id, zsetScoreField(s, member), v)
}

// negativeZero is the value of the score record of a score of -0.
var negativeZero = []byte{1}

// DeleteZMember deletes member, whose score is s, from the sorted set
// whose ID is id. The caller keeps the metadata right.
func (b *Batch) DeleteZMember(ns string, id uint64, member []byte, s float64) {
	b.PutField(ns, id, zsetMemberField(member), nil)
	b.PutField(ns, id, zsetScoreField(s, member), nil)
}

// ZMemberSize returns the bytes the two records of a sorted set's member
// take in ns before Pebble compresses them, for MEMORY USAGE.
func ZMemberSize(ns string, member []byte) int64 {
	return FieldSize(ns, zsetMemberField(member), make([]byte, 8)) + FieldSize(ns, zsetScoreField(0, member), nil)
}

// ZPos is a position among a sorted set's members: before every member of
// a greater score, or of the same score and a greater member. Member nil
// with After false is before every member of Score; After places it after
// them all.
type ZPos struct {
	Score  float64
	Member []byte
	// After places the position after Member (or after every member of
	// Score when Member is nil) rather than before it.
	After bool
}

// seekKey returns the score-record field at p: with After, the first
// field past it.
func (p ZPos) seekKey() []byte {
	f := zsetScoreField(p.Score, p.Member)
	if p.After {
		if p.Member == nil {
			return prefixEnd(f)
		}
		return append(f, 0)
	}
	return f
}

// ScanZSet calls fn with the members of the sorted set m of ns and their
// scores in Redis's order (score, then member bytes), or the reverse with
// reverse set, until fn returns false. from (nil: an end of the set)
// is where the walk starts: going forward, with the first member at or
// past it; in reverse, with the last member before it. What batch b
// (nil: none) wrote replaces what the database holds. The member slice
// is valid during the call only.
func (e *Engine) ScanZSet(b *Batch, ns string, m *Metadata, from *ZPos, reverse bool, fn func(member []byte, score float64) bool) error {
	prefix := fieldKey(make([]byte, 0, 12+len(ns)), ns, m.Version, []byte{zsetScoreTag})
	lower, upper := prefix, prefixEnd(prefix)
	if m.ZLow != 0 {
		lower = binary.BigEndian.AppendUint64(bytes.Clone(prefix), m.ZLow)
	}
	if m.ZHigh != 0 {
		upper = prefixEnd(binary.BigEndian.AppendUint64(bytes.Clone(prefix), m.ZHigh))
	}
	if from != nil {
		k := append(bytes.Clone(prefix[:len(prefix)-1]), from.seekKey()...)
		if reverse && bytes.Compare(k, upper) < 0 {
			upper = k
		} else if !reverse && bytes.Compare(k, lower) > 0 {
			lower = k
		}
	}
	if bytes.Compare(lower, upper) >= 0 {
		return nil
	}
	var bad error
	err := e.scanRange(b, ns, lower, upper, reverse, func(k, v []byte) bool {
		f := k[len(prefix):]
		if len(f) < 8 {
			bad = fmt.Errorf("storage: score record %x: %w", f, errZSetCorrupt)
			return false
		}
		s := scoreFromKey(f)
		if len(v) == 1 && s == 0 {
			s = math.Copysign(0, -1)
		}
		return fn(f[8:], s)
	})
	if err != nil {
		return err
	}
	return bad
}

// zsetSummary is what CheckValues learns of one sorted set's records:
// how many of each kind, and a sum over each kind of the pairs (score,
// member) they hold, which are equal when the two kinds agree.
type zsetSummary struct {
	members, scores      uint64
	memberSum, scoresSum uint64
	low, high            uint64 // the metadata's bounds
}

// add adds field f (value v) of a sorted set to s, returning an error for
// a record of neither kind.
func (s *zsetSummary) add(f, v []byte) error {
	switch {
	case len(f) >= 1 && f[0] == zsetMemberTag && len(v) == 8:
		s.members++
		s.memberSum += scorePairHash(math.Float64frombits(binary.BigEndian.Uint64(v)), f[1:])
	case len(f) >= 9 && f[0] == zsetScoreTag && (len(v) == 0 || bytes.Equal(v, negativeZero)):
		if k := binary.BigEndian.Uint64(f[1:9]); s.low != 0 && k < s.low || s.high != 0 && k > s.high {
			return fmt.Errorf("%w: score record %x lies outside the bounds [%x, %x]", ErrValueCheck, f, s.low, s.high)
		}
		s.scores++
		s.scoresSum += scorePairHash(scoreFromKey(f[1:9]), f[9:])
	default:
		return fmt.Errorf("%w: sorted set record %x", ErrValueCheck, f)
	}
	return nil
}

// scorePairHash mixes a score (-0 as 0) and a member into 64 bits.
func scorePairHash(s float64, m []byte) uint64 {
	if s == 0 {
		s = 0
	}
	h := uint64(14695981039346656037) ^ math.Float64bits(s)
	for _, c := range m {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h * 0x9E3779B97F4A7C15
}

// ScanZMembers calls fn with the members of the sorted set m of ns from
// start on, in byte order, and their scores, until fn returns false; what
// batch b (nil: none) wrote replaces what the database holds. The member
// slice is valid during the call only.
func (e *Engine) ScanZMembers(b *Batch, ns string, m *Metadata, start []byte, fn func(member []byte, score float64) bool) error {
	var bad error
	err := e.ScanFields(b, ns, m, zsetMemberField(start), func(f, v []byte) bool {
		if len(f) == 0 || f[0] != zsetMemberTag {
			return false // the score records that follow
		}
		if len(v) != 8 {
			bad = fmt.Errorf("storage: score of %q has %d bytes: %w", f[1:], len(v), errZSetCorrupt)
			return false
		}
		return fn(f[1:], math.Float64frombits(binary.BigEndian.Uint64(v)))
	})
	if err != nil {
		return err
	}
	return bad
}
