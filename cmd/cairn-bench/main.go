// Command cairn-bench measures Pub/Sub on any Redis-protocol server, the
// part of a server that redis-benchmark cannot drive because it has no
// subscribers, and runs the throughput suite of redis-benchmark against
// several servers side by side.
//
// Usage:
//
//	cairn-bench fanout     -addr 127.0.0.1:6666 -subs 100 -pattern-subs 50 -msgs 20000 -size 64
//	cairn-bench patterns   -addr 127.0.0.1:6666 -patterns 1000 -msgs 100000
//	cairn-bench stall      -addr 127.0.0.1:6666 -msgs 10000 -rate 2000 -size 4096
//	cairn-bench throughput -addr 127.0.0.1:6379,127.0.0.1:6666 -names redis,cairn -tests set,get -pipelines 1,16 -cpu 0
//	cairn-bench subscribe  -addr 127.0.0.1:6666 -pattern '__keyevent@0__:*' -expect 200000
//
// fanout measures how fast one publisher's messages reach many subscribers,
// some by channel and some by pattern; patterns measures PUBLISH with one
// subscriber holding many patterns that do not match; stall measures
// PUBLISH latency before and after a subscriber stops reading its socket;
// throughput runs redis-benchmark on each -addr server in turn and compares
// their median req/s with the first one's; subscribe is a lean pattern
// subscriber that counts the pmessages another load makes the server send
// (keyspace events of redis-benchmark's SETs, say), prints "subscribed" to
// stderr once subscribed, and fails unless -expect of them arrive. Every
// mode is bounded by its message or request count and by -duration-limit
// (throughput: per redis-benchmark invocation), prints a progress line to
// stderr at most once a second, and ends with a summary table on stdout (a
// JSON object with -json). The tool speaks RESP2 over plain TCP with its own writer and
// parser (resp.go) and connects only to loopback addresses unless
// -allow-remote is given.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// modes lists the subcommands with a one-line description each.
var modes = []struct{ name, desc string }{
	{"fanout", "one publisher, many subscribers by channel and by pattern: delivered msgs/s and losses"},
	{"patterns", "one subscriber with many non-matching patterns: PUBLISH/s"},
	{"stall", "PUBLISH latency with healthy subscribers, then with one that never reads"},
	{"invalidation", "writes (SETs, or the -mix of string commands) on a primary at a fixed rate: latency and losses of their keyspace events on a replica"},
	{"catchup", "a burst of pipelined SETs on a primary: SET/s and the time until the replica's offset catches up"},
	{"throughput", "the throughput suite wrapping redis-benchmark, on several servers side by side: median req/s and ratios to the first"},
	{"subscribe", "one lean pattern subscriber counting the pmessages another load causes: msgs/s, and whether -expect of them arrived"},
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: cairn-bench <mode> [flags]   (cairn-bench <mode> -h lists a mode's flags)")
	fmt.Fprintln(w, "modes:")
	for _, m := range modes {
		fmt.Fprintf(w, "  %-12s %s\n", m.name, m.desc)
	}
}

// report is the result of one mode: a JSON-encodable value that can also
// render itself as the rows of a summary table.
type report interface {
	title() string
	rows() [][2]string
}

// failingReport is a report that can tell that its run failed although it
// completed, such as a subscriber that did not receive the -expect
// messages: run prints the report, then the failure, and returns 1.
type failingReport interface {
	report
	failure() error
}

// run runs the tool with the arguments after the program name and returns
// its exit status: 0 on success, 1 if the benchmark failed (or its
// failingReport says so), 2 on a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	mode, args := args[0], args[1:]
	fs := flag.NewFlagSet("cairn-bench "+mode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	var bench func() (report, error)
	switch mode {
	case "fanout":
		cfg := &fanoutConfig{common: &c}
		cfg.register(fs)
		bench = func() (report, error) { return runFanout(cfg, stderr) }
	case "patterns":
		cfg := &patternsConfig{common: &c}
		cfg.register(fs)
		bench = func() (report, error) { return runPatterns(cfg, stderr) }
	case "stall":
		cfg := &stallConfig{common: &c}
		cfg.register(fs)
		bench = func() (report, error) { return runStall(cfg, stderr) }
	case "invalidation":
		cfg := &invalidationConfig{common: &c}
		cfg.register(fs)
		bench = func() (report, error) { return runInvalidation(cfg, stderr) }
	case "catchup":
		cfg := &catchupConfig{common: &c}
		cfg.register(fs)
		bench = func() (report, error) { return runCatchup(cfg, stderr) }
	case "throughput":
		cfg := &throughputConfig{common: &c}
		cfg.register(fs)
		bench = func() (report, error) { return runThroughput(cfg, stderr) }
	case "subscribe":
		cfg := &subscribeConfig{common: &c}
		cfg.register(fs)
		bench = func() (report, error) { return runSubscribe(cfg, stderr) }
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "cairn-bench: unknown mode %q\n", mode)
		usage(stderr)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "cairn-bench %s: unexpected argument %q\n", mode, fs.Arg(0))
		return 2
	}
	if err := c.check(); err != nil {
		fmt.Fprintf(stderr, "cairn-bench %s: %v\n", mode, err)
		return 2
	}
	rep, err := bench()
	if err != nil {
		fmt.Fprintf(stderr, "cairn-bench %s: %v\n", mode, err)
		if errors.As(err, new(usageError)) {
			return 2
		}
		if c.json {
			writeJSON(stdout, map[string]string{"mode": mode, "addr": c.addr, "error": err.Error()})
		}
		return 1
	}
	if c.json {
		writeJSON(stdout, rep)
	} else {
		writeTable(stdout, rep)
	}
	if fr, ok := rep.(failingReport); ok {
		if err := fr.failure(); err != nil {
			fmt.Fprintf(stderr, "cairn-bench %s: %v\n", mode, err)
			return 1
		}
	}
	return 0
}

