package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// patternsConfig holds the flags of the patterns mode.
type patternsConfig struct {
	*common
	patterns int
	msgs     int
	size     int
	window   int
	channel  string
}

func (c *patternsConfig) register(fs *flag.FlagSet) {
	fs.IntVar(&c.patterns, "patterns", 1000, "distinct patterns that do not match the channel (one more that does is added)")
	fs.IntVar(&c.msgs, "msgs", 20000, "PUBLISH commands to send")
	fs.IntVar(&c.size, "size", 64, "payload size in bytes")
	fs.IntVar(&c.window, "window", 64, "PUBLISH commands sent ahead of their replies")
	fs.StringVar(&c.channel, "channel", "cairn-bench:patterns:ch", "the channel")
}

func (c *patternsConfig) validate() error {
	if err := firstError(
		checkRange("patterns", c.patterns, 0, 1_000_000),
		checkRange("msgs", c.msgs, 1, 100_000_000),
		checkRange("size", c.size, 0, 16<<20),
		checkRange("window", c.window, 1, 100_000),
	); err != nil {
		return err
	}
	if int64(c.size+64)*int64(c.window) > 256<<20 {
		return usageErrorf("-size %d with -window %d: more than 256 MiB in flight", c.size, c.window)
	}
	if c.channel == "" || strings.Contains(c.channel, "cb-nm") {
		return usageErrorf("-channel %q: must not be empty or contain \"cb-nm\", which the non-matching patterns use", c.channel)
	}
	return nil
}

// nonMatchingPatterns returns n distinct patterns that cannot match
// channel, in three shapes that make a glob matcher do different work: a
// shared literal prefix that fails late, a leading '*' that makes it scan,
// and a character class that fails at once. None can match a channel that
// does not contain "cb-nm": the first shape is longer than the channel, the
// others need "cb-nm" and the third also a first byte unlike the
// channel's.
func nonMatchingPatterns(n int, channel string) []string {
	ps := make([]string, n)
	for i := range ps {
		switch i % 3 {
		case 0:
			ps[i] = fmt.Sprintf("%s:cb-nm%d:*", channel, i)
		case 1:
			ps[i] = fmt.Sprintf("*:cb-nm%d", i)
		default:
			ps[i] = fmt.Sprintf("[^%c]*:cb-nm%d?", channel[0], i)
		}
	}
	return ps
}

// patternsResult is the summary of a patterns run.
type patternsResult struct {
	Mode     string `json:"mode"`
	Addr     string `json:"addr"`
	Patterns int    `json:"patterns"`
	Size     int    `json:"size"`
	Window   int    `json:"window"`
	Msgs     int    `json:"msgs"`

	// Published is how many PUBLISH commands were answered; less than
	// Msgs if the time limit stopped the run (StoppedEarly).
	Published       int64   `json:"published"`
	StoppedEarly    bool    `json:"stopped_early"`
	PublishSeconds  float64 `json:"publish_seconds"`
	PublishedPerSec float64 `json:"published_per_sec"`

	// Delivered counts the pmessages the subscriber received; one is
	// expected per PUBLISH.
	Delivered  int64 `json:"delivered"`
	Lost       int64 `json:"lost"`
	ReplySum   int64 `json:"publish_reply_sum"`
	ReplySumOK bool  `json:"publish_reply_sum_ok"`

	Corrupt          int64  `json:"corrupt"`
	UnexpectedFrames int64  `json:"unexpected_frames"`
	Disconnected     bool   `json:"subscriber_disconnected"`
	FirstProblem     string `json:"first_problem,omitempty"`
}

func (r *patternsResult) title() string {
	return fmt.Sprintf("patterns against %s: 1 subscriber with %d non-matching patterns + 1 matching, %d messages of %d B, window %d",
		r.Addr, r.Patterns, r.Msgs, r.Size, r.Window)
}

func (r *patternsResult) rows() [][2]string {
	rows := [][2]string{
		{"published", fmt.Sprintf("%s msgs in %.3f s", fmtInt(r.Published), r.PublishSeconds)},
		{"PUBLISH/s", fmtRate(r.PublishedPerSec)},
		{"delivered", fmt.Sprintf("%s of %s", fmtInt(r.Delivered), fmtInt(r.Published))},
		{"lost", fmtInt(r.Lost)},
		{"PUBLISH reply sum", fmt.Sprintf("%s (expected %s) %s", fmtInt(r.ReplySum), fmtInt(r.Published), okText(r.ReplySumOK))},
	}
	if r.StoppedEarly {
		rows = append(rows, [2]string{"stopped early", "the -duration-limit ran out"})
	}
	if r.Corrupt > 0 || r.UnexpectedFrames > 0 || r.Disconnected {
		rows = append(rows,
			[2]string{"corrupt messages", fmtInt(r.Corrupt)},
			[2]string{"unexpected frames", fmtInt(r.UnexpectedFrames)},
			[2]string{"subscriber disconnected", fmt.Sprint(r.Disconnected)})
	}
	if r.FirstProblem != "" {
		rows = append(rows, [2]string{"first problem", r.FirstProblem})
	}
	return rows
}

// runPatterns runs the patterns mode. Progress lines go to progressW.
func runPatterns(cfg *patternsConfig, progressW io.Writer) (*patternsResult, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	stopAt := start.Add(cfg.limit)

	pats := append(nonMatchingPatterns(cfg.patterns, cfg.channel), cfg.channel[:len(cfg.channel)/2]+"*")
	sub, err := subscribe(cfg.common, 0, "PSUBSCRIBE", pats, cfg.channel, cfg.size, 0)
	if err != nil {
		return nil, err
	}
	subs := []*subscriber{sub}
	defer stopAll(subs)
	sub.start(stopAt.Add(cfg.drain + 2*cfg.timeout))

	pub, err := dial(cfg.dialAddr, cfg.timeout, 0)
	if err != nil {
		return nil, fmt.Errorf("publisher: %w", err)
	}
	defer pub.close()
	body := payload(cfg.size)
	if err := warmUp(pub, subs, cfg.channel, body, cfg.timeout, pats[len(pats)-1]); err != nil {
		return nil, err
	}

	res, st, err := publishPhase(cfg.common, progressW, "patterns", pub, subs, cfg.channel, body, cfg.msgs, cfg.window, stopAt,
		func(replies, delivered int64) string {
			return fmt.Sprintf("published %s/%s, delivered %s", fmtInt(replies), fmtInt(int64(cfg.msgs)), fmtInt(delivered))
		})
	if err != nil {
		return nil, err
	}

	r := &patternsResult{
		Mode: "patterns", Addr: cfg.addr, Patterns: cfg.patterns,
		Size: cfg.size, Window: cfg.window, Msgs: cfg.msgs,
		Published: res.replies, StoppedEarly: res.stoppedEarly,
		PublishSeconds:   res.last.Sub(res.first).Seconds(),
		PublishedPerSec:  rate(res.replies, res.last.Sub(res.first)),
		Delivered:        st.received,
		ReplySum:         res.sum,
		ReplySumOK:       res.sum == res.replies,
		Corrupt:          st.corrupt,
		UnexpectedFrames: st.unexpected,
		Disconnected:     st.disconnected > 0,
		FirstProblem:     st.firstProblem,
	}
	r.Lost = r.Published - r.Delivered
	return r, nil
}
