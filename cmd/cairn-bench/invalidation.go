package main

import (
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// invalidationConfig holds the flags of the invalidation mode.
type invalidationConfig struct {
	*common
	replFlags
	rate, writers, msgs, size int
	duration                  time.Duration
	db                        string
	prefix                    string
	eventsFile                string
	// via is how the replica's client hears of writes: "notifications"
	// or "tracking".
	via string
	// mixFlag is -mix as given; validate parses it into mix.
	mixFlag string
	mix     []*writeKind
}

func (c *invalidationConfig) register(fs *flag.FlagSet) {
	c.replFlags.register(fs)
	fs.IntVar(&c.rate, "rate", 5000, "write commands per second on the primary, across all writers")
	fs.IntVar(&c.writers, "writers", 4, "writer connections; each sends one write at a time and waits for its reply")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "how long to write (at most -msgs writes)")
	fs.IntVar(&c.msgs, "msgs", 1_000_000, "the most write commands to send")
	fs.IntVar(&c.size, "size", 16, "value size in bytes")
	fs.StringVar(&c.db, "db", "0", "the <db> of the event channels: the replica is subscribed to the pattern __keyevent@<db>__:*; "+
		"the writers write in their connection's default database (0, or Cairn's default namespace), so another <db> sees no events")
	fs.StringVar(&c.eventsFile, "events-file", "", "if set, write one line per write to this `file`: its index, and the µs from the run's start to its reply and to its first event (-1: none), after a first line giving the start's UTC time of day, for finding when the slow events came")
	fs.StringVar(&c.via, "via", "notifications", "how the replica's client hears of each write: notifications (PSUBSCRIBE __keyevent@<db>__:*) "+
		"or tracking (HELLO 3, CLIENT TRACKING on BCAST PREFIX <the run's prefix>: one invalidate push per write)")
	fs.StringVar(&c.prefix, "prefix", "cairn-bench:inv:", "key prefix; a random run tag is appended, so every key of a run is new")
	fs.StringVar(&c.mixFlag, "mix", "set", "comma-separated write `kinds`, write k of a run using kind k modulo their count: "+
		"set (event set), incr (incrby), append (append), setrange (SETRANGE key 0 value: setrange), "+
		"incrbyfloat (INCRBYFLOAT key 1.5: incrbyfloat, or set on a Redis replica), mset (MSET key value: set), "+
		"getset (set), setex (SETEX key 100 value: set, then expire)")
}

func (c *invalidationConfig) validate() error {
	if err := firstError(
		checkRange("rate", c.rate, 1, 10_000_000),
		checkRange("writers", c.writers, 1, 10000),
		checkRange("msgs", c.msgs, 1, 100_000_000),
		checkRange("size", c.size, 0, 1<<20),
	); err != nil {
		return err
	}
	if c.duration <= 0 || c.duration > c.limit {
		return usageErrorf("-duration %v: want more than 0 and at most -duration-limit %v", c.duration, c.limit)
	}
	if c.db == "" || strings.ContainsAny(c.db, "*?[\\") {
		return usageErrorf("-db %q: want a database name without glob characters", c.db)
	}
	if c.via != "notifications" && c.via != "tracking" {
		return usageErrorf("-via %q: want notifications or tracking", c.via)
	}
	mix, err := parseMix(c.mixFlag)
	if err != nil {
		return err
	}
	if c.size == 0 && slices.ContainsFunc(mix, func(k *writeKind) bool { return k.name == "setrange" }) {
		return usageErrorf("-mix %s with -size 0: SETRANGE of an empty value creates no key and publishes no event; want -size of at least 1", c.mixFlag)
	}
	c.mix = mix
	return c.resolve(c.common)
}

// total is the number of writes a run sends: -rate × -duration, at most
// -msgs, at least 1.
func (c *invalidationConfig) total() int {
	n := int64(float64(c.rate) * c.duration.Seconds())
	return int(max(min(n, int64(c.msgs)), 1))
}

