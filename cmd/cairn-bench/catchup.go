package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// This file holds the catchup mode and what both replication modes
// (catchup and invalidation) share: the -primary and -replica flags and
// the reading of INFO replication.

// replFlags are the addresses of a primary and of one of its replicas.
type replFlags struct {
	primary, replica string
	// primaryAddr and replicaAddr are the addresses resolved by resolve.
	primaryAddr, replicaAddr string
}

func (f *replFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.primary, "primary", "127.0.0.1:6666", "`host:port` of the primary, where the writes go (loopback unless -allow-remote)")
	fs.StringVar(&f.replica, "replica", "127.0.0.1:6667", "`host:port` of a replica of -primary (loopback unless -allow-remote)")
}

// resolve resolves both addresses and records -primary as the common
// -addr, which error reports name.
func (f *replFlags) resolve(c *common) error {
	var err error
	if f.primaryAddr, err = resolveAddr(f.primary, c.allowRemote); err != nil {
		return usageErrorf("-primary: %v", err)
	}
	if f.replicaAddr, err = resolveAddr(f.replica, c.allowRemote); err != nil {
		return usageErrorf("-replica: %v", err)
	}
	if f.primaryAddr == f.replicaAddr {
		return usageErrorf("-primary and -replica are the same address %s", f.primaryAddr)
	}
	c.addr = f.primary
	return nil
}

// parseInfo returns the "field:value" lines of an INFO reply; section
// headers ("# Replication"), blank lines and lines without a colon are
// skipped. A field given twice keeps its last value.
func parseInfo(text []byte) map[string]string {
	m := make(map[string]string)
	for line := range bytes.SplitSeq(text, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok || len(k) == 0 {
			continue
		}
		m[string(k)] = string(v)
	}
	return m
}

// infoText returns the text of an INFO reply: a bulk string, or a RESP3
// verbatim string without its "txt:" prefix.
func infoText(v Value) ([]byte, error) {
	switch {
	case v.Kind == '$' && !v.Null:
		return v.Str, nil
	case v.Kind == '=' && len(v.Str) >= 4:
		return v.Str[4:], nil
	}
	return nil, fmt.Errorf("INFO replied %v, not a bulk string", truncate(v.String(), 200))
}

// replInfo is what the modes need from INFO replication.
type replInfo struct {
	role string // "master" or "slave" (as Redis and Cairn name them)
	// offset is master_repl_offset on a primary and slave_repl_offset on
	// a replica: how far it has written or applied the replication
	// stream. Its unit is the server's (bytes for Redis, batches for
	// Cairn), so offsets of different servers do not compare.
	offset int64
	// linkUp and syncing are a replica's master_link_status:up and
	// master_sync_in_progress:1.
	linkUp, syncing bool
}

// parseReplInfo reads the fields of replInfo from the text of INFO
// replication. A primary must have master_repl_offset and a replica
// slave_repl_offset.
func parseReplInfo(text []byte) (replInfo, error) {
	m := parseInfo(text)
	ri := replInfo{role: m["role"]}
	field := ""
	switch ri.role {
	case "master":
		field = "master_repl_offset"
	case "slave":
		field = "slave_repl_offset"
		ri.linkUp = m["master_link_status"] == "up"
		ri.syncing = m["master_sync_in_progress"] == "1"
	case "":
		return ri, fmt.Errorf("INFO replication has no role field")
	default:
		return ri, fmt.Errorf("INFO replication: unknown role %q", ri.role)
	}
	s, ok := m[field]
	if !ok {
		return ri, fmt.Errorf("INFO replication of a %s has no %s field", ri.role, field)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return ri, fmt.Errorf("INFO replication: %s:%s is not an integer", field, s)
	}
	ri.offset = n
	return ri, nil
}

// replicationInfo sends INFO replication on c and parses the reply.
func replicationInfo(c *conn) (replInfo, error) {
	v, err := c.do("INFO", "replication")
	if err != nil {
		return replInfo{}, err
	}
	text, err := infoText(v)
	if err != nil {
		return replInfo{}, err
	}
	return parseReplInfo(text)
}

// checkRoles checks that the server behind p is a primary and the one
// behind r a replica whose link is up, and returns their INFO.
func checkRoles(f *replFlags, p, r *conn) (replInfo, replInfo, error) {
	pi, err := replicationInfo(p)
	if err != nil {
		return pi, replInfo{}, fmt.Errorf("primary %s: %w", f.primary, err)
	}
	ri, err := replicationInfo(r)
	if err != nil {
		return pi, ri, fmt.Errorf("replica %s: %w", f.replica, err)
	}
	if pi.role != "master" {
		return pi, ri, fmt.Errorf("-primary %s reports role:%s, not master", f.primary, pi.role)
	}
	if ri.role != "slave" {
		return pi, ri, fmt.Errorf("-replica %s reports role:%s, not slave (start it with --slaveof/--replicaof %s)", f.replica, ri.role, f.primary)
	}
	if !ri.linkUp {
		return pi, ri, fmt.Errorf("-replica %s: its link to its primary is not up (master_link_status)", f.replica)
	}
	return pi, ri, nil
}

