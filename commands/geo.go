package commands

import (
	"bytes"
	"math"
	"slices"
	"strconv"

	"github.com/cairnkv/cairn/geohash"
	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/storage"
)

// The GEO commands keep points in sorted sets: a member's score is the
// 52-bit geohash of its longitude and latitude (package geohash), so GEOADD
// is a ZADD of computed scores and every other sorted-set command works on
// a geo set. A search estimates a box size from its radius, walks the
// score ranges of the centre's box and its eight neighbours, and keeps the
// members whose decoded points lie in the circle or rectangle, as Redis's
// does, so that it finds the same members in the same order.

func init() {
	g := oneKeyCommand("geo")
	// GEORADIUS and GEORADIUSBYMEMBER write the key after STORE or
	// STOREDIST, looked for from their first option on.
	radius := func(name string, optionsAt int, summary string, handler Handler) *Spec {
		s := g(name, -optionsAt, FlagWrite|FlagDenyOOM, KeyRO|KeyAccess, "3.2.0", summary, handler)
		s.KeySpecs = append(s.KeySpecs,
			KeySpec{Flags: KeyOW | KeyUpdate, Begin: AfterKeyword("STORE", optionsAt), Find: Range(0, 1, 0)},
			KeySpec{Flags: KeyOW | KeyUpdate, Begin: AfterKeyword("STOREDIST", optionsAt), Find: Range(0, 1, 0)})
		return s
	}
	register(
		g("geoadd", -5, FlagWrite|FlagDenyOOM, KeyRW|KeyUpdate, "3.2.0", "Add one or more geospatial items in the geospatial index represented using a sorted set", cmdGeoAdd),
		g("geodist", -4, FlagReadOnly, KeyRO|KeyAccess, "3.2.0", "Returns the distance between two members of a geospatial index", cmdGeoDist),
		g("geohash", -2, FlagReadOnly, KeyRO|KeyAccess, "3.2.0", "Returns members of a geospatial index as standard geohash strings", func(c *Ctx) { geoMembersCommand(c, false) }),
		g("geopos", -2, FlagReadOnly, KeyRO|KeyAccess, "3.2.0", "Returns longitude and latitude of members of a geospatial index", func(c *Ctx) { geoMembersCommand(c, true) }),
		radius("georadius", 6, "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point",
			func(c *Ctx) { geoSearchCommand(c, geoFromPoint) }),
		radius("georadiusbymember", 5, "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member",
			func(c *Ctx) { geoSearchCommand(c, geoFromMember) }),
		g("georadius_ro", -6, FlagReadOnly, KeyRO|KeyAccess, "3.2.10", "A read-only variant for GEORADIUS", func(c *Ctx) { geoSearchCommand(c, geoFromPoint|geoNoStore) }),
		g("georadiusbymember_ro", -5, FlagReadOnly, KeyRO|KeyAccess, "3.2.10", "A read-only variant for GEORADIUSBYMEMBER", func(c *Ctx) { geoSearchCommand(c, geoFromMember|geoNoStore) }),
		g("geosearch", -7, FlagReadOnly, KeyRO|KeyAccess, "6.2.0", "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.", func(c *Ctx) { geoSearchCommand(c, geoSearch) }),
		&Spec{Name: "geosearchstore", Arity: -8, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 2, Step: 1, KeySpecs: []KeySpec{Key(1, KeyOW|KeyUpdate), Key(2, KeyRO|KeyAccess)}, Group: "geo", Since: "6.2.0",
			Summary: "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.", Handler: func(c *Ctx) { geoSearchCommand(c, geoSearch|geoSearchStore) }},
	)
}

// errGeoMember is the error of a search from a member the set lacks.
const errGeoMember = "ERR could not decode requested zset member"

// formatCFloat prints f as C's "%f" does.
func formatCFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return strconv.FormatFloat(f, 'f', 6, 64)
}

