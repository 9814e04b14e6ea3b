package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// This file holds the throughput mode: the throughput suite wrapping
// redis-benchmark, run against one or more servers in turn so that one
// command measures Cairn and Redis side by side. redis-benchmark writes
// its own keys (key:__rand_int__, mylist, ...) into database 0 of every
// server.

// throughputConfig holds the flags of the throughput mode.
type throughputConfig struct {
	*common
	// addrs is -addr: the servers to compare, the first one the baseline
	// of the ratios.
	addrs                             addrList
	names, tests, pipelines           string
	clients, requests, keyspace, runs int
	cpu, redisBenchmark               string

	// validate parses the lists into servers, testList (lower case) and
	// pipelineList; findBinaries sets benchPath and, with -cpu,
	// tasksetPath.
	servers                []throughputServer
	testList               []string
	pipelineList           []int
	benchPath, tasksetPath string
}

// throughputServer is one server of a throughput run.
type throughputServer struct {
	Name string `json:"name"`
	Addr string `json:"addr"` // as given to -addr
	// dialAddr is Addr with its host resolved; redis-benchmark gets its
	// host and port.
	dialAddr string
}

// addrList is the value of a flag that may be given more than once, each
// time with one item or a comma-separated list of them.
type addrList []string

func (l *addrList) String() string { return strings.Join(*l, ",") }

func (l *addrList) Set(s string) error {
	*l = append(*l, strings.Split(s, ",")...)
	return nil
}

// register registers the mode's flags. -addr, which every mode has, is
// turned into a list of servers: its value is replaced by c.addrs, and
// validate sets the common address to the list for error reports.
func (c *throughputConfig) register(fs *flag.FlagSet) {
	if f := fs.Lookup("addr"); f != nil {
		f.Value, f.DefValue = &c.addrs, ""
		f.Usage = "`host:port` of a server to measure (required; repeat it or give a comma-separated list to compare servers, " +
			"the first one being the baseline of the ratios; loopback unless -allow-remote)"
	}
	if f := fs.Lookup("duration-limit"); f != nil {
		f.Usage = "kill a redis-benchmark invocation that takes longer than this (each one is bounded separately)"
	}
	fs.StringVar(&c.names, "names", "", "comma-separated `names` of the -addr servers for the table, e.g. redis,cairn (default #1,#2,...)")
	fs.StringVar(&c.tests, "tests", "set,get", "comma-separated redis-benchmark `tests` (its -t names, one row each)")
	fs.StringVar(&c.pipelines, "pipelines", "1,16", "comma-separated pipeline `depths` (redis-benchmark -P), one row each per test")
	fs.IntVar(&c.clients, "clients", 50, "parallel connections (redis-benchmark -c)")
	fs.IntVar(&c.requests, "requests", 200000, "requests per invocation (redis-benchmark -n)")
	fs.IntVar(&c.keyspace, "keyspace", 100000, "distinct random keys (redis-benchmark -r)")
	fs.IntVar(&c.runs, "runs", 3, "invocations per server and row; the table shows their median")
	fs.StringVar(&c.cpu, "cpu", "", "run redis-benchmark under taskset -c `cpus` (e.g. 0 or 0-1; default: not pinned)")
	fs.StringVar(&c.redisBenchmark, "redis-benchmark", "redis-benchmark", "`path` of redis-benchmark, or a name to look up in PATH")
}

// testName is a redis-benchmark test name as -t takes it.
var testName = regexp.MustCompile(`^[a-z0-9_]+$`)

// cpuList is a CPU list as taskset -c takes it.
var cpuList = regexp.MustCompile(`^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$`)