// usageError is an invalid combination of flags, reported with exit
// status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return usageError{msg: fmt.Sprintf(format, args...)}
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(w, "{\"error\": %q}\n", err.Error())
	}
}

func writeTable(w io.Writer, rep report) {
	fmt.Fprintln(w, rep.title())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rep.rows() {
		fmt.Fprintf(tw, "  %s\t%s\n", r[0], r[1])
	}
	tw.Flush()
}

// common holds the flags every mode has.
type common struct {
	addr        string
	allowRemote bool
	json        bool
	quiet       bool
	limit       time.Duration
	timeout     time.Duration
	drain       time.Duration

	// dialAddr is addr with its host resolved, set by check; the tool
	// connects only to it.
	dialAddr string
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.addr, "addr", "127.0.0.1:6666", "`host:port` of the server (loopback unless -allow-remote)")
	fs.BoolVar(&c.allowRemote, "allow-remote", false, "allow a non-loopback -addr")
	fs.BoolVar(&c.json, "json", false, "print the summary as JSON")
	fs.BoolVar(&c.quiet, "quiet", false, "print no progress lines")
	fs.DurationVar(&c.limit, "duration-limit", 60*time.Second, "stop publishing after this long, whatever -msgs says")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Second, "limit of a connection attempt and of the wait for one reply")
	fs.DurationVar(&c.drain, "drain", 5*time.Second, "how long to wait for deliveries after the last PUBLISH reply")
}

// check validates the common flags and resolves the address.
func (c *common) check() error {
	if c.limit <= 0 || c.limit > 24*time.Hour {
		return fmt.Errorf("-duration-limit %v: want more than 0 and at most 24h", c.limit)
	}
	if c.timeout <= 0 || c.timeout > time.Hour {
		return fmt.Errorf("-timeout %v: want more than 0 and at most 1h", c.timeout)
	}
	if c.drain < 0 || c.drain > time.Hour {
		return fmt.Errorf("-drain %v: want 0 to 1h", c.drain)
	}
	a, err := resolveAddr(c.addr, c.allowRemote)
	if err != nil {
		return err
	}
	c.dialAddr = a
	return nil
}

