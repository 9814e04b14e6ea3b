package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const benchHeader = `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"` + "\n"

func TestParseBenchCSV(t *testing.T) {
	for _, tc := range []struct {
		name, out, test string
		want            float64
		err             string
	}{
		{"set", benchHeader + `"SET","105263.16","0.301","0.096","0.287","0.431","1.039","1.151"` + "\n", "set", 105263.16, ""},
		{"second line", benchHeader + `"SET","1.5","0.3"` + "\n" + `"GET","99999.99","0.3"` + "\n", "get", 99999.99, ""},
		{"remark", benchHeader + `"LPUSH (needed to benchmark LRANGE)","9.00","0.1"` + "\n" +
			`"LRANGE_100 (first 100 elements)","66666.66","0.113"` + "\n", "lrange_100", 66666.66, ""},
		{"warnings and CRLF", "WARNING: Could not fetch server CONFIG\r\n" + strings.ReplaceAll(benchHeader, "\n", "\r\n") +
			`"SET","7.25","0.3"` + "\r\n", "set", 7.25, ""},
		{"rps column moved", `"test","avg_latency_ms","rps"` + "\n" + `"SET","0.3","42.00"` + "\n", "set", 42, ""},
		{"a longer name is not the test", benchHeader + `"SETEX","5.00","0.1"` + "\n", "set", 0, "no SET line in the CSV output (it has SETEX)"},
		{"missing test", benchHeader + `"GET","5.00","0.1"` + "\n" + `"INCR","5.00","0.1"` + "\n", "set", 0, "(it has GET, INCR)"},
		{"header only", benchHeader, "nosuch", 0, "only its header"},
		{"no header", `"SET","5.00","0.1"` + "\n", "set", 0, "no CSV header"},
		{"garbage", "Could not connect to Redis at 127.0.0.1:1: Connection refused\n\x00\xff\n", "set", 0, "no CSV header"},
		{"empty", "", "set", 0, "no CSV header"},
		{"header without rps", `"test","avg_latency_ms"` + "\n" + `"SET","0.3"` + "\n", "set", 0, "has no rps field"},
		{"short line", `"test","avg_latency_ms","rps"` + "\n" + `"SET","0.3"` + "\n", "set", 0, "the SET line"},
		{"rps not a number", benchHeader + `"SET","fast","0.1"` + "\n", "set", 0, `"fast", is not a positive number`},
		{"rps infinite", benchHeader + `"SET","inf","0.1"` + "\n", "set", 0, "not a positive number"},
		{"rps zero", benchHeader + `"SET","0.00","0.1"` + "\n", "set", 0, "not a positive number"},
	} {
		got, err := parseBenchCSV([]byte(tc.out), tc.test)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: got %v, %v; want an error with %q", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestThroughputUsage(t *testing.T) {
	const a = "127.0.0.1:6379"
	for _, args := range [][]string{
		{},
		{"-addr", "192.0.2.1:6379"},
		{"-addr", a + ",192.0.2.1:6379"},
		{"-addr", a + ","},
		{"-addr", "127.0.0.1"},
		{"-addr", a, "-addr", a, "-names", "redis"},
		{"-addr", a + "," + a, "-names", "x,x"},
		{"-addr", a, "-names", ","},
		{"-addr", a, "-tests", ""},
		{"-addr", a, "-tests", "set;get"},
		{"-addr", a, "-tests", "set,SET"},
		{"-addr", a, "-pipelines", "0"},
		{"-addr", a, "-pipelines", "1,x"},
		{"-addr", a, "-pipelines", "16,16"},
		{"-addr", a, "-clients", "0"},
		{"-addr", a, "-requests", "0"},
		{"-addr", a, "-keyspace", "0"},
		{"-addr", a, "-runs", "0"},
		{"-addr", a, "-cpu", "first"},
		{"-addr", a, "-cpu", "0,"},
		{"-addr", a, "-redis-benchmark", ""},
		{"-addr", a, "-duration-limit", "0s"},
	} {
		var out, errw strings.Builder
		if code := run(append([]string{"throughput"}, args...), &out, &errw); code != 2 {
			t.Errorf("throughput %q = %d, want 2; stderr: %s", args, code, errw.String())
		}
	}
}

func TestRunOrder(t *testing.T) {
	var seq []int
	for r := range 4 {
		seq = append(seq, runOrder(r, 2)...)
	}
	if want := []int{0, 1, 1, 0, 0, 1, 1, 0}; !reflect.DeepEqual(seq, want) {
		t.Errorf("two servers over 4 runs: %v, want %v", seq, want)
	}
	first := make(map[int]int)
	for r := range 6 {
		order := runOrder(r, 3)
		first[order[0]]++
		if m := map[int]bool{order[0]: true, order[1]: true, order[2]: true}; len(m) != 3 {
			t.Errorf("run %d: order %v does not visit every server once", r, order)
		}
	}
	if first[0] != 2 || first[1] != 2 || first[2] != 2 {
		t.Errorf("three servers over 6 runs: first %v times each, want 2", first)
	}
	if got := runOrder(5, 1); !reflect.DeepEqual(got, []int{0}) {
		t.Errorf("one server: %v", got)
	}
}

func TestMedian(t *testing.T) {
	xs := []float64{5, 1, 3}
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{xs, 3}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{7}, 7}, {nil, 0},
	} {
		if got := median(tc.xs); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
	if !reflect.DeepEqual(xs, []float64{5, 1, 3}) {
		t.Errorf("median sorted its argument: %v", xs)
	}
}