func (c *throughputConfig) validate() error {
	if err := firstError(
		checkRange("clients", c.clients, 1, 10000),
		checkRange("requests", c.requests, 1, 1_000_000_000),
		checkRange("keyspace", c.keyspace, 1, 1_000_000_000),
		checkRange("runs", c.runs, 1, 100),
	); err != nil {
		return err
	}
	if c.cpu != "" && !cpuList.MatchString(c.cpu) {
		return usageErrorf("-cpu %q: want a CPU list as taskset -c takes it, such as 0, 0-3 or 0,2", c.cpu)
	}
	if c.redisBenchmark == "" {
		return usageErrorf("-redis-benchmark: want the path or the name of redis-benchmark")
	}
	if len(c.addrs) == 0 {
		return usageErrorf("-addr is required: the host:port of each server to measure, e.g. -addr 127.0.0.1:6379,127.0.0.1:6666")
	}
	var names []string
	if c.names != "" {
		var err error
		if names, err = splitList("names", c.names); err != nil {
			return err
		}
		if len(names) != len(c.addrs) {
			return usageErrorf("-names %q: %d names for %d -addr servers", c.names, len(names), len(c.addrs))
		}
	}
	c.servers = make([]throughputServer, len(c.addrs))
	for i, a := range c.addrs {
		s := &c.servers[i]
		s.Addr = strings.TrimSpace(a)
		var err error
		if s.dialAddr, err = resolveAddr(s.Addr, c.allowRemote); err != nil {
			return usageError{msg: err.Error()}
		}
		s.Name = "#" + strconv.Itoa(i+1)
		if names != nil {
			s.Name = names[i]
		}
	}
	c.addr = c.addrs.String() // for the error report of -json

	tests, err := splitList("tests", c.tests)
	if err != nil {
		return err
	}
	for i, t := range tests {
		t = strings.ToLower(t)
		tests[i] = t
		if !testName.MatchString(t) {
			return usageErrorf("-tests %q: %q is not a redis-benchmark test name (such as set, get, incr, lpush, lrange_100, mset)", c.tests, t)
		}
	}
	c.testList = tests
	ps, err := splitList("pipelines", c.pipelines)
	if err != nil {
		return err
	}
	c.pipelineList = make([]int, len(ps))
	for i, p := range ps {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 10000 {
			return usageErrorf("-pipelines %q: %q is not a pipeline depth from 1 to 10000", c.pipelines, p)
		}
		c.pipelineList[i] = n
	}
	return nil
}

// splitList splits the value of -name at commas, trimming spaces. An
// empty item or one given twice (in any case) is a usage error.
func splitList(name, s string) ([]string, error) {
	var items []string
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, usageErrorf("-%s %q: empty item in the comma-separated list", name, s)
		}
		if slices.ContainsFunc(items, func(s string) bool { return strings.EqualFold(s, item) }) {
			return nil, usageErrorf("-%s %q: %q is given twice", name, s, item)
		}
		items = append(items, item)
	}
	return items, nil
}

// findBinaries looks up redis-benchmark and, with -cpu, taskset.
func (c *throughputConfig) findBinaries() error {
	var err error
	if c.benchPath, err = exec.LookPath(c.redisBenchmark); err != nil {
		return fmt.Errorf("redis-benchmark binary %q not found (install redis-tools, or give its path with -redis-benchmark): %w", c.redisBenchmark, err)
	}
	if c.cpu != "" {
		if c.tasksetPath, err = exec.LookPath("taskset"); err != nil {
			return fmt.Errorf("-cpu %s needs taskset, which was not found (install util-linux, or drop -cpu): %w", c.cpu, err)
		}
	}
	return nil
}

// benchArgs returns the command line of one redis-benchmark invocation.
func (c *throughputConfig) benchArgs(s throughputServer, test string, pipeline int) ([]string, error) {
	host, port, err := net.SplitHostPort(s.dialAddr)
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", s.Name, err)
	}
	var argv []string
	if c.tasksetPath != "" {
		argv = append(argv, c.tasksetPath, "-c", c.cpu)
	}
	return append(argv, c.benchPath, "-h", host, "-p", port, "-t", test,
		"-c", strconv.Itoa(c.clients), "-n", strconv.Itoa(c.requests), "-r", strconv.Itoa(c.keyspace),
		"-P", strconv.Itoa(pipeline), "--csv", "-q"), nil
}

// benchmarkOnce runs redis-benchmark once and returns the requests per
// second it reports for test. The invocation is killed if it takes longer
// than -duration-limit; a failure carries what it wrote to stderr.
func (c *throughputConfig) benchmarkOnce(s throughputServer, test string, pipeline int) (float64, error) {
	argv, err := c.benchArgs(s, test, pipeline)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second // a child holding the pipes must not outlive the kill by much
	err = cmd.Run()
	line := strings.Join(argv, " ")
	if err != nil && ctx.Err() != nil {
		return 0, fmt.Errorf("%s: did not finish within -duration-limit %v and was killed%s", line, c.limit, said(stderr.Bytes()))
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w%s", line, err, said(stderr.Bytes()))
	}
	rps, err := parseBenchCSV(stdout.Bytes(), test)
	if err != nil {
		return 0, fmt.Errorf("%s: %w%s", line, err, said(stderr.Bytes()))
	}
	return rps, nil
}

