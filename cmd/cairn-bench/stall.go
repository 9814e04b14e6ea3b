package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sync/atomic"
	"syscall"
	"time"
)

// stallConfig holds the flags of the stall mode.
type stallConfig struct {
	*common
	subs    int
	msgs    int
	rate    int
	size    int
	warmup  int
	rcvBuf  int
	channel string
}

func (c *stallConfig) register(fs *flag.FlagSet) {
	fs.IntVar(&c.subs, "subs", 10, "healthy subscribers, which read all the time")
	fs.IntVar(&c.msgs, "msgs", 10000, "PUBLISH commands in each of the two phases")
	fs.IntVar(&c.rate, "rate", 2000, "PUBLISH commands per second, each sent alone after the previous reply")
	fs.IntVar(&c.size, "size", 4096, "payload size in bytes (the default sends the stalled subscriber 40 MiB, past Redis's 32 MiB pubsub output-buffer limit)")
	fs.IntVar(&c.warmup, "warmup", 200, "PUBLISH commands sent before the healthy phase and not measured")
	fs.IntVar(&c.rcvBuf, "stall-rcvbuf", 4096, "SO_RCVBUF in bytes of the subscriber that never reads")
	fs.StringVar(&c.channel, "channel", "cairn-bench:stall:ch", "the channel")
}

func (c *stallConfig) validate() error {
	if err := firstError(
		checkRange("subs", c.subs, 0, 10000),
		checkRange("msgs", c.msgs, 1, 10_000_000),
		checkRange("rate", c.rate, 1, 1_000_000),
		checkRange("size", c.size, 0, 16<<20),
		checkRange("warmup", c.warmup, 1, 1_000_000),
		checkRange("stall-rcvbuf", c.rcvBuf, 0, 64<<20),
	); err != nil {
		return err
	}
	if c.channel == "" {
		return usageErrorf("-channel must not be empty")
	}
	need := time.Duration(float64(2*c.msgs+c.warmup) / float64(c.rate) * float64(time.Second))
	if need > c.limit {
		return usageErrorf("%d warm-up and 2×%d measured messages at %d/s take %v, more than -duration-limit %v",
			c.warmup, c.msgs, c.rate, need.Round(time.Millisecond), c.limit)
	}
	return nil
}

// latencyStats describes the PUBLISH latencies of one phase, in
// microseconds, from sending a PUBLISH to having its whole reply.
type latencyStats struct {
	Count      int     `json:"count"`
	P50Micros  float64 `json:"p50_us"`
	P99Micros  float64 `json:"p99_us"`
	MaxMicros  float64 `json:"max_us"`
	MeanMicros float64 `json:"mean_us"`
	// Late counts commands sent more than one interval after their
	// scheduled time, because the previous reply came late.
	Late int `json:"late"`
	// P99FromScheduleMicros is the p99 of the time from each command's
	// scheduled send time to its reply: unlike P99Micros it counts the
	// wait of the commands a slow reply delayed (coordinated omission).
	P99FromScheduleMicros float64 `json:"p99_from_schedule_us"`
	// ReceiversMin and ReceiversMax bound PUBLISH's replies in the phase.
	ReceiversMin int64 `json:"receivers_min"`
	ReceiversMax int64 `json:"receivers_max"`
	// StoppedEarly says the time limit ended the phase before -msgs.
	StoppedEarly bool `json:"stopped_early"`
}

func (s latencyStats) text() string {
	t := fmt.Sprintf("p50 %.0f µs, p99 %.0f µs, max %.0f µs, mean %.0f µs, p99 from schedule %.0f µs (%d PUBLISH, receivers %d..%d",
		s.P50Micros, s.P99Micros, s.MaxMicros, s.MeanMicros, s.P99FromScheduleMicros, s.Count, s.ReceiversMin, s.ReceiversMax)
	if s.Late > 0 {
		t += fmt.Sprintf(", %d sent late", s.Late)
	}
	if s.StoppedEarly {
		t += ", stopped by -duration-limit"
	}
	return t + ")"
}

// stallResult is the summary of a stall run.
type stallResult struct {
	Mode   string `json:"mode"`
	Addr   string `json:"addr"`
	Subs   int    `json:"subs"`
	Msgs   int    `json:"msgs"`
	Rate   int    `json:"rate"`
	Size   int    `json:"size"`
	RcvBuf int    `json:"stall_rcvbuf"`

	Healthy latencyStats `json:"healthy"`
	Stalled latencyStats `json:"stalled"`
	// P99Ratio is Stalled.P99Micros / Healthy.P99Micros, and
	// P99FromScheduleRatio the same for P99FromScheduleMicros.
	P99Ratio             float64 `json:"p99_ratio"`
	P99FromScheduleRatio float64 `json:"p99_from_schedule_ratio"`

	// StalledDisconnected says whether the server dropped the subscriber
	// that did not read (an output-buffer limit), as StalledEvidence
	// explains. NumsubAfter is PUBSUB NUMSUB of the channel after the
	// stalled phase, -1 if the server does not answer it.
	StalledDisconnected bool   `json:"stalled_disconnected"`
	StalledEvidence     string `json:"stalled_evidence"`
	NumsubAfter         int64  `json:"numsub_after"`
	// StalledRead counts the messages read from the stalled subscriber's
	// socket at the end, until end of stream or a pause.
	StalledRead int64 `json:"stalled_read"`

	HealthyExpected  int64  `json:"healthy_expected"`
	HealthyDelivered int64  `json:"healthy_delivered"`
	HealthyLost      int64  `json:"healthy_lost"`
	FirstProblem     string `json:"first_problem,omitempty"`
}