// parseCoordinates parses the longitude and latitude at Args[at] and
// Args[at+1], replying with Redis's error for a bad number or a point
// outside the indexed area.
func (c *Ctx) parseCoordinates(at int) (long, lat float64, ok bool) {
	if long, ok = parseScore(c.Args[at]); ok {
		lat, ok = parseScore(c.Args[at+1])
	}
	if !ok {
		c.W.Error(errNotFloat)
		return 0, 0, false
	}
	if !geohash.ValidCoordinates(long, lat) {
		c.errorf("ERR invalid longitude,latitude pair %s,%s", formatCFloat(long), formatCFloat(lat))
		return 0, 0, false
	}
	return long, lat, true
}

// parseUnit returns the length in meters of the unit named by arg (m,
// km, ft, mi, in any case), replying with Redis's error for another.
func (c *Ctx) parseUnit(arg []byte) (float64, bool) {
	switch keyword(arg) {
	case "m":
		return 1, true
	case "km":
		return 1000, true
	case "ft":
		return 0.3048, true
	case "mi":
		return 1609.34, true
	}
	c.W.Error("ERR unsupported unit provided. please use M, KM, FT, MI")
	return 0, false
}

// parseLength parses a non-negative radius, width or height, replying
// "ERR need numeric <what>" for a bad number.
func (c *Ctx) parseLength(arg []byte, what string) (float64, bool) {
	f, ok := parseScore(arg)
	if !ok {
		c.W.Error("ERR need numeric " + what)
	}
	return f, ok
}

func cmdGeoAdd(c *Ctx) {
	at, flags := 2, 0
options:
	for ; at < len(c.Args); at++ {
		switch keyword(c.Args[at]) {
		case "nx":
			flags |= zaddNX
		case "xx":
			flags |= zaddXX
		case "ch":
			flags |= zaddCH
		default:
			break options
		}
	}
	if (len(c.Args)-at)%3 != 0 || flags&zaddNX != 0 && flags&zaddXX != 0 {
		c.W.Error(errSyntax)
		return
	}
	// GEOADD is ZADD of the points' scores: the same reply, event and
	// errors from then on.
	zargs := slices.Clone(c.Args[:at])
	for i := at; i < len(c.Args); i += 3 {
		long, lat, ok := c.parseCoordinates(i)
		if !ok {
			return
		}
		score, _ := geohash.Score(long, lat)
		zargs = append(zargs, strconv.AppendUint(nil, score, 10), c.Args[i+2])
	}
	args := c.Args
	c.Args = zargs
	defer func() { c.Args = args }()
	zaddCommand(c, flags, at, storage.CmdZAdd)
}

// replyCoordinate replies with a longitude or latitude as Redis prints a
// long double for people ("%.17Lf", trailing zeros cut): a bulk string in
// RESP2, a double in RESP3.
func (c *Ctx) replyCoordinate(f float64) {
	text := formatLongDouble(newLongDouble().SetFloat64(f))
	if c.W.Proto == 3 {
		c.W.Raw(append(append([]byte{','}, text...), '\r', '\n'))
		return
	}
	c.W.Bulk(text)
}

// replyDistance replies with a distance as Redis prints it: "%.4f", a
// bulk string in both protocols.
func (c *Ctx) replyDistance(d float64) {
	c.W.Bulk(strconv.AppendFloat(nil, d, 'f', 4, 64))
}

// geoMembersCommand is GEOPOS (pos) and GEOHASH: for each member, its
// coordinates or its geohash string, null for a member the set lacks.
func geoMembersCommand(c *Ctx, pos bool) {
	out, ok := c.zscores()
	if !ok {
		return
	}
	c.W.Array(len(out))
	for _, r := range out {
		switch {
		case !r.found && pos:
			c.W.NullArray()
		case !r.found:
			c.W.NullBulk()
		case pos:
			long, lat := geohash.DecodeScore(r.score)
			c.W.Array(2)
			c.replyCoordinate(long)
			c.replyCoordinate(lat)
		default:
			c.W.BulkString(geohash.String(r.score))
		}
	}
}