// resolveAddr returns addr with its host resolved to an IP address. Unless
// allowRemote is set, every address the host resolves to must be a
// loopback address.
func resolveAddr(addr string, allowRemote bool) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("-addr %q: %w", addr, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
		return "", fmt.Errorf("-addr %q: invalid port %q", addr, port)
	}
	var ips []net.IP
	if ip := net.ParseIP(host); ip != nil {
		ips = []net.IP{ip}
	} else {
		ips, err = net.LookupIP(host)
		if err != nil {
			return "", fmt.Errorf("-addr %q: resolving %q: %w", addr, host, err)
		}
	}
	if len(ips) == 0 {
		return "", fmt.Errorf("-addr %q: %q has no address", addr, host)
	}
	if !allowRemote {
		for _, ip := range ips {
			if !ip.IsLoopback() {
				return "", fmt.Errorf("-addr %q: %s is not a loopback address (use -allow-remote to benchmark a remote server)", addr, ip)
			}
		}
	}
	return net.JoinHostPort(ips[0].String(), port), nil
}

// checkRange returns a usage error unless lo <= v <= hi.
func checkRange(name string, v, lo, hi int) error {
	if v < lo || v > hi {
		return usageErrorf("-%s %d: want %d to %d", name, v, lo, hi)
	}
	return nil
}

// firstError returns the first of errs that is not nil, for a validate
// method's list of checks.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// dialWriters connects n writer connections to addr, or none if one fails.
func dialWriters(addr string, timeout time.Duration, n int) ([]*conn, error) {
	writers := make([]*conn, n)
	for i := range writers {
		var err error
		if writers[i], err = dial(addr, timeout, 0); err != nil {
			closeAll(writers[:i])
			return nil, fmt.Errorf("writer %d: %w", i, err)
		}
	}
	return writers, nil
}

// closeAll closes conns.
func closeAll(conns []*conn) {
	for _, c := range conns {
		c.close()
	}
}

// conn is a client connection with a RESP reader. It is not safe for
// concurrent use.
type conn struct {
	nc      net.Conn
	rd      *Reader
	wb      []byte
	timeout time.Duration
}

// dial connects to addr. If rcvBuf is positive the socket's receive buffer
// is set to rcvBuf bytes before connecting, so that the TCP window is
// small from the start.
func dial(addr string, timeout time.Duration, rcvBuf int) (*conn, error) {
	d := net.Dialer{Timeout: timeout}
	if rcvBuf > 0 {
		d.Control = func(_, _ string, rc syscall.RawConn) error {
			return setRcvBuf(rc, rcvBuf)
		}
	}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", addr, err)
	}
	return &conn{nc: nc, rd: NewReader(nc, 64<<10), timeout: timeout}, nil
}

// write writes b, failing if that takes longer than the connection's
// timeout.
func (c *conn) write(b []byte) error {
	if err := c.nc.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		return err
	}
	_, err := c.nc.Write(b)
	return err
}

// read returns the next frame, failing if none comes within the
// connection's timeout. The Value is valid until the next read.
func (c *conn) read() (Value, error) {
	if err := c.nc.SetReadDeadline(time.Now().Add(c.timeout)); err != nil {
		return Value{}, err
	}
	return c.rd.ReadFrame()
}

// do sends one command and returns its reply; an error reply is returned
// as a *ServerError.
func (c *conn) do(args ...string) (Value, error) {
	c.wb = AppendCommand(c.wb[:0], args...)
	if err := c.write(c.wb); err != nil {
		return Value{}, fmt.Errorf("%s: %w", args[0], err)
	}
	v, err := c.read()
	if err != nil {
		return Value{}, fmt.Errorf("%s: reading the reply: %w", args[0], err)
	}
	if err := v.ServerErr(); err != nil {
		return Value{}, fmt.Errorf("%s: %w", args[0], err)
	}
	return v, nil
}

func (c *conn) close() { c.nc.Close() }

// subscriber is a connection in subscribed state with a goroutine that
// reads and counts its messages.
type subscriber struct {
	id      int
	c       *conn
	channel string // the channel every message must come from
	size    int    // the payload size every message must have

	count atomic.Int64 // messages received

	// The fields below belong to the reading goroutine until done is
	// closed.
	last       time.Time // arrival bound of the last message (Reader.FillTime)
	corrupt    int64     // messages with a wrong channel or payload size
	unexpected int64     // frames that are neither message nor pmessage
	firstOdd   string    // the first unexpected frame
	err        error     // the read error that ended it, unless stopped
	stopping   atomic.Bool
	done       chan struct{}
}

