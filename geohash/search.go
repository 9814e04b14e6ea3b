package geohash

import "math"

// Shape is the area of a search: a circle of Radius around (Long, Lat),
// or with Box set a rectangle Width wide and Height high centred there,
// its sides measured along the earth. Radius, Width and Height are in the
// search's unit; Conversion is the unit's length in meters.
type Shape struct {
	Long, Lat     float64
	Box           bool
	Radius        float64
	Width, Height float64
	Conversion    float64
}

// Contains reports whether the point (long, lat) lies in the shape and
// returns its distance in meters from the centre (left 0 for a point of
// a box found outside).
func (s *Shape) Contains(long, lat float64) (meters float64, ok bool) {
	if !s.Box {
		d := Distance(s.Long, s.Lat, long, lat)
		return d, !(d > s.Radius*s.Conversion)
	}
	width, height := s.Width*s.Conversion, s.Height*s.Conversion
	// The cheaper latitude test first; the east-west extent is measured
	// along the point's own parallel.
	if LatDistance(lat, s.Lat) > height/2 {
		return 0, false
	}
	if Distance(long, lat, s.Long, lat) > width/2 {
		return 0, false
	}
	return Distance(s.Long, s.Lat, long, lat), true
}

// bounds returns the longitudes and latitudes that enclose the shape,
// as Redis estimates them: the east-west extent taken at the edge nearer
// the pole.
func (s *Shape) bounds() (minLong, minLat, maxLong, maxLat float64) {
	height, width := s.Conversion*s.Radius, s.Conversion*s.Radius
	if s.Box {
		height, width = s.Conversion*(s.Height/2), s.Conversion*(s.Width/2)
	}
	latDelta := toDegrees(height / EarthRadius)
	longDeltaTop := toDegrees(width / EarthRadius / cos(toRadians(s.Lat+latDelta)))
	longDeltaBottom := toDegrees(width / EarthRadius / cos(toRadians(s.Lat-latDelta)))
	longDelta := longDeltaTop
	if s.Lat < 0 {
		longDelta = longDeltaBottom
	}
	return s.Long - longDelta, s.Lat - latDelta, s.Long + longDelta, s.Lat + latDelta
}

// reach returns the distance in meters from the centre that the boxes
// must cover: the radius, or the half-diagonal of a box.
func (s *Shape) reach() float64 {
	r := s.Radius
	if s.Box {
		r = math.Sqrt(float64((s.Width/2)*(s.Width/2)) + float64((s.Height/2)*(s.Height/2)))
	}
	return r * s.Conversion
}

// Boxes returns the nine boxes a search of s looks in, in the order it
// walks them: the centre's box, then north, south, east, west, north-east,
// north-west, south-east and south-west. A neighbour that lies beyond the
// shape's bounds is zero (Hash.IsZero).
func (s *Shape) Boxes() [9]Hash {
	minLong, minLat, maxLong, maxLat := s.bounds()
	step := EstimateStep(s.reach(), s.Lat)
	h, _ := Encode(s.Long, s.Lat, step)
	n := h.Neighbors()
	// A box too small at an edge of the shape: one step coarser.
	if n.North.Area().LatMax < maxLat || n.South.Area().LatMin > minLat ||
		n.East.Area().LongMax < maxLong || n.West.Area().LongMin > minLong {
		if step > 1 {
			step--
			h, _ = Encode(s.Long, s.Lat, step)
			n = h.Neighbors()
		}
	}
	if step >= 2 {
		a := h.Area()
		if a.LatMin < minLat {
			n.South, n.SouthWest, n.SouthEast = Hash{}, Hash{}, Hash{}
		}
		if a.LatMax > maxLat {
			n.North, n.NorthEast, n.NorthWest = Hash{}, Hash{}, Hash{}
		}
		if a.LongMin < minLong {
			n.West, n.SouthWest, n.NorthWest = Hash{}, Hash{}, Hash{}
		}
		if a.LongMax > maxLong {
			n.East, n.SouthEast, n.NorthEast = Hash{}, Hash{}, Hash{}
		}
	}
	return [9]Hash{h, n.North, n.South, n.East, n.West, n.NorthEast, n.NorthWest, n.SouthEast, n.SouthWest}
}

// ScoreRange is a range of scores, Min included and Max excluded.
type ScoreRange struct{ Min, Max float64 }

// Ranges returns the score ranges a search of s walks, in order: those of
// its boxes (Boxes), skipping zero boxes and a box equal to the one walked
// just before it. (Only the previous box is compared, and the first box
// never, so that a huge search may walk a range twice and find members
// twice, as Redis's does.)
func (s *Shape) Ranges() []ScoreRange {
	boxes := s.Boxes()
	out := make([]ScoreRange, 0, len(boxes))
	last := 0
	for i, b := range boxes {
		if b.IsZero() {
			continue
		}
		if last != 0 && b == boxes[last] {
			continue
		}
		next := Hash{Bits: b.Bits + 1, Step: b.Step}
		out = append(out, ScoreRange{Min: float64(b.Align52()), Max: float64(next.Align52())})
		last = i
	}
	return out
}