// eventTracker matches keyspace events to the writes that caused them.
// The write of index k uses the write kind mix[k % len(mix)] on the key
// prefix+decimal(k); its writer records when the reply came, the
// subscriber when the first event of the kind's expected name came for
// the key and how many came. Events of other names for the run's keys
// (the expire of SETEX, say) are counted apart, as other events, and are
// neither duplicates nor foreign. Each index has one writer and every
// event one reader, so the slices need no locks; they are read once both
// have stopped.
type eventTracker struct {
	prefix     string
	chanPrefix string // __keyevent@<db>__:
	channel    string // __keyevent@<db>__:set, the probe's
	probeKey   string // written before the measured writes
	base       time.Time
	// tracking is set when the frames are CLIENT TRACKING's invalidate
	// pushes, which name keys but no event: any counts for any kind.
	tracking bool

	mix   []*writeKind
	group []int        // the index in kinds of each kind of mix
	kinds []*writeKind // the distinct kinds of mix, in order of first use
	// names are the event names the mix expects, for telling foreign
	// events from other ones.
	names map[string]bool

	replied []bool
	replyAt []time.Duration // since base
	eventAt []time.Duration // since base, of the first event
	events  []int32

	// Counters the subscriber keeps.
	matched   atomic.Int64 // indices with at least one event
	probeSeen atomic.Bool
	// foreign counts events named like one the mix expects for keys that
	// are not the run's (set events, for -mix set).
	foreign int64
	// other counts events whose name is not the one expected for their
	// key: for the run's keys (otherKey, and kindOther by kind) and for
	// other keys whose event name the mix does not expect at all.
	other      int64
	otherKey   int64
	kindOther  []int64
	unexpected int64 // frames that are not pmessage
	firstOdd   string
}

// newEventTracker returns a tracker of n writes on keys under prefix,
// index k of kind mix[k % len(mix)], whose events come on the channels
// __keyevent@<db>__:<event>.
func newEventTracker(prefix, db string, mix []*writeKind, n int) *eventTracker {
	t := &eventTracker{
		prefix:     prefix,
		chanPrefix: "__keyevent@" + db + "__:",
		channel:    "__keyevent@" + db + "__:set",
		probeKey:   prefix + "probe",
		base:       time.Now(),
		mix:        mix,
		group:      make([]int, len(mix)),
		names:      make(map[string]bool),
		replied:    make([]bool, n),
		replyAt:    make([]time.Duration, n),
		eventAt:    make([]time.Duration, n),
		events:     make([]int32, n),
	}
	for i, k := range mix {
		g := slices.Index(t.kinds, k)
		if g < 0 {
			g = len(t.kinds)
			t.kinds = append(t.kinds, k)
		}
		t.group[i] = g
		t.names[k.event] = true
		if k.alt != "" {
			t.names[k.alt] = true
		}
	}
	t.kindOther = make([]int64, len(t.kinds))
	return t
}

// kindOf returns the write kind of index k.
func (t *eventTracker) kindOf(k int) *writeKind { return t.mix[k%len(t.mix)] }

// key returns the key of index k.
func (t *eventTracker) key(k int) string { return t.prefix + strconv.Itoa(k) }

// keyIndex returns k if key is prefix followed by the decimal form of k
// (no sign, no leading zeros) and k < n.
func keyIndex(prefix string, key []byte, n int) (int, bool) {
	if len(key) <= len(prefix) || string(key[:len(prefix)]) != prefix {
		return 0, false
	}
	digits := key[len(prefix):]
	if len(digits) > 10 || !allDigits(digits) || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	k, err := strconv.Atoi(string(digits))
	if err != nil || k >= n {
		return 0, false
	}
	return k, true
}

// pmessage returns the channel and payload of a pmessage frame (a RESP2
// array or a RESP3 push of "pmessage", pattern, channel, payload).
func pmessage(v Value) (channel, payload []byte, ok bool) {
	if (v.Kind != '*' && v.Kind != '>') || len(v.Elems) != 4 || string(v.Elems[0].Str) != "pmessage" {
		return nil, nil, false
	}
	ch, pl := v.Elems[2], v.Elems[3]
	if ch.Kind != '$' || ch.Null || pl.Kind != '$' || pl.Null {
		return nil, nil, false
	}
	return ch.Str, pl.Str, true
}

// invalidatePush returns the keys of a CLIENT TRACKING invalidate push;
// ok is false for any other frame, a flush's (null keys) included.
func invalidatePush(v Value) (keys []Value, ok bool) {
	if v.Kind != '>' || len(v.Elems) != 2 || string(v.Elems[0].Str) != "invalidate" || v.Elems[1].Kind != '*' || v.Elems[1].Null {
		return nil, false
	}
	for _, k := range v.Elems[1].Elems {
		if k.Kind != '$' || k.Null {
			return nil, false
		}
	}
	return v.Elems[1].Elems, true
}