func (r *stallResult) title() string {
	return fmt.Sprintf("stall against %s: %d healthy subscribers, %d PUBLISH per phase at %d/s, %d B payloads, stalled subscriber SO_RCVBUF %d",
		r.Addr, r.Subs, r.Msgs, r.Rate, r.Size, r.RcvBuf)
}

func (r *stallResult) rows() [][2]string {
	disc := "no, still subscribed"
	if r.StalledDisconnected {
		disc = "yes"
	}
	rows := [][2]string{
		{"healthy", r.Healthy.text()},
		{"with stalled subscriber", r.Stalled.text()},
		{"p99 stalled/healthy", fmt.Sprintf("%.2f (from schedule: %.2f)", r.P99Ratio, r.P99FromScheduleRatio)},
		{"stalled subscriber dropped", fmt.Sprintf("%s (%s)", disc, r.StalledEvidence)},
		{"healthy deliveries", fmt.Sprintf("%s of %s, lost %s", fmtInt(r.HealthyDelivered), fmtInt(r.HealthyExpected), fmtInt(r.HealthyLost))},
	}
	if r.FirstProblem != "" {
		rows = append(rows, [2]string{"first problem", r.FirstProblem})
	}
	return rows
}

// runStall runs the stall mode. Progress lines go to progressW.
func runStall(cfg *stallConfig, progressW io.Writer) (*stallResult, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	stopAt := start.Add(cfg.limit)
	subs, err := connectSubscribers(cfg.common, cfg.subs, 0, cfg.channel, "", cfg.size, stopAt.Add(cfg.drain+2*cfg.timeout))
	if err != nil {
		return nil, err
	}
	defer stopAll(subs)
	pub, err := dial(cfg.dialAddr, cfg.timeout, 0)
	if err != nil {
		return nil, fmt.Errorf("publisher: %w", err)
	}
	defer pub.close()

	frame := AppendCommand(nil, "PUBLISH", cfg.channel, payload(cfg.size))
	var phase atomic.Value
	var done atomic.Int64
	phase.Store("warm-up")
	prog := startProgress(progressW, cfg.quiet, "stall", func() string {
		return fmt.Sprintf("%s: %s/%s PUBLISH", phase.Load(), fmtInt(done.Load()), fmtInt(int64(cfg.msgs)))
	})
	defer prog.stop()

	if _, err := timedPublish(pub, frame, cfg.warmup, cfg.rate*4, stopAt, &done); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	phase.Store("healthy")
	done.Store(0)
	healthy, err := timedPublish(pub, frame, cfg.msgs, cfg.rate, stopAt, &done)
	if err != nil {
		return nil, fmt.Errorf("healthy phase: %w", err)
	}

	stalled, err := subscribe(cfg.common, cfg.subs, "SUBSCRIBE", []string{cfg.channel}, cfg.channel, cfg.size, cfg.rcvBuf)
	if err != nil {
		return nil, fmt.Errorf("stalled subscriber: %w", err)
	}
	defer stalled.c.close()
	phase.Store("with stalled subscriber")
	done.Store(0)
	withStall, err := timedPublish(pub, frame, cfg.msgs, cfg.rate, stopAt, &done)
	if err != nil {
		return nil, fmt.Errorf("phase with a stalled subscriber: %w", err)
	}
	prog.stop()

	r := &stallResult{
		Mode: "stall", Addr: cfg.addr, Subs: cfg.subs, Msgs: cfg.msgs, Rate: cfg.rate,
		Size: cfg.size, RcvBuf: cfg.rcvBuf,
		Healthy: healthy, Stalled: withStall,
		NumsubAfter: -1,
	}
	if r.Healthy.P99Micros > 0 {
		r.P99Ratio = r.Stalled.P99Micros / r.Healthy.P99Micros
	}
	if r.Healthy.P99FromScheduleMicros > 0 {
		r.P99FromScheduleRatio = r.Stalled.P99FromScheduleMicros / r.Healthy.P99FromScheduleMicros
	}

	// Whether the server dropped the stalled subscriber: ask it, then read
	// the socket until it ends or pauses.
	if v, err := pub.do("PUBSUB", "NUMSUB", cfg.channel); err == nil &&
		(v.Kind == '*' || v.Kind == '%') && len(v.Elems) == 2 && v.Elems[1].Kind == ':' {
		r.NumsubAfter = v.Elems[1].Int
	}
	var readErr error
	r.StalledRead, readErr = drainStalled(stalled.c, cfg.drain)
	gone := isReset(readErr)
	switch {
	case r.NumsubAfter == int64(cfg.subs) && gone:
		r.StalledDisconnected = true
		r.StalledEvidence = fmt.Sprintf("PUBSUB NUMSUB %d; its socket ended: %v", r.NumsubAfter, readErr)
	case r.NumsubAfter == int64(cfg.subs):
		r.StalledDisconnected = true
		r.StalledEvidence = fmt.Sprintf("PUBSUB NUMSUB %d", r.NumsubAfter)
	case gone:
		r.StalledDisconnected = true
		r.StalledEvidence = fmt.Sprintf("its socket ended: %v", readErr)
	case r.NumsubAfter >= 0:
		r.StalledEvidence = fmt.Sprintf("PUBSUB NUMSUB %d; its socket paused after %d messages", r.NumsubAfter, r.StalledRead)
	default:
		r.StalledEvidence = fmt.Sprintf("its socket paused after %d messages", r.StalledRead)
	}
	if !gone && !isTimeout(readErr) { // drainStalled always ends with an error
		r.StalledEvidence += fmt.Sprintf("; reading it failed: %v", readErr)
	}

	published := int64(cfg.warmup + healthy.Count + withStall.Count)
	r.HealthyExpected = published * int64(cfg.subs)
	waitDelivered(subs, r.HealthyExpected, cfg.drain)
	st := collect(subs)
	r.HealthyDelivered = st.received
	r.HealthyLost = r.HealthyExpected - r.HealthyDelivered
	r.FirstProblem = st.firstProblem
	return r, nil
}