// lagSample is one reading of both offsets: the primary's first, then the
// replica's, so the replica has caught up with the primary's state at the
// first reading if lag <= 0.
type lagSample struct {
	primary, replica int64
	at               time.Time // when the replica's reply came
}

func (s lagSample) lag() int64 { return s.primary - s.replica }

func sampleLag(p, r *conn) (lagSample, error) {
	pi, err := replicationInfo(p)
	if err != nil {
		return lagSample{}, fmt.Errorf("primary: %w", err)
	}
	ri, err := replicationInfo(r)
	if err != nil {
		return lagSample{}, fmt.Errorf("replica: %w", err)
	}
	if pi.role != "master" || ri.role != "slave" {
		return lagSample{}, fmt.Errorf("roles changed: the primary is now %s and the replica %s", pi.role, ri.role)
	}
	return lagSample{primary: pi.offset, replica: ri.offset, at: time.Now()}, nil
}

// waitCaughtUp polls both offsets every poll until the replica's reaches
// the primary's, and returns the first sample that shows it, the number
// of samples taken and whether it happened before limit passed.
func waitCaughtUp(p, r *conn, poll, limit time.Duration) (lagSample, int, bool, error) {
	end := time.Now().Add(limit)
	for n := 1; ; n++ {
		s, err := sampleLag(p, r)
		if err != nil {
			return s, n, false, err
		}
		if s.lag() <= 0 {
			return s, n, true, nil
		}
		if time.Now().After(end) {
			return s, n, false, nil
		}
		time.Sleep(poll)
	}
}

// catchupConfig holds the flags of the catchup mode.
type catchupConfig struct {
	*common
	replFlags
	conns, requests, pipeline, keyspace, size int
	poll, catchupLimit                        time.Duration
	prefix                                    string
}

func (c *catchupConfig) register(fs *flag.FlagSet) {
	c.replFlags.register(fs)
	fs.IntVar(&c.conns, "conns", 50, "writer connections to the primary")
	fs.IntVar(&c.requests, "requests", 200000, "SET commands in all, sent as fast as the primary answers")
	fs.IntVar(&c.pipeline, "pipeline", 16, "SET commands each connection sends before reading their replies")
	fs.IntVar(&c.keyspace, "keyspace", 100000, "distinct keys the SETs cycle through")
	fs.IntVar(&c.size, "size", 3, "value size in bytes (redis-benchmark's default is 3)")
	fs.DurationVar(&c.poll, "poll", time.Millisecond, "pause between two readings of the offsets while waiting for the replica")
	fs.DurationVar(&c.catchupLimit, "catchup-timeout", 120*time.Second, "give up waiting for the replica after this long")
	fs.StringVar(&c.prefix, "prefix", "cairn-bench:catchup:", "key prefix")
}

func (c *catchupConfig) validate() error {
	if err := firstError(
		checkRange("conns", c.conns, 1, 10000),
		checkRange("requests", c.requests, 1, 1_000_000_000),
		checkRange("pipeline", c.pipeline, 1, 10000),
		checkRange("keyspace", c.keyspace, 1, 1_000_000_000),
		checkRange("size", c.size, 0, 16<<20),
	); err != nil {
		return err
	}
	if int64(c.size+64)*int64(c.pipeline)*int64(c.conns) > 256<<20 {
		return usageErrorf("-size %d × -pipeline %d × -conns %d: more than 256 MiB in flight", c.size, c.pipeline, c.conns)
	}
	if c.poll < 0 || c.poll > time.Minute {
		return usageErrorf("-poll %v: want 0 to 1m", c.poll)
	}
	if c.catchupLimit <= 0 || c.catchupLimit > 24*time.Hour {
		return usageErrorf("-catchup-timeout %v: want more than 0 and at most 24h", c.catchupLimit)
	}
	return c.resolve(c.common)
}