// said returns ": it said: " and the lines a command wrote to stderr,
// joined by " | ", or "" if it wrote nothing.
func said(stderr []byte) string {
	var lines []string
	for line := range strings.Lines(string(stderr)) {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return ": it said: " + truncate(strings.Join(lines, " | "), 500)
}

// parseBenchCSV returns the requests per second of test from the output
// of redis-benchmark --csv: a header line whose first field is "test" and
// that has an "rps" field, then one line per test such as
// "SET","123456.79",... Test is the -t name; its line is the one labelled
// with it in upper case, alone or followed by a parenthesized remark
// ("LRANGE_100 (first 100 elements)"). Lines that are not CSV are skipped.
func parseBenchCSV(out []byte, test string) (float64, error) {
	want := strings.ToUpper(test)
	rpsCol := -1
	var labels []string
	for line := range strings.SplitSeq(string(out), "\n") {
		line = strings.TrimSuffix(line, "\r")
		rd := csv.NewReader(strings.NewReader(line))
		rd.FieldsPerRecord = -1
		rec, err := rd.Read()
		if err != nil || len(rec) < 2 {
			continue
		}
		if rpsCol < 0 {
			if rec[0] == "test" {
				rpsCol = slices.Index(rec, "rps")
				if rpsCol < 1 {
					return 0, fmt.Errorf("the CSV header %q has no rps field", strings.TrimSpace(line))
				}
			}
			continue
		}
		label := rec[0]
		if label != want && !strings.HasPrefix(label, want+" (") {
			labels = append(labels, label)
			continue
		}
		if rpsCol >= len(rec) {
			return 0, fmt.Errorf("the %s line %q has no rps field", want, strings.TrimSpace(line))
		}
		rps, err := strconv.ParseFloat(rec[rpsCol], 64)
		if err != nil || rps <= 0 || math.IsInf(rps, 0) {
			return 0, fmt.Errorf("the rps of the %s line, %q, is not a positive number", want, rec[rpsCol])
		}
		return rps, nil
	}
	if rpsCol < 0 {
		return 0, fmt.Errorf("no CSV header (\"test\",\"rps\",...) in the output %q", truncate(strings.TrimSpace(string(out)), 200))
	}
	if len(labels) > 0 {
		return 0, fmt.Errorf("no %s line in the CSV output (it has %s)", want, strings.Join(labels, ", "))
	}
	return 0, fmt.Errorf("no %s line in the CSV output, which has only its header (is %q a redis-benchmark test?)", want, test)
}

// runOrder returns the order in which run r (counted from 0) visits n
// servers: each run starts one server further than the one before, so
// servers alternate and every one goes first equally often (for two:
// AB, BA, AB, ...), and drift on the machine hits all of them alike.
func runOrder(r, n int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = (r + i) % n
	}
	return order
}

// median returns the median of xs (the mean of the middle two if their
// number is even), or 0 if xs is empty. xs is not modified.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// throughputResult is the summary of a throughput run.
type throughputResult struct {
	Mode      string             `json:"mode"`
	Servers   []throughputServer `json:"servers"`
	Tests     []string           `json:"tests"`
	Pipelines []int              `json:"pipelines"`
	Clients   int                `json:"clients"`
	Requests  int                `json:"requests"`
	Keyspace  int                `json:"keyspace"`
	Runs      int                `json:"runs"`
	CPU       string             `json:"cpu,omitempty"`
	Rows      []throughputRow    `json:"rows"`
}

// throughputRow is one test at one pipeline depth on every server.
type throughputRow struct {
	Test     string `json:"test"`
	Pipeline int    `json:"pipeline"`
	// Servers holds one cell per server, in -addr order.
	Servers []throughputCell `json:"servers"`
}

// throughputCell is one server's requests per second in one row.
type throughputCell struct {
	Name string `json:"name"`
	// RunsRPS holds the value of every run, in run order; MedianRPS is
	// their median.
	RunsRPS   []float64 `json:"runs_rps"`
	MedianRPS float64   `json:"median_rps"`
	// RatioToFirst is MedianRPS over the first server's (1 for the
	// first server).
	RatioToFirst float64 `json:"ratio_to_first"`
}

