package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// subscribeBufSize is the size of the subscribe mode's read buffer: large,
// so that one read system call takes in thousands of messages.
const subscribeBufSize = 1 << 20

// subscribeConfig holds the flags of the subscribe mode.
type subscribeConfig struct {
	*common
	pattern string
	expect  int

	// signals delivers the signals that stop the reading; nil means
	// SIGINT and SIGTERM of the process (tests send their own).
	signals chan os.Signal
}

func (c *subscribeConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.pattern, "pattern", "__keyevent@0__:*", "the pattern to PSUBSCRIBE")
	fs.IntVar(&c.expect, "expect", 0, "stop after this many pmessages, and fail unless they all arrive (0: read until the connection closes, a signal or -duration-limit)")
}

func (c *subscribeConfig) validate() error {
	if err := checkRange("expect", c.expect, 0, 2_000_000_000); err != nil {
		return err
	}
	if c.pattern == "" {
		return usageErrorf("-pattern must not be empty")
	}
	return nil
}

// How a subscribe run stopped reading, as subscribeResult.EndedBy says.
const (
	endedExpect = "expect"         // -expect pmessages arrived
	endedClosed = "closed"         // the server closed the connection
	endedSignal = "signal"         // SIGINT or SIGTERM arrived
	endedLimit  = "duration-limit" // -duration-limit passed
)

// subscribeResult is the summary of a subscribe run.
type subscribeResult struct {
	Mode    string `json:"mode"`
	Addr    string `json:"addr"`
	Pattern string `json:"pattern"`
	// Expect is -expect, 0 if not given.
	Expect int `json:"expect"`

	// Received counts the pmessage frames of Pattern; it never exceeds a
	// positive Expect, since reading stops there.
	Received int64 `json:"received"`
	// Seconds is the time from the first message's arrival to the last
	// one's, each bounded by the read that brought it in; PerSec is
	// Received divided by it (0 for fewer than two reads' worth).
	Seconds float64 `json:"seconds"`
	PerSec  float64 `json:"per_sec"`
	// ExpectMet is true if Expect is 0 or Received reached it.
	ExpectMet bool `json:"expect_met"`
	// EndedBy says why reading stopped: "expect", "closed", "signal" or
	// "duration-limit".
	EndedBy string `json:"ended_by"`

	// UnexpectedFrames counts the frames that are not pmessages of
	// Pattern; FirstUnexpected shows the first of them.
	UnexpectedFrames int64  `json:"unexpected_frames"`
	FirstUnexpected  string `json:"first_unexpected,omitempty"`

	// Error says why the run failed although it completed (-expect not
	// met, unexpected frames); empty if it did not.
	Error string `json:"error,omitempty"`
}

func (r *subscribeResult) title() string {
	return fmt.Sprintf("subscribe against %s: PSUBSCRIBE %q", r.Addr, r.Pattern)
}

func (r *subscribeResult) rows() [][2]string {
	expect := "none"
	if r.Expect > 0 {
		expect = fmt.Sprintf("%s: %s", fmtInt(int64(r.Expect)), map[bool]string{true: "met", false: "NOT met"}[r.ExpectMet])
	}
	ended := map[string]string{
		endedExpect: "-expect reached",
		endedClosed: "the server closed the connection",
		endedSignal: "a signal",
		endedLimit:  "-duration-limit",
	}[r.EndedBy]
	rows := [][2]string{
		{"received", fmt.Sprintf("%s pmessages", fmtInt(r.Received))},
		{"first to last", fmt.Sprintf("%.3f s", r.Seconds)},
		{"received msgs/s", fmtRate(r.PerSec)},
		{"-expect", expect},
		{"stopped by", ended},
	}
	if r.UnexpectedFrames > 0 {
		rows = append(rows,
			[2]string{"unexpected frames", fmtInt(r.UnexpectedFrames)},
			[2]string{"first unexpected", r.FirstUnexpected})
	}
	return rows
}

// failure implements failingReport.
func (r *subscribeResult) failure() error {
	if r.Error == "" {
		return nil
	}
	return errors.New(r.Error)
}

// pmessageCounter counts the pmessage frames of one pattern that a Reader
// returns. Its loop allocates nothing per frame.
type pmessageCounter struct {
	rd      *Reader
	pattern string
	expect  int64 // stop after this many; 0: never

	// progress is n for progress lines, updated as n is.
	progress atomic.Int64

	// The fields below belong to read until it returns.
	n           int64     // pmessages of pattern
	first, last time.Time // Reader.FillTime of the first and last of them
	unexpected  int64     // other frames
	firstOdd    string    // the first other frame
}

