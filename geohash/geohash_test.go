package geohash

import (
	"strconv"
	"testing"
)

// The expected values below are redis-server 7.0.15's answers: GEOADD's
// scores (ZSCORE), GEOPOS's coordinates ("%.17Lf" with trailing zeros
// cut, compared here at 17 digits), GEOHASH's strings and GEODIST's
// distances ("%.4f").

func TestScore(t *testing.T) {
	for _, c := range []struct {
		long, lat float64
		score     uint64
		ok        bool
	}{
		{13.361389, 38.115556, 3479099956230698, true},
		{15.087269, 37.502669, 3479447370796909, true},
		{0, 0, 3377699720527872, true},
		{180, 85.05112878, 13510798882111488, true}, // one bit past 52
		{-180, -85.05112878, 0, true},
		{180.0000001, 0, 0, false},
		{0, 85.06, 0, false},
		{0, -90, 0, false},
	} {
		got, ok := Score(c.long, c.lat)
		if ok != c.ok || ok && got != c.score {
			t.Errorf("Score(%v, %v) = %d, %v; want %d, %v", c.long, c.lat, got, ok, c.score, c.ok)
		}
	}
}

func TestDecodeScore(t *testing.T) {
	for _, c := range []struct {
		score     float64
		long, lat string
	}{
		{3479099956230698, "13.36138933897018433", "38.11555639549629859"},
		{13510798882111488, "180.00000000000000000", "85.05112877999999910"},
		{0, "-179.99999731779098511", "-85.05112751263942528"},
		{3377699720527872, "0.00000268220901489", "0.00000126736058093"},
		{-1, "180.00000000000000000", "85.05112877999999910"}, // all 64 bits set
		{1e20, "-179.99999731779098511", "-85.05112751263942528"},
		{2e19, "-179.99999731779098511", "-85.05112751263942528"},
		{1.5, "-179.99999731779098511", "-85.05112497791824921"},
	} {
		long, lat := DecodeScore(c.score)
		if got := strconv.FormatFloat(long, 'f', 17, 64); got != c.long {
			t.Errorf("DecodeScore(%v) longitude %s, want %s", c.score, got, c.long)
		}
		if got := strconv.FormatFloat(lat, 'f', 17, 64); got != c.lat {
			t.Errorf("DecodeScore(%v) latitude %s, want %s", c.score, got, c.lat)
		}
	}
}

func TestString(t *testing.T) {
	for _, c := range []struct {
		score float64
		want  string
	}{
		{3479099956230698, "sqc8b49rny0"},
		{3479447370796909, "sqdtr74hyu0"},
		{13510798882111488, "bp05b5048p0"},
		{0, "00bh0hbj200"},
		{3377699720527872, "s0000000000"},
		{1.5, "00bh0hbj210"},
	} {
		if got := String(c.score); got != c.want {
			t.Errorf("String(%v) = %s, want %s", c.score, got, c.want)
		}
	}
}

func TestDistance(t *testing.T) {
	pl, pa := DecodeScore(3479099956230698)
	cl, ca := DecodeScore(3479447370796909)
	al, aa := DecodeScore(3386427883058495) // 10, 10
	bl, ba := DecodeScore(3403951602136190) // 10, 20
	for _, c := range []struct {
		name                     string
		long1, lat1, long2, lat2 float64
		unit                     float64
		want                     string
	}{
		{"Palermo-Catania m", pl, pa, cl, ca, 1, "166274.1516"},
		{"Palermo-Catania km", pl, pa, cl, ca, 1000, "166.2742"},
		{"same point", pl, pa, pl, pa, 1, "0.0000"},
		{"one meridian", al, aa, bl, ba, 1, "1112262.9623"},
	} {
		if got := strconv.FormatFloat(Distance(c.long1, c.lat1, c.long2, c.lat2)/c.unit, 'f', 4, 64); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func TestNeighbors(t *testing.T) {
	h := Hash{Bits: 0b0011, Step: 2} // lat cell 1, long cell 1 of 4 each
	for _, c := range []struct {
		name      string
		got       Hash
		lat, long uint32
	}{
		{"north", h.Neighbors().North, 2, 1},
		{"south", h.Neighbors().South, 0, 1},
		{"east", h.Neighbors().East, 1, 2},
		{"west", h.Neighbors().West, 1, 0},
		{"north-east", h.Neighbors().NorthEast, 2, 2},
		{"south-west", h.Neighbors().SouthWest, 0, 0},
		{"west of west edge wraps", h.Neighbors().West.moveLong(-1), 1, 3},
	} {
		if lat, long := gather(c.got.Bits), gather(c.got.Bits>>1); lat != c.lat || long != c.long || c.got.Step != 2 {
			t.Errorf("%s: cells lat %d long %d step %d, want %d %d 2", c.name, lat, long, c.got.Step, c.lat, c.long)
		}
	}
}

func TestEstimateStep(t *testing.T) {
	for _, c := range []struct {
		meters, lat float64
		want        uint8
	}{
		{0, 0, 26},
		{1, 0, 24},
		{1000, 0, 14},
		{200000, 0, 6},
		{200000, 70, 5},
		{200000, -81, 4},
		{5e7, 0, 1},
	} {
		if got := EstimateStep(c.meters, c.lat); got != c.want {
			t.Errorf("EstimateStep(%v, %v) = %d, want %d", c.meters, c.lat, got, c.want)
		}
	}
}

func TestRanges(t *testing.T) {
	// A small circle: nine boxes, some of them left out as beyond its
	// bounds, and the centre's box holds the centre's score.
	s := Shape{Long: 13.361389, Lat: 38.115556, Radius: 100, Conversion: 1000}
	score, _ := Score(s.Long, s.Lat)
	rs := s.Ranges()
	if len(rs) == 0 || len(rs) > 9 || float64(score) < rs[0].Min || float64(score) >= rs[0].Max {
		t.Fatalf("ranges %v do not start with the centre's box of %d", rs, score)
	}
	// The whole earth: step 1, whose neighbours repeat one another.
	whole := Shape{Long: 0, Lat: 0, Radius: 40000, Conversion: 1000}
	if b := whole.Boxes(); b[0].Step != 1 {
		t.Errorf("whole-earth step %d, want 1", b[0].Step)
	}
	for _, c := range []struct {
		name string
		s    Shape
		in   bool
	}{
		{"circle inside", Shape{Long: 0, Lat: 0, Radius: 112, Conversion: 1000}, true},
		{"circle outside", Shape{Long: 0, Lat: 0, Radius: 110, Conversion: 1000}, false},
		{"box inside", Shape{Long: 0, Lat: 0, Box: true, Width: 224, Height: 10, Conversion: 1000}, true},
		{"box on the centre's parallel", Shape{Long: 0, Lat: 0, Box: true, Width: 224, Height: 1, Conversion: 1000}, true},
	} {
		// The point (1, 0) lies 111.2 km east of (0, 0).
		_, in := c.s.Contains(1, 0)
		if in != c.in {
			t.Errorf("%s: Contains = %v, want %v", c.name, in, c.in)
		}
	}
}
