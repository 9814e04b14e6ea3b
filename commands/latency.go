package commands

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

func init() {
	const flags = FlagAdmin | FlagNoScript | FlagLoading | FlagStale
	register(&Spec{Name: "latency", Arity: -2, Group: "server", Since: "2.8.13", Summary: "A container for latency diagnostics commands.",
		Subcommands: map[string]*Spec{
			"histogram": {Arity: -2, Flags: flags, Tips: []string{"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"}, Since: "7.0.0", Summary: "Returns the cumulative distribution of latencies of a subset or all commands.", Handler: cmdLatencyHistogram},
			"latest":    {Arity: 2, Flags: flags, Tips: []string{"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"}, Since: "2.8.13", Summary: "Returns the latest latency samples for all events.", Handler: cmdLatencyLatest},
			"history":   {Arity: 3, Flags: flags, Tips: []string{"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"}, Since: "2.8.13", Summary: "Returns timestamp-latency samples for an event.", Handler: cmdLatencyLatest},
			"reset":     {Arity: -2, Flags: flags, Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}, Since: "2.8.13", Summary: "Resets the latency data for one or more events.", Handler: cmdLatencyReset},
			"graph":     {Arity: 3, Flags: flags, Tips: []string{"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"}, Since: "2.8.13", Summary: "Returns a latency graph for an event.", Handler: cmdLatencyGraph},
			"doctor":    {Arity: 2, Flags: flags, Tips: []string{"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"}, Since: "2.8.13", Summary: "Returns a human-readable latency analysis report.", Handler: cmdLatencyDoctor},
			"help":      {Arity: 2, Flags: FlagLoading | FlagStale, Since: "2.8.13", Summary: "Returns helpful text about the different subcommands.", Handler: cmdLatencyHelp},
		}})
}

// latencyHistogram is a command's distribution of run times for INFO
// latencystats and LATENCY HISTOGRAM, laid out as the HDR histogram Redis
// keeps (values from 1 ns to 1 s, two significant digits): times below
// 256 ns have a bucket per nanosecond, and each doubling above has 128
// buckets, so a bucket is at most 1/128 of its values wide. Its counters
// are allocated at the first run, so commands never used cost nothing.
type latencyHistogram struct {
	counts atomic.Pointer[[latencyBuckets]atomic.Int64]
}

const (
	// latencyMaxNs is the longest time a histogram tells apart; longer
	// runs count as this long, as in Redis.
	latencyMaxNs = int64(time.Second)
	// latencyBuckets covers 0..255 ns one by one, then 128 buckets for
	// each power of two up to 2^30 ns (past latencyMaxNs).
	latencyBuckets = 256 + 22*128
)

// latencyBucket returns the bucket of a run of ns nanoseconds.
func latencyBucket(ns int64) int {
	v := uint64(min(max(ns, 1), latencyMaxNs))
	if v < 256 {
		return int(v)
	}
	shift := bits.Len64(v) - 8
	return 256 + (shift-1)*128 + int(v>>shift) - 128
}

// latencyBounds returns the lowest and highest times bucket i holds.
func latencyBounds(i int) (lo, hi int64) {
	if i < 256 {
		return int64(i), int64(i)
	}
	shift := (i-256)/128 + 1
	lo = int64((i-256)%128+128) << shift
	return lo, lo + 1<<shift - 1
}

// record counts one run of d.
func (h *latencyHistogram) record(d time.Duration) {
	counts := h.counts.Load()
	if counts == nil {
		h.counts.CompareAndSwap(nil, new([latencyBuckets]atomic.Int64))
		counts = h.counts.Load()
	}
	counts[latencyBucket(int64(d))].Add(1)
}

// reset forgets every run (CONFIG RESETSTAT); the command drops out of
// INFO latencystats until it runs again.
func (h *latencyHistogram) reset() { h.counts.Store(nil) }

// snapshot returns a copy of the counts and their total, or ok false when
// the command has not run since the last reset.
func (h *latencyHistogram) snapshot() (counts *[latencyBuckets]int64, total int64, ok bool) {
	live := h.counts.Load()
	if live == nil {
		return nil, 0, false
	}
	counts = new([latencyBuckets]int64)
	for i := range live {
		counts[i] = live[i].Load()
		total += counts[i]
	}
	return counts, total, total > 0
}

