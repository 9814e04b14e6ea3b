package tests

// The large-value fault tests put the chunked layout of long strings
// (values over --string-value-inline-max, kept as 4 KiB chunk records of
// a value ID the key's metadata names) through faults: kill -9 with sync
// on while clients edit large values, commits that fail, and a
// replication link cut and corrupted under the same edits, then a full
// sync. Each time the values must be what the acknowledged writes made
// them, and DEBUG CHECK-VALUES must find no chunk record that no value
// owns. Re-run with the seed a failure names:
//
//	CAIRN_LARGE_FAULT_SEED=S CAIRN_BIN=$PWD/bin/cairn go test -count=1 -run 'TestLargeValueFaults' ./tests/

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	lfMaxLen      = 3 << 20 // the longest value the random edits build
	lfDefaultSeed = 20261201
	lfHistory     = 8 // acknowledged writes a client's failure message shows
)

// lfSeed returns $CAIRN_LARGE_FAULT_SEED, or the default seed.
func lfSeed(t *testing.T) uint64 {
	t.Helper()
	return uint64(envInt(t, "CAIRN_LARGE_FAULT_SEED", lfDefaultSeed))
}

// lfPool returns 2 MB of seeded random bytes that values are cut from.
func lfPool(seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 0x900d))
	pool := make([]byte, 2<<20)
	for i := 0; i < len(pool); i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8; j++ {
			pool[i+j] = byte(v >> (8 * j))
		}
	}
	return pool
}

// ---- writes and the model ----

// lfOp is one write of the random edits.
type lfOp struct {
	kind     string // APPEND, SETRANGE, SETBIT, SET, DEL, RENAME, COPY
	key, dst string
	off      int64 // SETRANGE's byte offset, SETBIT's bit offset
	val      []byte
	bit      int
}

func (o lfOp) args() []string {
	switch o.kind {
	case "APPEND", "SET":
		return []string{o.kind, o.key, string(o.val)}
	case "SETRANGE":
		return []string{o.kind, o.key, strconv.FormatInt(o.off, 10), string(o.val)}
	case "SETBIT":
		return []string{o.kind, o.key, strconv.FormatInt(o.off, 10), strconv.Itoa(o.bit)}
	case "DEL":
		return []string{o.kind, o.key}
	case "RENAME":
		return []string{o.kind, o.key, o.dst}
	case "COPY":
		return []string{o.kind, o.key, o.dst, "REPLACE"}
	}
	panic("lfOp: unknown kind " + o.kind)
}

func (o lfOp) String() string {
	switch o.kind {
	case "APPEND", "SET":
		return fmt.Sprintf("%s %s <%d bytes>", o.kind, o.key, len(o.val))
	case "SETRANGE":
		end := o.off + int64(len(o.val))
		return fmt.Sprintf("SETRANGE %s %d <%d bytes> (bytes %d-%d, chunks %d-%d)", o.key, o.off, len(o.val), o.off, end-1, o.off/leChunk, (end-1)/leChunk)
	case "SETBIT":
		return fmt.Sprintf("SETBIT %s %d %d (byte %d, chunk %d)", o.key, o.off, o.bit, o.off/8, o.off/8/leChunk)
	case "COPY":
		return fmt.Sprintf("COPY %s %s REPLACE", o.key, o.dst)
	}
	return o.kind + " " + o.key + " " + o.dst
}

// update brings lens (a key's length, -1: no key) to after o.
func (o lfOp) update(lens map[string]int) {
	l := max(lens[o.key], 0)
	switch o.kind {
	case "APPEND":
		lens[o.key] = l + len(o.val)
	case "SETRANGE":
		lens[o.key] = max(l, int(o.off)+len(o.val))
	case "SETBIT":
		lens[o.key] = max(l, int(o.off/8)+1)
	case "SET":
		lens[o.key] = len(o.val)
	case "DEL":
		lens[o.key] = -1
	case "RENAME":
		lens[o.dst], lens[o.key] = lens[o.key], -1
	case "COPY":
		lens[o.dst] = lens[o.key]
	}
}

// lfModel is what a client's keys hold (a missing key has no entry).
type lfModel map[string][]byte

// apply applies o to m and returns the reply it must get: an integer's
// digits or OK.
func (m lfModel) apply(o lfOp) string {
	switch o.kind {
	case "APPEND":
		m[o.key] = append(m[o.key], o.val...)
		return strconv.Itoa(len(m[o.key]))
	case "SETRANGE":
		cur := m[o.key]
		if need := int(o.off) + len(o.val); need > len(cur) {
			cur = append(cur, make([]byte, need-len(cur))...)
		}
		copy(cur[o.off:], o.val)
		m[o.key] = cur
		return strconv.Itoa(len(cur))
	case "SETBIT":
		cur := m[o.key]
		i := int(o.off >> 3)
		if i >= len(cur) {
			cur = append(cur, make([]byte, i+1-len(cur))...)
		}
		mask := byte(1) << (7 - o.off&7)
		old := "0"
		if cur[i]&mask != 0 {
			old = "1"
		}
		if o.bit == 1 {
			cur[i] |= mask
		} else {
			cur[i] &^= mask
		}
		m[o.key] = cur
		return old
	case "SET":
		m[o.key] = bytes.Clone(o.val)
		return "OK"
	case "DEL":
		if _, ok := m[o.key]; ok {
			delete(m, o.key)
			return "1"
		}
		return "0"
	case "RENAME":
		m[o.dst] = m[o.key]
		delete(m, o.key)
		return "OK"
	case "COPY":
		m[o.dst] = bytes.Clone(m[o.key])
		return "1"
	}
	panic("lfModel: unknown kind " + o.kind)
}

func (m lfModel) clone() lfModel {
	out := make(lfModel, len(m))
	for k, v := range m {
		out[k] = bytes.Clone(v)
	}
	return out
}

// ---- the generator ----

// lfGen makes a client's random writes over its own keys.
type lfGen struct {
	rng  *rand.Rand
	pool []byte
	keys []string
}

func (g *lfGen) chance(p float64) bool { return g.rng.Float64() < p }