// observe records one frame that arrived at, since base.
func (t *eventTracker) observe(v Value, at time.Duration) {
	if t.tracking {
		keys, ok := invalidatePush(v)
		if !ok {
			t.odd(v)
			return
		}
		for _, k := range keys {
			t.note(nil, k.Str, at)
		}
		return
	}
	ch, key, ok := pmessage(v)
	if !ok {
		t.odd(v)
		return
	}
	if len(ch) < len(t.chanPrefix) || string(ch[:len(t.chanPrefix)]) != t.chanPrefix {
		t.other++
		return
	}
	t.note(ch[len(t.chanPrefix):], key, at)
}

// odd counts a frame that is neither an event nor an invalidation.
func (t *eventTracker) odd(v Value) {
	t.unexpected++
	if t.firstOdd == "" {
		t.firstOdd = truncate(v.String(), 200)
	}
}

// note records the event name (nil: an invalidation, which names none)
// for key that arrived at.
func (t *eventTracker) note(name, key []byte, at time.Duration) {
	k, ok := keyIndex(t.prefix, key, len(t.events))
	if !ok {
		switch {
		case string(key) == t.probeKey && (name == nil || string(name) == "set"):
			t.probeSeen.Store(true)
		case name == nil || t.names[string(name)]:
			t.foreign++
		default:
			t.other++
		}
		return
	}
	if g := t.group[k%len(t.mix)]; name != nil && !t.kinds[g].accepts(name) {
		t.other++
		t.otherKey++
		t.kindOther[g]++
		return
	}
	if t.events[k] == 0 {
		t.eventAt[k] = at
		t.matched.Add(1)
	}
	t.events[k]++
}

// eventStats is the outcome of matching, in microseconds for latencies.
type eventStats struct {
	Expected   int64 `json:"events_expected"`
	Received   int64 `json:"events_received"`
	Lost       int64 `json:"events_lost"`
	Duplicates int64 `json:"duplicates"`
	// Unmatched counts events for the run's keys whose write got no
	// reply.
	Unmatched int64 `json:"events_unmatched"`
	// BeforeReply counts events that arrived before their write's reply
	// (a negative latency).
	BeforeReply int64   `json:"events_before_reply"`
	P50Micros   float64 `json:"p50_us"`
	P99Micros   float64 `json:"p99_us"`
	MaxMicros   float64 `json:"max_us"`
	MinMicros   float64 `json:"min_us"`
	MeanMicros  float64 `json:"mean_us"`
}

// kindStats is the outcome of matching for the writes of one kind of
// -mix, in microseconds for latencies.
type kindStats struct {
	Kind string `json:"kind"`
	// Events are the event names that count for the kind: the expected
	// one and, for incrbyfloat, set.
	Events []string `json:"events"`
	// Sent counts the kind's writes that were answered (a writer stops
	// at the first one that is not, and the run fails).
	Sent       int64 `json:"sent"`
	Received   int64 `json:"events_received"`
	Lost       int64 `json:"events_lost"`
	Duplicates int64 `json:"duplicates"`
	// OtherEvents counts events of other names for the kind's keys (the
	// expire event of setex, say).
	OtherEvents int64   `json:"other_events"`
	P50Micros   float64 `json:"p50_us"`
	P99Micros   float64 `json:"p99_us"`
	MaxMicros   float64 `json:"max_us"`
}

// latencies is a summary of event latencies.
type latencies struct{ p50, p99, max, min, mean float64 }