func TestBenchArgs(t *testing.T) {
	cfg := &throughputConfig{clients: 50, requests: 2000, keyspace: 100, cpu: "0-1", benchPath: "/x/redis-benchmark", tasksetPath: "/y/taskset"}
	got, err := cfg.benchArgs(throughputServer{dialAddr: "[::1]:6379"}, "get", 16)
	if err != nil {
		t.Fatal(err)
	}
	want := "/y/taskset -c 0-1 /x/redis-benchmark -h ::1 -p 6379 -t get -c 50 -n 2000 -r 100 -P 16 --csv -q"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %q\nwant %q", strings.Join(got, " "), want)
	}
	cfg.tasksetPath = ""
	got, _ = cfg.benchArgs(throughputServer{dialAddr: "127.0.0.1:7000"}, "set", 1)
	if got[0] != "/x/redis-benchmark" || got[2] != "127.0.0.1" || got[4] != "7000" {
		t.Errorf("without -cpu: %q", got)
	}
}

// fakeBench writes a shell script named redis-benchmark to a temporary
// directory and returns its path.
func fakeBench(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "redis-benchmark")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// pingServer is a fake server that answers PONG to every command.
func pingServer(t *testing.T) string {
	return fakeServer(t, func(c net.Conn, rd *Reader) {
		for {
			if _, err := rd.ReadFrame(); err != nil {
				return
			}
			if _, err := c.Write([]byte("+PONG\r\n")); err != nil {
				return
			}
		}
	})
}

func throughputCfg(bench string, addrs ...string) *throughputConfig {
	cm := testCommon(addrs[0])
	cm.quiet = true
	return &throughputConfig{
		common: cm, addrs: addrs, tests: "set", pipelines: "1",
		clients: 50, requests: 1000, keyspace: 100, runs: 1, redisBenchmark: bench,
	}
}