// bytes returns n fresh bytes: random ones cut from the pool, sometimes
// with whole chunks of zeros inside, sometimes all zeros (a chunk of
// zeros is not written: a value stays sparse).
func (g *lfGen) bytes(n int) []byte {
	v := make([]byte, n)
	x := g.rng.IntN(20)
	if x == 0 {
		return v
	}
	off := g.rng.IntN(len(g.pool) - n + 1)
	copy(v, g.pool[off:off+n])
	if x < 4 && n > 2*leChunk {
		a := g.rng.IntN(n)
		clear(v[a:min(n, a+leChunk+g.rng.IntN(5*leChunk))])
	}
	return v
}

// op returns a random write over g's keys whose lengths are lens.
func (g *lfGen) op(lens map[string]int) lfOp {
	it := g.rng.IntN
	k := g.keys[it(len(g.keys))]
	l, present := max(lens[k], 0), lens[k] >= 0
	switch w := it(100); {
	case w < 22: // APPEND, 1 B to 20 KB
		n := 1 + it(100)
		if g.chance(0.7) {
			n = 1 + it(20<<10)
		}
		if l+n <= lfMaxLen {
			return lfOp{kind: "APPEND", key: k, val: g.bytes(n)}
		}
	case w < 47: // SETRANGE
		var off, n int
		switch it(4) {
		case 0: // inside the value (a long write may run past its end)
			off, n = it(l+1), 1+it(8<<10)
		case 1: // across a chunk boundary
			b := (1 + it(l/leChunk+1)) * leChunk
			n = 2 + it(9000)
			off = max(0, b-1-it(n-1))
		case 2: // far past the end: a hole
			off, n = l+leInlineMax+it(1<<20), 1+it(5000)
		default: // at the end or just past it
			off, n = l+it(3), 1+it(20<<10)
		}
		if off+n <= lfMaxLen {
			return lfOp{kind: "SETRANGE", key: k, off: int64(off), val: g.bytes(n)}
		}
	case w < 60: // SETBIT inside or past the end
		off := 8*l + it(8*200_000)
		if present && l > 0 && g.chance(0.6) {
			off = it(8 * l)
		}
		if off/8 < lfMaxLen {
			return lfOp{kind: "SETBIT", key: k, off: int64(off), bit: it(2)}
		}
	case w < 70: // SET of a large value
		return lfOp{kind: "SET", key: k, val: g.bytes(100_000 + it(900_001))}
	case w < 77: // SET of a small value, or one at the inline maximum
		n := it(200)
		if g.chance(0.3) {
			n = leInlineMax - 1 + it(3)
		}
		return lfOp{kind: "SET", key: k, val: g.bytes(n)}
	case w < 83:
		return lfOp{kind: "DEL", key: k}
	default: // RENAME or COPY to another of the client's keys
		if !present {
			break
		}
		dst := g.keys[it(len(g.keys)-1)]
		if dst == k {
			dst = g.keys[len(g.keys)-1]
		}
		if w < 93 {
			return lfOp{kind: "RENAME", key: k, dst: dst}
		}
		return lfOp{kind: "COPY", key: k, dst: dst}
	}
	return lfOp{kind: "SET", key: k, val: g.bytes(it(200))}
}

// ---- clients ----

// lfConn is a client connection that reports errors instead of failing
// the test, for goroutines that run into a killed server.
type lfConn struct {
	c  net.Conn
	rd *bufio.Reader
}

func lfDial(addr string) (*lfConn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &lfConn{c: c, rd: bufio.NewReaderSize(c, 64<<10)}, nil
}

// roundTrip sends wire and reads n replies; on an error it returns those
// read before it. Replies to writes are short, so the server never waits
// for them to be read while the client writes.
func (c *lfConn) roundTrip(wire []byte, n int) ([]string, error) {
	c.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.c.Write(wire); err != nil {
		return nil, err
	}
	out := make([]string, 0, n)
	for range n {
		var b bytes.Buffer
		if err := readRaw(c.rd, &b); err != nil {
			return out, err
		}
		out = append(out, b.String())
	}
	return out, nil
}

// lfClient writes to its own keys, one command at a time, in pipelines
// or in MULTI/EXEC blocks of 2 to 4, and keeps a model of them updated
// by each write when its reply arrives (acknowledged), checking the reply.
type lfClient struct {
	id    int
	mode  string // single, pipeline or multi
	keys  []string
	gen   *lfGen
	model lfModel
	// pending are the writes sent, or about to be, when the connection
	// failed: with a kill, some may have been applied. In a pipeline any
	// prefix of them may be (atomic false); in MULTI/EXEC all or none.
	pending []lfOp
	atomic  bool
	hist    []string // the last acknowledged writes, with their replies
	acked   int
	fail    string // why the client stopped, if the test must fail
}

func newLfClient(id int, mode, prefix string, seed uint64, pool []byte) *lfClient {
	keys := make([]string, 3)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s:c%d:k%d", prefix, id, i)
	}
	return &lfClient{id: id, mode: mode, keys: keys, model: lfModel{},
		gen: &lfGen{rng: rand.New(rand.NewPCG(seed, 0x1f00+uint64(id))), pool: pool, keys: keys}}
}

func (cl *lfClient) lens() map[string]int {
	lens := make(map[string]int, len(cl.keys))
	for _, k := range cl.keys {
		lens[k] = -1
		if v, ok := cl.model[k]; ok {
			lens[k] = len(v)
		}
	}
	return lens
}

// lfRun is a set of clients writing until stopped, the server killed, or
// a wrong reply.
type lfRun struct {
	clients []*lfClient
	acked   atomic.Int64 // writes acknowledged
	exited  atomic.Int32 // clients that stopped
	failed  atomic.Bool  // a client has a fail
	killed  atomic.Bool  // set just before the server is killed
	quit    chan struct{}
	wg      sync.WaitGroup
}