// catchupResult is the summary of a catchup run.
type catchupResult struct {
	Mode     string `json:"mode"`
	Primary  string `json:"primary"`
	Replica  string `json:"replica"`
	Conns    int    `json:"conns"`
	Requests int    `json:"requests"`
	Pipeline int    `json:"pipeline"`
	Size     int    `json:"size"`

	// Sets is how many SETs were answered (less than Requests if the
	// -duration-limit stopped the load, StoppedEarly), in LoadSeconds
	// from the first write to the last reply.
	Sets         int64   `json:"sets"`
	StoppedEarly bool    `json:"stopped_early"`
	LoadSeconds  float64 `json:"load_seconds"`
	SetsPerSec   float64 `json:"sets_per_sec"`

	// Offsets are in the servers' own units (Redis: bytes of the
	// replication stream; Cairn: batches). StartOffset is the primary's
	// before the load; LagAtLoadEnd is the primary's minus the replica's
	// in the first reading after the last reply; MaxLagDuringLoad the
	// largest of the readings taken every 100 ms during the load (each
	// reads the primary, then the replica, so under load it understates
	// the lag by the writes in between).
	StartOffset      int64 `json:"start_offset"`
	EndOffset        int64 `json:"end_offset"`
	LagAtLoadEnd     int64 `json:"lag_at_load_end"`
	MaxLagDuringLoad int64 `json:"max_lag_during_load"`

	// CatchupMillis is the time from the last SET reply to the first
	// reading in which the replica's offset had reached the primary's;
	// CaughtUp is false if that did not happen within -catchup-timeout
	// (CatchupMillis is then the time waited). Polls counts the readings.
	CaughtUp      bool    `json:"caught_up"`
	CatchupMillis float64 `json:"catchup_ms"`
	Polls         int     `json:"polls"`
}

func (r *catchupResult) title() string {
	return fmt.Sprintf("catchup: primary %s, replica %s: %d SET of %d B on %d connections, pipeline %d",
		r.Primary, r.Replica, r.Requests, r.Size, r.Conns, r.Pipeline)
}

func (r *catchupResult) rows() [][2]string {
	caught := fmt.Sprintf("%.1f ms after the last SET reply (%d readings)", r.CatchupMillis, r.Polls)
	if !r.CaughtUp {
		caught = fmt.Sprintf("NOT caught up after %.1f ms (lag still %s)", r.CatchupMillis, fmtInt(r.LagAtLoadEnd))
	}
	rows := [][2]string{
		{"load", fmt.Sprintf("%s SET in %.3f s", fmtInt(r.Sets), r.LoadSeconds)},
		{"SET/s", fmtRate(r.SetsPerSec)},
		{"primary offset", fmt.Sprintf("%s -> %s", fmtInt(r.StartOffset), fmtInt(r.EndOffset))},
		{"lag at load end", fmtInt(r.LagAtLoadEnd) + " (offset units)"},
		{"max lag during load", fmtInt(r.MaxLagDuringLoad) + " (offset units, sampled every 100 ms)"},
		{"replica caught up", caught},
	}
	if r.StoppedEarly {
		rows = append(rows, [2]string{"stopped early", "the -duration-limit ran out"})
	}
	return rows
}