// read reads frames until expect pmessages have arrived, if expect is
// positive, and returns nil then. Otherwise it reads until the Reader
// fails, and returns that error; an error reply is returned as a
// *ServerError.
func (p *pmessageCounter) read() error {
	n := p.n
	var last time.Time
	defer func() {
		p.n = n
		if n > 0 {
			p.last = last
		}
	}()
	for p.expect <= 0 || n < p.expect {
		v, err := p.rd.ReadFrame()
		if err != nil {
			return err
		}
		if _, _, ok := pmessage(v); !ok || string(v.Elems[1].Str) != p.pattern {
			if se := v.ServerErr(); se != nil {
				return se
			}
			p.unexpected++
			if p.firstOdd == "" {
				p.firstOdd = truncate(v.String(), 200)
			}
			continue
		}
		last = p.rd.FillTime()
		if n == 0 {
			p.first = last
		}
		n++
		p.progress.Store(n)
	}
	return nil
}

// runSubscribe runs the subscribe mode: one connection subscribed to
// cfg.pattern that counts the pmessages it receives until cfg.expect of
// them, the end of the connection, a signal or cfg.limit. It prints the
// line "subscribed" to progressW once the server has confirmed the
// subscription, then progress lines unless cfg.quiet.
func runSubscribe(cfg *subscribeConfig, progressW io.Writer) (*subscribeResult, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	signals := cfg.signals
	if signals == nil {
		signals = make(chan os.Signal, 1)
		signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(signals)
	}
	deadline := time.Now().Add(cfg.limit)

	c, err := dial(cfg.dialAddr, cfg.timeout, 0)
	if err != nil {
		return nil, err
	}
	defer c.close()
	c.rd = NewReader(c.nc, subscribeBufSize)
	if err := (&subscriber{c: c}).confirm("PSUBSCRIBE", []string{cfg.pattern}); err != nil {
		return nil, err
	}
	if err := c.nc.SetReadDeadline(deadline); err != nil {
		return nil, fmt.Errorf("setting the read deadline: %w", err)
	}
	if progressW != nil {
		fmt.Fprintln(progressW, "subscribed")
	}

	// A signal stops the reading by moving the read deadline to now.
	var signaled atomic.Bool
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-signals:
			signaled.Store(true)
			c.nc.SetReadDeadline(time.Now())
		case <-done:
		}
	}()

	pc := &pmessageCounter{rd: c.rd, pattern: cfg.pattern, expect: int64(cfg.expect)}
	prog := startProgress(progressW, cfg.quiet || progressW == nil, "subscribe", func() string {
		if cfg.expect > 0 {
			return fmt.Sprintf("received %s/%s", fmtInt(pc.progress.Load()), fmtInt(int64(cfg.expect)))
		}
		return fmt.Sprintf("received %s", fmtInt(pc.progress.Load()))
	})
	err = pc.read()
	prog.stop()

	r := &subscribeResult{
		Mode: "subscribe", Addr: cfg.addr, Pattern: cfg.pattern, Expect: cfg.expect,
		Received:         pc.n,
		UnexpectedFrames: pc.unexpected,
		FirstUnexpected:  pc.firstOdd,
	}
	switch {
	case err == nil:
		r.EndedBy = endedExpect
	case errors.Is(err, io.EOF):
		r.EndedBy = endedClosed
	case errors.Is(err, os.ErrDeadlineExceeded) && signaled.Load():
		r.EndedBy = endedSignal
	case errors.Is(err, os.ErrDeadlineExceeded):
		r.EndedBy = endedLimit
	default:
		return nil, fmt.Errorf("after %d pmessages: %w", pc.n, err)
	}
	if d := pc.last.Sub(pc.first); d > 0 {
		r.Seconds = d.Seconds()
		r.PerSec = rate(pc.n, d)
	}
	r.ExpectMet = cfg.expect == 0 || pc.n == int64(cfg.expect)
	switch {
	case !r.ExpectMet:
		r.Error = fmt.Sprintf("received %d of the %d expected pmessages (stopped by %s)", pc.n, cfg.expect, r.EndedBy)
	case pc.unexpected > 0:
		r.Error = fmt.Sprintf("received %d frames that are not pmessages of %q; the first: %s", pc.unexpected, cfg.pattern, pc.firstOdd)
	}
	return r, nil
}