// lfStart starts the clients against addr; each stops after maxGroups
// requests (pipelines and blocks count one).
func lfStart(addr string, clients []*lfClient, maxGroups int) *lfRun {
	r := &lfRun{clients: clients, quit: make(chan struct{})}
	for _, cl := range clients {
		cl.pending, cl.atomic = nil, false
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer r.exited.Add(1)
			cl.run(r, addr, maxGroups)
			if cl.fail != "" {
				r.failed.Store(true)
			}
		}()
	}
	return r
}

// waitAcked polls until n writes in all were acknowledged, a client
// failed or every client stopped.
func (r *lfRun) waitAcked(t *testing.T, n int64, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for r.acked.Load() < n && !r.failed.Load() && int(r.exited.Load()) < len(r.clients) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (%d of %d writes acknowledged)", what, r.acked.Load(), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// stop stops the clients and fails the test with what went wrong.
func (r *lfRun) stop(t *testing.T, what string) {
	t.Helper()
	close(r.quit)
	r.wg.Wait()
	var fails []string
	for _, cl := range r.clients {
		if cl.fail != "" {
			fails = append(fails, cl.fail)
		}
	}
	if len(fails) > 0 {
		t.Fatalf("%s:\n%s", what, strings.Join(fails, "\n"))
	}
}

func (cl *lfClient) run(r *lfRun, addr string, maxGroups int) {
	conn, err := lfDial(addr)
	if err != nil {
		cl.connFailed(r, err, nil, false)
		return
	}
	defer conn.c.Close()
	for range maxGroups {
		select {
		case <-r.quit:
			return
		default:
		}
		if !cl.step(r, conn) {
			return
		}
	}
}

// step sends one request (a write, a pipeline or a MULTI/EXEC block) and
// applies what was acknowledged; false stops the client.
func (cl *lfClient) step(r *lfRun, conn *lfConn) bool {
	lens := cl.lens()
	n := 1
	if cl.mode != "single" {
		n = 2 + cl.gen.rng.IntN(3)
	}
	ops := make([]lfOp, n)
	for i := range ops {
		ops[i] = cl.gen.op(lens)
		ops[i].update(lens)
	}
	multi := cl.mode == "multi"
	var wire bytes.Buffer
	if multi {
		leWire(&wire, []string{"MULTI"})
	}
	for _, o := range ops {
		leWire(&wire, o.args())
	}
	want := n
	if multi {
		leWire(&wire, []string{"EXEC"})
		want += 2
	}
	replies, err := conn.roundTrip(wire.Bytes(), want)
	if multi {
		if err != nil {
			cl.connFailed(r, err, ops, true)
			return false
		}
		for i, rep := range replies[:n+1] {
			if w := []string{"+OK\r\n", "+QUEUED\r\n"}[min(i, 1)]; rep != w {
				cl.fail = fmt.Sprintf("client %d: %s in MULTI (request %d of the block) replied %q, want %q%s",
					cl.id, append([]string{"MULTI"}, lfOpStrings(ops)...)[i], i+1, rep, w, cl.history())
				return false
			}
		}
		exec := diffParse(replies[n+1])
		if exec.kind != '*' || len(exec.elems) != n {
			cl.fail = fmt.Sprintf("client %d: EXEC of %v replied %s%s", cl.id, lfOpStrings(ops), leDescribe(replies[n+1]), cl.history())
			return false
		}
		for i, o := range ops {
			if !cl.ack(o, diffRender(exec.elems[i]), fmt.Sprintf("in EXEC, %d of %d", i+1, n)) {
				return false
			}
		}
		r.acked.Add(int64(n))
		return true
	}
	for i, rep := range replies {
		where := ""
		if n > 1 {
			where = fmt.Sprintf("in a pipeline, %d of %d", i+1, n)
		}
		if !cl.ack(ops[i], rep, where) {
			return false
		}
		r.acked.Add(1)
	}
	if err != nil {
		cl.connFailed(r, err, ops[len(replies):], false)
		return false
	}
	return true
}

// ack applies o to the model and checks its reply.
func (cl *lfClient) ack(o lfOp, raw, where string) bool {
	before := -1
	if v, ok := cl.model[o.key]; ok {
		before = len(v)
	}
	want := cl.model.apply(o)
	got := diffParse(raw)
	if (got.kind != ':' && got.kind != '+') || got.str != want {
		if where != "" {
			where = " (" + where + ")"
		}
		cl.fail = fmt.Sprintf("client %d: acknowledged write #%d %s%s replied %s, want %s (the model's %s held %d bytes before it, -1: no key)%s",
			cl.id, cl.acked+1, o, where, leDescribe(raw), want, o.key, before, cl.history())
		return false
	}
	cl.acked++
	cl.hist = append(cl.hist, fmt.Sprintf("#%d %s -> %s", cl.acked, o, want))
	if len(cl.hist) > lfHistory {
		cl.hist = cl.hist[1:]
	}
	return true
}

// connFailed records the writes in flight when the connection failed;
// before a kill, that is a failure of the test.
func (cl *lfClient) connFailed(r *lfRun, err error, ops []lfOp, atomic bool) {
	cl.pending, cl.atomic = ops, atomic
	if !r.killed.Load() {
		cl.fail = fmt.Sprintf("client %d: the connection failed with no kill, %d writes in flight (%v): %v%s",
			cl.id, len(ops), lfOpStrings(ops), err, cl.history())
	}
}

func (cl *lfClient) history() string {
	if len(cl.hist) == 0 {
		return ""
	}
	return "\n    its last acknowledged writes (oldest first):\n      " + strings.Join(cl.hist, "\n      ")
}

func lfOpStrings(ops []lfOp) []string {
	out := make([]string, len(ops))
	for i, o := range ops {
		out[i] = o.String()
	}
	return out
}

// ---- reading back ----

// lfGet reads a key's value (nil, false: no key) on raw connection r.
func lfGet(t *testing.T, r *RawConn, k string) ([]byte, bool) {
	t.Helper()
	reply := r.Do("GET", k)
	v := diffParse(reply)
	if v.kind != '$' {
		t.Fatalf("GET %s: %s", k, leDescribe(reply))
	}
	return []byte(v.str), !v.null
}

// lfSum describes a value by its length and hash.
func lfSum(v []byte, ok bool) string {
	if !ok {
		return "no key"
	}
	s := sha256.Sum256(v)
	return fmt.Sprintf("%d bytes, sha256 %x", len(v), s[:8])
}

// lfDiff describes how value a differs from b ("" if equal).
func lfDiff(aName string, a []byte, aOK bool, bName string, b []byte, bOK bool) string {
	if aOK == bOK && bytes.Equal(a, b) {
		return ""
	}
	s := fmt.Sprintf("%s %s, %s %s", aName, lfSum(a, aOK), bName, lfSum(b, bOK))
	if aOK && bOK {
		i := leFirstDiff(a, b)
		s += fmt.Sprintf("; first difference at byte %d (chunk %d, +%d): %s %q, %s %q", i, i/leChunk, i%leChunk, aName, leAt(a, i), bName, leAt(b, i))
	}
	return s
}

// lfCheckValues returns DEBUG CHECK-VALUES's count of chunk records,
// failing the test on its error.
func lfCheckValues(t *testing.T, where string, r *RawConn) int64 {
	t.Helper()
	reply := r.Do("DEBUG", "CHECK-VALUES")
	v := diffParse(reply)
	if v.kind != ':' {
		t.Fatalf("%s: DEBUG CHECK-VALUES: %s", where, strings.TrimSpace(reply))
	}
	return v.n
}

// lfDBSize returns DBSIZE.
func lfDBSize(t *testing.T, r *RawConn) int64 {
	t.Helper()
	reply := r.Do("DBSIZE")
	v := diffParse(reply)
	if v.kind != ':' {
		t.Fatalf("DBSIZE: %q", reply)
	}
	return v.n
}

// resolve reads the client's keys back after a kill and a restart: they
// must hold the model of its acknowledged writes, or that model with a
// prefix of its pending writes applied (all of them, for a MULTI/EXEC
// block). The model becomes what they hold. It returns how many pending
// writes had been applied.
func (cl *lfClient) resolve(t *testing.T, where string, r *RawConn) int {
	t.Helper()
	got := map[string][]byte{}
	present := map[string]bool{}
	for _, k := range cl.keys {
		got[k], present[k] = lfGet(t, r, k)
	}
	var cands []lfModel
	var applied []int
	for i := 0; i <= len(cl.pending); i++ {
		if cl.atomic && i != 0 && i != len(cl.pending) {
			continue
		}
		m := cl.model
		if i > 0 {
			m = cl.model.clone()
			for _, o := range cl.pending[:i] {
				m.apply(o)
			}
		}
		cands, applied = append(cands, m), append(applied, i)
	}
	for ci, m := range cands {
		same := true
		for _, k := range cl.keys {
			v, ok := m[k]
			if ok != present[k] || !bytes.Equal(v, got[k]) {
				same = false
				break
			}
		}
		if same {
			cl.model, cl.pending = m, nil
			return applied[ci]
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: client %d (%s) keys hold neither the %d acknowledged writes' model nor it with its pending writes applied",
		where, cl.id, cl.mode, cl.acked)
	how := "any prefix of a pipeline"
	switch {
	case cl.atomic:
		how = "a MULTI/EXEC block: all or none"
	case len(cl.pending) == 1:
		how = "one write"
	}
	fmt.Fprintf(&b, "\n    pending (in flight at the kill, %s): %v", how, lfOpStrings(cl.pending))
	for ci, m := range cands {
		fmt.Fprintf(&b, "\n    against the model with %d pending writes applied:", applied[ci])
		for _, k := range cl.keys {
			v, ok := m[k]
			if d := lfDiff("server", got[k], present[k], "model", v, ok); d != "" {
				fmt.Fprintf(&b, "\n      %s: %s", k, d)
			}
		}
	}
	b.WriteString(cl.history())
	t.Fatal(b.String())
	return 0
}

// TestLargeValueFaultsKill9 runs four clients against a primary with
// sync on, each over three keys of its own: two send one write at a
// time, one pipelines 2-4 writes, one sends MULTI/EXEC blocks of 2-4. The
// seeded random writes are APPEND (1 B-20 KB), SETRANGE (inside, across
// chunk boundaries, at the end, far past it), SETBIT (inside, past the
// end), SET of large (100 KB-1 MB) and small values (and values at the
// inline maximum), DEL, RENAME and COPY REPLACE between the client's own
// keys, values with whole chunks of zeros in them. Each client checks each
// reply against its model of its keys. Once a random number of writes were
// acknowledged, the server is killed with SIGKILL and restarted, and each
// client's keys must hold its acknowledged writes, or those and (a prefix
// of) the writes it had in flight; DBSIZE must match and DEBUG
// CHECK-VALUES must find no orphan chunk. Six rounds, each continuing
// from the values the previous one left; in every other one the kill
// comes while a commit is held (DEBUG COMMIT-PAUSE) after it was made
// durable and before its reply, so writes that were applied but never
// acknowledged come up.
func TestLargeValueFaultsKill9(t *testing.T) {
	seed := lfSeed(t)
	start := time.Now()
	n := StartCairnEnv(t, leDebug, "--rocksdb.write_options.sync", "yes")
	pool := lfPool(seed)
	rng := rand.New(rand.NewPCG(seed, 0xc1))
	var clients []*lfClient
	for i, mode := range []string{"single", "single", "pipeline", "multi"} {
		clients = append(clients, newLfClient(i, mode, "lf", seed, pool))
	}
	const rounds = 6
	for round := 1; round <= rounds; round++ {
		where := fmt.Sprintf("seed %d, round %d", seed, round)
		threshold := int64(60 + rng.IntN(240))
		run := lfStart(n.Addr(), clients, 5000)
		run.waitAcked(t, threshold, "acknowledged writes before the kill")
		if round%2 == 0 {
			// The next commit waits a second, durable but unacknowledged,
			// before it replies: the kill most likely comes during it.
			if reply := n.Raw().Do("DEBUG", "COMMIT-PAUSE", "1000"); reply != "+OK\r\n" {
				t.Fatalf("DEBUG COMMIT-PAUSE: %q", reply)
			}
			run.waitAcked(t, run.acked.Load()+10, "writes after the commit pause")
			where += " (a commit paused)"
		}
		run.killed.Store(true)
		n.Kill()
		run.stop(t, where+": before the kill")
		acked := run.acked.Load()
		n.Restart()
		r := n.Raw()
		var keys int64
		var report []string
		for _, cl := range clients {
			inFlight := len(cl.pending)
			applied := cl.resolve(t, where+", after kill -9 and a restart", r)
			report = append(report, fmt.Sprintf("client %d: %d in flight, %d of them applied", cl.id, inFlight, applied))
			keys += int64(len(cl.model))
		}
		if got := lfDBSize(t, r); got != keys {
			t.Fatalf("%s: DBSIZE after kill -9 and a restart = %d, want %d (the clients' keys)", where, got, keys)
		}
		chunks := lfCheckValues(t, where+", after kill -9 and a restart", r)
		t.Logf("%s: killed after %d acknowledged writes (waited for %d); %s; %d keys, %d chunk records",
			where, acked, threshold, strings.Join(report, "; "), keys, chunks)
	}
	t.Logf("seed %d: %d rounds in %v", seed, rounds, time.Since(start).Round(time.Millisecond))
}

// ---- failed commits ----

// lfFault runs commands on one connection and keeps leModel's model of
// every key it names.
type lfFault struct {
	t     *testing.T
	n     *Node
	r     *RawConn
	m     leModel
	names map[string]bool // every key named so far
	pool  []byte
	next  int
	// chunks is DEBUG CHECK-VALUES's count at the last check, which
	// found the keys as the model has them.
	chunks int64
}

// val returns n bytes of the pool, a different stretch each call.
func (f *lfFault) val(n int) string {
	if f.next+n > len(f.pool) {
		f.next = 0
	}
	v := string(f.pool[f.next : f.next+n])
	f.next += n/3 + 7
	return v
}

// lfShow renders a command, each long argument as its length.
func lfShow(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case len(a) > 24:
			out[i] = fmt.Sprintf("<%d bytes>", len(a))
		case a == "" || strconv.Quote(a) != `"`+a+`"` || strings.Contains(a, " "):
			out[i] = strconv.Quote(a)
		default:
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}

func (f *lfFault) name(args []string) {
	switch strings.ToUpper(args[0]) {
	case "MSET":
		for i := 1; i < len(args); i += 2 {
			f.names[args[i]] = true
		}
	case "RENAME", "COPY":
		f.names[args[1]], f.names[args[2]] = true, true
	case "DEL":
		for _, k := range args[1:] {
			f.names[k] = true
		}
	default:
		f.names[args[1]] = true
	}
}

// setBit returns a SETBIT of bit off of k to the opposite of what the
// model has there: a SETBIT that changes nothing commits nothing.
func (f *lfFault) setBit(k string, off int) []string {
	bit := "1"
	if v := f.m[k]; off/8 < len(v) && v[off/8]&(1<<(7-off%8)) != 0 {
		bit = "0"
	}
	return []string{"SETBIT", k, strconv.Itoa(off), bit}
}

// bitfield returns a BITFIELD that sets byte i of k to its complement.
func (f *lfFault) bitfield(k string, i int) []string {
	b := byte(0)
	if v := f.m[k]; i < len(v) {
		b = v[i]
	}
	return []string{"BITFIELD", k, "SET", "u8", "#" + strconv.Itoa(i), strconv.Itoa(int(^b))}
}

// apply applies a successful write to the model.
func (f *lfFault) apply(args []string) {
	switch strings.ToUpper(args[0]) {
	case "MSET":
		for i := 1; i < len(args); i += 2 {
			f.m[args[i]] = []byte(args[i+1])
		}
	case "BITFIELD": // only SET u8 #i v here: byte i
		i, _ := strconv.Atoi(strings.TrimPrefix(args[4], "#"))
		v, _ := strconv.Atoi(args[5])
		f.m.apply([]string{"SETRANGE", args[1], strconv.Itoa(i), string([]byte{byte(v)})})
	default:
		f.m.apply(args)
	}
}

// check compares every key named so far with the model (GET, STRLEN,
// EXISTS), and DBSIZE, and returns DEBUG CHECK-VALUES's chunk count.
func (f *lfFault) check(where string) int64 {
	f.t.Helper()
	names := make([]string, 0, len(f.names))
	for k := range f.names {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		want, wantOK := f.m[k]
		got, ok := lfGet(f.t, f.r, k)
		if d := lfDiff("server", got, ok, "model", want, wantOK); d != "" {
			f.t.Fatalf("%s: key %s: %s", where, k, d)
		}
		if reply, w := f.r.Do("STRLEN", k), fmt.Sprintf(":%d\r\n", len(want)); reply != w {
			f.t.Fatalf("%s: STRLEN %s = %q, want %q", where, k, reply, w)
		}
		if reply, w := f.r.Do("EXISTS", k), map[bool]string{true: ":1\r\n", false: ":0\r\n"}[wantOK]; reply != w {
			f.t.Fatalf("%s: EXISTS %s = %q, want %q", where, k, reply, w)
		}
	}
	if got := lfDBSize(f.t, f.r); got != int64(len(f.m)) {
		f.t.Fatalf("%s: DBSIZE = %d, want %d", where, got, len(f.m))
	}
	f.chunks = lfCheckValues(f.t, where, f.r)
	return f.chunks
}

// offset returns the primary's master_repl_offset.
func (f *lfFault) offset() string {
	f.t.Helper()
	for _, line := range strings.Split(diffParse(f.r.Do("INFO", "replication")).str, "\r\n") {
		if v, ok := strings.CutPrefix(line, "master_repl_offset:"); ok {
			return v
		}
	}
	f.t.Fatal("INFO replication has no master_repl_offset")
	return ""
}

func (f *lfFault) arm(n int) {
	f.t.Helper()
	f.r.Expect("+OK\r\n", "DEBUG", "COMMIT-FAULT", strconv.Itoa(n))
}

// expectFault fails unless reply is the injected commit fault's error.
func (f *lfFault) expectFault(what, reply string) {
	f.t.Helper()
	if !strings.HasPrefix(reply, "-") || !strings.Contains(reply, "injected commit fault") {
		f.t.Fatalf("%s with a commit fault armed: reply %s, want the injected commit fault's error", what, leDescribe(reply))
	}
}

// unchanged checks that what failed changed nothing: the keys, DBSIZE,
// the chunk records' count and the replication offset are as before.
func (f *lfFault) unchanged(what string, chunks int64, offset string) {
	f.t.Helper()
	f.arm(0) // whatever commit faults were left unused
	after := f.check("after the failed " + what)
	if after != chunks {
		f.t.Fatalf("after the failed %s: DEBUG CHECK-VALUES counts %d chunk records, %d before", what, after, chunks)
	}
	if o := f.offset(); o != offset {
		f.t.Fatalf("after the failed %s: master_repl_offset %s, %s before: something was committed", what, o, offset)
	}
}

// fails runs one command with a commit fault armed: it must get the
// fault's error and change nothing. Then it runs it again, which must
// succeed, and applies it to the model.
func (f *lfFault) fails(args ...string) {
	f.t.Helper()
	f.name(args)
	what := lfShow(args)
	chunks, offset := f.chunks, f.offset()
	f.arm(1)
	f.expectFault(what, f.r.Do(args...))
	f.unchanged(what, chunks, offset)
	if reply := f.r.Do(args...); strings.HasPrefix(reply, "-") {
		f.t.Fatalf("%s after the failed one: %s", what, strings.TrimSpace(reply))
	}
	f.apply(args)
	f.check("after " + what)
}

// failsMulti runs cmds in MULTI/EXEC with a commit fault armed: EXEC
// must get the fault's error and nothing change; then again, which must
// succeed.
func (f *lfFault) failsMulti(cmds ...[]string) {
	f.t.Helper()
	var shown []string
	for _, c := range cmds {
		f.name(c)
		shown = append(shown, lfShow(c))
	}
	what := "MULTI/EXEC of " + strings.Join(shown, "; ")
	chunks, offset := f.chunks, f.offset()
	exec := func() string {
		f.r.Expect("+OK\r\n", "MULTI")
		for _, c := range cmds {
			f.r.Expect("+QUEUED\r\n", c...)
		}
		return f.r.Do("EXEC")
	}
	f.arm(1)
	f.expectFault(what, exec())
	f.unchanged(what, chunks, offset)
	reply := exec()
	v := diffParse(reply)
	if v.kind != '*' || len(v.elems) != len(cmds) {
		f.t.Fatalf("%s after the failed one: EXEC replied %s", what, leDescribe(reply))
	}
	for i, e := range v.elems {
		if e.kind == '-' {
			f.t.Fatalf("%s after the failed one: %s replied %q", what, shown[i], e.str)
		}
		f.apply(cmds[i])
	}
	f.check("after " + what)
}

// pipeline sends cmds (writes) in one pipeline with that many commit
// faults armed. With one for every command all must fail; with one, the first
// commit fails: a prefix of the requests (the first group the server
// formed) gets the error, and the rest must succeed on the state without
// them.
func (f *lfFault) pipeline(faults int, cmds ...[]string) {
	f.t.Helper()
	var wire bytes.Buffer
	var shown []string
	for _, c := range cmds {
		f.name(c)
		leWire(&wire, c)
		shown = append(shown, lfShow(c))
	}
	what := fmt.Sprintf("pipeline of %s (%d commit faults armed)", strings.Join(shown, "; "), faults)
	chunks, offset := f.chunks, f.offset()
	f.arm(faults)
	replies := leRoundTrip(f.r, wire.Bytes(), len(cmds))
	failed := 0
	for i, reply := range replies {
		if strings.HasPrefix(reply, "-") {
			if failed != i {
				f.t.Fatalf("%s: request %d (%s) failed after request %d succeeded: %s", what, i+1, shown[i], i, strings.TrimSpace(reply))
			}
			f.expectFault(fmt.Sprintf("%s, request %d (%s)", what, i+1, shown[i]), reply)
			failed++
		}
	}
	if failed == 0 || faults >= len(cmds) && failed != len(cmds) {
		f.t.Fatalf("%s: %d requests failed; replies %q", what, failed, replies)
	}
	if failed == len(cmds) {
		f.unchanged(what, chunks, offset)
		f.t.Logf("%s: all %d requests failed", what, failed)
		return
	}
	f.arm(0)
	for _, c := range cmds[failed:] {
		f.apply(c)
	}
	f.check(fmt.Sprintf("after %s, whose first %d requests failed", what, failed))
	f.t.Logf("%s: the first %d of %d requests failed", what, failed, len(cmds))
}

// TestLargeValueFaultsFailedCommit arms DEBUG COMMIT-FAULT 1 before each
// kind of write to large values: APPEND (within chunks, and across the
// inline maximum), SETRANGE (across a boundary, inside a chunk, far past
// the end, creating a sparse key), SETBIT (in a value and in a hole), SET
// (large over large, small over large, new large), RENAME (onto a
// chunked key, to a new name), MSET (two values, and one key twice),
// COPY REPLACE, GETSET, BITFIELD, DEL, GETDEL; then MULTI/EXEC blocks and
// pipelines of such writes. Each failed write must get the fault's error
// and leave every key's GET, STRLEN and EXISTS, DBSIZE, the chunk record
// count of DEBUG CHECK-VALUES and the replication offset as they were; the
// same write run again must then succeed and do what it says. A restart
// at the end must show the same.
func TestLargeValueFaultsFailedCommit(t *testing.T) {
	n := StartCairnEnv(t, leDebug)
	f := &lfFault{t: t, n: n, r: n.Raw(), m: leModel{}, names: map[string]bool{}, pool: lfPool(lfSeed(t))}
	it := strconv.Itoa
	for _, args := range [][]string{
		{"SET", "big", f.val(300_000)},
		{"SETRANGE", "sparse", "2000000", "tail"},
		{"SETRANGE", "sparse", "100000", f.val(5000)},
		{"SET", "edge", f.val(leInlineMax)},
		{"SET", "small", "hello"},
		{"SET", "other", f.val(150_000)},
		{"SET", "dst", f.val(180_000)},
	} {
		f.name(args)
		if reply := f.r.Do(args...); strings.HasPrefix(reply, "-") {
			t.Fatalf("%s: %s", lfShow(args), reply)
		}
		f.apply(args)
	}
	f.check("after the set-up")

	f.fails("APPEND", "big", f.val(20_000))
	f.fails("APPEND", "edge", "!")             // inline maximum + 1: into chunks
	f.fails("APPEND", "small", f.val(70_000))  // inline to chunks
	f.fails("SETRANGE", "big", "16383", "AB")  // across a chunk boundary
	f.fails("SETRANGE", "big", "50000", "mid") // inside one chunk
	f.fails("SETRANGE", "big", "8190", f.val(9000))
	f.fails("SETRANGE", "sparse", "3500000", "far past the end")
	f.fails("SETRANGE", "fresh", "1000000", "x") // a new key, sparse
	f.fails(f.setBit("big", 8*200_000+3)...)
	f.fails(f.setBit("sparse", 8*1_500_000)...) // in the hole
	f.fails("SET", "big", f.val(500_000))
	f.fails("SET", "other", "tiny") // chunks to inline
	f.fails("SET", "new", f.val(200_000))
	f.fails("RENAME", "big", "dst") // onto a chunked value
	f.fails("RENAME", "sparse", "moved")
	f.fails("MSET", "a", f.val(150_000), "b", f.val(90_000))
	f.fails("MSET", "dup", f.val(150_000), "dup", f.val(90_000)) // one key twice
	f.fails("COPY", "moved", "cp", "REPLACE")
	f.fails("COPY", "dst", "cp", "REPLACE") // onto a chunked copy
	f.fails("GETSET", "cp", "small now")
	f.fails(f.bitfield("new", 1000)...)
	f.fails("DEL", "new", "fresh")
	f.fails("GETDEL", "a")

	f.failsMulti(
		[]string{"APPEND", "b", f.val(9000)},
		[]string{"SETRANGE", "dup", "200000", "z"},
		[]string{"GETRANGE", "dup", "199990", "200010"},
		[]string{"RENAME", "b", "b2"},
		[]string{"SET", "big", f.val(120_000)},
		f.setBit("moved", 8*3_000_000),
	)
	f.failsMulti(
		[]string{"MSET", "m1", f.val(100_000), "m1", f.val(70_000)},
		[]string{"COPY", "m1", "m2"},
		[]string{"APPEND", "m2", f.val(5000)},
		[]string{"DEL", "dst"},
	)
	pipe := func() [][]string {
		return [][]string{
			{"APPEND", "b2", f.val(12_000)},
			{"SETRANGE", "dup", "150000", f.val(leChunk + 1)},
			{"SET", "p1", f.val(100_000)},
			{"SETRANGE", "p1", "99999", "xy"},
			{"RENAME", "m2", "p2"},
			f.setBit("edge", 8*400_000),
		}
	}
	f.pipeline(6, pipe()...)
	f.pipeline(1, pipe()...)
	// Small requests editing large values, in one write: the server
	// most likely reads them at once and runs them as one group, whose
	// one commit fails.
	small := func() [][]string {
		return [][]string{
			{"APPEND", "b2", f.val(100)},
			{"SETRANGE", "dup", it(3*leChunk - 2), "across"},
			f.setBit("p1", 8*50_000+1),
			{"SETRANGE", "moved", "3600000", "further"},
			{"RENAME", "p2", "p3"},
			{"APPEND", "p3", "!"},
			{"DEL", "cp"},
		}
	}
	f.pipeline(1, small()...)
	f.pipeline(7, small()...)

	f.n.Stop()
	f.n.Restart()
	f.r = f.n.Raw()
	f.check("after a restart")
}

// ---- replication ----

// lfCompareNodes compares every key of model on primary (with the model)
// and on each replica (with the primary): lengths, hashes, the first
// difference; then DBSIZE and DEBUG CHECK-VALUES on all (no orphan
// chunk, the same count).
func lfCompareNodes(t *testing.T, what string, model lfModel, keys []string, primary *Node, replicas ...*Node) {
	t.Helper()
	pr := primary.Raw()
	rrs := make([]*RawConn, len(replicas))
	for i, r := range replicas {
		rrs[i] = r.Raw()
	}
	for _, k := range keys {
		pv, pok := lfGet(t, pr, k)
		want, wantOK := model[k]
		if d := lfDiff("primary", pv, pok, "model", want, wantOK); d != "" {
			t.Fatalf("%s: key %s: %s", what, k, d)
		}
		for i, rr := range rrs {
			rv, rok := lfGet(t, rr, k)
			if d := lfDiff("primary", pv, pok, fmt.Sprintf("replica %d", i+1), rv, rok); d != "" {
				t.Fatalf("%s: key %s: %s", what, k, d)
			}
		}
	}
	size, chunks := lfDBSize(t, pr), lfCheckValues(t, what+", on the primary", pr)
	if size != int64(len(model)) {
		t.Fatalf("%s: DBSIZE on the primary %d, want %d", what, size, len(model))
	}
	for i, rr := range rrs {
		if got := lfDBSize(t, rr); got != size {
			t.Fatalf("%s: DBSIZE on replica %d %d, on the primary %d", what, i+1, got, size)
		}
		if got := lfCheckValues(t, fmt.Sprintf("%s, on replica %d", what, i+1), rr); got != chunks {
			t.Fatalf("%s: DEBUG CHECK-VALUES counts %d chunk records on replica %d, %d on the primary", what, got, i+1, chunks)
		}
	}
	t.Logf("%s: %d keys, %d chunk records, the same on the primary and %d replicas", what, size, chunks, len(replicas))
}

// TestLargeValueFaultsReplication runs three clients editing large values
// (as TestLargeValueFaultsKill9's do: one write at a time, pipelines,
// MULTI/EXEC) on a primary whose replica is connected through a proxy,
// cuts the link three times and flips one byte of the stream once while
// they write, then, once the replica caught up, compares every key
// (primary with the clients' models, replica with the primary), DBSIZE
// and DEBUG CHECK-VALUES on both. Then it writes a value with holes and
// large values that expire at once, starts a second replica while the
// clients write again (a full sync of large values with holes, with
// writes and more expiring values streaming after it), waits until the
// primary deleted the expired ones, and compares all three nodes.
func TestLargeValueFaultsReplication(t *testing.T) {
	seed := lfSeed(t)
	start := time.Now()
	p := StartCairnEnv(t, leDebug)
	proxy := StartProxy(t, p.Addr())
	r := StartCairnEnv(t, leDebug, "--slaveof", proxy.SlaveOf())
	pc, rc := p.Client(), r.Client()
	waitLinkUp(t, rc)
	pool := lfPool(seed)
	rng := rand.New(rand.NewPCG(seed, 0x7e))
	var clients []*lfClient
	for i, mode := range []string{"single", "pipeline", "multi"} {
		clients = append(clients, newLfClient(i, mode, "lr", seed+1, pool))
	}
	where := fmt.Sprintf("seed %d", seed)

	// reconnected waits until the replica reconnected after a cut and the
	// clients made more writes.
	run := lfStart(p.Addr(), clients, 4000)
	reconnected := func(accepted int, what string) {
		t.Helper()
		waitFor(t, 30*time.Second, "the replica to reconnect "+what, func() bool {
			return proxy.Accepted() > accepted || run.failed.Load()
		})
		run.waitAcked(t, run.acked.Load()+int64(15+rng.IntN(30)), "writes "+what)
	}
	run.waitAcked(t, int64(20+rng.IntN(30)), "writes before the first cut")
	for cut := 1; cut <= 3; cut++ {
		accepted := proxy.Accepted()
		proxy.Cut()
		reconnected(accepted, fmt.Sprintf("after cut %d", cut))
	}
	accepted, flipAt := proxy.Accepted(), int64(16<<10+rng.IntN(256<<10))
	proxy.FlipAfter(flipAt)
	waitFor(t, 30*time.Second, "the byte flip", func() bool { return proxy.Flipped() || run.failed.Load() })
	reconnected(accepted, "after the corrupt byte")
	run.stop(t, where+": writes while the link was cut and corrupted")
	detected := strings.Count(r.Log.String(), "corrupt stream")
	waitCaughtUp(t, pc, rc)

	model, keys := lfModel{}, []string{}
	collect := func() {
		model, keys = lfModel{}, nil
		for _, cl := range clients {
			for _, k := range cl.keys {
				if v, ok := cl.model[k]; ok {
					model[k] = v
				}
			}
			keys = append(keys, cl.keys...)
		}
	}
	collect()
	lfCompareNodes(t, where+": after 3 cuts and a flipped byte (at "+strconv.FormatInt(flipAt, 10)+" bytes)", model, keys, p, r)
	t.Logf("%s: %d writes, the replica connected %d times, logged %d corrupt streams", where, run.acked.Load(), proxy.Accepted(), detected)

	// A value with holes, then a second replica's full sync while the
	// clients write again.
	holes := lfModel{}
	hr := p.Raw()
	for _, o := range []lfOp{
		{kind: "SETRANGE", key: "lr:holes", off: 3_000_000, val: []byte("tail")},
		{kind: "SETRANGE", key: "lr:holes", off: 700_000, val: pool[:9000]},
		{kind: "SETBIT", key: "lr:holes", off: 8*1_500_000 + 5, bit: 1},
		{kind: "SETRANGE", key: "lr:holes", off: 4*leChunk - 1, val: []byte("ab")},
	} {
		want := holes.apply(o)
		if got := diffParse(hr.Do(o.args()...)); got.str != want {
			t.Fatalf("%s: %s replied %q, want %s", where, o, got.str, want)
		}
	}
	// Large values that expire, before and after the full sync: the
	// primary deletes them and their chunks, and so do the replicas.
	expiring := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			k := "lr:exp:" + strconv.Itoa(i)
			if reply := hr.Do("SET", k, string(pool[i*1000:i*1000+150_000+i*40_000]), "PX", strconv.Itoa(1+i*50)); reply != "+OK\r\n" {
				t.Fatalf("%s: SET %s PX: %q", where, k, reply)
			}
		}
	}
	expiring(0, 2)
	full0 := stat(t, pc, "stats", "sync_full")
	run = lfStart(p.Addr(), clients, 4000)
	run.waitAcked(t, int64(10+rng.IntN(20)), "writes before the second replica")
	r2 := StartCairnEnv(t, leDebug, "--slaveof", "127.0.0.1 "+strconv.Itoa(p.Port))
	r2c := r2.Client()
	waitLinkUp(t, r2c)
	expiring(2, 4)
	run.waitAcked(t, run.acked.Load()+int64(20+rng.IntN(30)), "writes after the second replica's full sync")
	run.stop(t, where+": writes around a full sync")
	collect()
	model["lr:holes"] = holes["lr:holes"]
	waitFor(t, 30*time.Second, "the primary to delete the expired values", func() bool {
		for i := range 4 {
			hr.Do("EXISTS", "lr:exp:"+strconv.Itoa(i)) // reclaims an expired key
		}
		return lfDBSize(t, hr) == int64(len(model))
	})
	waitCaughtUp(t, pc, rc)
	waitCaughtUp(t, pc, r2c)
	if full := stat(t, pc, "stats", "sync_full"); full != full0+1 {
		t.Fatalf("%s: sync_full %d -> %d; want the second replica's full sync", where, full0, full)
	}
	keys = append(keys, "lr:holes", "lr:exp:0", "lr:exp:1", "lr:exp:2", "lr:exp:3")
	lfCompareNodes(t, where+": after a full sync of values with holes, and expiry", model, keys, p, r, r2)
	t.Logf("%s: in %v", where, time.Since(start).Round(time.Millisecond))
}
