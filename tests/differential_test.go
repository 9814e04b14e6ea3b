package tests

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/rdb"
)

// The differential test sends the same seeded random stream of string and
// key commands to Cairn and to redis-server and compares the replies.
// Re-run a failure with the seed from its message:
//
//	CAIRN_BIN=$PWD/bin/cairn go test -count=1 -run Differential ./tests/ -diff.seed=N -diff.n=M
//
// or with CAIRN_DIFF_SEED / CAIRN_DIFF_N in the environment.
var (
	diffSeedFlag = flag.Int64("diff.seed", 0, "seed of TestDifferentialStringsAndKeys (0: $CAIRN_DIFF_SEED or the fixed default)")
	diffNFlag    = flag.Int("diff.n", 0, "commands in TestDifferentialStringsAndKeys (0: $CAIRN_DIFF_N or the default)")
)

const (
	diffDefaultSeed = 20260807
	diffDefaultN    = 40000
	// diffHistory is how many earlier commands a failure message shows.
	diffHistory = 8
	// diffTTLSlackMs is how far apart the two servers' TTLs may be: they
	// receive each command a few milliseconds apart. No TTL in the stream
	// is shorter than diffMinFutureSec, so none expires mid-test.
	diffTTLSlackMs = 2000
	// diffGTLTMarginMs keeps EXPIRE ... GT/LT away from comparing two
	// expire times that differ only by the servers' clock skew.
	diffGTLTMarginMs = 60000
)

func diffSettings(t *testing.T) (seed int64, n int) {
	seed, n = envInt(t, "CAIRN_DIFF_SEED", diffDefaultSeed), int(envInt(t, "CAIRN_DIFF_N", diffDefaultN))
	if *diffSeedFlag != 0 {
		seed = *diffSeedFlag
	}
	if *diffNFlag != 0 {
		n = *diffNFlag
	}
	return seed, n
}

// TestDifferentialStringsAndKeys compares Cairn with Redis 7.0 on the
// string and generic key commands: first the fixed cases of
// testdata/differential/*.txt, then a seeded random stream (2% of whose
// steps are MULTI/EXEC transactions of random commands), then the whole
// keyspace. It does so four times: over RESP2; over RESP3 (after HELLO 3
// on both connections); over RESP2 in a Cairn namespace, beside other
// namespaces holding the same keys, which must not change; and over RESP2
// with every command (but SCAN) run by a Lua script, in transactions too.
// The last three send shorter streams of other seeds.
func TestDifferentialStringsAndKeys(t *testing.T) {
	seed, n := diffSettings(t)
	for _, st := range diffStreams {
		t.Run(st.name, func(t *testing.T) { diffRunStream(t, st, seed+st.seedOffset, n/st.share) })
	}
}

// diffStream is one run of the differential test: its subtest's name, its
// seed (the test's plus seedOffset), its length (the test's divided by
// share), the RESP version spoken to both servers, whether Cairn's
// connection is in a namespace, and Cairn's extra arguments.
type diffStream struct {
	name       string
	seedOffset int64
	share      int
	proto      int
	namespace  bool
	args       []string
	// script sends each command through a Lua script on both servers
	// (EVAL "return redis.call(unpack(ARGV))" 0 command...), but for
	// SCAN, whose cursors the runner follows.
	script bool
}

// diffSmallInline keeps only strings of up to 4 bytes inline, so that
// most of a stream's values live in value records of their own.
var diffSmallInline = []string{"--string-value-inline-max", "4"}

var diffStreams = []diffStream{
	{name: "resp2", share: 1, proto: 2},
	{name: "resp3", seedOffset: 1, share: 4, proto: 3, args: diffSmallInline},
	{name: "namespace", seedOffset: 2, share: 4, proto: 2, namespace: true, args: diffSmallInline},
	{name: "script", seedOffset: 3, share: 4, proto: 2, script: true},
}

// diffNoise is what the namespaced run leaves in the other namespaces of
// Cairn, under every key of the stream: the value each key must still
// hold at the end.
const diffNoise = "noise"

// diffRunStream runs the differential test's three phases against a fresh
// Cairn and redis-server.
func diffRunStream(t *testing.T, st diffStream, seed int64, n int) {
	var cairn *Node
	var admin, other *RawConn
	if st.namespace {
		cairn = StartCairnEnv(t, leDebug, append([]string{"--requirepass", "admin"}, st.args...)...)
		admin = cairn.Raw()
		for _, c := range [][]string{{"auth", "admin"}, {"namespace", "add", "diff", "difftoken"}, {"namespace", "add", "other", "othertoken"}} {
			if got := admin.Do(c...); got != "+OK\r\n" {
				t.Fatalf("%v: %q", c, got)
			}
		}
		other = cairn.Raw()
		if got := other.Do("auth", "othertoken"); got != "+OK\r\n" {
			t.Fatalf("AUTH othertoken: %q", got)
		}
		for _, k := range diffKeys {
			for _, c := range []*RawConn{admin, other} {
				if got := c.Do("set", k, diffNoise); got != "+OK\r\n" {
					t.Fatalf("SET %q: %q", k, got)
				}
			}
		}
	} else {
		cairn = StartCairnEnv(t, leDebug, st.args...)
	}
	redis := StartRedis(t)
	r := &diffRunner{t: t, stream: st, seed: seed, n: n, cairn: cairn.Raw(), redis: redis.Raw(), cairnNode: cairn}
	if st.namespace {
		if got := r.cairn.Do("auth", "difftoken"); got != "+OK\r\n" {
			t.Fatalf("AUTH difftoken: %q", got)
		}
	}
	if st.proto == 3 {
		for _, c := range []*RawConn{r.cairn, r.redis} {
			if v := diffParse(c.Do("hello", "3")); v.kind != '%' {
				t.Fatalf("HELLO 3: %q", diffRender(v))
			}
		}
	}
	// The INFO counters compareStats compares start from zero on both,
	// whatever the setup sent (only Cairn's admin may reset a namespace's).
	r.resetter = r.cairn
	if admin != nil {
		r.resetter = admin
	}
	for _, c := range []*RawConn{r.resetter, r.redis} {
		if got := c.Do("config", "resetstat"); got != "+OK\r\n" {
			t.Fatalf("CONFIG RESETSTAT: %q", got)
		}
	}

	r.setPhase("testdata")
	for _, c := range diffLoadCases(t) {
		r.run(c)
	}
	// Numbers at string2ld's length limit, too long for the file.
	for _, v := range diffLongNumbers {
		r.run([]string{"set", "long", v})
		r.run([]string{"incrbyfloat", "long", "1"})
		r.run([]string{"incrbyfloat", "long2", v})
	}
	r.run([]string{"flushdb"})

	r.setPhase("random")
	g := &diffGen{rng: rand.New(rand.NewPCG(uint64(seed), 0x5eed)), now: time.Now}
	for i := 0; i < n; i++ {
		if g.chance(diffTransactionChance) {
			r.runTransaction(g.transaction())
		} else {
			r.run(g.next())
		}
	}
	r.compareKeyspace()
	// No write of the stream left a long value's chunk behind.
	if got := r.resetter.Do("debug", "check-values"); !strings.HasPrefix(got, ":") {
		t.Errorf("DEBUG CHECK-VALUES after the stream: %q", got)
	}
	if st.namespace {
		for _, c := range []*RawConn{admin, other} {
			if got := c.Do("dbsize"); got != fmt.Sprintf(":%d\r\n", len(diffKeys)) {
				t.Errorf("DBSIZE of another namespace after the stream: %q", got)
			}
			for _, k := range diffKeys {
				if got := c.Do("get", k); got != fmt.Sprintf("$%d\r\n%s\r\n", len(diffNoise), diffNoise) {
					t.Errorf("GET %q in another namespace after the stream: %q", k, got)
				}
			}
		}
	}
	t.Logf("%s, seed %d: compared %d commands (%d random, %d fixed, %d keyspace checks)", st.name, seed, r.compared, n, r.fixed, r.final)
}

// diffLoadCases reads testdata/differential/*.txt: one command a line,
// arguments separated by spaces, each a bare word or a Go-quoted string;
// '#' starts a comment line.
func diffLoadCases(t *testing.T) [][]string {
	files, _ := filepath.Glob("testdata/differential/*.txt")
	var out [][]string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || line[0] == '#' {
				continue
			}
			args, err := diffSplit(line)
			if err != nil {
				t.Fatalf("%s:%d: %v", f, i+1, err)
			}
			out = append(out, args)
		}
	}
	return out
}

func diffSplit(line string) ([]string, error) {
	var args []string
	for line = strings.TrimLeft(line, " "); line != ""; line = strings.TrimLeft(line, " ") {
		if line[0] == '"' {
			q, err := strconv.QuotedPrefix(line)
			if err != nil {
				return nil, err
			}
			s, _ := strconv.Unquote(q)
			args = append(args, s)
			line = line[len(q):]
			continue
		}
		w, rest, _ := strings.Cut(line, " ")
		args = append(args, w)
		line = rest
	}
	return args, nil
}

// ---- running and comparing ----

type diffEntry struct {
	index        int
	phase        string
	args         []string
	cairn, redis string
}

type diffRunner struct {
	t            *testing.T
	seed         int64
	n            int // length of the random stream
	stream       diffStream
	phase        string
	cairn, redis *RawConn
	resetter     *RawConn // may CONFIG RESETSTAT cairn's counters of r.cairn's namespace
	cairnNode    *Node
	index        int // of the next command within its phase
	compared     int // commands whose replies were compared
	fixed, final int
	failed       bool
	hist         []diffEntry
}

// diffKind says how two replies of a command are compared.
type diffKind int

const (
	diffExact     diffKind = iota
	diffSet                // array compared as a set (KEYS)
	diffTTLSec             // -2/-1 exact, otherwise within diffTTLSlackMs/1000
	diffTTLMs              // -2/-1 exact, otherwise within diffTTLSlackMs
	diffRandomKey          // nil vs non-nil, and the key must exist
	diffDBSize             // retried until expired keys are reclaimed
	diffScan               // iterated to completion, union compared as a set
	diffDump               // DUMP payloads compared by the value they decode to
	diffPairs              // HGETALL: field-value pairs compared as a set
	diffHScan              // HSCAN: the cursor exact, the pairs as a set
	diffSScan              // SSCAN: the cursor exact, the members as a set
	diffRandField          // HRANDFIELD: nil or not, and the number of elements
)

func diffKindOf(args []string) diffKind {
	if len(args) == 0 {
		return diffExact
	}
	switch strings.ToLower(args[0]) {
	case "keys", "hkeys", "hvals":
		return diffSet
	case "smembers", "sinter", "sunion", "sdiff", "spop":
		return diffSet
	case "srandmember":
		return diffRandField // the same kind and number of members
	case "sscan":
		return diffSScan
	case "hgetall":
		return diffPairs
	case "hscan":
		return diffHScan
	case "hrandfield", "zrandmember":
		return diffRandField
	case "ttl", "expiretime":
		return diffTTLSec
	case "pttl", "pexpiretime":
		return diffTTLMs
	case "randomkey":
		return diffRandomKey
	case "dbsize":
		return diffDBSize
	case "scan":
		return diffScan
	case "dump":
		return diffDump
	}
	return diffExact
}

func (r *diffRunner) fail(args []string, cairn, redis, why string) {
	r.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "differential mismatch (seed %d, %s command #%d): %s\n", r.seed, r.phase, r.index, why)
	fmt.Fprintf(&b, "  command: %s\n  cairn:   %q\n  redis:   %q\n", diffShow(args), cairn, redis)
	if len(args) > 1 && diffKindOf(args) != diffScan {
		// The first key's state now, after the command, on both sides.
		for _, q := range [][]string{{"type", args[1]}, {"get", args[1]}, {"pttl", args[1]}} {
			fmt.Fprintf(&b, "  after: %s -> cairn %s, redis %s\n", diffShow(q), diffShort(r.cairn.Do(q...)), diffShort(r.redis.Do(q...)))
		}
	}
	b.WriteString(r.histString())
	n := r.n
	if r.phase == "random" {
		n = r.index + 1 // the stream up to this command
	}
	fmt.Fprintf(&b, "  reproduce: go test -count=1 -run 'Differential.*/%s' ./tests/ -diff.seed=%d -diff.n=%d",
		r.stream.name, r.seed-r.stream.seedOffset, n*r.stream.share)
	r.failed = true
	r.t.Fatal(b.String())
}

// diffShow renders a command for a failure message, shortening long
// arguments.
func diffShow(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if len(a) > 64 {
			a = fmt.Sprintf("%s...(%d bytes)", a[:32], len(a))
		}
		if a != "" && !strings.ContainsAny(a, " ") && strconv.Quote(a) == `"`+a+`"` {
			q[i] = a
		} else {
			q[i] = strconv.Quote(a)
		}
	}
	return strings.Join(q, " ")
}

func (r *diffRunner) histString() string {
	if len(r.hist) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("  previous commands (oldest first):\n")
	for _, h := range r.hist {
		fmt.Fprintf(&b, "    %s #%d %s\n      cairn %s\n      redis %s\n", h.phase, h.index, diffShow(h.args), diffShort(h.cairn), diffShort(h.redis))
	}
	return b.String()
}

// diffShort quotes a reply, shortening a long one.
func diffShort(s string) string {
	if len(s) > 200 {
		return fmt.Sprintf("%q...(%d bytes)", s[:60], len(s))
	}
	return strconv.Quote(s)
}

func (r *diffRunner) remember(args []string, cairn, redis string) {
	r.hist = append(r.hist, diffEntry{index: r.index, phase: r.phase, args: args, cairn: cairn, redis: redis})
	if len(r.hist) > diffHistory {
		r.hist = r.hist[1:]
	}
}

