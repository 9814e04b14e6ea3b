// Package geohash is the geometry of Redis's GEO commands: the 52-bit
// interleaved geohashes that a sorted set keeps as scores, their boxes and
// neighbours, the haversine distance on Redis's earth, and the choice of
// the nine boxes whose score ranges a radius or box search walks. Every
// computation follows Redis 7.0's order of floating-point operations, so
// that the same members come out of a search, with the same distances and
// coordinates, as from Redis.
package geohash

import "math"

// The area a geohash covers: Redis indexes longitudes -180..180 and the
// latitudes of the Web Mercator projection.
const (
	LongMin = -180.0
	LongMax = 180.0
	LatMin  = -85.05112878
	LatMax  = 85.05112878
)

// MaxStep is the precision of the hashes GEOADD stores: 26 bits of
// longitude and 26 of latitude, 52 in all, which a float64 score holds
// exactly.
const MaxStep = 26

// EarthRadius is the radius, in meters, of the sphere distances are
// measured on (the quadratic mean radius of WGS-84).
const EarthRadius = 6372797.560856

// mercatorMax is half the width of the Web Mercator plane in meters,
// which bounds the step estimate of a search radius.
const mercatorMax = 20037726.37

// degToRad is π/180 as Redis multiplies degrees by it.
const degToRad = math.Pi / 180.0

func toRadians(deg float64) float64 { return deg * degToRad }

func toDegrees(rad float64) float64 { return rad / degToRad }

// Hash is a geohash of Step bits per coordinate: latitude bits in the even
// positions, longitude bits in the odd ones, the most significant first. A
// Hash whose Step is 0 is no box at all (a neighbour a search leaves out).
type Hash struct {
	Bits uint64
	Step uint8
}

// IsZero reports whether h is no box.
func (h Hash) IsZero() bool { return h.Bits == 0 && h.Step == 0 }

// Area is the rectangle of coordinates a Hash covers.
type Area struct {
	LongMin, LongMax float64
	LatMin, LatMax   float64
}

// coordRange is the span of one coordinate that hashes divide.
type coordRange struct{ min, max float64 }

var (
	longRange = coordRange{LongMin, LongMax}
	latRange  = coordRange{LatMin, LatMax}
	// standardLatRange is the latitude span of the usual geohash
	// strings, which GEOHASH prints.
	standardLatRange = coordRange{-90, 90}
)

// ValidCoordinates reports whether a point lies in the indexed area.
func ValidCoordinates(long, lat float64) bool {
	return long >= LongMin && long <= LongMax && lat >= LatMin && lat <= LatMax
}

// Encode returns the hash of step bits per coordinate of a point in the
// indexed area, and false for a point outside it or a step out of 1..32.
func Encode(long, lat float64, step uint8) (Hash, bool) {
	return encode(longRange, latRange, long, lat, step)
}

func encode(lr, ar coordRange, long, lat float64, step uint8) (Hash, bool) {
	if step == 0 || step > 32 || !ValidCoordinates(long, lat) {
		return Hash{}, false
	}
	if lat < ar.min || lat > ar.max || long < lr.min || long > lr.max {
		return Hash{}, false
	}
	latOffset := (lat - ar.min) / (ar.max - ar.min)
	longOffset := (long - lr.min) / (lr.max - lr.min)
	scale := float64(uint64(1) << step)
	latOffset *= scale
	longOffset *= scale
	// The offsets are cut to 32-bit integers, as C converts them. The
	// top of a range gives 2^step, one bit past the others.
	return Hash{Bits: interleave(uint32(latOffset), uint32(longOffset)), Step: step}, true
}

// interleave spreads the bits of lat over the even positions and those of
// long over the odd ones.
func interleave(lat, long uint32) uint64 { return spread(lat) | spread(long)<<1 }

// spread moves bit i of v to bit 2i.
func spread(v uint32) uint64 {
	x := uint64(v)
	x = (x | x<<16) & 0x0000FFFF0000FFFF
	x = (x | x<<8) & 0x00FF00FF00FF00FF
	x = (x | x<<4) & 0x0F0F0F0F0F0F0F0F
	x = (x | x<<2) & 0x3333333333333333
	x = (x | x<<1) & 0x5555555555555555
	return x
}

// gather is the inverse of spread: bit 2i of v (the odd bits ignored)
// becomes bit i.
func gather(v uint64) uint32 {
	x := v & 0x5555555555555555
	x = (x | x>>1) & 0x3333333333333333
	x = (x | x>>2) & 0x0F0F0F0F0F0F0F0F
	x = (x | x>>4) & 0x00FF00FF00FF00FF
	x = (x | x>>8) & 0x0000FFFF0000FFFF
	x = (x | x>>16) & 0x00000000FFFFFFFF
	return uint32(x)
}

// Area returns the rectangle h covers.
func (h Hash) Area() Area { return h.areaIn(longRange, latRange) }

func (h Hash) areaIn(lr, ar coordRange) Area {
	latCell, longCell := gather(h.Bits), gather(h.Bits>>1)
	cells := float64(uint64(1) << h.Step)
	latScale, longScale := ar.max-ar.min, lr.max-lr.min
	// Each product is rounded on its own (float64()) so that no fused
	// multiply-add changes the result.
	return Area{
		LatMin:  ar.min + float64(float64(latCell)/cells*latScale),
		LatMax:  ar.min + float64(float64(latCell+1)/cells*latScale),
		LongMin: lr.min + float64(float64(longCell)/cells*longScale),
		LongMax: lr.min + float64(float64(longCell+1)/cells*longScale),
	}
}

