// Command tracewaits reads a Go runtime execution trace (as served by a
// server built with -tags pprof at /debug/pprof/trace) and prints where
// ready goroutines waited for the P: for each kind of goroutine (named by
// the function it started in), how many times it became runnable and the
// p50, p99 and longest wait until it ran; the garbage collector's mark
// phases; the longest uninterrupted runs of each kind; and, for the
// longest waits, which goroutines held the P meanwhile.
//
// It is its own module, so the server does not depend on
// golang.org/x/exp. docs/performance.md quotes its output.
//
// Usage: go run ./scripts/tracewaits TRACE-FILE  (from scripts/tracewaits: go run . FILE)
package main

import (
	"fmt"
	"os"
	"slices"
	"time"

	"golang.org/x/exp/trace"
)

// run is one stretch of a goroutine on a P.
type run struct {
	g          trace.GoID
	start, end trace.Time
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: tracewaits TRACE-FILE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracewaits:", err)
		os.Exit(1)
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracewaits:", err)
		os.Exit(1)
	}

	name := map[trace.GoID]string{}
	runnable := map[trace.GoID]trace.Time{}
	current := map[trace.ProcID]run{}
	waits := map[string][]time.Duration{}
	var runs, long []run // every run; waits over the threshold (as runs)
	var marks []time.Duration
	var markStart trace.Time
	const threshold = 500 * time.Microsecond
	for {
		ev, err := r.ReadEvent()
		if err != nil {
			break
		}
		switch ev.Kind() {
		case trace.EventRangeBegin:
			if ev.Range().Name == "GC concurrent mark phase" {
				markStart = ev.Time()
			}
		case trace.EventRangeEnd:
			if ev.Range().Name == "GC concurrent mark phase" && markStart != 0 {
				marks = append(marks, ev.Time().Sub(markStart))
			}
		case trace.EventStateTransition:
			st := ev.StateTransition()
			if st.Resource.Kind != trace.ResourceGoroutine {
				continue
			}
			g := st.Resource.Goroutine()
			if name[g] == "" {
				for fr := range st.Stack.Frames() {
					name[g] = fr.Func // the outermost frame: where it started
				}
			}
			from, to := st.Goroutine()
			switch to {
			case trace.GoRunnable:
				runnable[g] = ev.Time()
			case trace.GoRunning:
				if t, ok := runnable[g]; ok {
					d := ev.Time().Sub(t)
					waits[name[g]] = append(waits[name[g]], d)
					if d > threshold {
						long = append(long, run{g, t, ev.Time()})
					}
					delete(runnable, g)
				}
				current[ev.Proc()] = run{g: g, start: ev.Time()}
			}
			if from == trace.GoRunning {
				if c, ok := current[ev.Proc()]; ok && c.g == g {
					c.end = ev.Time()
					runs = append(runs, c)
					delete(current, ev.Proc())
				}
			}
		}
	}

	fmt.Println("waits from runnable to running, by where the goroutine started:")
	kinds := make([]string, 0, len(waits))
	for k := range waits {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		w := waits[k]
		slices.Sort(w)
		fmt.Printf("  %-70s n=%7d p50=%-10v p99=%-10v max=%v\n", k, len(w), w[len(w)/2], w[len(w)*99/100], w[len(w)-1])
	}

	fmt.Printf("GC mark phases: %d %v\n", len(marks), marks)

	longest := map[string]time.Duration{}
	for _, rn := range runs {
		longest[name[rn.g]] = max(longest[name[rn.g]], rn.end.Sub(rn.start))
	}
	fmt.Println("longest uninterrupted run, by where the goroutine started:")
	for _, k := range kinds {
		if d := longest[k]; d > 0 {
			fmt.Printf("  %-70s %v\n", k, d)
		}
	}

	slices.SortFunc(long, func(a, b run) int { return int(b.end.Sub(b.start) - a.end.Sub(a.start)) })
	fmt.Printf("the longest waits over %v, and who held the P meanwhile:\n", threshold)
	for _, w := range long[:min(len(long), 15)] {
		held := map[string]time.Duration{}
		for _, rn := range runs {
			if s, e := max(rn.start, w.start), min(rn.end, w.end); e > s {
				held[name[rn.g]] += e.Sub(s)
			}
		}
		fmt.Printf("  %v of %s:", w.end.Sub(w.start), name[w.g])
		for k, d := range held {
			if d > 50*time.Microsecond {
				fmt.Printf(" [%s %v]", k, d)
			}
		}
		fmt.Println()
	}
}