func cmdGeoDist(c *Ctx) {
	unit := 1.0
	switch {
	case len(c.Args) == 5:
		var ok bool
		if unit, ok = c.parseUnit(c.Args[4]); !ok {
			return
		}
	case len(c.Args) > 5:
		c.W.Error(errSyntax)
		return
	}
	k, unlock, ok := c.lookupOf(c.Args[1], storage.TypeZSet, true)
	defer unlock()
	switch {
	case !ok:
		return
	case !k.live:
		c.W.NullBulk()
		return
	}
	s1, found1, ok := c.zscore(&k, c.Args[2])
	if !ok {
		return
	}
	s2, found2, ok := c.zscore(&k, c.Args[3])
	switch {
	case !ok:
		return
	case !found1 || !found2:
		c.W.NullBulk()
		return
	}
	long1, lat1 := geohash.DecodeScore(s1)
	long2, lat2 := geohash.DecodeScore(s2)
	c.replyDistance(geohash.Distance(long1, lat1, long2, lat2) / unit)
}

// geoSearchFlags say which search command runs.
type geoSearchFlags int

const (
	geoFromPoint   geoSearchFlags = 1 << iota // GEORADIUS: key longitude latitude radius unit
	geoFromMember                             // GEORADIUSBYMEMBER: key member radius unit
	geoNoStore                                // the _RO variants: no STORE or STOREDIST
	geoSearch                                 // GEOSEARCH: key, then FROM... and BY... options
	geoSearchStore                            // GEOSEARCHSTORE: destination, source, as GEOSEARCH
)

// geoPoint is a member a search found.
type geoPoint struct {
	member    []byte
	score     float64
	long, lat float64
	meters    float64 // from the centre; in the search's unit once replied
}

// geoStoreKey returns the key a GEORADIUS or GEORADIUSBYMEMBER command
// line (options from Args[at] on) stores into, nil for none, reading the
// options as the command will, so that its lock is taken before the
// source is read.
func (c *Ctx) geoStoreKey(at int) []byte {
	var dst []byte
	for i := at; i < len(c.Args); i++ {
		switch keyword(c.Args[i]) {
		case "withdist", "withhash", "withcoord", "any", "asc", "desc":
		case "count":
			if i+1 < len(c.Args) {
				i++
			}
		case "store", "storedist":
			if i+1 < len(c.Args) {
				dst = c.Args[i+1]
				i++
			}
		default:
			return dst
		}
	}
	return dst
}

