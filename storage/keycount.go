package storage

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// KeyCount is the number of keys of a namespace and how many of them have
// a TTL, both including expired keys not yet reclaimed, and the sum of
// those TTLs' expiry times (for AvgTTL). Every commit keeps it exact and
// persists it with its writes.
type KeyCount struct {
	Keys, Expires int64
	// expireSum is the sum of the ExpireAt of the keys with a TTL, as a
	// 128-bit two's complement number (hi, lo): a million keys' expiry
	// times already overflow 64 bits.
	expireSum sum128
}

// AvgTTL returns the mean time to live in milliseconds at nowMs of the
// keys with a TTL, as INFO keyspace's avg_ttl: 0 when there are none, and
// never negative (expired keys not yet reclaimed count with their
// negative TTLs, as they still count in Expires).
func (n KeyCount) AvgTTL(nowMs int64) int64 {
	mean, ok := n.expireSum.mean(n.Expires)
	if !ok || mean <= nowMs {
		return 0
	}
	return mean - nowMs
}

// add adds the change d to n.
func (n *KeyCount) add(d KeyCount) {
	n.Keys += d.Keys
	n.Expires += d.Expires
	n.expireSum.addSum(d.expireSum)
}

// keyCountLen is the length of a key-count record's value: keys, expires
// and the 128-bit sum of expiry times, big-endian.
const keyCountLen = 32

// append appends n's record value to b.
func (n KeyCount) append(b []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(n.Keys))
	b = binary.BigEndian.AppendUint64(b, uint64(n.Expires))
	b = binary.BigEndian.AppendUint64(b, n.expireSum.hi)
	return binary.BigEndian.AppendUint64(b, n.expireSum.lo)
}

// decodeKeyCount decodes a key-count record's value. Records written
// before the sum of expiry times existed are 16 bytes long; for them
// withSum is false and the sum is zero.
func decodeKeyCount(v []byte) (n KeyCount, withSum, ok bool) {
	if len(v) != 16 && len(v) != keyCountLen {
		return KeyCount{}, false, false
	}
	n.Keys = int64(binary.BigEndian.Uint64(v))
	n.Expires = int64(binary.BigEndian.Uint64(v[8:]))
	if len(v) == 16 {
		return n, false, true
	}
	n.expireSum = sum128{hi: binary.BigEndian.Uint64(v[16:]), lo: binary.BigEndian.Uint64(v[24:])}
	return n, true, true
}

// sum128 is a 128-bit two's complement integer.
type sum128 struct{ hi, lo uint64 }

// addInt adds v to s.
func (s *sum128) addInt(v int64) {
	s.addSum(sum128{hi: uint64(v >> 63), lo: uint64(v)})
}

// subInt subtracts v from s.
func (s *sum128) subInt(v int64) {
	lo, borrow := bits.Sub64(s.lo, uint64(v), 0)
	s.hi, _ = bits.Sub64(s.hi, uint64(v>>63), borrow)
	s.lo = lo
}

// addSum adds o to s.
func (s *sum128) addSum(o sum128) {
	lo, carry := bits.Add64(s.lo, o.lo, 0)
	s.hi, _ = bits.Add64(s.hi, o.hi, carry)
	s.lo = lo
}

// mean returns s divided by count, rounded half up, when s is not
// negative and count is positive (ok false otherwise). A sum of count
// values that each fit in an int64 gives a mean that does too.
func (s sum128) mean(count int64) (m int64, ok bool) {
	if count <= 0 || int64(s.hi) < 0 || s.hi >= uint64(count) {
		return 0, false
	}
	q, r := bits.Div64(s.hi, s.lo, uint64(count))
	if r >= uint64(count)-r && q < math.MaxInt64 {
		q++
	}
	return int64(q), true
}