// Center returns the middle of the area, held within the indexed area.
func (a Area) Center() (long, lat float64) {
	long = (a.LongMin + a.LongMax) / 2
	lat = (a.LatMin + a.LatMax) / 2
	return min(max(long, LongMin), LongMax), min(max(lat, LatMin), LatMax)
}

// Align52 returns h's bits as a 52-bit score prefix: the hash followed by
// zeros.
func (h Hash) Align52() uint64 { return h.Bits << (52 - 2*uint(h.Step)) }

// ScoreBits returns the bits a score stands for, converted as C converts
// a double to uint64_t on x86-64: truncated, with what lies outside the
// 64-bit range (only scores no geo command wrote) mapped as the processor
// maps it.
func ScoreBits(score float64) uint64 {
	const two63 = 9223372036854775808.0
	if !(score >= two63) { // includes negative scores
		return uint64(cvtInt64(score))
	}
	return uint64(cvtInt64(score-two63)) ^ 1<<63
}

// cvtInt64 truncates f to int64 as the x86 instruction does: a value out
// of range (or NaN) gives the "integer indefinite" 1<<63.
func cvtInt64(f float64) int64 {
	if math.IsNaN(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

// DecodeScore returns the point a sorted-set score stands for: the center
// of its 52-bit hash's box.
func DecodeScore(score float64) (long, lat float64) {
	return Hash{Bits: ScoreBits(score), Step: MaxStep}.Area().Center()
}

// Score returns the score GEOADD stores for a point of the indexed area,
// and false for a point outside it.
func Score(long, lat float64) (uint64, bool) {
	h, ok := Encode(long, lat, MaxStep)
	return h.Align52(), ok
}

// alphabet is the base-32 alphabet of geohash strings.
const alphabet = "0123456789bcdefghjkmnpqrstuvwxyz"

// String returns the 11-character standard geohash GEOHASH prints for the
// point a score stands for: the point hashed again over latitudes -90..90,
// its 52 bits in ten characters and a final '0'.
func String(score float64) string {
	long, lat := DecodeScore(score)
	h, _ := encode(longRange, standardLatRange, long, lat, MaxStep)
	var buf [11]byte
	for i := range 10 {
		buf[i] = alphabet[(h.Bits>>(52-(uint(i)+1)*5))&0x1f]
	}
	buf[10] = alphabet[0]
	return string(buf[:])
}

// moveLong returns h moved by one box east (d > 0) or west (d < 0),
// wrapping around at the ends.
func (h Hash) moveLong(d int) Hash { return h.move(d, 0xaaaaaaaaaaaaaaaa) }

// moveLat returns h moved by one box north (d > 0) or south (d < 0),
// wrapping around at the ends.
func (h Hash) moveLat(d int) Hash { return h.move(d, 0x5555555555555555) }

// move adds d's sign to the coordinate whose interleaved bits are those
// of mask, keeping the other's: the bits in between are filled with ones
// so that the carry (or borrow) runs over them.
func (h Hash) move(d int, mask uint64) Hash {
	if d == 0 {
		return h
	}
	own, other := h.Bits&mask, h.Bits&^mask
	fill := ^mask >> (64 - 2*uint(h.Step))
	if d > 0 {
		own += fill + 1
	} else {
		own = (own | fill) - (fill + 1)
	}
	own &= mask >> (64 - 2*uint(h.Step))
	return Hash{Bits: own | other, Step: h.Step}
}

// Neighbors are the eight boxes around one.
type Neighbors struct {
	North, South, East, West                   Hash
	NorthEast, NorthWest, SouthEast, SouthWest Hash
}

// Neighbors returns the boxes of h's step around h.
func (h Hash) Neighbors() Neighbors {
	return Neighbors{
		East:      h.moveLong(1),
		West:      h.moveLong(-1),
		South:     h.moveLat(-1),
		North:     h.moveLat(1),
		NorthWest: h.moveLong(-1).moveLat(1),
		SouthWest: h.moveLong(-1).moveLat(-1),
		NorthEast: h.moveLong(1).moveLat(1),
		SouthEast: h.moveLong(1).moveLat(-1),
	}
}

// LatDistance returns the distance in meters along a meridian between two
// latitudes.
func LatDistance(lat1, lat2 float64) float64 {
	return EarthRadius * math.Abs(toRadians(lat2)-toRadians(lat1))
}

// Distance returns the great-circle (haversine) distance in meters
// between two points; points of the same longitude take the meridian's
// shorter formula, as Redis's do.
func Distance(long1, lat1, long2, lat2 float64) float64 {
	v := sin((toRadians(long2) - toRadians(long1)) / 2)
	if v == 0 {
		return LatDistance(lat1, lat2)
	}
	lat1r, lat2r := toRadians(lat1), toRadians(lat2)
	u := sin((lat2r - lat1r) / 2)
	a := float64(u*u) + float64(float64(float64(cos(lat1r)*cos(lat2r))*v)*v)
	return 2.0 * EarthRadius * asin(math.Sqrt(a))
}

// EstimateStep returns the step of the boxes that a search of radius
// meters around a point at latitude lat starts from: boxes about as wide
// as the radius, wider near the poles.
func EstimateStep(meters, lat float64) uint8 {
	if meters == 0 {
		return MaxStep
	}
	step := 1
	for meters < mercatorMax {
		meters *= 2
		step++
	}
	step -= 2
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return uint8(min(max(step, 1), MaxStep))
}