// geoSearchCommand is GEORADIUS, GEORADIUSBYMEMBER, their _RO variants,
// GEOSEARCH and GEOSEARCHSTORE, with Redis's order of checks: the source's
// type, the centre and radius of a GEORADIUS*, the options in order, then
// the combinations of options.
func geoSearchCommand(c *Ctx, flags geoSearchFlags) {
	has := func(f geoSearchFlags) bool { return flags&f != 0 }
	src, optionsAt := 1, 0
	var dst []byte
	switch {
	case has(geoFromPoint):
		optionsAt = 6
	case has(geoFromMember):
		optionsAt = 5
	case has(geoSearchStore):
		src, optionsAt, dst = 2, 3, c.Args[1]
	default:
		optionsAt = 2
	}
	key := c.Args[src]
	if !has(geoNoStore) && !has(geoSearch) {
		dst = c.geoStoreKey(optionsAt)
	}
	var unlock func()
	if dst != nil {
		unlock = c.lock(dst, key)
	} else {
		unlock = c.lock(key)
	}
	defer unlock()
	k, ok := c.read(key)
	if !ok {
		return
	}
	c.lookedUp(key, k.live)
	if k.live && k.m.Type != storage.TypeZSet {
		c.W.Error(errWrongType)
		return
	}
	var shape geohash.Shape
	// fromMember finds the centre at member's point; for a missing source
	// the search's reply is empty whatever the member.
	fromMember := func(member []byte) bool {
		if !k.live {
			return true
		}
		s, found, ok := c.zscore(&k, member)
		if !ok {
			return false
		}
		if !found {
			c.W.Error(errGeoMember)
			return false
		}
		shape.Long, shape.Lat = geohash.DecodeScore(s)
		return true
	}
	// radius parses a radius and its unit at Args[at] and Args[at+1].
	radius := func(at int) bool {
		if shape.Radius, ok = c.parseLength(c.Args[at], "radius"); !ok {
			return false
		}
		if shape.Radius < 0 {
			c.W.Error("ERR radius cannot be negative")
			return false
		}
		shape.Conversion, ok = c.parseUnit(c.Args[at+1])
		return ok
	}
	switch {
	case has(geoFromPoint):
		if shape.Long, shape.Lat, ok = c.parseCoordinates(2); !ok || !radius(optionsAt-2) {
			return
		}
	case has(geoFromMember) && k.live:
		if !fromMember(c.Args[2]) || !radius(optionsAt-2) {
			return
		}
	}
	var withDist, withHash, withCoord, any, storeDist, asc, desc bool
	var fromMemberSet, fromPoint, byRadius, byBox bool
	count := int64(0)
	n := len(c.Args)
	for i := optionsAt; i < n; i++ {
		left := n - i - 1
		switch opt := keyword(c.Args[i]); {
		case opt == "withdist":
			withDist = true
		case opt == "withhash":
			withHash = true
		case opt == "withcoord":
			withCoord = true
		case opt == "any":
			any = true
		case opt == "asc":
			asc, desc = true, false
		case opt == "desc":
			asc, desc = false, true
		case opt == "count" && left >= 1:
			if count, ok = parseInt(c.Args[i+1]); !ok {
				c.W.Error(errNotInt)
				return
			}
			if count <= 0 {
				c.W.Error("ERR COUNT must be > 0")
				return
			}
			i++
		case (opt == "store" || opt == "storedist") && left >= 1 && !has(geoNoStore) && !has(geoSearch):
			dst, storeDist = c.Args[i+1], opt == "storedist"
			i++
		case opt == "storedist" && has(geoSearchStore):
			storeDist = true
		case opt == "frommember" && left >= 1 && has(geoSearch) && !fromPoint:
			if !fromMember(c.Args[i+1]) {
				return
			}
			fromMemberSet = true
			i++
		case opt == "fromlonlat" && left >= 2 && has(geoSearch) && !fromMemberSet:
			if shape.Long, shape.Lat, ok = c.parseCoordinates(i + 1); !ok {
				return
			}
			fromPoint = true
			i += 2
		case opt == "byradius" && left >= 2 && has(geoSearch) && !byBox:
			if !radius(i + 1) {
				return
			}
			shape.Box, byRadius = false, true
			i += 2
		case opt == "bybox" && left >= 3 && has(geoSearch) && !byRadius:
			if shape.Width, ok = c.parseLength(c.Args[i+1], "width"); !ok {
				return
			}
			if shape.Height, ok = c.parseLength(c.Args[i+2], "height"); !ok {
				return
			}
			if shape.Width < 0 || shape.Height < 0 {
				c.W.Error("ERR height or width cannot be negative")
				return
			}
			if shape.Conversion, ok = c.parseUnit(c.Args[i+3]); !ok {
				return
			}
			shape.Box, byBox = true, true
			i += 3
		default:
			c.W.Error(errSyntax)
			return
		}
	}
	name := string(c.Args[0])
	switch {
	case dst != nil && (withDist || withHash || withCoord):
		what := "STORE option in GEORADIUS"
		if has(geoSearchStore) {
			what = "GEOSEARCHSTORE"
		}
		c.errorf("ERR %s is not compatible with WITHDIST, WITHHASH and WITHCOORD options", what)
		return
	case has(geoSearch) && !fromMemberSet && !fromPoint:
		c.errorf("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %s", name)
		return
	case has(geoSearch) && !byRadius && !byBox:
		c.errorf("ERR exactly one of BYRADIUS and BYBOX can be specified for %s", name)
		return
	case any && count == 0:
		c.W.Error("ERR the ANY argument requires COUNT argument")
		return
	}
	cmd, code := storage.CmdGeoRadiusStore, notify.CodeGeoRadiusStore
	if has(geoSearch) {
		cmd, code = storage.CmdGeoSearchStore, notify.CodeGeoSearchStore
	}
	if !k.live {
		if dst != nil {
			c.storeNothing(cmd, dst)
		} else {
			c.W.Array(0)
		}
		return
	}
	// COUNT without ANY takes the nearest members.
	if count != 0 && !asc && !desc && !any {
		asc = true
	}
	limit := int64(0)
	if any {
		limit = count
	}
	found, ok := c.geoFind(&k.m, &shape, limit)
	if !ok {
		return
	}
	keep := len(found)
	if count != 0 && int64(keep) > count {
		keep = int(count)
	}
	if asc || desc {
		sortGeoPoints(found, desc, keep)
	}
	found = found[:keep]
	for i := range found {
		found[i].meters /= shape.Conversion
	}
	if dst != nil {
		es := make([]zentry, 0, len(found))
		at := map[string]int{}
		for _, p := range found {
			s := p.score
			if storeDist {
				s = p.meters
			}
			// A member found twice (a huge search walks a range twice)
			// is stored once.
			if j, dup := at[string(p.member)]; dup {
				es[j].score = s
				continue
			}
			at[string(p.member)] = len(es)
			es = append(es, zentry{p.member, s})
		}
		c.zstore(dst, es, cmd, code)
		return
	}
	c.W.Array(len(found))
	for _, p := range found {
		if withDist || withHash || withCoord {
			c.W.Array(1 + btoi(withDist) + btoi(withHash) + btoi(withCoord))
		}
		c.W.Bulk(p.member)
		if withDist {
			c.replyDistance(p.meters)
		}
		if withHash {
			c.W.Int(geoScoreInt(p.score))
		}
		if withCoord {
			c.W.Array(2)
			c.replyCoordinate(p.long)
			c.replyCoordinate(p.lat)
		}
	}
}