// runCatchup runs the catchup mode: it waits for the replica to be in
// step, loads the primary with pipelined SETs as fast as it answers, then
// measures how long the replica takes to reach the primary's offset.
// Progress lines go to progressW.
func runCatchup(cfg *catchupConfig, progressW io.Writer) (*catchupResult, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	p, err := dial(cfg.primaryAddr, cfg.timeout, 0)
	if err != nil {
		return nil, fmt.Errorf("primary: %w", err)
	}
	defer p.close()
	r, err := dial(cfg.replicaAddr, cfg.timeout, 0)
	if err != nil {
		return nil, fmt.Errorf("replica: %w", err)
	}
	defer r.close()
	if _, _, err := checkRoles(&cfg.replFlags, p, r); err != nil {
		return nil, err
	}
	before, _, ok, err := waitCaughtUp(p, r, 10*time.Millisecond, cfg.catchupLimit)
	if err != nil {
		return nil, fmt.Errorf("before the load: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("before the load, the replica did not reach the primary's offset within %v (primary %d, replica %d)",
			cfg.catchupLimit, before.primary, before.replica)
	}

	writers, err := dialWriters(cfg.primaryAddr, cfg.timeout, cfg.conns)
	if err != nil {
		return nil, err
	}
	defer closeAll(writers)

	var done atomic.Int64
	var lastLag, maxLag atomic.Int64
	stopSampling := make(chan struct{})
	sampled := make(chan error, 1)
	go func() { // offsets every 100 ms during the load
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopSampling:
				sampled <- nil
				return
			case <-t.C:
				s, err := sampleLag(p, r)
				if err != nil {
					sampled <- err
					return
				}
				l := max(s.lag(), 0)
				lastLag.Store(l)
				if l > maxLag.Load() {
					maxLag.Store(l)
				}
			}
		}
	}()
	prog := startProgress(progressW, cfg.quiet, "catchup", func() string {
		return fmt.Sprintf("load: %s/%s SET, replica lag %s", fmtInt(done.Load()), fmtInt(int64(cfg.requests)), fmtInt(lastLag.Load()))
	})
	defer prog.stop()

	start := time.Now()
	stopAt := start.Add(cfg.limit)
	value := payload(cfg.size)
	type result struct {
		n     int64
		last  time.Time
		early bool
		err   error
	}
	results := make([]result, cfg.conns)
	var wg sync.WaitGroup
	for i, w := range writers {
		n := cfg.requests / cfg.conns
		if i < cfg.requests%cfg.conns {
			n++
		}
		wg.Go(func() {
			res := &results[i]
			res.n, res.last, res.early, res.err = pipelinedSets(w, i, cfg.conns, n, cfg.pipeline, cfg.keyspace, cfg.prefix, value, stopAt, &done)
		})
	}
	wg.Wait()
	close(stopSampling)
	if err := <-sampled; err != nil {
		return nil, fmt.Errorf("during the load: %w", err)
	}
	res := &catchupResult{
		Mode: "catchup", Primary: cfg.primary, Replica: cfg.replica, Conns: cfg.conns,
		Requests: cfg.requests, Pipeline: cfg.pipeline, Size: cfg.size,
		StartOffset: before.primary, MaxLagDuringLoad: maxLag.Load(),
	}
	var end time.Time
	for i, w := range results {
		if w.err != nil {
			return nil, fmt.Errorf("writer %d: %w", i, w.err)
		}
		res.Sets += w.n
		res.StoppedEarly = res.StoppedEarly || w.early
		if w.last.After(end) {
			end = w.last
		}
	}
	if res.Sets == 0 {
		return nil, fmt.Errorf("no SET was answered")
	}
	res.LoadSeconds = end.Sub(start).Seconds()
	res.SetsPerSec = rate(res.Sets, end.Sub(start))

	first, err := sampleLag(p, r)
	if err != nil {
		return nil, fmt.Errorf("after the load: %w", err)
	}
	res.LagAtLoadEnd = max(first.lag(), 0)
	res.MaxLagDuringLoad = max(res.MaxLagDuringLoad, res.LagAtLoadEnd)
	last, polls := first, 1
	res.CaughtUp = first.lag() <= 0
	if !res.CaughtUp {
		var n int
		last, n, res.CaughtUp, err = waitCaughtUp(p, r, cfg.poll, cfg.catchupLimit)
		polls += n
		if err != nil {
			return nil, fmt.Errorf("waiting for the replica: %w", err)
		}
	}
	res.EndOffset = last.primary
	res.Polls = polls
	res.CatchupMillis = float64(last.at.Sub(end)) / float64(time.Millisecond)
	if !res.CaughtUp {
		res.LagAtLoadEnd = last.lag()
	}
	return res, nil
}

// pipelinedSets sends n SETs on c, pipeline at a time, then reads their
// replies. Writer id of conns writes the keys prefix+((i*conns+id) mod
// keyspace) for i = 0, 1, ... It stops sending at stopAt and returns the
// SETs answered, when the last reply came and whether it stopped early.
// done counts answered SETs across writers, for progress lines.
func pipelinedSets(c *conn, id, conns, n, pipeline, keyspace int, prefix, value string, stopAt time.Time, done *atomic.Int64) (int64, time.Time, bool, error) {
	var answered int64
	var last time.Time
	for i := 0; i < n; {
		if time.Now().After(stopAt) {
			return answered, last, true, nil
		}
		k := min(pipeline, n-i)
		c.wb = c.wb[:0]
		for j := range k {
			key := prefix + strconv.Itoa(((i+j)*conns+id)%keyspace)
			c.wb = AppendCommand(c.wb, "SET", key, value)
		}
		if err := c.write(c.wb); err != nil {
			return answered, last, false, fmt.Errorf("SET: writing %d commands: %w", k, err)
		}
		for range k {
			v, err := c.read()
			if err != nil {
				return answered, last, false, fmt.Errorf("SET: reading reply %d: %w", answered+1, err)
			}
			if err := v.ServerErr(); err != nil {
				return answered, last, false, fmt.Errorf("SET: %w", err)
			}
			if v.Kind != '+' || string(v.Str) != "OK" {
				return answered, last, false, fmt.Errorf("SET: unexpected reply %v", truncate(v.String(), 200))
			}
			answered++
		}
		last = time.Now()
		done.Add(int64(k))
		i += k
	}
	return answered, last, false, nil
}
