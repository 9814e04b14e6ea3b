package main

import (
	"flag"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// fanoutConfig holds the flags of the fanout mode.
type fanoutConfig struct {
	*common
	subs, patternSubs int
	msgs, size        int
	window            int
	channel, pattern  string
}

func (c *fanoutConfig) register(fs *flag.FlagSet) {
	fs.IntVar(&c.subs, "subs", 100, "subscriber connections in all")
	fs.IntVar(&c.patternSubs, "pattern-subs", 50, "how many of the subscribers PSUBSCRIBE -pattern (the others SUBSCRIBE -channel)")
	fs.IntVar(&c.msgs, "msgs", 20000, "PUBLISH commands to send")
	fs.IntVar(&c.size, "size", 64, "payload size in bytes")
	fs.IntVar(&c.window, "window", 64, "PUBLISH commands sent ahead of their replies")
	fs.StringVar(&c.channel, "channel", "cairn-bench:fanout:ch", "the channel")
	fs.StringVar(&c.pattern, "pattern", "cairn-bench:fanout:*", "the pattern, which must match -channel")
}

func (c *fanoutConfig) validate() error {
	if err := firstError(
		checkRange("subs", c.subs, 1, 10000),
		checkRange("pattern-subs", c.patternSubs, 0, c.subs),
		checkRange("msgs", c.msgs, 1, 100_000_000),
		checkRange("size", c.size, 0, 16<<20),
		checkRange("window", c.window, 1, 100_000),
	); err != nil {
		return err
	}
	if int64(c.size+64)*int64(c.window) > 256<<20 {
		return usageErrorf("-size %d with -window %d: more than 256 MiB in flight", c.size, c.window)
	}
	if c.channel == "" || c.pattern == "" {
		return usageErrorf("-channel and -pattern must not be empty")
	}
	return nil
}

// fanoutResult is the summary of a fanout run.
type fanoutResult struct {
	Mode        string `json:"mode"`
	Addr        string `json:"addr"`
	Subs        int    `json:"subs"`
	PatternSubs int    `json:"pattern_subs"`
	Size        int    `json:"size"`
	Window      int    `json:"window"`
	Msgs        int    `json:"msgs"`

	// Published is how many PUBLISH commands were answered; less than
	// Msgs if the time limit stopped the run (StoppedEarly).
	Published       int64   `json:"published"`
	StoppedEarly    bool    `json:"stopped_early"`
	PublishSeconds  float64 `json:"publish_seconds"`
	PublishedPerSec float64 `json:"published_per_sec"`

	// ExpectedDeliveries is Published × Subs; Delivered counts the
	// messages the subscribers received, and DeliveredPerSec divides it
	// by the time from the first PUBLISH to the last delivery.
	ExpectedDeliveries int64   `json:"expected_deliveries"`
	Delivered          int64   `json:"delivered"`
	DeliverSeconds     float64 `json:"deliver_seconds"`
	DeliveredPerSec    float64 `json:"delivered_per_sec"`
	// Lost is ExpectedDeliveries − Delivered after the drain wait
	// (negative if subscribers got more than they should).
	Lost int64 `json:"lost"`

	// ReplySum is the sum of PUBLISH's replies (receivers per message);
	// ReplySumOK says whether it equals ExpectedDeliveries.
	ReplySum   int64 `json:"publish_reply_sum"`
	ReplySumOK bool  `json:"publish_reply_sum_ok"`

	Corrupt          int64  `json:"corrupt"`
	UnexpectedFrames int64  `json:"unexpected_frames"`
	DisconnectedSubs int    `json:"disconnected_subs"`
	FirstProblem     string `json:"first_problem,omitempty"`
}

func (r *fanoutResult) title() string {
	return fmt.Sprintf("fanout against %s: %d subscribers (%d by pattern), %d messages of %d B, window %d",
		r.Addr, r.Subs, r.PatternSubs, r.Msgs, r.Size, r.Window)
}

func (r *fanoutResult) rows() [][2]string {
	rows := [][2]string{
		{"published", fmt.Sprintf("%s msgs in %.3f s", fmtInt(r.Published), r.PublishSeconds)},
		{"published msgs/s", fmtRate(r.PublishedPerSec)},
		{"delivered", fmt.Sprintf("%s of %s in %.3f s", fmtInt(r.Delivered), fmtInt(r.ExpectedDeliveries), r.DeliverSeconds)},
		{"delivered msgs/s", fmtRate(r.DeliveredPerSec)},
		{"lost", fmtInt(r.Lost)},
		{"PUBLISH reply sum", fmt.Sprintf("%s (expected %s) %s", fmtInt(r.ReplySum), fmtInt(r.ExpectedDeliveries), okText(r.ReplySumOK))},
	}
	if r.StoppedEarly {
		rows = append(rows, [2]string{"stopped early", "the -duration-limit ran out"})
	}
	if r.Corrupt > 0 || r.UnexpectedFrames > 0 || r.DisconnectedSubs > 0 {
		rows = append(rows,
			[2]string{"corrupt messages", fmtInt(r.Corrupt)},
			[2]string{"unexpected frames", fmtInt(r.UnexpectedFrames)},
			[2]string{"disconnected subscribers", fmt.Sprint(r.DisconnectedSubs)})
	}
	if r.FirstProblem != "" {
		rows = append(rows, [2]string{"first problem", r.FirstProblem})
	}
	return rows
}

// runFanout runs the fanout mode: cfg.subs subscribers, one publisher,
// cfg.msgs messages. Progress lines go to progressW.
func runFanout(cfg *fanoutConfig, progressW io.Writer) (*fanoutResult, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	stopAt := start.Add(cfg.limit)
	readDeadline := stopAt.Add(cfg.drain + 2*cfg.timeout)

	subs, err := connectSubscribers(cfg.common, cfg.subs, cfg.patternSubs, cfg.channel, cfg.pattern, cfg.size, readDeadline)
	if err != nil {
		return nil, err
	}
	defer stopAll(subs) // a no-op after collect
	pub, err := dial(cfg.dialAddr, cfg.timeout, 0)
	if err != nil {
		return nil, fmt.Errorf("publisher: %w", err)
	}
	defer pub.close()

	body := payload(cfg.size)
	if err := warmUp(pub, subs, cfg.channel, body, cfg.timeout, cfg.pattern); err != nil {
		return nil, err
	}

	res, st, err := publishPhase(cfg.common, progressW, "fanout", pub, subs, cfg.channel, body, cfg.msgs, cfg.window, stopAt,
		func(replies, delivered int64) string {
			return fmt.Sprintf("published %s/%s, delivered %s/%s",
				fmtInt(replies), fmtInt(int64(cfg.msgs)),
				fmtInt(delivered), fmtInt(int64(cfg.msgs)*int64(len(subs))))
		})
	if err != nil {
		return nil, err
	}
	expected := res.replies * int64(len(subs))

	r := &fanoutResult{
		Mode: "fanout", Addr: cfg.addr, Subs: cfg.subs, PatternSubs: cfg.patternSubs,
		Size: cfg.size, Window: cfg.window, Msgs: cfg.msgs,
		Published: res.replies, StoppedEarly: res.stoppedEarly,
		PublishSeconds:     res.last.Sub(res.first).Seconds(),
		PublishedPerSec:    rate(res.replies, res.last.Sub(res.first)),
		ExpectedDeliveries: expected,
		Delivered:          st.received,
		ReplySum:           res.sum,
		ReplySumOK:         res.sum == expected,
		Corrupt:            st.corrupt,
		UnexpectedFrames:   st.unexpected,
		DisconnectedSubs:   st.disconnected,
		FirstProblem:       st.firstProblem,
	}
	r.Lost = r.ExpectedDeliveries - r.Delivered
	if st.last.After(res.first) {
		r.DeliverSeconds = st.last.Sub(res.first).Seconds()
		r.DeliveredPerSec = rate(r.Delivered, st.last.Sub(res.first))
	}
	return r, nil
}

// publishPhase sends msgs PUBLISH commands of body to channel through pub,
// window of them ahead of their replies, until stopAt, with progress lines
// from line(replies so far, messages delivered since the warm-up); then it
// waits up to cfg.drain for every subscriber to receive each of them, and
// stops the subscribers. The stats it returns count the messages received
// after the warm-up message that each subscriber already has.
func publishPhase(cfg *common, progressW io.Writer, mode string, pub *conn, subs []*subscriber, channel, body string,
	msgs, window int, stopAt time.Time, line func(replies, delivered int64) string) (pubResult, subStats, error) {
	frame := AppendCommand(nil, "PUBLISH", channel, body)
	baseline := int64(len(subs)) // the warm-up message
	var replies atomic.Int64
	prog := startProgress(progressW, cfg.quiet, mode, func() string {
		return line(replies.Load(), received(subs)-baseline)
	})
	res, err := publishPipelined(pub, frame, int64(msgs), window, stopAt, &replies)
	if err != nil {
		prog.stop()
		return res, subStats{}, err
	}
	waitDelivered(subs, baseline+res.replies*int64(len(subs)), cfg.drain)
	prog.stop()
	st := collect(subs)
	st.received -= baseline
	return res, st, nil
}

// warmUp publishes one message and waits until every subscriber has it,
// which proves the subscriptions active and the pattern matching.
func warmUp(pub *conn, subs []*subscriber, channel, body string, timeout time.Duration, pattern string) error {
	v, err := pub.do("PUBLISH", channel, body)
	if err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	if v.Kind != ':' {
		return fmt.Errorf("warm-up: PUBLISH replied %v, not an integer", truncate(v.String(), 200))
	}
	if v.Int != int64(len(subs)) {
		return fmt.Errorf("warm-up: PUBLISH reached %d receivers, expected %d (does -pattern %q match -channel %q on this server?)",
			v.Int, len(subs), pattern, channel)
	}
	end := time.Now().Add(timeout)
	for _, s := range subs {
		for s.count.Load() < 1 {
			if time.Now().After(end) {
				return fmt.Errorf("warm-up: subscriber %d got no message within %v", s.id, timeout)
			}
			time.Sleep(time.Millisecond)
		}
	}
	return nil
}