// subscribe connects and sends cmd ("SUBSCRIBE" or "PSUBSCRIBE") with
// targets as one command, then reads one confirmation per target. Messages
// must then come from channel with size-byte payloads.
func subscribe(cm *common, id int, cmd string, targets []string, channel string, size, rcvBuf int) (*subscriber, error) {
	c, err := dial(cm.dialAddr, cm.timeout, rcvBuf)
	if err != nil {
		return nil, fmt.Errorf("subscriber %d: %w", id, err)
	}
	s := &subscriber{id: id, c: c, channel: channel, size: size, done: make(chan struct{})}
	if err := s.confirm(cmd, targets); err != nil {
		c.close()
		return nil, fmt.Errorf("subscriber %d: %w", id, err)
	}
	return s, nil
}

func (s *subscriber) confirm(cmd string, targets []string) error {
	s.c.wb = AppendCommand(s.c.wb[:0], append([]string{cmd}, targets...)...)
	if err := s.c.write(s.c.wb); err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	want := strings.ToLower(cmd)
	for i := range targets {
		v, err := s.c.read()
		if err != nil {
			return fmt.Errorf("%s: reading confirmation %d of %d: %w", cmd, i+1, len(targets), err)
		}
		if err := v.ServerErr(); err != nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
		if (v.Kind != '*' && v.Kind != '>') || len(v.Elems) != 3 || string(v.Elems[0].Str) != want {
			return fmt.Errorf("%s: unexpected confirmation %v", cmd, v)
		}
		if i == len(targets)-1 && v.Elems[2].Int != int64(len(targets)) {
			return fmt.Errorf("%s of %d targets: the last confirmation counts %d subscriptions", cmd, len(targets), v.Elems[2].Int)
		}
	}
	return nil
}

// start starts the reading goroutine. Reads fail at deadline at the latest.
func (s *subscriber) start(deadline time.Time) {
	s.c.nc.SetReadDeadline(deadline)
	go s.loop()
}

func (s *subscriber) loop() {
	defer close(s.done)
	for {
		v, err := s.c.rd.ReadFrame()
		if err != nil {
			if !s.stopping.Load() {
				s.err = err
			}
			return
		}
		var ch, payload Value
		if v.Kind == '*' || v.Kind == '>' {
			switch e := v.Elems; {
			case len(e) == 3 && string(e[0].Str) == "message":
				ch, payload = e[1], e[2]
			case len(e) == 4 && string(e[0].Str) == "pmessage":
				ch, payload = e[2], e[3]
			}
		}
		if ch.Kind == 0 {
			s.unexpected++
			if s.firstOdd == "" {
				s.firstOdd = truncate(v.String(), 200)
			}
			continue
		}
		if string(ch.Str) != s.channel || len(payload.Str) != s.size {
			s.corrupt++
		}
		s.last = s.c.rd.FillTime()
		s.count.Add(1)
	}
}

// stop closes the connection and waits for the reading goroutine.
func (s *subscriber) stop() {
	s.stopping.Store(true)
	s.c.close()
	<-s.done
}

// subStats sums what a set of stopped subscribers saw.
type subStats struct {
	received     int64
	last         time.Time
	corrupt      int64
	unexpected   int64
	disconnected int
	firstProblem string
}

func collect(subs []*subscriber) subStats {
	var st subStats
	for _, s := range subs {
		s.stop()
		st.received += s.count.Load()
		if s.last.After(st.last) {
			st.last = s.last
		}
		st.corrupt += s.corrupt
		st.unexpected += s.unexpected
		if s.err != nil {
			st.disconnected++
			if st.firstProblem == "" {
				st.firstProblem = fmt.Sprintf("subscriber %d: %v", s.id, s.err)
			}
		}
		if s.firstOdd != "" && st.firstProblem == "" {
			st.firstProblem = fmt.Sprintf("subscriber %d: unexpected frame %s", s.id, s.firstOdd)
		}
	}
	return st
}

// received sums the message counts of running subscribers.
func received(subs []*subscriber) int64 {
	var n int64
	for _, s := range subs {
		n += s.count.Load()
	}
	return n
}

// waitDelivered waits until subs have received want messages in all, or
// for at most d.
func waitDelivered(subs []*subscriber, want int64, d time.Duration) {
	end := time.Now().Add(d)
	for received(subs) < want && time.Now().Before(end) {
		time.Sleep(2 * time.Millisecond)
	}
}