// latencyPercentile returns the time at percentile p (0..100) of the
// snapshot counts holding total runs, in nanoseconds, as HDR histograms
// (and so Redis) give it: the highest time of the bucket where the runs
// counted reach p% of total, rounded to the nearest run and at least one;
// for p 0, the lowest time of the first bucket.
func latencyPercentile(counts *[latencyBuckets]int64, total int64, p float64) int64 {
	want := max(int64(min(p, 100)/100*float64(total)+0.5), 1)
	var seen int64
	for i, n := range counts {
		if seen += n; seen >= want {
			lo, hi := latencyBounds(i)
			if p == 0 {
				return lo
			}
			return hi
		}
	}
	_, hi := latencyBounds(latencyBuckets - 1)
	return hi
}

// latencyStatsLine renders one INFO latencystats field of the command
// named name, or "" when it has not run since the last reset.
func latencyStatsLine(name string, h *latencyHistogram, percentiles []float64) string {
	counts, total, ok := h.snapshot()
	if !ok {
		return ""
	}
	var b strings.Builder
	b.WriteString("latency_percentiles_usec_")
	b.WriteString(name)
	b.WriteByte(':')
	for i, p := range percentiles {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "p%s=%.3f", strconv.FormatFloat(p, 'f', -1, 64), float64(latencyPercentile(counts, total, p))/1000)
	}
	b.WriteString("\r\n")
	return b.String()
}

// cmdLatencyHistogram replies, for each named command (a container
// command stands for all its subcommands; unknown names are skipped) or
// for every command that ran, its calls and the cumulative count of runs
// per power-of-two latency bucket from 1 µs up, as Redis's LATENCY
// HISTOGRAM does: a bucket appears when it adds runs, keyed by its highest
// time in whole microseconds.
func cmdLatencyHistogram(c *Ctx) {
	var specs []*Spec
	if len(c.Args) == 2 {
		specs = allSpecs()
	}
	for _, a := range c.Args[2:] {
		switch s := lookupFull(string(a)); {
		case s == nil:
		case s.Subcommands != nil && s.parent == nil:
			specs = append(specs, sortedSubcommands(s)...)
		default:
			specs = append(specs, s)
		}
	}
	type entry struct {
		name    string
		calls   int64
		buckets [][2]int64 // highest µs, cumulative runs
	}
	var entries []entry
	for _, s := range specs {
		counts, total, ok := s.stats.latency.snapshot()
		if !ok {
			continue
		}
		e := entry{name: s.FullName(), calls: s.stats.calls.Load()}
		var seen, prev int64
		next := 0
		for limit := int64(1024); seen < total; limit *= 2 {
			last := latencyBucket(limit)
			for ; next <= last; next++ {
				seen += counts[next]
			}
			if seen > prev {
				_, hi := latencyBounds(last)
				e.buckets = append(e.buckets, [2]int64{hi / 1000, seen})
				prev = seen
			}
			if limit >= latencyMaxNs {
				break
			}
		}
		entries = append(entries, e)
	}
	c.W.Map(len(entries))
	for _, e := range entries {
		c.W.BulkString(e.name)
		c.W.Map(2)
		c.W.BulkString("calls")
		c.W.Int(e.calls)
		c.W.BulkString("histogram_usec")
		c.W.Map(len(e.buckets))
		for _, b := range e.buckets {
			c.W.Int(b[0])
			c.W.Int(b[1])
		}
	}
}

// Cairn has no latency monitor (Redis's latency-monitor-threshold, off by
// default there): LATENCY LATEST and HISTORY reply what Redis replies
// with it off, an empty list, RESET resets nothing, GRAPH has no samples.

func cmdLatencyLatest(c *Ctx) { c.W.Array(0) }

func cmdLatencyReset(c *Ctx) { c.W.Int(0) }

func cmdLatencyGraph(c *Ctx) {
	c.errorf("ERR No samples available for event '%s'", c.Args[2])
}

func cmdLatencyDoctor(c *Ctx) {
	c.W.Verbatim("Cairn has no latency monitor, so there are no latency events to analyse. " +
		"Per-command latency distributions are in INFO latencystats and LATENCY HISTOGRAM.\n")
}

func cmdLatencyHelp(c *Ctx) {
	help(c, "LATENCY", []string{
		"HISTOGRAM [<command> ...]", "    Cumulative latency distribution of the named commands (default: every command run).",
		"LATEST", "    Latest samples of each latency event (always empty: Cairn has no latency monitor).",
		"HISTORY <event>", "    Samples of one latency event (always empty).",
		"RESET [<event> ...]", "    Reset latency events (there are none).",
		"GRAPH <event>", "    ASCII graph of a latency event.",
		"DOCTOR", "    Report on latency.",
	})
}