// TestThroughputFake runs the mode with a fake redis-benchmark that logs
// its arguments and reports 100 req/s times the number of its invocation,
// so the medians, the ratios and the order of the runs are known.
func TestThroughputFake(t *testing.T) {
	dir := t.TempDir()
	log, count := filepath.Join(dir, "log"), filepath.Join(dir, "count")
	bench := fakeBench(t, fmt.Sprintf(`
while [ $# -gt 0 ]; do
	case "$1" in -p) port=$2;; -t) test=$2;; -P) pipe=$2;; esac
	shift
done
n=$(( $(cat %[2]s 2>/dev/null || echo 0) + 1 ))
echo $n > %[2]s
echo "$port $test $pipe" >> %[1]s
echo "WARNING: Could not fetch server CONFIG" >&2
echo '"test","rps","avg_latency_ms"'
echo "\"$(echo $test | tr a-z A-Z)\",\"$((n * 100)).00\",\"0.5\""
`, log, count))
	a, b := pingServer(t), pingServer(t)
	cfg := throughputCfg(bench, a, b)
	cfg.names, cfg.pipelines, cfg.runs = "x,y", "1,16", 3
	r, err := runThroughput(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, pa, _ := net.SplitHostPort(a)
	_, pb, _ := net.SplitHostPort(b)
	var want []string
	for _, pipe := range []string{"1", "16"} {
		for _, port := range []string{pa, pb, pb, pa, pa, pb} { // the servers alternate
			want = append(want, port+" set "+pipe)
		}
	}
	logged, _ := os.ReadFile(log)
	if got := strings.TrimSpace(string(logged)); got != strings.Join(want, "\n") {
		t.Errorf("invocations (port test pipeline):\n%s\nwant:\n%s", logged, strings.Join(want, "\n"))
	}
	// Invocation n reports 100n: x runs 1st, 4th, 5th; y 2nd, 3rd, 6th.
	wantRows := []throughputRow{
		{Test: "set", Pipeline: 1, Servers: []throughputCell{
			{Name: "x", RunsRPS: []float64{100, 400, 500}, MedianRPS: 400, RatioToFirst: 1},
			{Name: "y", RunsRPS: []float64{200, 300, 600}, MedianRPS: 300, RatioToFirst: 0.75},
		}},
		{Test: "set", Pipeline: 16, Servers: []throughputCell{
			{Name: "x", RunsRPS: []float64{700, 1000, 1100}, MedianRPS: 1000, RatioToFirst: 1},
			{Name: "y", RunsRPS: []float64{800, 900, 1200}, MedianRPS: 900, RatioToFirst: 0.9},
		}},
	}
	if !reflect.DeepEqual(r.Rows, wantRows) {
		t.Errorf("rows:\n%+v\nwant:\n%+v", r.Rows, wantRows)
	}
	table := writeTableString(r)
	for _, s := range []string{"x req/s", "y/x", "SET -P 16", "0.75", "1,000", "median req/s of 3 redis-benchmark runs"} {
		if !strings.Contains(table, s) {
			t.Errorf("the table lacks %q:\n%s", s, table)
		}
	}
}

// TestThroughputFakeFails checks that the stderr of a redis-benchmark
// that exits non-zero ends up in the error.
func TestThroughputFakeFails(t *testing.T) {
	bench := fakeBench(t, `echo '"test","rps"'
echo "Error from server: NOPERM this user has no permissions to run the 'set' command" >&2
echo >&2
echo "  second line" >&2
exit 1
`)
	_, err := runThroughput(throughputCfg(bench, pingServer(t)), nil)
	if err == nil || !strings.Contains(err.Error(), "it said: Error from server: NOPERM this user has no permissions to run the 'set' command | second line") || !strings.Contains(err.Error(), "exit status 1") {
		t.Fatalf("got %v, want redis-benchmark's exit status and message", err)
	}
	if !strings.Contains(err.Error(), "run 1/1, SET -P 1 on #1") {
		t.Errorf("%v does not say which invocation failed", err)
	}
}

// TestThroughputFakeHangs checks that an invocation is killed at
// -duration-limit, even if a child of it keeps its output open.
func TestThroughputFakeHangs(t *testing.T) {
	bench := fakeBench(t, "echo starting >&2\nsleep 3\necho done\n")
	cfg := throughputCfg(bench, pingServer(t))
	cfg.limit = 200 * time.Millisecond
	start := time.Now()
	_, err := runThroughput(cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "did not finish within -duration-limit 200ms and was killed: it said: starting") {
		t.Fatalf("got %v, want a timeout", err)
	}
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Errorf("the run took %v after a 200ms limit", d)
	}
}

// TestThroughputFakeMissing checks the errors for a missing binary and
// an unreachable server, neither of which runs redis-benchmark.
func TestThroughputFakeMissing(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	bench := fakeBench(t, "touch "+marker+"\n")
	_, err := runThroughput(throughputCfg(filepath.Join(t.TempDir(), "redis-benchmark"), pingServer(t)), nil)
	if err == nil || !strings.Contains(err.Error(), "redis-benchmark binary") || !strings.Contains(err.Error(), "-redis-benchmark") {
		t.Errorf("missing binary: got %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	_, err = runThroughput(throughputCfg(bench, pingServer(t), closed), nil)
	if err == nil || !strings.Contains(err.Error(), "server #2 ("+closed+")") {
		t.Errorf("unreachable server: got %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("redis-benchmark ran although a server was unreachable")
	}
}

// TestThroughputRedis runs the mode with the real redis-benchmark against
// a redis-server, named twice. Like the tests under tests/, it fails
// rather than skips without them (make test installs both).
func TestThroughputRedis(t *testing.T) {
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		t.Fatalf("redis-benchmark not installed (make test installs it with redis-tools): %v", err)
	}
	addr := startRedisServer(t)

	var out, errw strings.Builder
	args := []string{"throughput", "-addr", addr + "," + addr, "-names", "a,b", "-requests", "2000", "-runs", "1",
		"-tests", "set,get", "-pipelines", "1,16", "-json", "-quiet"}
	if code := run(args, &out, &errw); code != 0 {
		t.Fatalf("run(%q) = %d; stderr:\n%s\nstdout:\n%s", args, code, errw.String(), out.String())
	}
	var r throughputResult
	if err := json.Unmarshal([]byte(out.String()), &r); err != nil {
		t.Fatalf("%v in:\n%s", err, out.String())
	}
	if len(r.Rows) != 4 || r.Requests != 2000 || len(r.Servers) != 2 {
		t.Fatalf("got %+v; want 4 rows of 2 servers", r)
	}
	for _, row := range r.Rows {
		for _, c := range row.Servers {
			if len(c.RunsRPS) != 1 || c.MedianRPS <= 0 || c.RatioToFirst <= 0 {
				t.Errorf("%s -P %d on %s: %+v", row.Test, row.Pipeline, c.Name, c)
			}
		}
	}
}