func (r *throughputResult) title() string {
	servers := make([]string, len(r.Servers))
	for i, s := range r.Servers {
		servers[i] = s.Name + " " + s.Addr
	}
	pin := ""
	if r.CPU != "" {
		pin = ", taskset -c " + r.CPU
	}
	return fmt.Sprintf("throughput: median req/s of %d redis-benchmark runs (-c %d -n %d -r %d%s) on %s",
		r.Runs, r.Clients, r.Requests, r.Keyspace, pin, strings.Join(servers, ", "))
}

// rows returns a header and a line per row; their second cells hold
// tab-separated columns, which writeTable aligns.
func (r *throughputResult) rows() [][2]string {
	var head []string
	for _, s := range r.Servers {
		head = append(head, s.Name+" req/s")
	}
	for _, s := range r.Servers[1:] {
		head = append(head, s.Name+"/"+r.Servers[0].Name)
	}
	rows := [][2]string{{"test", strings.Join(head, "\t")}}
	for _, row := range r.Rows {
		var cells []string
		for _, c := range row.Servers {
			cells = append(cells, fmtInt(int64(c.MedianRPS+0.5)))
		}
		for _, c := range row.Servers[1:] {
			cells = append(cells, fmt.Sprintf("%.2f", c.RatioToFirst))
		}
		rows = append(rows, [2]string{fmt.Sprintf("%s -P %d", strings.ToUpper(row.Test), row.Pipeline), strings.Join(cells, "\t")})
	}
	return rows
}

// runThroughput runs the throughput mode: for each pipeline depth and
// test, -runs rounds of one redis-benchmark invocation per server, the
// servers alternating (runOrder). Progress lines go to progressW.
func runThroughput(cfg *throughputConfig, progressW io.Writer) (*throughputResult, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := cfg.findBinaries(); err != nil {
		return nil, err
	}
	// redis-benchmark spins for ever on a server it cannot reach, so
	// check every one first.
	for _, s := range cfg.servers {
		c, err := dial(s.dialAddr, cfg.timeout, 0)
		if err != nil {
			return nil, fmt.Errorf("server %s (%s): %w", s.Name, s.Addr, err)
		}
		_, err = c.do("PING")
		c.close()
		if err != nil {
			return nil, fmt.Errorf("server %s (%s): %w", s.Name, s.Addr, err)
		}
	}

	res := &throughputResult{
		Mode: "throughput", Servers: cfg.servers, Tests: cfg.testList, Pipelines: cfg.pipelineList,
		Clients: cfg.clients, Requests: cfg.requests, Keyspace: cfg.keyspace, Runs: cfg.runs, CPU: cfg.cpu,
	}
	total := len(cfg.pipelineList) * len(cfg.testList) * cfg.runs * len(cfg.servers)
	var done atomic.Int64
	var current atomic.Pointer[string]
	current.Store(new(string))
	prog := startProgress(progressW, cfg.quiet, "throughput", func() string {
		return fmt.Sprintf("%d/%d invocations done; %s", done.Load(), total, *current.Load())
	})
	defer prog.stop()

	for _, pipeline := range cfg.pipelineList {
		for _, test := range cfg.testList {
			row := throughputRow{Test: test, Pipeline: pipeline, Servers: make([]throughputCell, len(cfg.servers))}
			for r := range cfg.runs {
				for _, i := range runOrder(r, len(cfg.servers)) {
					s := cfg.servers[i]
					now := fmt.Sprintf("run %d/%d, %s -P %d on %s (%s)", r+1, cfg.runs, strings.ToUpper(test), pipeline, s.Name, s.Addr)
					current.Store(&now)
					rps, err := cfg.benchmarkOnce(s, test, pipeline)
					if err != nil {
						return nil, fmt.Errorf("%s: %w", now, err)
					}
					row.Servers[i].RunsRPS = append(row.Servers[i].RunsRPS, rps)
					done.Add(1)
				}
			}
			for i := range row.Servers {
				c := &row.Servers[i]
				c.Name = cfg.servers[i].Name
				c.MedianRPS = median(c.RunsRPS)
				c.RatioToFirst = c.MedianRPS / row.Servers[0].MedianRPS
			}
			res.Rows = append(res.Rows, row)
		}
	}
	return res, nil
}