// summarize sorts lat and returns its percentiles in microseconds, or
// zeros if lat is empty.
func summarize(lat []time.Duration) latencies {
	if len(lat) == 0 {
		return latencies{}
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	return latencies{
		p50:  us(percentile(lat, 0.50)),
		p99:  us(percentile(lat, 0.99)),
		max:  us(lat[len(lat)-1]),
		min:  us(lat[0]),
		mean: us(sum / time.Duration(len(lat))),
	}
}

// stats matches events to replies, for the whole run and for each
// distinct kind of the mix in order of first use. It must be called once
// the writers and the subscriber have stopped.
func (t *eventTracker) stats() (eventStats, []kindStats) {
	var st eventStats
	var lat []time.Duration
	kinds := make([]kindStats, len(t.kinds))
	kindLat := make([][]time.Duration, len(t.kinds))
	for g, k := range t.kinds {
		kinds[g] = kindStats{Kind: k.name, Events: []string{k.event}, OtherEvents: t.kindOther[g]}
		if k.alt != "" {
			kinds[g].Events = append(kinds[g].Events, k.alt)
		}
	}
	for k, n := range t.events {
		ks := &kinds[t.group[k%len(t.mix)]]
		if n > 1 {
			st.Duplicates += int64(n - 1)
			ks.Duplicates += int64(n - 1)
		}
		if !t.replied[k] {
			if n > 0 {
				st.Unmatched++
			}
			continue
		}
		st.Expected++
		ks.Sent++
		if n == 0 {
			continue
		}
		st.Received++
		ks.Received++
		d := t.eventAt[k] - t.replyAt[k]
		if d < 0 {
			st.BeforeReply++
		}
		lat = append(lat, d)
		g := t.group[k%len(t.mix)]
		kindLat[g] = append(kindLat[g], d)
	}
	st.Lost = st.Expected - st.Received
	l := summarize(lat)
	st.P50Micros, st.P99Micros, st.MaxMicros, st.MinMicros, st.MeanMicros = l.p50, l.p99, l.max, l.min, l.mean
	for g := range kinds {
		ks := &kinds[g]
		ks.Lost = ks.Sent - ks.Received
		l := summarize(kindLat[g])
		ks.P50Micros, ks.P99Micros, ks.MaxMicros = l.p50, l.p99, l.max
	}
	return st, kinds
}

// invalidationResult is the summary of an invalidation run.
type invalidationResult struct {
	Mode string `json:"mode"`
	// Via is -via: notifications or tracking.
	Via     string `json:"via"`
	Primary string `json:"primary"`
	Replica string `json:"replica"`
	DB      string `json:"db"`
	Rate    int    `json:"rate"`
	Writers int    `json:"writers"`
	Size    int    `json:"size"`
	// Mix is -mix, one write kind an element.
	Mix []string `json:"mix"`
	// Planned is -rate × -duration (at most -msgs); Writes the writes
	// answered, less if the -duration-limit stopped the run
	// (StoppedEarly).
	Planned      int     `json:"planned"`
	Writes       int64   `json:"writes"`
	StoppedEarly bool    `json:"stopped_early"`
	WriteSeconds float64 `json:"write_seconds"`
	WritesPerSec float64 `json:"writes_per_sec"`
	// BehindMaxMillis is how late, at worst, a write was sent after its
	// scheduled time (the pacing sleeps in ~1 ms steps, so up to about
	// 1 ms is the timer's and more is a slow reply's).
	BehindMaxMillis float64 `json:"behind_schedule_max_ms"`
	// SetP50Micros and SetP99Micros are the round trips of the writes,
	// of every kind of the mix (SETs alone with the default -mix set).
	SetP50Micros float64 `json:"set_p50_us"`
	SetP99Micros float64 `json:"set_p99_us"`

	eventStats
	// ForeignEvents counts events named like one the mix expects (set,
	// for -mix set) for keys that are not the run's.
	ForeignEvents int64 `json:"foreign_set_events"`
	// OtherEvents counts events whose name is not the one expected for
	// their key, the run's keys' (OtherKeyEvents) included.
	OtherEvents int64 `json:"other_events"`
	// OtherKeyEvents counts events of unexpected names for the run's
	// keys, such as the expire event that follows SETEX's set.
	OtherKeyEvents int64       `json:"other_key_events"`
	Kinds          []kindStats `json:"kinds"`
	Unexpected     int64       `json:"unexpected_frames"`
	FirstProblem   string      `json:"first_problem,omitempty"`
}

// onlySet reports whether the run sent plain SETs alone, the mode's
// original behaviour.
func (r *invalidationResult) onlySet() bool {
	for _, k := range r.Mix {
		if k != "set" {
			return false
		}
	}
	return true
}

func (r *invalidationResult) title() string {
	if r.Via == "tracking" {
		return fmt.Sprintf("invalidation: -mix %s on primary %s, CLIENT TRACKING BCAST invalidations on replica %s: %d/s by %d writers, %d B values",
			strings.Join(r.Mix, ","), r.Primary, r.Replica, r.Rate, r.Writers, r.Size)
	}
	if r.onlySet() {
		return fmt.Sprintf("invalidation: SET on primary %s, __keyevent@%s__:set on replica %s: %d/s by %d writers, %d B values",
			r.Primary, r.DB, r.Replica, r.Rate, r.Writers, r.Size)
	}
	return fmt.Sprintf("invalidation: -mix %s on primary %s, __keyevent@%s__:* on replica %s: %d/s by %d writers, %d B values",
		strings.Join(r.Mix, ","), r.Primary, r.DB, r.Replica, r.Rate, r.Writers, r.Size)
}

func (r *invalidationResult) rows() [][2]string {
	rtt := "SET round trip"
	if !r.onlySet() {
		rtt = "write round trip"
	}
	rows := [][2]string{
		{"writes", fmt.Sprintf("%s of %s in %.3f s (%s, at worst %.1f ms behind schedule)",
			fmtInt(r.Writes), fmtInt(int64(r.Planned)), r.WriteSeconds, fmtRate(r.WritesPerSec), r.BehindMaxMillis)},
		{rtt, fmt.Sprintf("p50 %.0f µs, p99 %.0f µs", r.SetP50Micros, r.SetP99Micros)},
		{"event latency (reply -> event)", fmt.Sprintf("p50 %.0f µs, p99 %.0f µs, max %.0f µs, min %.0f µs, mean %.0f µs",
			r.P50Micros, r.P99Micros, r.MaxMicros, r.MinMicros, r.MeanMicros)},
		{"events before their reply", fmtInt(r.BeforeReply)},
		{"events", fmt.Sprintf("expected %s, received %s, lost %s, duplicates %s",
			fmtInt(r.Expected), fmtInt(r.Received), fmtInt(r.Lost), fmtInt(r.Duplicates))},
	}
	if !r.onlySet() {
		rows = append(rows, [2]string{"mix", strings.Join(r.Mix, ",")})
		for _, k := range r.Kinds {
			rows = append(rows, [2]string{"  " + k.Kind + " -> " + strings.Join(k.Events, "|"),
				fmt.Sprintf("sent %s, received %s, lost %s, duplicates %s, other events %s; p50 %.0f µs, p99 %.0f µs, max %.0f µs",
					fmtInt(k.Sent), fmtInt(k.Received), fmtInt(k.Lost), fmtInt(k.Duplicates), fmtInt(k.OtherEvents),
					k.P50Micros, k.P99Micros, k.MaxMicros)})
		}
	}
	if r.StoppedEarly {
		rows = append(rows, [2]string{"stopped early", "the -duration-limit ran out"})
	}
	if r.Unmatched > 0 || r.ForeignEvents > 0 || r.OtherEvents > 0 || r.Unexpected > 0 {
		rows = append(rows, [2]string{"other frames", fmt.Sprintf("%d events for unanswered writes, %d expected-name events of other keys, "+
			"%d other events (%d of them for the run's keys), %d non-pmessage frames",
			r.Unmatched, r.ForeignEvents, r.OtherEvents, r.OtherKeyEvents, r.Unexpected)})
	}
	if r.FirstProblem != "" {
		rows = append(rows, [2]string{"first problem", r.FirstProblem})
	}
	return rows
}

// runInvalidation runs the invalidation mode: a subscriber on the replica
// PSUBSCRIBEs to __keyevent@<db>__:* (whatever the mix, so that events of
// other names are seen and counted too), writers write new keys on the
// primary at -rate with the commands of -mix in turn, and each event of
// the name a key's write kind expects is matched to its write by key.
// Progress lines go to progressW.
func runInvalidation(cfg *invalidationConfig, progressW io.Writer) (*invalidationResult, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var tag [4]byte
	rand.Read(tag[:])
	n := cfg.total()
	t := newEventTracker(cfg.prefix+hex.EncodeToString(tag[:])+":", cfg.db, cfg.mix, n)
	start := time.Now()
	stopAt := start.Add(cfg.limit)

	p, err := dial(cfg.primaryAddr, cfg.timeout, 0)
	if err != nil {
		return nil, fmt.Errorf("primary: %w", err)
	}
	defer p.close()
	r, err := dial(cfg.replicaAddr, cfg.timeout, 0)
	if err != nil {
		return nil, fmt.Errorf("replica: %w", err)
	}
	if _, _, err := checkRoles(&cfg.replFlags, p, r); err != nil {
		r.close()
		return nil, err
	}

	// The subscriber: the replica connection, subscribed or tracking.
	t.tracking = cfg.via == "tracking"
	if err := listen(r, cfg, t.prefix); err != nil {
		r.close()
		return nil, fmt.Errorf("replica: %w", err)
	}
	var subErr error
	var stopping atomic.Bool
	subDone := make(chan struct{})
	r.nc.SetReadDeadline(stopAt.Add(cfg.drain + 2*cfg.timeout))
	go func() {
		defer close(subDone)
		for {
			v, err := r.rd.ReadFrame()
			if err != nil {
				if !stopping.Load() {
					subErr = err
				}
				return
			}
			t.observe(v, r.rd.FillTime().Sub(t.base))
		}
	}()
	stopSub := func() {
		stopping.Store(true)
		r.close()
		<-subDone
	}
	subStopped := false
	defer func() {
		if !subStopped {
			stopSub()
		}
	}()

	// The probe: one write whose event proves the path (replication,
	// notify-keyspace-events on both nodes, the subscription).
	if _, err := p.do("SET", t.probeKey, "probe"); err != nil {
		return nil, fmt.Errorf("primary: probe: %w", err)
	}
	probeEnd := time.Now().Add(2 * cfg.timeout)
	for !t.probeSeen.Load() {
		select {
		case <-subDone:
			return nil, fmt.Errorf("replica: the subscription ended before the probe's event: %v", subErr)
		default:
		}
		if time.Now().After(probeEnd) && t.tracking {
			return nil, fmt.Errorf("replica %s sent no invalidation for the probe SET on the primary within %v", cfg.replica, 2*cfg.timeout)
		}
		if time.Now().After(probeEnd) {
			return nil, fmt.Errorf("replica %s published no %s event for the probe SET on the primary within %v "+
				"(is notify-keyspace-events KEA set on the replica, and on a Cairn primary too? does -db name the writers' "+
				"default database?)", cfg.replica, t.channel, 2*cfg.timeout)
		}
		time.Sleep(time.Millisecond)
	}

	writers, err := dialWriters(cfg.primaryAddr, cfg.timeout, cfg.writers)
	if err != nil {
		return nil, err
	}
	defer closeAll(writers)

	var written atomic.Int64
	prog := startProgress(progressW, cfg.quiet, "invalidation", func() string {
		w, m := written.Load(), t.matched.Load()
		return fmt.Sprintf("writes %s/%s, events %s, awaited %s", fmtInt(w), fmtInt(int64(n)), fmtInt(m), fmtInt(max(w-m, 0)))
	})
	defer prog.stop()

	type result struct {
		rtt    []time.Duration
		behind time.Duration
		early  bool
		err    error
	}
	results := make([]result, cfg.writers)
	value := payload(cfg.size)
	wstart := time.Now()
	var wg sync.WaitGroup
	for i, w := range writers {
		wg.Go(func() {
			res := &results[i]
			res.rtt, res.behind, res.early, res.err = pacedWrites(w, t, i, cfg.writers, n, cfg.rate, value, wstart, stopAt, &written)
		})
	}
	wg.Wait()
	wend := time.Now()
	res := &invalidationResult{
		Mode: "invalidation", Via: cfg.via, Primary: cfg.primary, Replica: cfg.replica, DB: cfg.db,
		Rate: cfg.rate, Writers: cfg.writers, Size: cfg.size, Mix: mixNames(cfg.mix), Planned: n,
	}
	var rtt []time.Duration
	for i, w := range results {
		if w.err != nil {
			return nil, fmt.Errorf("writer %d: %w", i, w.err)
		}
		rtt = append(rtt, w.rtt...)
		res.StoppedEarly = res.StoppedEarly || w.early
		res.BehindMaxMillis = max(res.BehindMaxMillis, float64(w.behind)/float64(time.Millisecond))
	}
	res.Writes = int64(len(rtt))
	res.WriteSeconds = wend.Sub(wstart).Seconds()
	res.WritesPerSec = rate(res.Writes, wend.Sub(wstart))
	if len(rtt) > 0 {
		slices.Sort(rtt)
		res.SetP50Micros = float64(percentile(rtt, 0.50)) / float64(time.Microsecond)
		res.SetP99Micros = float64(percentile(rtt, 0.99)) / float64(time.Microsecond)
	}

	// The drain: wait for the awaited events, then a little longer for
	// duplicates.
	drainEnd := wend.Add(cfg.drain)
	for t.matched.Load() < res.Writes && time.Now().Before(drainEnd) {
		select {
		case <-subDone:
			drainEnd = time.Now()
		default:
			time.Sleep(time.Millisecond)
		}
	}
	if t.matched.Load() >= res.Writes {
		time.Sleep(min(cfg.drain, 200*time.Millisecond))
	}
	prog.stop()
	stopSub()
	subStopped = true

	res.eventStats, res.Kinds = t.stats()
	if cfg.eventsFile != "" {
		if err := t.writeEvents(cfg.eventsFile); err != nil {
			return res, err
		}
	}
	res.ForeignEvents, res.OtherEvents, res.OtherKeyEvents, res.Unexpected = t.foreign, t.other, t.otherKey, t.unexpected
	if subErr != nil {
		res.FirstProblem = fmt.Sprintf("the replica subscription ended: %v", subErr)
	} else if t.firstOdd != "" {
		res.FirstProblem = "unexpected frame " + t.firstOdd
	}
	return res, nil
}

// listen makes r hear of the run's writes: PSUBSCRIBE to the event
// channels, or CLIENT TRACKING in BCAST mode for the keys under prefix.
func listen(r *conn, cfg *invalidationConfig, prefix string) error {
	if cfg.via == "tracking" {
		if _, err := r.do("HELLO", "3"); err != nil {
			return err
		}
		_, err := r.do("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", prefix)
		return err
	}
	pattern := "__keyevent@" + cfg.db + "__:*"
	v, err := r.do("PSUBSCRIBE", pattern)
	if err == nil && ((v.Kind != '*' && v.Kind != '>') || len(v.Elems) != 3 || string(v.Elems[0].Str) != "psubscribe") {
		err = fmt.Errorf("unexpected confirmation %v", truncate(v.String(), 200))
	}
	if err != nil {
		return fmt.Errorf("PSUBSCRIBE %s: %w", pattern, err)
	}
	return nil
}

// writeEvents writes the reply and event time of every write to file,
// one line each (see -events-file). It must be called once the writers
// and the subscriber have stopped.
func (t *eventTracker) writeEvents(file string) error {
	b := fmt.Appendf(nil, "# start %s\n", t.base.UTC().Format("15:04:05.000000"))
	for k := range t.events {
		ev := int64(-1)
		if t.events[k] > 0 {
			ev = t.eventAt[k].Microseconds()
		}
		b = fmt.Appendf(b, "%d %d %d\n", k, t.replyAt[k].Microseconds(), ev)
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		return fmt.Errorf("invalidation: -events-file: %w", err)
	}
	return nil
}

// pacedWrites sends the writes of indices id, id+writers, id+2×writers,
// ... below n on c, one at a time, index k at start + k/rate (Go's timers
// sleep in steps of about a millisecond, so a writer that wakes late sends
// the writes that have come due back to back). Index k sends the command
// of its write kind in t for its key and checks the reply. It records each
// reply's arrival in t and returns the round trips, how late the latest
// write was sent, and whether stopAt stopped it.
func pacedWrites(c *conn, t *eventTracker, id, writers, n, rate int, value string, start, stopAt time.Time, written *atomic.Int64) ([]time.Duration, time.Duration, bool, error) {
	rtt := make([]time.Duration, 0, n/writers+1)
	var behind time.Duration
	for k := id; k < n; k += writers {
		target := start.Add(time.Duration(float64(k) * float64(time.Second) / float64(rate)))
		if d := time.Until(target); d > 0 {
			time.Sleep(d)
		}
		t0 := time.Now()
		if t0.After(stopAt) {
			return rtt, behind, true, nil
		}
		behind = max(behind, t0.Sub(target))
		kind, key := t.kindOf(k), t.key(k)
		args := kind.args(key, value)
		c.wb = AppendCommand(c.wb[:0], args...)
		if err := c.write(c.wb); err != nil {
			return rtt, behind, false, fmt.Errorf("%s %s: %w", args[0], key, err)
		}
		v, err := c.read()
		if err != nil {
			return rtt, behind, false, fmt.Errorf("%s %s: reading the reply: %w", args[0], key, err)
		}
		at := c.rd.FillTime()
		if err := v.ServerErr(); err != nil {
			return rtt, behind, false, fmt.Errorf("%s %s: %w", args[0], key, err)
		}
		if err := kind.check(v, value); err != nil {
			return rtt, behind, false, fmt.Errorf("%s %s: %w", args[0], key, err)
		}
		t.replied[k] = true
		t.replyAt[k] = at.Sub(t.base)
		rtt = append(rtt, at.Sub(t0))
		written.Add(1)
	}
	return rtt, behind, false, nil
}