// stopAll stops subscribers, for error paths.
func stopAll(subs []*subscriber) {
	for _, s := range subs {
		s.stop()
	}
}

// connectSubscribers subscribes n connections, the first npat by pattern
// and the rest by channel, and starts their goroutines.
func connectSubscribers(cm *common, n, npat int, channel, pattern string, size int, deadline time.Time) ([]*subscriber, error) {
	subs := make([]*subscriber, 0, n)
	for i := range n {
		cmd, target := "SUBSCRIBE", channel
		if i < npat {
			cmd, target = "PSUBSCRIBE", pattern
		}
		s, err := subscribe(cm, i, cmd, []string{target}, channel, size, 0)
		if err != nil {
			stopAll(subs)
			return nil, err
		}
		s.start(deadline)
		subs = append(subs, s)
	}
	return subs, nil
}

// pubResult is the outcome of a pipelined run of PUBLISH commands.
type pubResult struct {
	sent, replies int64
	sum           int64     // the sum of the integer replies
	first, last   time.Time // the first write and the last reply
	stoppedEarly  bool      // the time limit stopped it before n
}

// publishPipelined sends n copies of frame, a PUBLISH command, keeping at
// most window of them unanswered, and stops sending at stopAt. replies is
// updated as replies come, for progress lines.
func publishPipelined(c *conn, frame []byte, n int64, window int, stopAt time.Time, replies *atomic.Int64) (pubResult, error) {
	batch := make([]byte, 0, len(frame)*window)
	for range window {
		batch = append(batch, frame...)
	}
	var res pubResult
	res.first = time.Now()
	for res.replies < n {
		outstanding := res.sent - res.replies
		if res.sent < n && outstanding < int64(window) {
			if time.Now().After(stopAt) {
				res.stoppedEarly = true
				if outstanding == 0 {
					break
				}
			} else {
				k := min(int64(window)-outstanding, n-res.sent)
				if err := c.write(batch[:int(k)*len(frame)]); err != nil {
					return res, fmt.Errorf("PUBLISH: writing %d commands: %w", k, err)
				}
				res.sent += k
			}
		} else if res.stoppedEarly && outstanding == 0 {
			break
		}
		v, err := c.read()
		for err == nil {
			if v.Kind != ':' {
				if se := v.ServerErr(); se != nil {
					return res, fmt.Errorf("PUBLISH: %w", se)
				}
				return res, fmt.Errorf("PUBLISH: unexpected reply %v", truncate(v.String(), 200))
			}
			res.sum += v.Int
			res.replies++
			var ok bool
			if v, ok, err = c.rd.Buffered(); !ok && err == nil {
				break
			}
		}
		if err != nil {
			return res, fmt.Errorf("PUBLISH: reading reply %d: %w", res.replies+1, err)
		}
		res.last = time.Now()
		replies.Store(res.replies)
		if res.stoppedEarly && res.sent == res.replies {
			break
		}
	}
	return res, nil
}

// progress prints a line from line() to w once a second until stopped.
type progress struct {
	stopc chan struct{}
	done  chan struct{}
}

// startProgress starts printing unless quiet; the returned progress must be
// stopped.
func startProgress(w io.Writer, quiet bool, mode string, line func() string) *progress {
	p := &progress{stopc: make(chan struct{}), done: make(chan struct{})}
	if quiet {
		close(p.done)
		return p
	}
	start := time.Now()
	go func() {
		defer close(p.done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-p.stopc:
				return
			case now := <-t.C:
				fmt.Fprintf(w, "cairn-bench %s: %4.0fs  %s\n", mode, now.Sub(start).Seconds(), line())
			}
		}
	}()
	return p
}

func (p *progress) stop() {
	select {
	case <-p.stopc:
	default:
		close(p.stopc)
	}
	<-p.done
}

// payload returns n bytes of printable filler.
func payload(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return string(b)
}

// rate returns n per second over d, or 0 if d is not positive.
func rate(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func okText(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISMATCH"
}

// fmtRate formats a per-second rate with thousands separators.
func fmtRate(r float64) string { return fmtInt(int64(r+0.5)) + "/s" }

func fmtInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