// run sends one command to both servers and compares the replies.
func (r *diffRunner) run(args []string) {
	r.t.Helper()
	finished := false
	defer func() {
		if !finished && !r.failed {
			// A connection failed (RawConn stops the test): say where.
			log := r.cairnNode.Log.Tail(4000)
			r.t.Logf("stopped at seed %d, %s command #%d: %s\nprevious: %s\ncairn log tail:\n%s",
				r.seed, r.phase, r.index, diffShow(args), r.histString(), log)
		}
	}()
	r.runOne(args)
	finished = true
}

func (r *diffRunner) runOne(args []string) {
	r.t.Helper()
	kind := diffKindOf(args)
	if kind == diffScan {
		r.runScan(args)
		r.count()
		return
	}
	r.adjustGTLT(args)
	if dropsExpired(args) {
		r.reclaimExpired()
	}
	if r.stream.script {
		args = append([]string{"eval", "return redis.call(unpack(ARGV))", "0"}, args...)
	}
	cr, rr := r.cairn.Do(args...), r.redis.Do(args...)
	if cr != rr {
		if kind == diffDBSize {
			// Both count expired keys not yet reclaimed; wait for the
			// active expiry cycles to catch up.
			deadline := time.Now().Add(5 * time.Second)
			for cr != rr && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
				cr, rr = r.cairn.Do(args...), r.redis.Do(args...)
			}
			if cr != rr {
				r.fail(args, cr, rr, "DBSIZE differs after 5s of expiry cycles")
			}
		} else if why := diffCompare(kind, diffParse(cr), diffParse(rr)); why != "" {
			if rr2, retried := r.retrySortErrno(args, cr, rr); !retried || rr2 != cr {
				r.fail(args, cr, rr2, why)
			}
		}
	}
	if kind == diffRandomKey {
		for _, side := range []struct {
			name  string
			conn  *RawConn
			reply string
		}{{"cairn", r.cairn, cr}, {"redis", r.redis, rr}} {
			v := diffParse(side.reply)
			if v.kind == '$' && !v.null {
				if e := side.conn.Do("exists", v.str); e != ":1\r\n" {
					r.fail(args, cr, rr, fmt.Sprintf("RANDOMKEY on %s returned %q, which does not exist (%q)", side.name, v.str, e))
				}
			}
		}
	}
	r.remember(args, cr, rr)
	r.count()
	if diffStatsEach {
		r.compareStats(args, counterFields, 0)
	}
}

// diffStatsEach (CAIRN_DIFF_STATS=each) compares the INFO counters after
// every command rather than once at the end: it finds the first command
// that counts differently. Not expired_keys, which the expiry cycles move
// between commands.
var diffStatsEach = os.Getenv("CAIRN_DIFF_STATS") == "each"

// diffStatsFields are the INFO fields compareStats compares (all of the
// commandstats and errorstats sections, but for their times): those that
// count what the stream did the same way on both servers. Not
// total_commands_processed, nor SCAN's calls: the servers' SCAN cursors
// take different numbers of calls to finish.
var diffStatsFields = slices.Concat(counterFields, []string{"expired_keys:"})

// compareStats fails the test, naming args, unless both servers' INFO
// reports the same counters (infoCounters of fields), within wait.
func (r *diffRunner) compareStats(args, fields []string, wait time.Duration) {
	r.t.Helper()
	deadline := time.Now().Add(wait)
	cs := infoCounters(r.cairn, fields, "scan", "info")
	rs := infoCounters(r.redis, fields, "scan", "info")
	for !slices.Equal(cs, rs) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		cs = infoCounters(r.cairn, fields, "scan", "info")
		rs = infoCounters(r.redis, fields, "scan", "info")
	}
	if only, other := diffOnlyIn(cs, rs), diffOnlyIn(rs, cs); only != "" || other != "" {
		r.fail(args, only, other, "INFO counters differ (CAIRN_DIFF_STATS=each finds the first command)")
	}
}