// btoi is 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// geoFind walks the score ranges of shape's boxes in the sorted set m and
// returns the members in the shape, in the order found; with limit > 0 it
// stops once it has found limit of them (ANY). On a storage error it
// replies and returns ok=false.
func (c *Ctx) geoFind(m *storage.Metadata, shape *geohash.Shape, limit int64) (found []geoPoint, ok bool) {
	full := func() bool { return limit > 0 && int64(len(found)) >= limit }
	for _, r := range shape.Ranges() {
		if full() {
			break
		}
		err := c.Env.Store.ScanZSet(c.batch(), c.ns(), m, &storage.ZPos{Score: r.Min}, false, func(member []byte, score float64) bool {
			if !(score < r.Max) {
				return false
			}
			long, lat := geohash.DecodeScore(score)
			if d, in := shape.Contains(long, lat); in {
				found = append(found, geoPoint{member: bytes.Clone(member), score: score, long: long, lat: lat, meters: d})
			}
			return !full()
		})
		if err != nil {
			c.storageError(err)
			return nil, false
		}
	}
	return found, true
}

// geoScoreInt is a score as C converts a double to long long on x86-64
// (WITHHASH): truncated, and 1<<63 for what lies outside the range.
func geoScoreInt(s float64) int64 {
	if math.IsNaN(s) || s >= 9223372036854775808.0 || s < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(s)
}