// timedPublish sends n copies of frame, a PUBLISH command, one at a time
// at rate per second, each after the previous reply, and measures each
// one's latency. It stops early at stopAt. done counts the commands
// answered, for progress lines.
func timedPublish(c *conn, frame []byte, n, rate int, stopAt time.Time, done *atomic.Int64) (latencyStats, error) {
	lat := make([]time.Duration, 0, n)
	fromSched := make([]time.Duration, 0, n)
	var st latencyStats
	st.ReceiversMin = -1
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	for i := range n {
		target := start.Add(time.Duration(float64(i) * float64(time.Second) / float64(rate)))
		now := time.Now()
		if now.After(stopAt) {
			st.StoppedEarly = true
			break
		}
		if now.Sub(target) > interval {
			st.Late++
		}
		sleepUntil(target)
		t0 := time.Now()
		if err := c.write(frame); err != nil {
			return st, fmt.Errorf("PUBLISH %d: %w", i+1, err)
		}
		v, err := c.read()
		if err != nil {
			if isTimeout(err) {
				return st, fmt.Errorf("PUBLISH %d: no reply within %v (is the server blocked writing to a subscriber?): %w", i+1, c.timeout, err)
			}
			return st, fmt.Errorf("PUBLISH %d: reading the reply: %w", i+1, err)
		}
		t1 := time.Now()
		lat = append(lat, t1.Sub(t0))
		fromSched = append(fromSched, t1.Sub(target))
		if err := v.ServerErr(); err != nil {
			return st, fmt.Errorf("PUBLISH: %w", err)
		}
		if v.Kind != ':' {
			return st, fmt.Errorf("PUBLISH: unexpected reply %v", truncate(v.String(), 200))
		}
		if st.ReceiversMin < 0 || v.Int < st.ReceiversMin {
			st.ReceiversMin = v.Int
		}
		st.ReceiversMax = max(st.ReceiversMax, v.Int)
		done.Store(int64(i + 1))
	}
	st.Count = len(lat)
	if len(lat) == 0 {
		return st, nil
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	st.P50Micros = us(percentile(lat, 0.50))
	st.P99Micros = us(percentile(lat, 0.99))
	st.MaxMicros = us(lat[len(lat)-1])
	st.MeanMicros = us(sum / time.Duration(len(lat)))
	slices.Sort(fromSched)
	st.P99FromScheduleMicros = us(percentile(fromSched, 0.99))
	return st, nil
}

// percentile returns the q-quantile of sorted by the nearest-rank method.
func percentile(sorted []time.Duration, q float64) time.Duration {
	i := int(float64(len(sorted))*q+0.999999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// drainStalled reads the stalled subscriber's socket until it ends, pauses
// for 500ms, or limit passes, and returns how many messages it read and the
// error that stopped it (a timeout if it is still open).
func drainStalled(c *conn, limit time.Duration) (int64, error) {
	end := time.Now().Add(limit)
	var n int64
	for {
		dl := time.Now().Add(500 * time.Millisecond)
		if dl.After(end) {
			dl = end
		}
		if err := c.nc.SetReadDeadline(dl); err != nil {
			return n, err
		}
		v, err := c.rd.ReadFrame()
		if err != nil {
			return n, err
		}
		if (v.Kind == '*' || v.Kind == '>') && len(v.Elems) == 3 && string(v.Elems[0].Str) == "message" {
			n++
		}
	}
}

// isTimeout reports whether err is a deadline expiry.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// isReset reports whether err is the peer closing or resetting the
// connection.
func isReset(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