// infoCounters returns, sorted, the lines of c's INFO everything that
// start with one of fields, commandstats lines without their times and,
// for the commands named in anyCalls, without their number of calls.
func infoCounters(c *RawConn, fields []string, anyCalls ...string) []string {
	var out []string
	info := diffParse(c.Do("info", "everything")).str
	for _, line := range strings.Split(strings.TrimPrefix(info, "txt:"), "\r\n") {
		if !slices.ContainsFunc(fields, func(f string) bool { return strings.HasPrefix(line, f) }) {
			continue
		}
		if name, rest, ok := strings.Cut(line, ":calls="); ok {
			// cmdstat_NAME:calls=N,usec=N,usec_per_call=F,rejected_calls=N,failed_calls=N
			f := strings.Split(rest, ",")
			calls := f[0]
			if slices.Contains(anyCalls, strings.TrimPrefix(name, "cmdstat_")) {
				calls = "-"
			}
			line = name + ":calls=" + calls + "," + strings.Join(f[3:], ",")
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}

// counterFields are the INFO counters that scripted checks compare with
// Redis after sending both the same commands.
var counterFields = []string{"keyspace_hits:", "keyspace_misses:", "total_error_replies:", "cmdstat_", "errorstat_"}

// checkSameCounters fails t unless cairn's and redis's INFO counters
// (infoCounters of fields, INFO's own calls and those in anyCalls apart)
// are the same.
func checkSameCounters(t *testing.T, cairn, redis *RawConn, fields []string, anyCalls ...string) {
	t.Helper()
	anyCalls = append(anyCalls, "info")
	got, want := infoCounters(cairn, fields, anyCalls...), infoCounters(redis, fields, anyCalls...)
	if only, other := diffOnlyIn(got, want), diffOnlyIn(want, got); only != "" || other != "" {
		t.Errorf("INFO counters differ:\n cairn %s\n redis %s", only, other)
	}
}

// diffOnlyIn returns the lines of a that b lacks, joined by spaces.
func diffOnlyIn(a, b []string) string {
	var d []string
	for _, l := range a {
		if !slices.Contains(b, l) {
			d = append(d, l)
		}
	}
	return strings.Join(d, " ")
}

// diffCompare compares two parsed replies of a command of the given kind
// (not diffDBSize or diffScan, which runOne compares its own way) and
// says how they differ, or returns "".
func diffCompare(kind diffKind, cv, rv diffReply) string {
	switch {
	case diffEqual(cv, rv):
		return ""
	case cv.kind == '-' || rv.kind == '-':
		return "replies differ"
	case kind == diffSet:
		if !diffSameSet(cv, rv) {
			return "replies differ as sets"
		}
	case kind == diffPairs:
		// Redis lists a listpack hash in insertion order, a hash table in
		// its own; Cairn in field order.
		if !slices.Equal(diffPairSet(cv), diffPairSet(rv)) {
			return "field-value pairs differ"
		}
	case kind == diffHScan:
		if len(cv.elems) != 2 || len(rv.elems) != 2 || !diffEqual(cv.elems[0], rv.elems[0]) ||
			!slices.Equal(diffPairSet(cv.elems[1]), diffPairSet(rv.elems[1])) {
			return "HSCAN replies differ"
		}
	case kind == diffSScan:
		if len(cv.elems) != 2 || len(rv.elems) != 2 || !diffEqual(cv.elems[0], rv.elems[0]) || !diffSameSet(cv.elems[1], rv.elems[1]) {
			return "SSCAN replies differ"
		}
	case kind == diffRandField:
		if cv.kind != rv.kind || cv.null != rv.null || len(cv.elems) != len(rv.elems) {
			return "HRANDFIELD replies differ in kind or length"
		}
	case kind == diffTTLSec || kind == diffTTLMs:
		slack := int64(diffTTLSlackMs)
		if kind == diffTTLSec {
			slack /= 1000
		}
		if cv.kind != ':' || rv.kind != ':' || cv.n < 0 || rv.n < 0 || diffAbs(cv.n-rv.n) > slack {
			return fmt.Sprintf("TTLs differ (slack %d)", slack)
		}
	case kind == diffRandomKey:
		if cv.kind != rv.kind || cv.kind != '$' && cv.kind != '_' || cv.null != rv.null {
			return "RANDOMKEY: nil on one server only"
		}
	case kind == diffDump:
		// Redis compresses values over 20 bytes, Cairn does not.
		if cv.kind != '$' || rv.kind != '$' || cv.null || rv.null {
			return "DUMP: nil on one server only"
		}
		c, cerr := rdb.Decode([]byte(cv.str), 1<<30)
		r, rerr := rdb.Decode([]byte(rv.str), 1<<30)
		if cerr != nil || rerr != nil || c.Type != r.Type || !bytes.Equal(c.String, r.String) || !slices.Equal(diffHashSet(c.Hash), diffHashSet(r.Hash)) ||
			!slices.Equal(diffSetOf(diffStrings(c.Set)), diffSetOf(diffStrings(r.Set))) || !slices.Equal(diffStrings(c.List), diffStrings(r.List)) ||
			!slices.EqualFunc(c.ZSet, r.ZSet, func(x, y rdb.ZMember) bool {
				return bytes.Equal(x.Member, y.Member) && math.Float64bits(x.Score) == math.Float64bits(y.Score)
			}) {
			return fmt.Sprintf("DUMP payloads hold different values (cairn %+v %v, redis %+v %v)", c, cerr, r, rerr)
		}
	default:
		return "replies differ"
	}
	return ""
}

// diffEqual reports whether two parsed replies are the same.
func diffEqual(a, b diffReply) bool {
	return a.kind == b.kind && a.str == b.str && a.n == b.n && a.null == b.null &&
		slices.EqualFunc(a.elems, b.elems, diffEqual)
}

// diffRender writes a parsed reply back as RESP.
func diffRender(v diffReply) string {
	switch {
	case v.null && v.kind != '_':
		return string(v.kind) + "-1\r\n"
	case v.kind == '$' || v.kind == '=':
		return fmt.Sprintf("%c%d\r\n%s\r\n", v.kind, len(v.str), v.str)
	case v.kind == '*' || v.kind == '%' || v.kind == '~' || v.kind == '>':
		n := len(v.elems)
		if v.kind == '%' {
			n /= 2
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%c%d\r\n", v.kind, n)
		for _, e := range v.elems {
			b.WriteString(diffRender(e))
		}
		return b.String()
	}
	return string(v.kind) + v.str + "\r\n"
}

// runTransaction sends MULTI, cmds and EXEC to both servers: the replies
// to MULTI and to each queued command must be the same, and EXEC's
// replies are compared one by one as runOne compares a command's. It
// counts as one command of the stream.
func (r *diffRunner) runTransaction(cmds [][]string) {
	r.t.Helper()
	finished := false
	defer func() {
		if !finished && !r.failed {
			r.t.Logf("stopped at seed %d, %s command #%d: a transaction\nprevious: %s", r.seed, r.phase, r.index, r.histString())
		}
	}()
	if dropsExpired(cmds...) {
		r.reclaimExpired()
	}
	for i, args := range append([][]string{{"multi"}}, cmds...) {
		if i > 0 && r.stream.script {
			args = append([]string{"eval", "return redis.call(unpack(ARGV))", "0"}, args...)
		}
		cr, rr := r.cairn.Do(args...), r.redis.Do(args...)
		if cr != rr {
			r.fail(args, cr, rr, "replies differ while queueing a transaction")
		}
		r.remember(args, cr, rr)
	}
	exec := []string{"exec"}
	cr, rr := r.cairn.Do(exec...), r.redis.Do(exec...)
	if cr != rr {
		cv, rv := diffParse(cr), diffParse(rr)
		if cv.kind != '*' || rv.kind != '*' || cv.null || rv.null || len(cv.elems) != len(cmds) || len(rv.elems) != len(cmds) {
			r.fail(exec, cr, rr, "EXEC replies differ")
		}
		for i, args := range cmds {
			if why := diffCompare(diffKindOf(args), cv.elems[i], rv.elems[i]); why != "" {
				r.fail(exec, diffRender(cv.elems[i]), diffRender(rv.elems[i]),
					fmt.Sprintf("EXEC reply %d of %d (%s): %s", i+1, len(cmds), diffShow(args), why))
			}
		}
	}
	r.remember(exec, cr, rr)
	r.count()
	finished = true
}

// retrySortErrno sends args again to redis-server when it failed a
// numeric SORT (reply rr) that cairn answered (cr), after resetting its
// errno, and returns the second reply. redis-server 7.0's SORT tests errno
// for ERANGE after strtod without resetting it first, so a number out of
// range parsed by an earlier command (INCRBYFLOAT of "1e5000", a SCAN
// cursor beyond 64 bits) fails its SORTs until a command resets errno, as
// ZADD does before parsing its scores. The retry counts differently on
// the two servers, so it resets both servers' INFO counters.
func (r *diffRunner) retrySortErrno(args []string, cr, rr string) (string, bool) {
	if !strings.HasPrefix(rr, "-ERR One or more scores can't be converted into double") || strings.HasPrefix(cr, "-") {
		return rr, false
	}
	if got := r.redis.Do("zadd", "errno:reset", "xx", "1", "m"); got != ":0\r\n" {
		r.fail(args, cr, got, "resetting redis-server's errno (ZADD errno:reset XX 1 m)")
	}
	rr = r.redis.Do(args...)
	for _, c := range []*RawConn{r.resetter, r.redis} {
		if got := c.Do("config", "resetstat"); got != "+OK\r\n" {
			r.fail(args, cr, got, "CONFIG RESETSTAT")
		}
	}
	return rr, true
}

// setPhase starts a phase: testdata, random or final.
func (r *diffRunner) setPhase(p string) { r.phase, r.index = p, 0 }

func (r *diffRunner) count() {
	r.compared++
	switch r.phase {
	case "testdata":
		r.fixed++
	case "final":
		r.final++
	}
	r.index++
}

// adjustGTLT moves the time of an EXPIRE-family command with GT or LT
// away from the key's current expire time when the two are within
// diffGTLTMarginMs: the servers stamp relative times a few milliseconds
// apart, so such a comparison could go either way.
func (r *diffRunner) adjustGTLT(args []string) {
	if len(args) < 4 {
		return
	}
	var unitMs int64
	relative := false
	switch strings.ToLower(args[0]) {
	case "expire":
		unitMs, relative = 1000, true
	case "pexpire":
		unitMs, relative = 1, true
	case "expireat":
		unitMs = 1000
	case "pexpireat":
		unitMs = 1
	default:
		return
	}
	gtlt := false
	for _, o := range args[3:] {
		if o := strings.ToLower(o); o == "gt" || o == "lt" {
			gtlt = true
		}
	}
	when, err := strconv.ParseInt(args[2], 10, 64)
	if !gtlt || err != nil || diffAbs(when) > math.MaxInt64/4/unitMs {
		return
	}
	// Read on both servers, so that their keyspace hit counts agree.
	r.cairn.Do("pexpiretime", args[1])
	cur := diffParse(r.redis.Do("pexpiretime", args[1]))
	if cur.kind != ':' || cur.n <= 0 {
		return
	}
	at := when * unitMs
	if relative {
		at += time.Now().UnixMilli()
	}
	if diffAbs(at-cur.n) < diffGTLTMarginMs {
		args[2] = strconv.FormatInt(when+2*diffGTLTMarginMs/unitMs, 10)
	}
}

// reclaimExpired has both servers reclaim every key stored already expired
// (SET ... PXAT of a past time keeps one until the expiry cycle or an
// access reclaims it): a plain SCAN over all keys does, counting each in
// expired_keys. The runner calls it before the commands whose counts
// would otherwise depend on whether each server's expiry cycle got there
// first: SCAN ... TYPE (a miss for such a key), and FLUSHDB, BITOP (an
// empty result) and RESTORE ... REPLACE, which delete such a key without
// counting it (BITOP and RESTORE with a "del" event).
func (r *diffRunner) reclaimExpired() {
	for _, c := range []*RawConn{r.cairn, r.redis} {
		for cursor := "0"; ; {
			v := diffParse(c.Do("scan", cursor, "count", "1000"))
			if cursor = v.elems[0].str; cursor == "0" {
				break
			}
		}
	}
}

// dropsExpired reports whether cmds hold a command that can delete a key
// stored already expired without counting it (see reclaimExpired).
func dropsExpired(cmds ...[]string) bool {
	return slices.ContainsFunc(cmds, func(c []string) bool {
		return len(c) > 0 && slices.ContainsFunc([]string{"flushdb", "bitop", "restore"}, func(name string) bool {
			return strings.EqualFold(c[0], name)
		})
	})
}

// runScan iterates SCAN to completion on both servers with the same
// options and compares the union of the keys as a set.
func (r *diffRunner) runScan(args []string) {
	r.t.Helper()
	if slices.ContainsFunc(args, func(a string) bool { return strings.EqualFold(a, "type") }) {
		// SCAN ... TYPE reads each key it matches, counting a miss for
		// an expired one.
		r.reclaimExpired()
	}
	iterate := func(c *RawConn) (first string, keys []string, ok bool) {
		cmd := slices.Clone(args)
		for i := 0; i < 100000; i++ {
			raw := c.Do(cmd...)
			if i == 0 {
				first = raw
			}
			v := diffParse(raw)
			if v.kind != '*' || len(v.elems) != 2 || v.elems[1].kind != '*' {
				return raw, nil, false
			}
			for _, k := range v.elems[1].elems {
				keys = append(keys, k.str)
			}
			if v.elems[0].str == "0" {
				return first, keys, true
			}
			cmd[1] = v.elems[0].str
		}
		r.t.Fatalf("SCAN %s did not finish in 100000 calls", diffShow(args))
		return
	}
	cf, ck, cok := iterate(r.cairn)
	rf, rk, rok := iterate(r.redis)
	cs, rs := diffSetOf(ck), diffSetOf(rk)
	switch {
	case !cok || !rok:
		if cf != rf {
			r.fail(args, cf, rf, "SCAN replies differ")
		}
	case !slices.Equal(cs, rs):
		r.fail(args, fmt.Sprintf("%q", cs), fmt.Sprintf("%q", rs), "SCAN unions differ")
	}
	if !cok || !rok {
		r.remember(args, cf, rf)
	} else {
		r.remember(args, fmt.Sprintf("scan union %q", cs), fmt.Sprintf("scan union %q", rs))
	}
}

// compareKeyspace compares every key's type, value and TTL class.
func (r *diffRunner) compareKeyspace() {
	r.t.Helper()
	r.setPhase("final")
	r.run([]string{"dbsize"})
	// The key and expiry counts of INFO keyspace (a count that drifted
	// would, for expiries, stop the active expire cycle): equal once both
	// servers have reclaimed their expired keys. Cairn does not compute
	// avg_ttl.
	counts := func(c *RawConn) string {
		info := diffParse(c.Do("info", "keyspace")).str
		for _, line := range strings.Split(strings.TrimPrefix(info, "txt:"), "\r\n") {
			if s, ok := strings.CutPrefix(line, "db0:"); ok {
				s, _, _ = strings.Cut(s, ",avg_ttl=")
				return s
			}
		}
		return "empty"
	}
	deadline := time.Now().Add(5 * time.Second)
	cc, rc := counts(r.cairn), counts(r.redis)
	for cc != rc && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		cc, rc = counts(r.cairn), counts(r.redis)
	}
	if cc != rc {
		r.fail([]string{"info", "keyspace"}, cc, rc, "INFO keyspace counts differ after 5s of expiry cycles")
	}
	r.count()
	// The counters INFO reports for the stream (these checks come after
	// it and do not count; expired_keys may take the expiry cycles a
	// moment more).
	r.compareStats([]string{"info", "everything"}, diffStatsFields, 5*time.Second)
	r.count()
	r.run([]string{"keys", "*"})
	keys := diffParse(r.redis.Do("keys", "*"))
	for _, k := range keys.elems {
		r.run([]string{"type", k.str})
		r.run([]string{"get", k.str})
		r.run([]string{"hgetall", k.str})
		r.run([]string{"smembers", k.str})
		r.run([]string{"lrange", k.str, "0", "-1"})
		r.run([]string{"zrange", k.str, "0", "-1", "withscores"})
		r.run([]string{"object", "encoding", k.str})
		r.run([]string{"pttl", k.str})
	}
}

// diffPairSet returns the field-value pairs of a flat array or a map,
// sorted, or nil for other replies.
func diffPairSet(v diffReply) []string {
	if (v.kind != '*' && v.kind != '%') || len(v.elems)%2 != 0 {
		return nil
	}
	out := []string{}
	for i := 0; i < len(v.elems); i += 2 {
		out = append(out, fmt.Sprintf("%q=%q", v.elems[i].str, v.elems[i+1].str))
	}
	slices.Sort(out)
	return out
}

// diffStrings returns bs as strings.
func diffStrings(bs [][]byte) []string {
	out := []string{}
	for _, b := range bs {
		out = append(out, string(b))
	}
	return out
}

// diffHashSet returns a decoded hash's field-value pairs, sorted.
func diffHashSet(pairs [][2][]byte) []string {
	out := []string{}
	for _, p := range pairs {
		out = append(out, fmt.Sprintf("%q=%q", p[0], p[1]))
	}
	slices.Sort(out)
	return out
}

func diffAbs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

func diffSetOf(keys []string) []string {
	s := slices.Clone(keys)
	slices.Sort(s)
	return slices.Compact(s)
}

func diffSameSet(a, b diffReply) bool {
	if a.kind != b.kind || (a.kind != '*' && a.kind != '~') || a.null || b.null {
		return false
	}
	var as, bs []string
	for _, e := range a.elems {
		as = append(as, e.str)
	}
	for _, e := range b.elems {
		bs = append(bs, e.str)
	}
	slices.Sort(as)
	slices.Sort(bs)
	return slices.Equal(as, bs)
}

// diffReply is a parsed RESP2 or RESP3 reply.
type diffReply struct {
	kind  byte // '+', '-', ':', '$', '*', and in RESP3 '_', ',', '#', '(', '=', '%', '~', '>'
	str   string
	n     int64
	null  bool        // $-1, *-1 or _
	elems []diffReply // of an aggregate; a map's keys and values alternate
}

func diffParse(raw string) diffReply {
	return diffParseFrom(bufio.NewReader(strings.NewReader(raw)))
}

func diffParseFrom(rd *bufio.Reader) diffReply {
	line, _ := rd.ReadString('\n')
	if len(line) < 3 {
		return diffReply{kind: '?', str: line}
	}
	v := diffReply{kind: line[0], str: line[1 : len(line)-2]}
	switch v.kind {
	case ':':
		v.n, _ = strconv.ParseInt(v.str, 10, 64)
	case '_':
		v.null = true
	case '$', '=':
		n, _ := strconv.Atoi(v.str)
		if n < 0 {
			v.null, v.str = true, ""
			break
		}
		buf := make([]byte, n+2)
		_, _ = io.ReadFull(rd, buf)
		v.str = string(buf[:n])
	case '*', '%', '~', '>':
		n, _ := strconv.Atoi(v.str)
		if n < 0 {
			v.null = true
			break
		}
		if v.kind == '%' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			v.elems = append(v.elems, diffParseFrom(rd))
		}
	}
	return v
}

// ---- the generator ----

type diffGen struct {
	rng *rand.Rand
	now func() time.Time
	// xdel is set once the stream sent an XDEL: from then on it sends no
	// MINID trims. Redis judges a node whose last entry XDEL deleted by
	// that entry, and keeps it when an exact MINID trim empties it; Cairn
	// keeps no deleted entries (README, "Streams").
	// TestStreamTrimMatchesRedis covers MINID on streams without
	// deletions.
	xdel bool
}

// diffKeys is the small key space: commands collide on purpose. Some keys
// are binary, hold spaces, colons or glob characters.
var diffKeys = []string{
	"k0", "k1", "k2", "k3", "n1", "n2", "f1", "f2",
	"user:1", "user:2", "user:10", "a b", "hello world:x",
	"\x00bin\xff", "\xff\xfe\x00", "h?llo", "*star", "[br]", "", "k\r\nnl",
}

var diffPatterns = []string{
	"*", "*", "k*", "user:*", "user:?", "*:*", "h?llo", `h\?llo`, "[a-k]*", "[^k]*",
	"*o*", `\*star`, "*star", "[br]", `\[br\]`, "", "a b", "*\x00*", "k[0-2]", "[",
	"[a-", `\`, `*\`, "user:1*", "*[", "?", "??", "k?", "[k-a]*", "*\r\n*", "[\xff]*",
	"*b*", "f[12]", "n[!1]", "[[]br]", "user:[0-9]*",
}

var diffIntValues = []string{
	"0", "1", "-1", "42", "100", "-100", "9223372036854775807", "9223372036854775806",
	"-9223372036854775808", "-9223372036854775807", "9223372036854775808",
	"-9223372036854775809", "1e3", " 1", "1 ", "01", "-0", "+1", "0x10", "1.5", "",
	"abc", "4611686018427387904", "-4611686018427387904", "99999999999999999999",
}

var diffFloatValues = []string{
	"0", "1", "-1", "1.5", "-2.25", "0.1", "0.2", "3.0e-5", "1e3", "1E3", "-1e-3",
	"1.5e308", "-1.5e308", "1.7976931348623157e308", "1e4932", "-1e4932",
	"1.18973149535723176502e4932", "1.2e4932", "5e-4951", "1e-4940", "1e5000",
	"1e-5000", "0x10", "0x1p3", "0x1.8", "0X1P-2", "0x1e3", "0x", "inf", "-inf",
	"+inf", "Infinity", "INF", "infinit", "nan", "-nan", " 1", "1 ", "1e", ".5", "5.",
	".", "+.5", "-0", "-0.0", "3.14159265358979323846264338327950288",
	"0.30000000000000004", "123456789012345678901234567890", "1_000", "1p3",
	"9223372036854775807", "0.000000000000000001", "1e-17", "1e-18", "12345.678e-3",
	"abc", "", "--1", "+-1", "1e+2", "1e-2", "00012.5",
}

// diffLongNumbers are digit strings at Redis's MAX_LONG_DOUBLE_CHARS limit.
var diffLongNumbers = []string{
	strings.Repeat("0", 5118) + "1",
	strings.Repeat("0", 5119) + "1",
	strings.Repeat("0", 5120) + "1",
}

// pattern returns a glob pattern: a listed one, or random glob syntax
// over characters the keys use.
func (g *diffGen) pattern() string {
	if g.chance(0.6) {
		return g.pick(diffPatterns)
	}
	const alphabet = "**??[[]]^!-\\kKu1:r b\x00\xffs"
	b := make([]byte, 1+g.rng.IntN(8))
	for i := range b {
		b[i] = alphabet[g.rng.IntN(len(alphabet))]
	}
	return string(b)
}

func (g *diffGen) pick(list []string) string { return list[g.rng.IntN(len(list))] }
func (g *diffGen) chance(p float64) bool     { return g.rng.Float64() < p }
func (g *diffGen) key() string               { return g.pick(diffKeys) }

// word randomizes the case of a command name or keyword.
func (g *diffGen) word(s string) string {
	switch x := g.rng.IntN(10); {
	case x < 6:
		return s
	case x < 8:
		return strings.ToUpper(s)
	default:
		b := []byte(s)
		for i := range b {
			if g.chance(0.5) {
				b[i] = strings.ToUpper(string(b[i]))[0]
			}
		}
		return string(b)
	}
}

// opt randomizes an option keyword like word, and sometimes follows it
// with a NUL byte and junk: Redis compares keywords as C strings.
func (g *diffGen) opt(s string) string {
	s = g.word(s)
	if g.chance(0.02) {
		s += "\x00" + g.pick([]string{"", "x", "junk"})
	}
	return s
}

func (g *diffGen) value() string {
	switch x := g.rng.IntN(20); {
	case x < 4:
		return strconv.Itoa(g.rng.IntN(200) - 100)
	case x < 7:
		return g.pick(diffIntValues)
	case x < 10:
		return g.pick(diffFloatValues)
	case x < 11:
		return strconv.FormatFloat(g.rng.Float64()*2000-1000, 'f', g.rng.IntN(20), 64)
	case x < 12:
		return strings.Repeat("x", 500+g.rng.IntN(3000)) + strconv.Itoa(g.rng.IntN(10))
	case x < 13:
		return "\x00\x01\xff" + strconv.Itoa(g.rng.IntN(10))
	case x < 14:
		if g.chance(0.1) {
			return g.pick(diffLongNumbers)
		}
		return ""
	default:
		return g.pick([]string{"abc", "hello world", "v1", "v2", "value:with:colons", "a\r\nb", "é"})
	}
}

func (g *diffGen) intArg() string {
	if g.chance(0.5) {
		return strconv.Itoa(g.rng.IntN(2000) - 1000)
	}
	return g.pick(diffIntValues)
}

func (g *diffGen) floatArg() string {
	switch x := g.rng.IntN(10); {
	case x < 3:
		return strconv.FormatFloat(g.rng.Float64()*200-100, 'f', g.rng.IntN(18), 64)
	case x < 4:
		return strconv.FormatFloat(g.rng.NormFloat64()*math.Pow(10, float64(g.rng.IntN(40)-20)), 'g', -1, 64)
	case x < 5:
		return g.pick(diffIntValues)
	case x < 6:
		// Many digits and wide exponents: exercises the rounding of
		// the long double parse.
		s := g.digits(1+g.rng.IntN(30)) + "." + g.digits(g.rng.IntN(30))
		if g.chance(0.5) {
			s += "e" + strconv.Itoa(g.rng.IntN(9900)-4950)
		}
		if g.chance(0.3) {
			s = "-" + s
		}
		return s
	default:
		return g.pick(diffFloatValues)
	}
}

func (g *diffGen) digits(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + g.rng.IntN(10))
	}
	return string(b)
}

var diffBadTimes = []string{
	"0", "-1", "-100", "abc", "1.5", "", " 100", "0100", "+100", "9223372036854775807",
	"9223372036854775", "9223372036854776", "-9223372036854775808", "9223372036854775808",
	"9223372036854775000", "-9223372036854775",
}

// diffMinFutureSec is the shortest TTL the stream sets: far longer than
// any run, so no key expires while the two servers are being compared.
const diffMinFutureSec = 1000

// relTime returns a relative time: at least diffMinFutureSec ahead, or a
// bad one.
func (g *diffGen) relTime(ms bool) string {
	if g.chance(0.12) {
		return g.pick(diffBadTimes)
	}
	if ms {
		return strconv.FormatInt(diffMinFutureSec*1000+g.rng.Int64N(100000000), 10)
	}
	return strconv.FormatInt(diffMinFutureSec+g.rng.Int64N(100000), 10)
}

// absTime returns a Unix time: at least diffMinFutureSec ahead, clearly
// past, or bad.
func (g *diffGen) absTime(ms bool) string {
	now := g.now()
	switch x := g.rng.IntN(20); {
	case x < 2:
		return g.pick(diffBadTimes)
	case x < 4:
		past := now.Add(-time.Duration(1000+g.rng.IntN(100000)) * time.Second)
		if g.chance(0.3) {
			past = time.Unix(1, 0)
		}
		if ms {
			return strconv.FormatInt(past.UnixMilli(), 10)
		}
		return strconv.FormatInt(past.Unix(), 10)
	default:
		fut := now.Add(time.Duration(diffMinFutureSec+g.rng.IntN(1000000)) * time.Second)
		if ms {
			return strconv.FormatInt(fut.UnixMilli()+g.rng.Int64N(1000), 10)
		}
		return strconv.FormatInt(fut.Unix(), 10)
	}
}

// expireTime returns the time argument of the EXPIRE family, where zero
// and negative times are valid (they delete the key).
func (g *diffGen) expireTime(abs, ms bool) string {
	switch x := g.rng.IntN(20); {
	case x < 2:
		return g.pick(diffBadTimes)
	case x < 3:
		return g.pick([]string{"0", "-1", "-1000", "9223372036854", "9223372036854775"})
	}
	if abs {
		return g.absTime(ms)
	}
	return g.relTime(ms)
}

// setOptions returns random SET or GETEX options, valid or not.
func (g *diffGen) setOptions(getex bool) []string {
	var out []string
	for n := g.rng.IntN(4); n > 0; n-- {
		var opts []string
		if getex {
			opts = []string{"ex", "px", "exat", "pxat", "persist", "persist", "ex", "px"}
			if g.chance(0.05) {
				opts = append(opts, "nx", "xx", "get", "keepttl")
			}
		} else {
			opts = []string{"nx", "xx", "get", "keepttl", "ex", "px", "exat", "pxat", "get", "ex", "px"}
			if g.chance(0.05) {
				opts = append(opts, "persist")
			}
		}
		if g.chance(0.02) {
			opts = append(opts, "foo", "e", "exx", "\x00")
		}
		o := g.pick(opts)
		out = append(out, g.opt(o))
		switch o {
		case "ex", "px":
			if g.chance(0.03) {
				continue // missing value
			}
			out = append(out, g.relTime(o == "px"))
		case "exat", "pxat":
			if g.chance(0.03) {
				continue
			}
			out = append(out, g.absTime(o == "pxat"))
		}
	}
	return out
}

// diffFields are the hash fields the stream uses.
var diffFields = []string{"a", "b", "c", "f1", "f2", "field:3", "", "x y", "\x00f", "é"}

// field returns a hash field, rarely one too long for a listpack.
func (g *diffGen) field() string {
	if g.chance(0.02) {
		return strings.Repeat("F", 65+g.rng.IntN(10))
	}
	return g.pick(diffFields)
}

// member returns a set member: mostly integers (an intset in Redis),
// sometimes other strings, rarely a long one.
func (g *diffGen) member() string {
	switch x := g.rng.IntN(20); {
	case x < 12:
		return strconv.Itoa(g.rng.IntN(20) - 5)
	case x < 13:
		return g.pick([]string{"9223372036854775807", "-9223372036854775808", "9223372036854775808", "01", "-0", "+1", " 1"})
	case x < 14:
		return strings.Repeat("m", 70)
	default:
		return g.field()
	}
}

// listKey returns a key for a list command: mostly one of the lists' own
// keys, which other commands rarely touch, so that lists grow and get
// popped, trimmed and moved; sometimes one of the shared keys.
func (g *diffGen) listKey() string {
	if g.chance(0.4) {
		return g.key()
	}
	return "list:" + strconv.Itoa(g.rng.IntN(3))
}

// zsetKey returns a key for a sorted-set command: mostly one of the
// sorted sets' own keys, sometimes one of the shared keys.
func (g *diffGen) zsetKey() string {
	if g.chance(0.3) {
		return g.key()
	}
	return "zset:" + strconv.Itoa(g.rng.IntN(3))
}

// streamKey returns a key for a stream command: mostly one of the
// streams' own keys. Writes never reach the shared keys (a stream there
// would meet DUMP, which Cairn does not write for streams); reads do,
// sometimes (shared), for WRONGTYPE and missing keys.
func (g *diffGen) streamKey(shared bool) string {
	if shared && g.chance(0.15) {
		return g.key()
	}
	return "stream:" + strconv.Itoa(g.rng.IntN(3))
}

// streamID returns an entry ID argument: small numbers so that entries
// collide and order matters, sometimes ms alone, a "ms-*" (where
// allowed), or an invalid one.
func (g *diffGen) streamID(auto bool) string {
	ms := strconv.Itoa(g.rng.IntN(40))
	switch x := g.rng.IntN(20); {
	case x < 10:
		return ms + "-" + strconv.Itoa(g.rng.IntN(3))
	case x < 14:
		return ms
	case x < 17 && auto:
		return ms + "-*"
	case x < 18:
		return g.pick([]string{"0-0", "18446744073709551615-18446744073709551615", "0-1"})
	}
	return g.pick([]string{"x", "-", "+", "1-x", "-1", "01", "1-*"})
}

// streamBound returns a range bound of XRANGE, XREVRANGE and XPENDING.
func (g *diffGen) streamBound() string {
	switch x := g.rng.IntN(10); {
	case x < 3:
		return g.pick([]string{"-", "+"})
	case x < 5:
		return "(" + g.streamID(false)
	}
	return g.streamID(false)
}

// streamGroup and streamConsumer return group and consumer names.
func (g *diffGen) streamGroup() string    { return "g" + strconv.Itoa(g.rng.IntN(3)) }
func (g *diffGen) streamConsumer() string { return "c" + strconv.Itoa(g.rng.IntN(3)) }

// streamTrim returns XADD's or XTRIM's trimming options.
func (g *diffGen) streamTrim() []string {
	var args []string
	if g.chance(0.5) || g.xdel {
		args = append(args, g.opt("maxlen"))
	} else {
		args = append(args, g.opt("minid"))
	}
	approx := g.chance(0.4)
	switch {
	case approx:
		args = append(args, "~")
	case g.chance(0.3):
		args = append(args, "=")
	}
	if strings.EqualFold(args[0], "maxlen") {
		args = append(args, g.pick([]string{"0", "1", "2", "3", "5", "10", "-1", "x"}))
	} else {
		args = append(args, g.streamID(false))
	}
	if g.chance(0.2) {
		args = append(args, g.opt("limit"), g.pick([]string{"0", "1", "2", "5", "-1"}))
	}
	return args
}

// hllKey returns a key for a HyperLogLog command: mostly one of the
// HyperLogLogs' own keys, sometimes one of the shared keys (strings that
// are no HyperLogLog, other types, or HyperLogLogs other commands change).
func (g *diffGen) hllKey() string {
	if g.chance(0.2) {
		return g.key()
	}
	return "hll:" + strconv.Itoa(g.rng.IntN(4))
}

// hllElement returns an element for PFADD: mostly one of a few thousand
// numbers, so that sketches grow, sometimes a set member.
func (g *diffGen) hllElement() string {
	if g.chance(0.1) {
		return g.member()
	}
	return strconv.Itoa(g.rng.IntN(5000))
}

// zscore returns a score: mostly small numbers, so members tie and move,
// sometimes infinities, -0, hexadecimal, invalid ones.
func (g *diffGen) zscore() string {
	switch x := g.rng.IntN(20); {
	case x < 12:
		return strconv.Itoa(g.rng.IntN(10) - 3)
	case x < 16:
		return g.pick([]string{"1.5", "-2.25", "0.1", "1e20", "3.0000000000000004", "9007199254740993"})
	default:
		// Not out of double's range: redis-server 7.0 leaves errno set
		// then, which fails its later numeric SORTs.
		return g.pick([]string{"inf", "-inf", "+inf", "-0", "0x10", "nan", "x", " 1", ""})
	}
}

// geoKey returns a key for a GEO command: mostly one of the geo sets' own
// keys, sometimes one of the sorted sets' or the shared keys.
func (g *diffGen) geoKey() string {
	if g.chance(0.15) {
		return g.zsetKey()
	}
	return "geo:" + strconv.Itoa(g.rng.IntN(3))
}

// geoMember returns a member of a geo set: mostly a few names, so that
// GEOADD moves them and searches start from them.
func (g *diffGen) geoMember() string {
	if g.chance(0.1) {
		return g.member()
	}
	return "p" + strconv.Itoa(g.rng.IntN(20))
}

// geoCenters are the areas random points cluster in.
var geoCenters = [][2]float64{{13.36, 38.11}, {0, 0}, {179.9, 10}, {-179.95, -20}, {10, 84.9}, {-60, -84.95}}

// geoPoint returns a longitude and a latitude: mostly a point within
// about 25 km of one of geoCenters, held to the indexed area; rarely a
// limit of the area, or a value out of it, or not a number.
func (g *diffGen) geoPoint() (long, lat string) {
	switch x := g.rng.IntN(40); {
	case x == 0:
		return g.pick([]string{"180", "-180", "0", "181", "x", "inf"}), g.pick([]string{"85.05112878", "-85.05112878", "0", "85.06", "-90", "nan"})
	case x == 1:
		return g.pick([]string{"13.36", "0", "-180"}), g.pick([]string{"85.05112878", "-85.05112878", "38.11"})
	}
	c := geoCenters[g.rng.IntN(len(geoCenters))]
	lo := min(max(c[0]+(g.rng.Float64()-0.5)*0.4, -180), 180)
	la := min(max(c[1]+(g.rng.Float64()-0.5)*0.4, -85.05112878), 85.05112878)
	return strconv.FormatFloat(lo, 'f', 6+g.rng.IntN(6), 64), strconv.FormatFloat(la, 'f', 6+g.rng.IntN(6), 64)
}

// geoRadius returns a radius, width or height in unit: mostly one that
// reaches some of a cluster's points (up to about 60 km), sometimes zero,
// a huge one or a bad one.
func (g *diffGen) geoRadius(unit string) string {
	name, _, _ := strings.Cut(strings.ToLower(unit), "\x00")
	scale := map[string]float64{"m": 60000, "km": 60, "mi": 40, "ft": 200000}[name]
	if scale == 0 {
		scale = 60
	}
	switch x := g.rng.IntN(20); {
	case x < 15:
		return strconv.FormatFloat(g.rng.Float64()*scale, 'f', g.rng.IntN(4), 64)
	case x < 18:
		return g.pick([]string{"0", "100", "1000", "25000", "50000", "0.001"})
	}
	return g.pick([]string{"-1", "x", "inf", ""})
}

// geoUnit returns a unit, in either case, or rarely an unknown one.
func (g *diffGen) geoUnit() string {
	if g.chance(0.03) {
		return g.pick([]string{"yd", "", "kms"})
	}
	return g.opt(g.pick([]string{"km", "km", "km", "m", "mi", "ft"}))
}

// lexKey returns a key for a lex range: one of the sorted sets whose
// members all score 0, written by ZADD of score 0 and emptied by
// removals only. (Over members of different scores, Redis's answers
// depend on its skiplists' random levels.)
func (g *diffGen) lexKey() string { return "zlex:" + strconv.Itoa(g.rng.IntN(2)) }

// scoreBound returns a bound of a score range, open or closed, or a bad
// one.
func (g *diffGen) scoreBound() string {
	b := g.zscore()
	if g.chance(0.3) {
		b = "(" + b
	}
	return b
}

// lexBound returns a bound of a lex range, or a bad one.
func (g *diffGen) lexBound() string {
	switch x := g.rng.IntN(10); {
	case x < 6:
		return g.pick([]string{"[", "("}) + g.member()
	case x < 9:
		return g.pick([]string{"-", "+"})
	}
	return g.pick([]string{"a", "", "+x", "[", "("})
}

// zrangeOptions returns options of a range command; with auto (ZRANGE,
// ZRANGESTORE) REV, BYSCORE and BYLEX too.
func (g *diffGen) zrangeOptions(auto bool) []string {
	var out []string
	for n := g.rng.IntN(3); n > 0; n-- {
		switch g.rng.IntN(4) {
		case 0:
			out = append(out, g.opt("withscores"))
		case 1:
			out = append(out, g.opt("limit"), g.pick([]string{"0", "1", "2", "-1", "x"}), g.pick([]string{"1", "2", "-1", "0", "100"}))
		case 2:
			if auto {
				out = append(out, g.opt("rev"))
			}
		default:
			if auto && g.chance(0.2) {
				out = append(out, g.opt(g.pick([]string{"byscore", "bylex"})))
			}
		}
	}
	return out
}

// withMPopTail adds the end and maybe a COUNT to a ZMPOP or BZMPOP.
func (g *diffGen) withMPopTail(args []string) []string {
	args = append(args, g.opt(g.pick([]string{"min", "max", "min", "max", "left"})))
	if g.chance(0.5) {
		args = append(args, g.opt("count"), g.pick([]string{"1", "2", "10", "0", "x"}))
	}
	return args
}

// several returns min to max values of one.
func (g *diffGen) several(min, max int, one func() string) []string {
	out := make([]string, min+g.rng.IntN(max-min+1))
	for i := range out {
		out[i] = one()
	}
	return out
}

type diffBuilder struct {
	weight int
	build  func(g *diffGen) []string
}

var diffBuilders = []diffBuilder{
	{6, func(g *diffGen) []string { return []string{g.word("get"), g.key()} }},
	{12, func(g *diffGen) []string {
		return append([]string{g.word("set"), g.key(), g.value()}, g.setOptions(false)...)
	}},
	{2, func(g *diffGen) []string { return []string{g.word("setnx"), g.key(), g.value()} }},
	{3, func(g *diffGen) []string { return []string{g.word("setex"), g.key(), g.relTime(false), g.value()} }},
	{2, func(g *diffGen) []string { return []string{g.word("psetex"), g.key(), g.relTime(true), g.value()} }},
	{3, func(g *diffGen) []string { return append([]string{g.word("mget")}, g.several(1, 5, g.key)...) }},
	{3, func(g *diffGen) []string {
		args := []string{g.word("mset")}
		for _, k := range g.several(1, 4, g.key) {
			args = append(args, k, g.value())
		}
		if g.chance(0.05) {
			args = args[:len(args)-1]
		}
		return args
	}},
	{2, func(g *diffGen) []string {
		args := []string{g.word("msetnx")}
		for _, k := range g.several(1, 3, g.key) {
			args = append(args, k, g.value())
		}
		if g.chance(0.05) {
			args = args[:len(args)-1]
		}
		return args
	}},
	{2, func(g *diffGen) []string { return []string{g.word("getset"), g.key(), g.value()} }},
	{2, func(g *diffGen) []string { return []string{g.word("getdel"), g.key()} }},
	{4, func(g *diffGen) []string { return append([]string{g.word("getex"), g.key()}, g.setOptions(true)...) }},
	{3, func(g *diffGen) []string { return []string{g.word("append"), g.key(), g.value()} }},
	{2, func(g *diffGen) []string { return []string{g.word("strlen"), g.key()} }},
	{3, func(g *diffGen) []string {
		off := strconv.Itoa(g.rng.IntN(40))
		switch x := g.rng.IntN(10); {
		case x < 2:
			off = strconv.Itoa(g.rng.IntN(3000))
		case x < 3:
			off = g.pick([]string{"-1", "abc", "536870912", "536870911", "4294967296", "9223372036854775807", "9223372036854775806", "", "1.5"})
		}
		val := g.value()
		if off == "536870911" && len(val) < 2 {
			val = "xy" // 512 MB exactly would be allowed; keep it an error
		}
		return []string{g.word("setrange"), g.key(), off, val}
	}},
	{3, func(g *diffGen) []string {
		return []string{g.word(g.pick([]string{"getrange", "substr"})), g.key(), g.rangeIndex(), g.rangeIndex()}
	}},
	{3, func(g *diffGen) []string { return []string{g.word("incr"), g.key()} }},
	{3, func(g *diffGen) []string { return []string{g.word("incrby"), g.key(), g.intArg()} }},
	{5, func(g *diffGen) []string { return []string{g.word("incrbyfloat"), g.key(), g.floatArg()} }},
	{2, func(g *diffGen) []string { return []string{g.word("decr"), g.key()} }},
	{2, func(g *diffGen) []string { return []string{g.word("decrby"), g.key(), g.intArg()} }},
	{3, func(g *diffGen) []string {
		return append([]string{g.word(g.pick([]string{"del", "unlink"}))}, g.several(1, 4, g.key)...)
	}},
	{3, func(g *diffGen) []string { return append([]string{g.word("exists")}, g.several(1, 4, g.key)...) }},
	{1, func(g *diffGen) []string { return append([]string{g.word("touch")}, g.several(1, 4, g.key)...) }},
	{8, func(g *diffGen) []string {
		name := g.pick([]string{"expire", "pexpire", "expireat", "pexpireat"})
		args := []string{g.word(name), g.key(), g.expireTime(strings.HasSuffix(name, "at"), name[0] == 'p')}
		for n := g.rng.IntN(3); n > 0; n-- {
			opts := []string{"nx", "xx", "gt", "lt"}
			if g.chance(0.05) {
				opts = append(opts, "yy", "", "nx\r\n", "g\x00t")
			}
			args = append(args, g.opt(g.pick(opts)))
		}
		return args
	}},
	{5, func(g *diffGen) []string {
		return []string{g.word(g.pick([]string{"ttl", "pttl", "expiretime", "pexpiretime"})), g.key()}
	}},
	{2, func(g *diffGen) []string { return []string{g.word("persist"), g.key()} }},
	{2, func(g *diffGen) []string { return []string{g.word("type"), g.key()} }},
	{3, func(g *diffGen) []string {
		return []string{g.word(g.pick([]string{"rename", "renamenx"})), g.key(), g.key()}
	}},
	{3, func(g *diffGen) []string {
		args := []string{g.word("copy"), g.key(), g.key()}
		for n := g.rng.IntN(3); n > 0; n-- {
			switch x := g.rng.IntN(10); {
			case x < 6:
				args = append(args, g.opt("replace"))
			case x < 9:
				args = append(args, g.opt("db"), g.pick([]string{"0", "0", "16", "-1", "abc", "99999999999", "2147483648", "-2147483649", "00"}))
			default:
				args = append(args, g.pick([]string{"db", "foo", ""}))
			}
		}
		return args
	}},
	{2, func(g *diffGen) []string { return []string{g.word("keys"), g.pattern()} }},
	{2, func(g *diffGen) []string {
		cursor := "0"
		if g.chance(0.08) {
			cursor = g.pick([]string{"abc", " 0", "-", "+", "1.5", "18446744073709551616", "0x0", "00", "+0", "", "0\x00", "\x00", "0\x001", "-0"})
		}
		args := []string{g.word("scan"), cursor}
		for n := g.rng.IntN(4); n > 0; n-- {
			switch x := g.rng.IntN(20); {
			case x < 7:
				args = append(args, g.opt("match"), g.pattern())
			case x < 13:
				args = append(args, g.opt("count"), strconv.Itoa(1+g.rng.IntN(30)))
			case x < 17:
				// Not "none": Redis 7.0's SCAN TYPE none returns expired
				// keys its active expiry has not reclaimed yet, a timing
				// dependent quirk.
				args = append(args, g.opt("type"), g.opt(g.pick([]string{"string", "STRING", "list", "hash", "zset", "foo"})))
			case x < 18:
				args = append(args, g.opt("count"), g.pick([]string{"0", "-1", "abc", "9223372036854775808"}))
			default:
				args = append(args, g.pick([]string{"match", "count", "type", "foo"}))
			}
		}
		return args
	}},
	{1, func(g *diffGen) []string { return []string{g.word("randomkey")} }},
	{1, func(g *diffGen) []string { return []string{g.word("dbsize")} }},
	{3, func(g *diffGen) []string {
		val := g.pick([]string{"0", "1", "1", "0", "1", "2", "-1", "abc", "", "01"})
		return []string{g.word("setbit"), g.key(), g.bitOffset(true), val}
	}},
	{2, func(g *diffGen) []string { return []string{g.word("getbit"), g.key(), g.bitOffset(false)} }},
	{3, func(g *diffGen) []string {
		args := []string{g.word("bitcount"), g.key()}
		switch x := g.rng.IntN(10); {
		case x < 3:
		case x < 6:
			args = append(args, g.rangeIndex(), g.rangeIndex())
		case x < 9:
			args = append(args, g.rangeIndex(), g.rangeIndex(), g.bitUnit())
		default:
			args = append(args, g.rangeIndex(), g.rangeIndex(), g.bitUnit(), "x")[:2+g.rng.IntN(4)]
		}
		return args
	}},
	{3, func(g *diffGen) []string {
		bit := g.pick([]string{"0", "1", "0", "1", "2", "-1", "x"})
		args := []string{g.word("bitpos"), g.key(), bit}
		switch x := g.rng.IntN(10); {
		case x < 3:
		case x < 5:
			args = append(args, g.rangeIndex())
		case x < 7:
			args = append(args, g.rangeIndex(), g.rangeIndex())
		case x < 9:
			args = append(args, g.rangeIndex(), g.rangeIndex(), g.bitUnit())
		default:
			args = append(args, g.rangeIndex(), g.rangeIndex(), g.bitUnit(), "x")
		}
		return args
	}},
	{3, func(g *diffGen) []string {
		op := g.opt(g.pick([]string{"and", "or", "xor", "not", "not", "nand", ""}))
		args := []string{g.word("bitop"), op, g.key()}
		if strings.EqualFold(op, "not") && g.chance(0.9) {
			return append(args, g.key())
		}
		return append(args, g.several(1, 3, g.key)...)
	}},
	{4, func(g *diffGen) []string {
		name := "bitfield"
		if g.chance(0.3) {
			name = "bitfield_ro"
		}
		args := []string{g.word(name), g.key()}
		for n := g.rng.IntN(5); n > 0; n-- {
			switch x := g.rng.IntN(20); {
			case x < 6:
				args = append(args, g.opt("get"), g.bitfieldType(), g.bitfieldOffset())
			case x < 11:
				args = append(args, g.opt("set"), g.bitfieldType(), g.bitfieldOffset(), g.bitfieldValue())
			case x < 16:
				args = append(args, g.opt("incrby"), g.bitfieldType(), g.bitfieldOffset(), g.bitfieldValue())
			case x < 19:
				args = append(args, g.opt("overflow"), g.opt(g.pick([]string{"wrap", "sat", "fail", "fail", "bad"})))
			default:
				args = append(args, g.pick([]string{"get", "set", "incrby", "overflow", "foo"}))
			}
		}
		return args
	}},
	{3, func(g *diffGen) []string {
		args := []string{g.word("lcs"), g.key(), g.key()}
		for n := g.rng.IntN(4); n > 0; n-- {
			switch x := g.rng.IntN(12); {
			case x < 4:
				args = append(args, g.opt("idx"))
			case x < 6:
				args = append(args, g.opt("withmatchlen"))
			case x < 9:
				args = append(args, g.opt("minmatchlen"), g.pick([]string{"0", "1", "2", "3", "5", "-1", "abc"}))
			case x < 11:
				args = append(args, g.opt("len"))
			default:
				args = append(args, g.pick([]string{"minmatchlen", "foo", ""}))
			}
		}
		return args
	}},
	{2, func(g *diffGen) []string { return []string{g.word("dump"), g.key()} }},
	// OBJECT ENCODING and REFCOUNT depend on the command that last wrote a
	// value (SET, APPEND, INCRBYFLOAT, a bit write that changed nothing,
	// COPY of a small integer...).
	{4, func(g *diffGen) []string {
		return []string{g.word("object"), g.word(g.pick([]string{"encoding", "encoding", "refcount", "freq"})), g.key()}
	}},
	{1, func(g *diffGen) []string {
		// Not 1..15: the reference redis-server has 16 databases.
		dbs := []string{"0", "0", "-1", "16", "abc", "2147483648", "-2147483649", "", "00"}
		if g.chance(0.5) {
			return []string{g.word("move"), g.key(), g.pick(dbs)}
		}
		return []string{g.word("swapdb"), g.pick(dbs), g.pick(dbs)}
	}},
	{3, func(g *diffGen) []string {
		args := []string{g.word("restore"), g.key(), "0", g.dumpPayload()}
		switch x := g.rng.IntN(10); {
		case x < 2:
			args[2] = g.relTime(true)
		case x < 3:
			args[2] = g.absTime(true)
			args = append(args, g.opt("absttl"))
		case x < 4:
			args[2] = g.pick([]string{"-1", "abc", "9223372036854775807", "", "1.5"})
		}
		for n := g.rng.IntN(3); n > 0; n-- {
			switch x := g.rng.IntN(10); {
			case x < 5:
				args = append(args, g.opt("replace"))
			case x < 7:
				args = append(args, g.opt(g.pick([]string{"idletime", "freq"})), g.pick([]string{"0", "10", "255", "256", "-1", "abc"}))
			case x < 8:
				args = append(args, g.opt("absttl"))
			default:
				args = append(args, g.pick([]string{"idletime", "freq", "foo", ""}))
			}
		}
		return args
	}},
	// Hashes: a few fields per key, values of every kind (a long one
	// makes Redis's listpack a hash table), over the same keys as the
	// strings, so WRONGTYPE, RENAME, COPY, DUMP and expiry meet both.
	{6, func(g *diffGen) []string {
		name := g.pick([]string{"hset", "hset", "hset", "hmset"})
		args := []string{g.word(name), g.key()}
		for n := 1 + g.rng.IntN(3); n > 0; n-- {
			args = append(args, g.field(), g.value())
		}
		if g.chance(0.05) {
			args = args[:len(args)-1]
		}
		return args
	}},
	{2, func(g *diffGen) []string { return []string{g.word("hsetnx"), g.key(), g.field(), g.value()} }},
	{3, func(g *diffGen) []string { return []string{g.word("hget"), g.key(), g.field()} }},
	{2, func(g *diffGen) []string {
		return append([]string{g.word("hmget"), g.key()}, g.several(1, 4, g.field)...)
	}},
	{4, func(g *diffGen) []string {
		return append([]string{g.word("hdel"), g.key()}, g.several(1, 3, g.field)...)
	}},
	{2, func(g *diffGen) []string {
		switch name := g.pick([]string{"hlen", "hstrlen", "hexists"}); name {
		case "hlen":
			return []string{g.word(name), g.key()}
		default:
			return []string{g.word(name), g.key(), g.field()}
		}
	}},
	{3, func(g *diffGen) []string { return []string{g.word("hincrby"), g.key(), g.field(), g.intArg()} }},
	{3, func(g *diffGen) []string { return []string{g.word("hincrbyfloat"), g.key(), g.field(), g.floatArg()} }},
	{3, func(g *diffGen) []string {
		return []string{g.word(g.pick([]string{"hgetall", "hkeys", "hvals"})), g.key()}
	}},
	{1, func(g *diffGen) []string {
		// A COUNT past any stream hash's size: both return it whole.
		// Bad cursors fail on both; not "-1", which Redis takes as the
		// last cursor of 64 bits, whose page of a hash table depends on
		// where its seeded hash puts the fields.
		cursor := "0"
		if g.chance(0.1) {
			cursor = g.pick([]string{"abc", "", "18446744073709551616"})
		}
		args := []string{g.word("hscan"), g.key(), cursor}
		if g.chance(0.4) {
			args = append(args, g.opt("match"), g.pattern())
		}
		args = append(args, g.opt("count"), "1000")
		if g.chance(0.1) {
			args = append(args, g.pick([]string{"count", "match", "foo", "novalues"}))
		}
		return args
	}},
	{1, func(g *diffGen) []string {
		args := []string{g.word("hrandfield"), g.key()}
		if g.chance(0.7) {
			args = append(args, g.pick([]string{"1", "2", "5", "100", "-1", "-3", "0", "abc", "-9223372036854775808"}))
			if g.chance(0.5) {
				args = append(args, g.opt("withvalues"))
			}
		}
		return args
	}},
	// Sets, over the same keys: integer members (intsets in Redis) and
	// others, so encodings, WRONGTYPE and the multi-key operations meet.
	{6, func(g *diffGen) []string {
		return append([]string{g.word("sadd"), g.key()}, g.several(1, 4, g.member)...)
	}},
	{3, func(g *diffGen) []string {
		return append([]string{g.word("srem"), g.key()}, g.several(1, 3, g.member)...)
	}},
	{2, func(g *diffGen) []string {
		if g.chance(0.5) {
			return []string{g.word("sismember"), g.key(), g.member()}
		}
		return append([]string{g.word("smismember"), g.key()}, g.several(1, 3, g.member)...)
	}},
	{2, func(g *diffGen) []string { return []string{g.word(g.pick([]string{"scard", "smembers"})), g.key()} }},
	{1, func(g *diffGen) []string {
		args := []string{g.word("srandmember"), g.key()}
		if g.chance(0.6) {
			args = append(args, g.pick([]string{"1", "2", "100", "0", "-2", "abc", "-9223372036854775808"}))
		}
		return args
	}},
	// SPOP only where it is deterministic: a count past any stream set's
	// size pops every member; other counts are errors or pop nothing.
	{1, func(g *diffGen) []string {
		return []string{g.word("spop"), g.key(), g.pick([]string{"1000", "1000", "0", "-2", "abc", ""})}
	}},
	{2, func(g *diffGen) []string { return []string{g.word("smove"), g.key(), g.key(), g.member()} }},
	{3, func(g *diffGen) []string {
		name := g.pick([]string{"sinter", "sunion", "sdiff", "sinterstore", "sunionstore", "sdiffstore"})
		return append([]string{g.word(name)}, g.several(1, 3, g.key)...)
	}},
	{1, func(g *diffGen) []string {
		keys := g.several(1, 3, g.key)
		n := strconv.Itoa(len(keys))
		if g.chance(0.1) {
			n = g.pick([]string{"0", "-1", "x", "9"})
		}
		args := append([]string{g.word("sintercard"), n}, keys...)
		if g.chance(0.4) {
			args = append(args, g.opt("limit"), g.pick([]string{"0", "1", "2", "-1", "x"}))
		}
		return args
	}},
	{1, func(g *diffGen) []string {
		args := []string{g.word("sscan"), g.key(), "0"}
		if g.chance(0.4) {
			args = append(args, g.opt("match"), g.pattern())
		}
		return append(args, g.opt("count"), "1000")
	}},
	// Lists, over the same keys and keys of their own (listKey): elements
	// are members, so LREM, LPOS and
	// LINSERT find some. The blocking commands wait 1 ms at most (in a
	// transaction, not at all) when no key holds a list.
	{6, func(g *diffGen) []string {
		return append([]string{g.word(g.pick([]string{"lpush", "rpush", "lpush", "rpush", "lpushx", "rpushx"})), g.listKey()}, g.several(1, 4, g.member)...)
	}},
	{3, func(g *diffGen) []string {
		args := []string{g.word(g.pick([]string{"lpop", "rpop"})), g.listKey()}
		if g.chance(0.4) {
			args = append(args, g.pick([]string{"1", "2", "5", "0", "-1", "abc", "100"}))
		}
		return args
	}},
	{2, func(g *diffGen) []string {
		return []string{g.word("lrange"), g.listKey(), g.rangeIndex(), g.rangeIndex()}
	}},
	{1, func(g *diffGen) []string { return []string{g.word("llen"), g.listKey()} }},
	{1, func(g *diffGen) []string { return []string{g.word("lindex"), g.listKey(), g.rangeIndex()} }},
	{1, func(g *diffGen) []string { return []string{g.word("lset"), g.listKey(), g.rangeIndex(), g.member()} }},
	{1, func(g *diffGen) []string {
		return []string{g.word("linsert"), g.listKey(), g.pick([]string{"before", "AFTER", "before", "middle"}), g.member(), g.member()}
	}},
	{1, func(g *diffGen) []string {
		return []string{g.word("lrem"), g.listKey(), g.pick([]string{"0", "1", "-1", "2", "-2", "x"}), g.member()}
	}},
	{1, func(g *diffGen) []string {
		return []string{g.word("ltrim"), g.listKey(), g.rangeIndex(), g.rangeIndex()}
	}},
	{1, func(g *diffGen) []string {
		args := []string{g.word("lpos"), g.listKey(), g.member()}
		for n := g.rng.IntN(3); n > 0; n-- {
			switch g.rng.IntN(3) {
			case 0:
				args = append(args, g.opt("rank"), g.pick([]string{"1", "2", "-1", "-2", "0", "x"}))
			case 1:
				args = append(args, g.opt("count"), g.pick([]string{"0", "1", "2", "-1"}))
			default:
				args = append(args, g.opt("maxlen"), g.pick([]string{"0", "1", "3", "-1"}))
			}
		}
		return args
	}},
	{2, func(g *diffGen) []string {
		if g.chance(0.3) {
			return []string{g.word("rpoplpush"), g.listKey(), g.listKey()}
		}
		side := func() string { return g.opt(g.pick([]string{"left", "right", "left", "right", "up"})) }
		return []string{g.word("lmove"), g.listKey(), g.listKey(), side(), side()}
	}},
	{1, func(g *diffGen) []string {
		keys := g.several(1, 3, g.listKey)
		n := strconv.Itoa(len(keys))
		if g.chance(0.1) {
			n = g.pick([]string{"0", "-1", "x", "9"})
		}
		args := append([]string{g.word("lmpop"), n}, keys...)
		args = append(args, g.opt(g.pick([]string{"left", "right", "left", "right", "up"})))
		if g.chance(0.5) {
			args = append(args, g.opt("count"), g.pick([]string{"1", "2", "10", "0", "x"}))
		}
		return args
	}},
	{1, func(g *diffGen) []string {
		// A timeout that expires at once where no key holds a list.
		switch g.rng.IntN(4) {
		case 0:
			return append(append([]string{g.word(g.pick([]string{"blpop", "brpop"}))}, g.several(1, 3, g.listKey)...), g.pick([]string{"0.001", "-1", "x"}))
		case 1:
			return []string{g.word("brpoplpush"), g.listKey(), g.listKey(), g.pick([]string{"0.001", "-1"})}
		case 2:
			return []string{g.word("blmove"), g.listKey(), g.listKey(), g.opt("left"), g.opt("right"), g.pick([]string{"0.001", "x"})}
		}
		return []string{g.word("blmpop"), g.pick([]string{"0.001", "-1"}), "2", g.listKey(), g.listKey(), g.opt("left"), g.opt("count"), "3"}
	}},
	// SORT and SORT_RO of lists and sets (numeric, ALPHA, LIMIT, GET,
	// STORE). Not BY: a weight out of a double's range leaves errno set
	// in redis-server 7.0, failing its later numeric SORTs, and ALPHA
	// with equal weights leaves the order to its qsort. ALPHA only with
	// STORE: without, redis-server compares with strcoll, which stops at
	// a NUL, so elements equal up to one tie, in its qsort's order
	// (Cairn compares bytes, as Redis does with STORE).
	{2, func(g *diffGen) []string {
		name := g.pick([]string{"sort", "sort_ro"})
		args := []string{g.word(name), g.listKey()}
		for n := g.rng.IntN(4); n > 0; n-- {
			switch g.rng.IntN(5) {
			case 0:
				args = append(args, g.opt("limit"), g.pick([]string{"0", "1", "-1", "3", "x"}), g.pick([]string{"1", "2", "-1", "0", "100"}))
			case 1:
				args = append(args, g.opt(g.pick([]string{"asc", "desc"})))
			case 2, 3:
				args = append(args, g.opt("get"), g.pick([]string{"#", "*", "k*", "user:*", "*->f1", "nostar"}))
			default:
				if name == "sort" {
					args = append(args, g.opt("store"), g.listKey())
					if g.chance(0.5) {
						args = append(args, g.opt("alpha"))
					}
				}
			}
		}
		return args
	}},
	// Sorted sets, over the same keys and keys of their own (zsetKey):
	// members as sets have them, scores of every kind, ranges of every
	// syntax. ZRANDMEMBER only where it is deterministic (diffRandField
	// compares kinds and lengths); ZSCAN of listpacks (whole, in order).
	{6, func(g *diffGen) []string {
		args := []string{g.word("zadd"), g.zsetKey()}
		for n := g.rng.IntN(3); n > 0; n-- {
			args = append(args, g.opt(g.pick([]string{"nx", "xx", "gt", "lt", "ch", "incr", "ch", "gt"})))
		}
		for n := 1 + g.rng.IntN(3); n > 0; n-- {
			args = append(args, g.zscore(), g.member())
		}
		if g.chance(0.03) {
			args = args[:len(args)-1]
		}
		return args
	}},
	{2, func(g *diffGen) []string { return []string{g.word("zincrby"), g.zsetKey(), g.zscore(), g.member()} }},
	{2, func(g *diffGen) []string {
		args := []string{g.word("zadd"), g.lexKey()}
		for n := 1 + g.rng.IntN(3); n > 0; n-- {
			args = append(args, "0", g.member())
		}
		return args
	}},
	{2, func(g *diffGen) []string {
		return append([]string{g.word("zrem"), g.zsetKey()}, g.several(1, 3, g.member)...)
	}},
	{2, func(g *diffGen) []string {
		name := g.pick([]string{"zcard", "zscore", "zmscore", "zrank", "zrevrank"})
		args := []string{g.word(name), g.zsetKey()}
		switch name {
		case "zcard":
		case "zmscore":
			args = append(args, g.several(1, 3, g.member)...)
		default:
			args = append(args, g.member())
		}
		return args
	}},
	{3, func(g *diffGen) []string {
		switch g.rng.IntN(4) {
		case 0:
			return []string{g.word(g.pick([]string{"zcount", "zremrangebyscore"})), g.zsetKey(), g.scoreBound(), g.scoreBound()}
		case 1:
			return []string{g.word(g.pick([]string{"zlexcount", "zremrangebylex"})), g.lexKey(), g.lexBound(), g.lexBound()}
		case 2:
			return []string{g.word("zremrangebyrank"), g.zsetKey(), g.rangeIndex(), g.rangeIndex()}
		}
		name := g.pick([]string{"zrangebyscore", "zrevrangebyscore", "zrangebylex", "zrevrangebylex", "zrevrange"})
		args := []string{g.word(name), g.zsetKey()}
		if strings.HasSuffix(name, "lex") {
			args[1] = g.lexKey()
		}
		switch name {
		case "zrangebyscore", "zrevrangebyscore":
			args = append(args, g.scoreBound(), g.scoreBound())
		case "zrevrange":
			args = append(args, g.rangeIndex(), g.rangeIndex())
		default:
			args = append(args, g.lexBound(), g.lexBound())
		}
		return append(args, g.zrangeOptions(false)...)
	}},
	{3, func(g *diffGen) []string {
		args := []string{g.word("zrange"), g.zsetKey()}
		if g.chance(0.3) {
			args = []string{g.word("zrangestore"), g.zsetKey(), g.zsetKey()}
		}
		switch x := g.rng.IntN(3); x {
		case 0:
			args = append(args, g.rangeIndex(), g.rangeIndex())
		case 1:
			args = append(args, g.scoreBound(), g.scoreBound(), g.opt("byscore"))
		default:
			args[len(args)-1] = g.lexKey()
			args = append(args, g.lexBound(), g.lexBound(), g.opt("bylex"))
		}
		return append(args, g.zrangeOptions(true)...)
	}},
	{2, func(g *diffGen) []string {
		if g.chance(0.5) {
			args := []string{g.word(g.pick([]string{"zpopmin", "zpopmax"})), g.zsetKey()}
			if g.chance(0.5) {
				args = append(args, g.pick([]string{"1", "2", "0", "-1", "x", "100"}))
			}
			return args
		}
		keys := g.several(1, 3, g.zsetKey)
		n := strconv.Itoa(len(keys))
		if g.chance(0.1) {
			n = g.pick([]string{"0", "-1", "x", "9"})
		}
		name := g.pick([]string{"zmpop", "bzmpop", "bzpopmin", "bzpopmax"})
		timeout := g.pick([]string{"0.001", "-1", "x", "0.001"})
		switch name {
		case "bzpopmin", "bzpopmax":
			return append(append([]string{g.word(name)}, keys...), timeout)
		case "bzmpop":
			return g.withMPopTail(append([]string{g.word(name), timeout, n}, keys...))
		}
		return g.withMPopTail(append([]string{g.word(name), n}, keys...))
	}},
	{3, func(g *diffGen) []string {
		keys := g.several(1, 3, func() string {
			if g.chance(0.2) {
				return g.key() // a set, sometimes
			}
			return g.zsetKey()
		})
		n := strconv.Itoa(len(keys))
		if g.chance(0.05) {
			n = g.pick([]string{"0", "-1", "x", "9"})
		}
		name := g.pick([]string{"zunion", "zinter", "zdiff", "zunionstore", "zinterstore", "zdiffstore", "zintercard"})
		args := []string{g.word(name)}
		if strings.HasSuffix(name, "store") {
			args = append(args, g.zsetKey())
		}
		args = append(append(args, n), keys...)
		for o := g.rng.IntN(3); o > 0; o-- {
			switch g.rng.IntN(4) {
			case 0:
				args = append(args, g.opt("weights"))
				for range keys {
					args = append(args, g.pick([]string{"1", "2", "-1", "0", "0.5", "inf", "x"}))
				}
			case 1:
				args = append(args, g.opt("aggregate"), g.opt(g.pick([]string{"sum", "min", "max", "avg"})))
			case 2:
				args = append(args, g.opt("withscores"))
			default:
				args = append(args, g.opt("limit"), g.pick([]string{"0", "1", "2", "-1"}))
			}
		}
		return args
	}},
	{1, func(g *diffGen) []string {
		args := []string{g.word("zrandmember"), g.zsetKey()}
		if g.chance(0.7) {
			args = append(args, g.pick([]string{"100", "0", "-1", "x", "1000"}))
			if g.chance(0.5) {
				args = append(args, g.opt("withscores"))
			}
		}
		return args
	}},
	// GEO commands over sorted sets of their own (geoKey), with points in
	// a few clustered areas (around Palermo, the origin, the antimeridian
	// and the north pole's limit) so that searches find members near box
	// edges; sometimes over the other sorted sets and shared keys.
	{4, func(g *diffGen) []string {
		args := []string{g.word("geoadd"), g.geoKey()}
		for n := g.rng.IntN(2); n > 0; n-- {
			args = append(args, g.opt(g.pick([]string{"nx", "xx", "ch", "ch"})))
		}
		for n := 1 + g.rng.IntN(3); n > 0; n-- {
			long, lat := g.geoPoint()
			args = append(args, long, lat, g.geoMember())
		}
		if g.chance(0.03) {
			args = args[:len(args)-1]
		}
		return args
	}},
	{2, func(g *diffGen) []string {
		switch g.rng.IntN(3) {
		case 0:
			return append([]string{g.word("geopos"), g.geoKey()}, g.several(1, 3, g.geoMember)...)
		case 1:
			return append([]string{g.word("geohash"), g.geoKey()}, g.several(1, 3, g.geoMember)...)
		}
		args := []string{g.word("geodist"), g.geoKey(), g.geoMember(), g.geoMember()}
		if g.chance(0.7) {
			args = append(args, g.geoUnit())
		}
		return args
	}},
	{5, func(g *diffGen) []string {
		var args []string
		store := false
		switch x := g.rng.IntN(6); x {
		case 0, 1:
			long, lat := g.geoPoint()
			name := g.pick([]string{"georadius", "georadius_ro"})
			store = name == "georadius"
			unit := g.geoUnit()
			args = []string{g.word(name), g.geoKey(), long, lat, g.geoRadius(unit), unit}
		case 2:
			name := g.pick([]string{"georadiusbymember", "georadiusbymember_ro"})
			store = name == "georadiusbymember"
			unit := g.geoUnit()
			args = []string{g.word(name), g.geoKey(), g.geoMember(), g.geoRadius(unit), unit}
		default:
			args = []string{g.word("geosearch"), g.geoKey()}
			if x == 5 {
				args = []string{g.word("geosearchstore"), g.geoKey(), g.geoKey()}
			}
			if g.chance(0.5) {
				args = append(args, g.opt("frommember"), g.geoMember())
			} else {
				long, lat := g.geoPoint()
				args = append(args, g.opt("fromlonlat"), long, lat)
			}
			unit := g.geoUnit()
			if g.chance(0.5) {
				args = append(args, g.opt("byradius"), g.geoRadius(unit), unit)
			} else {
				args = append(args, g.opt("bybox"), g.geoRadius(unit), g.geoRadius(unit), unit)
			}
			if g.chance(0.05) {
				args = args[:len(args)-2] // a missing FROM or BY
			}
			if x == 5 && g.chance(0.5) {
				args = append(args, g.opt("storedist"))
			}
		}
		for n := g.rng.IntN(4); n > 0; n-- {
			switch o := g.pick([]string{"withdist", "withcoord", "withhash", "asc", "desc", "count", "count", "count", "any"}); o {
			case "count":
				args = append(args, g.opt(o), g.pick([]string{"1", "2", "3", "5", "10", "0", "x"}))
			default:
				args = append(args, g.opt(o))
			}
		}
		if store && g.chance(0.4) {
			args = append(args, g.opt(g.pick([]string{"store", "storedist"})), g.geoKey())
		}
		return args
	}},
	// HyperLogLogs, over keys of their own and the shared keys (hllKey):
	// PFADDs of a few elements and of hundreds (past the sparse limit),
	// PFCOUNT of one key (which writes the cache back) and of several,
	// PFMERGE, PFDEBUG, and reads and SETRANGEs of the bytes, which
	// corrupt some of them.
	{5, func(g *diffGen) []string {
		args := []string{g.word("pfadd"), g.hllKey()}
		n := g.rng.IntN(4)
		if g.chance(0.15) {
			n = 50 + g.rng.IntN(400)
		}
		for range n {
			args = append(args, g.hllElement())
		}
		return args
	}},
	{4, func(g *diffGen) []string { return append([]string{g.word("pfcount")}, g.several(1, 3, g.hllKey)...) }},
	{2, func(g *diffGen) []string {
		return append([]string{g.word("pfmerge"), g.hllKey()}, g.several(0, 3, g.hllKey)...)
	}},
	{1, func(g *diffGen) []string {
		sub := g.pick([]string{"encoding", "decode", "todense", "encoding", "decode", "todense", "getreg", "foo"})
		return []string{g.word("pfdebug"), g.word(sub), g.hllKey()}
	}},
	{2, func(g *diffGen) []string {
		switch g.rng.IntN(3) {
		case 0:
			return []string{g.word("get"), g.hllKey()}
		case 1:
			return []string{g.word("strlen"), g.hllKey()}
		}
		return []string{g.word("getrange"), g.hllKey(), g.pick([]string{"0", "4", "8", "16"}), g.pick([]string{"15", "40", "-1", "100"})}
	}},
	{1, func(g *diffGen) []string {
		off := g.pick([]string{"4", "8", "15", "16", "17", "20", "30", "100", "12303", "12304"})
		return []string{g.word("setrange"), g.hllKey(), off, g.pick([]string{"\x00", "\x01", "\xff", "\x7f", "\x80\x80", "\x02", "HYLL", "\x7f\xff"})}
	}},
	// Streams, over keys of their own (streamKey): XADD with trimming, the
	// range reads, XDEL, XTRIM, XSETID, XREAD without BLOCK, consumer
	// groups (XPENDING's summary and XINFO without idle times).
	{3, func(g *diffGen) []string {
		args := []string{g.word("xadd"), g.streamKey(false)}
		if g.chance(0.1) {
			args = append(args, g.opt("nomkstream"))
		}
		if g.chance(0.25) {
			args = append(args, g.streamTrim()...)
		}
		args = append(args, g.streamID(true))
		for n := 1 + g.rng.IntN(3); n > 0; n-- {
			args = append(args, g.pick([]string{"f", "g", "field"}), g.value())
		}
		if g.chance(0.03) {
			args = args[:len(args)-1]
		}
		return args
	}},
	{2, func(g *diffGen) []string {
		name := g.pick([]string{"xrange", "xrevrange"})
		args := []string{g.word(name), g.streamKey(true), g.streamBound(), g.streamBound()}
		if g.chance(0.4) {
			args = append(args, g.opt("count"), g.pick([]string{"0", "1", "2", "5", "-1", "x"}))
		}
		return args
	}},
	{1, func(g *diffGen) []string { return []string{g.word("xlen"), g.streamKey(true)} }},
	{1, func(g *diffGen) []string {
		g.xdel = true
		return append([]string{g.word("xdel"), g.streamKey(false)}, g.several(1, 3, func() string { return g.streamID(false) })...)
	}},
	{1, func(g *diffGen) []string {
		return append([]string{g.word("xtrim"), g.streamKey(false)}, g.streamTrim()...)
	}},
	{1, func(g *diffGen) []string {
		args := []string{g.word("xsetid"), g.streamKey(false), g.streamID(false)}
		if g.chance(0.3) {
			args = append(args, g.opt("entriesadded"), g.pick([]string{"0", "5", "100", "-1"}))
		}
		if g.chance(0.3) {
			args = append(args, g.opt("maxdeletedid"), g.streamID(false))
		}
		return args
	}},
	{1, func(g *diffGen) []string {
		args := []string{g.word("xread")}
		if g.chance(0.3) {
			args = append(args, g.opt("count"), g.pick([]string{"1", "2", "0", "-1"}))
		}
		keys := g.several(1, 2, func() string { return g.streamKey(true) })
		args = append(append(args, g.opt("streams")), keys...)
		for range keys {
			args = append(args, g.pick([]string{"0", "$", "5", "10-1", g.streamID(false)}))
		}
		return args
	}},
	{2, func(g *diffGen) []string {
		sub := g.pick([]string{"create", "create", "setid", "destroy", "createconsumer", "delconsumer"})
		key, group := g.streamKey(sub != "create"), g.streamGroup()
		switch sub {
		case "create":
			args := []string{g.word("xgroup"), g.word(sub), key, group, g.pick([]string{"0", "$", g.streamID(false)})}
			if g.chance(0.5) {
				args = append(args, g.opt("mkstream"))
			}
			if g.chance(0.2) {
				args = append(args, g.opt("entriesread"), g.pick([]string{"0", "2", "-1", "-2"}))
			}
			return args
		case "setid":
			args := []string{g.word("xgroup"), g.word(sub), key, group, g.pick([]string{"0", "$", g.streamID(false)})}
			if g.chance(0.3) {
				args = append(args, g.opt("entriesread"), g.pick([]string{"0", "2", "-1"}))
			}
			return args
		case "destroy":
			return []string{g.word("xgroup"), g.word(sub), key, group}
		}
		return []string{g.word("xgroup"), g.word(sub), key, group, g.streamConsumer()}
	}},
	{2, func(g *diffGen) []string {
		args := []string{g.word("xreadgroup"), g.opt("group"), g.streamGroup(), g.streamConsumer()}
		if g.chance(0.4) {
			args = append(args, g.opt("count"), g.pick([]string{"1", "2", "0"}))
		}
		if g.chance(0.2) {
			args = append(args, g.opt("noack"))
		}
		keys := g.several(1, 2, func() string { return g.streamKey(true) })
		args = append(append(args, g.opt("streams")), keys...)
		for range keys {
			args = append(args, g.pick([]string{">", ">", ">", "0", g.streamID(false)}))
		}
		return args
	}},
	{1, func(g *diffGen) []string {
		return append([]string{g.word("xack"), g.streamKey(true), g.streamGroup()}, g.several(1, 3, func() string { return g.streamID(false) })...)
	}},
	{1, func(g *diffGen) []string {
		args := []string{g.word("xclaim"), g.streamKey(true), g.streamGroup(), g.streamConsumer(), g.pick([]string{"0", "0", "100000", "x"})}
		args = append(args, g.several(1, 3, func() string { return g.streamID(false) })...)
		for n := g.rng.IntN(3); n > 0; n-- {
			switch g.rng.IntN(5) {
			case 0:
				args = append(args, g.opt("justid"))
			case 1:
				args = append(args, g.opt("force"))
			case 2:
				args = append(args, g.opt("retrycount"), g.pick([]string{"0", "3", "x"}))
			case 3:
				args = append(args, g.opt("lastid"), g.streamID(false))
			default:
				args = append(args, g.opt("foo"))
			}
		}
		return args
	}},
	{1, func(g *diffGen) []string {
		args := []string{g.word("xautoclaim"), g.streamKey(true), g.streamGroup(), g.streamConsumer(), g.pick([]string{"0", "0", "100000", "x"}), g.streamBound()}
		if g.chance(0.4) {
			args = append(args, g.opt("count"), g.pick([]string{"1", "2", "0", "x"}))
		}
		if g.chance(0.3) {
			args = append(args, g.opt("justid"))
		}
		return args
	}},
	{1, func(g *diffGen) []string {
		switch g.rng.IntN(3) {
		case 0:
			return []string{g.word("xpending"), g.streamKey(true), g.streamGroup()}
		case 1:
			return []string{g.word("xinfo"), g.word("groups"), g.streamKey(true)}
		}
		return []string{g.word("xinfo"), g.word("stream"), g.streamKey(true)}
	}},
	{2, func(g *diffGen) []string { return g.wrongArity() }},
	{1, func(g *diffGen) []string {
		// No NUL bytes: Redis prints the unknown name and arguments
		// as C strings, cut at the first NUL (Cairn's dispatcher does
		// not yet).
		args := []string{g.pick([]string{"foo", "gett", "setx", "incrbyfloa", "GETRANGEX", "expire_", "k\r\nx"})}
		for n := g.rng.IntN(4); n > 0; n-- {
			a := g.key()
			if g.chance(0.3) {
				a = g.value() // long ones test the 128-byte cut
			}
			if !strings.Contains(a, "\x00") {
				args = append(args, a)
			}
		}
		return args
	}},
}

var diffTotalWeight = func() int {
	n := 0
	for _, b := range diffBuilders {
		n += b.weight
	}
	return n
}()

func (g *diffGen) rangeIndex() string {
	switch x := g.rng.IntN(10); {
	case x < 7:
		return strconv.Itoa(g.rng.IntN(30) - 15)
	case x < 8:
		return strconv.Itoa(g.rng.IntN(6000) - 3000)
	default:
		return g.pick([]string{"0", "-1", "9223372036854775807", "-9223372036854775808", "abc", "1.5", "", "4294967296", "-4294967296"})
	}
}

// bitOffset returns a bit offset: mostly within or just past the values
// the stream writes, sometimes far, rarely invalid. A write never gets one
// that would grow a string beyond a few kilobytes, except an error.
func (g *diffGen) bitOffset(write bool) string {
	switch x := g.rng.IntN(20); {
	case x < 14:
		return strconv.Itoa(g.rng.IntN(120))
	case x < 18:
		return strconv.Itoa(g.rng.IntN(30000))
	case x < 19 && !write:
		return g.pick([]string{"4294967295", "4294967296", "536870912"})
	default:
		return g.pick([]string{"-1", "abc", "4294967296", "9223372036854775807", "", "1.5", " 1", "#1"})
	}
}

// redisDumps are payloads redis-server 7.0.15's DUMP returned, among them
// an LZF-compressed one (50 'a's), which Cairn's DUMP never writes.
var redisDumps = []string{
	"\x00\xc0{\n\x00H\xe2S\xe1\x00zg\xb9",
	"\x00\x05hello\n\x00cr\xdfve4 \n",
	"\x00\xc3\t2\x01aa\xe0%\x00\x01aa\n\x00\t\xacH\xb9\xab\x15\xfb\xc9",
}

// redisHashDumps returns hashes redis-server 7.0.15's DUMP returned, in
// listpack form (integers, an LZF-compressed listpack, one field), kept
// in package rdb's testdata.
var redisHashDumps = sync.OnceValue(func() []string {
	var out []string
	for _, name := range []string{"listpack-one", "listpack-ints", "listpack-lzf"} {
		b, err := os.ReadFile(filepath.Join("..", "rdb", "testdata", "hashes", name+".hex"))
		if err != nil {
			panic(err)
		}
		p, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil {
			panic(err)
		}
		out = append(out, string(p))
	}
	return out
})

// dumpPayload returns a RESTORE payload: Cairn's encoding of a random
// value, one of Redis's, or a damaged one.
func (g *diffGen) dumpPayload() string {
	var p []byte
	switch x := g.rng.IntN(20); {
	case x < 5:
		p = []byte(g.pick(redisDumps))
	case x < 7:
		p = []byte(g.pick(redisHashDumps()))
	case x < 8:
		members := map[string]bool{}
		for n := 1 + g.rng.IntN(4); n > 0; n-- {
			members[g.member()] = true
		}
		var ms [][]byte
		for x := range members {
			ms = append(ms, []byte(x))
		}
		slices.SortFunc(ms, bytes.Compare)
		p = rdb.EncodeSet(ms)
	case x < 10:
		var pairs [][2][]byte
		seen := map[string]bool{}
		for n := 1 + g.rng.IntN(4); n > 0; n-- {
			if f := g.field(); !seen[f] {
				seen[f] = true
				pairs = append(pairs, [2][]byte{[]byte(f), []byte(g.value())})
			}
		}
		p = rdb.EncodeHash(pairs)
	default:
		p = rdb.EncodeString([]byte(g.value()))
	}
	switch x := g.rng.IntN(20); {
	case x < 1:
		p[g.rng.IntN(len(p))] ^= byte(1 + g.rng.IntN(255))
	case x < 2:
		p = p[:g.rng.IntN(len(p))]
	case x < 3:
		p = []byte(g.pick([]string{"", "x", "\x04\x01\x00\n\x00xxxxxxxx"}))
	}
	return string(p)
}

// bitUnit is the BYTE|BIT argument of BITCOUNT and BITPOS.
func (g *diffGen) bitUnit() string { return g.opt(g.pick([]string{"bit", "byte", "bit", "bits", ""})) }

func (g *diffGen) bitfieldType() string {
	if g.chance(0.05) {
		return g.pick([]string{"u64", "i65", "i0", "u0", "x8", "I8", "i", "u-1", "i8\x00junk", ""})
	}
	t := "u"
	limit := 63
	if g.chance(0.5) {
		t, limit = "i", 64
	}
	if g.chance(0.3) {
		return t + strconv.Itoa(limit-g.rng.IntN(3))
	}
	return t + strconv.Itoa(1+g.rng.IntN(16))
}

func (g *diffGen) bitfieldOffset() string {
	switch x := g.rng.IntN(20); {
	case x < 13:
		return strconv.Itoa(g.rng.IntN(100))
	case x < 17:
		return "#" + strconv.Itoa(g.rng.IntN(10))
	case x < 19:
		return strconv.Itoa(g.rng.IntN(3000))
	default:
		return g.pick([]string{"-1", "abc", "#-1", "#", "4294967296", "#9223372036854775807", ""})
	}
}

func (g *diffGen) bitfieldValue() string {
	switch x := g.rng.IntN(10); {
	case x < 6:
		return strconv.Itoa(g.rng.IntN(600) - 300)
	case x < 9:
		return g.pick(diffIntValues)
	default:
		return g.pick([]string{"abc", "1.5", "", "9223372036854775808"})
	}
}

// wrongArity returns a command with a wrong number of arguments.
func (g *diffGen) wrongArity() []string {
	k := g.key()
	cases := [][]string{
		{"get"}, {"get", k, k}, {"set", k}, {"setnx", k}, {"setnx", k, "v", "v"},
		{"setex", k, "100"}, {"psetex", k, "100000"}, {"mget"}, {"mset", k}, {"mset"},
		{"mset", k, "v", k}, {"msetnx", k}, {"msetnx", k, "1", "k2"}, {"getset", k},
		{"getdel"}, {"getdel", k, k}, {"getex"}, {"append", k}, {"strlen"},
		{"setrange", k, "0"}, {"getrange", k, "0"}, {"substr", k}, {"incr"},
		{"incr", k, "1"}, {"incrby", k}, {"incrbyfloat", k}, {"decr", k, k}, {"decrby", k},
		{"del"}, {"unlink"}, {"exists"}, {"touch"}, {"expire", k}, {"pexpire"}, {"expireat", k},
		{"pexpireat", k}, {"expiretime"}, {"pexpiretime", k, k}, {"persist"}, {"ttl"},
		{"pttl", k, k}, {"type"}, {"rename", k}, {"renamenx", k, k, k}, {"copy", k},
		{"keys"}, {"keys", "*", "*"}, {"scan"}, {"randomkey", k}, {"dbsize", k},
		{"setbit", k, "1"}, {"getbit", k}, {"bitcount"}, {"bitpos", k}, {"bitop", "and", k},
		{"bitfield"}, {"bitfield_ro"}, {"dump"}, {"dump", k, k}, {"restore", k, "0"}, {"lcs", k}, {"move", k}, {"swapdb", "0"},
		{"object"}, {"object", "encoding"}, {"object", "refcount", k, k}, {"object", "nosuch", k},
		{"hset", k}, {"hset", k, "f"}, {"hmset", k, "f", "v", "g"}, {"hsetnx", k, "f"}, {"hget", k},
		{"hmget", k}, {"hdel", k}, {"hlen"}, {"hlen", k, k}, {"hstrlen", k}, {"hexists", k, "f", "g"},
		{"hincrby", k, "f"}, {"hincrbyfloat", k, "f", "1", "2"}, {"hgetall"}, {"hkeys", k, k}, {"hvals"},
		{"hscan", k}, {"hrandfield"},
		{"sadd", k}, {"srem", k}, {"sismember", k}, {"smismember", k}, {"scard"}, {"smembers", k, k},
		{"srandmember"}, {"spop"}, {"smove", k, k}, {"sinter"}, {"sunionstore", k}, {"sintercard", "1"}, {"sscan", k},
		{"lpush", k}, {"rpushx"}, {"lpop"}, {"rpop", k, "1", "2"}, {"llen", k, k}, {"lindex", k}, {"lrange", k, "0"},
		{"lset", k, "0"}, {"linsert", k, "before", "x"}, {"lrem", k, "0"}, {"ltrim", k}, {"lpos", k},
		{"rpoplpush", k}, {"lmove", k, k, "left"}, {"lmpop", "1", k}, {"blpop", k}, {"brpoplpush", k, k},
		{"blmove", k, k, "left", "left"}, {"blmpop", "0", "1", k}, {"sort"}, {"sort_ro"},
		{"xadd", k, "1"}, {"xlen"}, {"xrange", k, "-"}, {"xdel", k}, {"xtrim", k, "maxlen"}, {"xsetid", k},
		{"xread", "streams"}, {"xreadgroup", "group", "g", "c", "streams"}, {"xack", k, "g"}, {"xpending", k},
		{"xclaim", k, "g", "c", "0"}, {"xautoclaim", k, "g", "c", "0"}, {"xgroup", "create", k, "g"}, {"xinfo", "stream"},
		{"pfadd"}, {"pfcount"}, {"pfmerge"}, {"pfdebug", "encoding"}, {"pfdebug", "getreg", k, k}, {"pfselftest", k},
		{"zadd", k}, {"zadd", k, "1"}, {"zincrby", k, "1"}, {"zrem", k}, {"zcard"}, {"zscore", k}, {"zmscore", k},
		{"zrank", k}, {"zrange", k, "0"}, {"zrangestore", k, k, "0"}, {"zcount", k, "0"}, {"zpopmin"},
		{"zmpop", "1", k}, {"bzpopmin", k}, {"bzmpop", "0", "1", k}, {"zunion"}, {"zunionstore", k, "1"},
		{"zintercard", "1"}, {"zrandmember"}, {"zscan", k}, {"zremrangebyrank", k, "0"}, {"zlexcount", k, "-"},
	}
	c := slices.Clone(cases[g.rng.IntN(len(cases))])
	c[0] = g.word(c[0])
	return c
}

// diffTransactionChance is the share of the random stream's steps that
// are a MULTI/EXEC transaction of one to six commands.
const diffTransactionChance = 0.02

// transaction returns the commands of a transaction: random ones, except
// those whose comparison depends on state at the time the command is
// sent, not run (DBSIZE's and SCAN's retries, EXPIRE GT/LT's margin).
func (g *diffGen) transaction() [][]string {
	cmds := make([][]string, 1+g.rng.IntN(6))
	for i := range cmds {
		for {
			c := g.next()
			if k := diffKindOf(c); k == diffDBSize || k == diffScan || slices.ContainsFunc(c[1:], func(a string) bool {
				return strings.EqualFold(a, "gt") || strings.EqualFold(a, "lt")
			}) {
				continue
			}
			cmds[i] = c
			break
		}
	}
	return cmds
}

func (g *diffGen) next() []string {
	if g.chance(0.0005) {
		return []string{g.word("flushdb"), g.opt(g.pick([]string{"", "async", "sync", "bad"}))}[:1+g.rng.IntN(2)]
	}
	x := g.rng.IntN(diffTotalWeight)
	for _, b := range diffBuilders {
		if x < b.weight {
			return b.build(g)
		}
		x -= b.weight
	}
	panic("unreachable")
}