// sortGeoPoints orders ps by distance, nearest first (farthest first with
// desc), so that its first keep points are those Redis replies with, in
// Redis's order: a stable sort when every point is kept (glibc's qsort is
// a merge sort), else Redis's partial quicksort, whose order among equal
// distances is its own.
func sortGeoPoints(ps []geoPoint, desc bool, keep int) {
	cmp := func(a, b *geoPoint) int {
		r := 0
		switch {
		case a.meters > b.meters:
			r = 1
		case a.meters < b.meters:
			r = -1
		}
		if desc {
			return -r
		}
		return r
	}
	if keep == len(ps) {
		slices.SortStableFunc(ps, func(a, b geoPoint) int { return cmp(&a, &b) })
		return
	}
	if keep > 0 {
		s := partialSorter{ps: ps, cmp: cmp, lo: 0, hi: keep - 1}
		s.sort(0, len(ps))
	}
}

// partialSorter is the Bentley-McIlroy quicksort (three-way partition
// around a median-of-three or ninther pivot, insertion sort below seven
// elements) that skips the parts lying wholly outside positions lo..hi,
// as Redis's pqsort does, so that those positions end up holding what a
// full sort would put there.
type partialSorter struct {
	ps     []geoPoint
	cmp    func(a, b *geoPoint) int
	lo, hi int
}

func (s *partialSorter) less(i, j int) int { return s.cmp(&s.ps[i], &s.ps[j]) }

func (s *partialSorter) swap(i, j int) { s.ps[i], s.ps[j] = s.ps[j], s.ps[i] }

// swapRuns exchanges the n elements from i with the n from j.
func (s *partialSorter) swapRuns(i, j, n int) {
	for k := range n {
		s.swap(i+k, j+k)
	}
}

// median returns whichever of positions a, b and c holds the middle value.
func (s *partialSorter) median(a, b, c int) int {
	if s.less(a, b) < 0 {
		switch {
		case s.less(b, c) < 0:
			return b
		case s.less(a, c) < 0:
			return c
		}
		return a
	}
	switch {
	case s.less(b, c) > 0:
		return b
	case s.less(a, c) < 0:
		return a
	}
	return c
}

// wanted reports whether positions first..last overlap lo..hi.
func (s *partialSorter) wanted(first, last int) bool {
	return !(s.lo < first && s.hi < first || s.lo > last && s.hi > last)
}

// sort sorts the n elements from base, as far as lo..hi need.
func (s *partialSorter) sort(base, n int) {
	for {
		if n < 7 {
			for m := base + 1; m < base+n; m++ {
				for l := m; l > base && s.less(l-1, l) > 0; l-- {
					s.swap(l, l-1)
				}
			}
			return
		}
		m := base + n/2
		if n > 7 {
			l, r := base, base+n-1
			if n > 40 {
				d := n / 8
				l = s.median(l, l+d, l+2*d)
				m = s.median(m-d, m, m+d)
				r = s.median(r-2*d, r-d, r)
			}
			m = s.median(l, m, r)
		}
		s.swap(base, m)
		// Elements equal to the pivot gather at both ends (before a and
		// after d), smaller ones from a to b, greater from c to d.
		a, b, c, d := base+1, base+1, base+n-1, base+n-1
		for {
			for b <= c {
				r := s.less(b, base)
				if r > 0 {
					break
				}
				if r == 0 {
					s.swap(a, b)
					a++
				}
				b++
			}
			for b <= c {
				r := s.less(c, base)
				if r < 0 {
					break
				}
				if r == 0 {
					s.swap(c, d)
					d--
				}
				c--
			}
			if b > c {
				break
			}
			s.swap(b, c)
			b++
			c--
		}
		end := base + n
		k := min(a-base, b-a)
		s.swapRuns(base, b-k, k)
		k = min(d-c, end-d-1)
		s.swapRuns(b, end-k, k)
		if k = b - a; k > 1 && s.wanted(base, base+k-1) {
			s.sort(base, k)
		}
		k = d - c
		if k <= 1 {
			return
		}
		base, n = end-k, k
		if !s.wanted(base, base+n-1) {
			return
		}
	}
}
