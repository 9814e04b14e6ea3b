package commands

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnkv/cairn/scripting"
	"github.com/cairnkv/cairn/server/resp"
	"github.com/cairnkv/cairn/storage"
	"github.com/hashicorp/go-hclog"
)

// programKeys returns the key spec of a command that runs a program
// (EVAL, FCALL and their forms): numkeys at argument 2, then the keys,
// with flags and Redis's notes (on EVAL, EVAL_RO, FCALL and FCALL_RO only).
func programKeys(rw bool, noted bool) []KeySpec {
	flags, note := KeyRO|KeyAccess, "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"
	if rw {
		flags, note = KeyRW|KeyAccess|KeyUpdate, "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"
	}
	if !noted {
		note = ""
	}
	return []KeySpec{KeySpec{Flags: flags, Begin: AtIndex(2), Find: KeyNum(0, 1, 1)}.Note(note)}
}

// programCmdFlags are the command flags EVAL, FCALL and their forms share.
const programCmdFlags = FlagNoScript | FlagStale | FlagSkipMonitor | FlagNoMandatoryKeys

func init() {
	rwNoted, roNoted := programKeys(true, true), programKeys(false, true)
	rw, ro := programKeys(true, false), programKeys(false, false)
	const flags = programCmdFlags
	register(
		&Spec{Name: "eval", Arity: -3, Flags: flags | FlagMayReplicate, KeySpecs: rwNoted, Group: "scripting", Since: "2.6.0",
			Summary: "Runs a Lua script atomically.", Handler: func(c *Ctx) { evalScript(c, false, false) }},
		&Spec{Name: "evalsha", Arity: -3, Flags: flags | FlagMayReplicate, KeySpecs: rw, Group: "scripting", Since: "2.6.0",
			Summary: "Runs a cached Lua script atomically, named by its SHA1.", Handler: func(c *Ctx) { evalScript(c, true, false) }},
		&Spec{Name: "eval_ro", Arity: -3, Flags: flags | FlagReadOnly, KeySpecs: roNoted, Group: "scripting", Since: "7.0.0",
			Summary: "Runs a Lua script that may not write.", Handler: func(c *Ctx) { evalScript(c, false, true) }},
		&Spec{Name: "evalsha_ro", Arity: -3, Flags: flags | FlagReadOnly, KeySpecs: ro, Group: "scripting", Since: "7.0.0",
			Summary: "Runs a cached Lua script that may not write, named by its SHA1.", Handler: func(c *Ctx) { evalScript(c, true, true) }},
		&Spec{Name: "script", Arity: -2, Group: "scripting", Since: "2.6.0", Summary: "Manages the Lua script cache.",
			Subcommands: map[string]*Spec{
				"load": {Arity: 3, Flags: FlagNoScript | FlagStale, Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"},
					Since: "2.6.0", Summary: "Compiles a script and caches it without running it.", Handler: cmdScriptLoad},
				"exists": {Arity: -3, Flags: FlagNoScript, Tips: []string{"request_policy:all_shards", "response_policy:agg_logical_and"},
					Since: "2.6.0", Summary: "Tells which scripts the cache holds.", Handler: cmdScriptExists},
				"flush": {Arity: -2, Flags: FlagNoScript, Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"},
					Since: "2.6.0", Summary: "Empties the script cache.", Handler: cmdScriptFlush},
				"kill": {Arity: 2, Flags: FlagNoScript | FlagAllowBusy, Tips: []string{"request_policy:all_shards", "response_policy:one_succeeded"},
					Since: "2.6.0", Summary: "Stops the running script if it has not written.", Handler: cmdScriptKill},
				"debug": {Arity: 3, Flags: FlagNoScript, Since: "3.2.0", Summary: "Sets the script debugger's mode (not supported).", Handler: cmdScriptDebug},
				"help":  {Arity: 2, Flags: FlagLoading | FlagStale, Since: "5.0.0", Summary: "Returns helpful text about the different subcommands.", Handler: cmdScriptHelp},
			}},
	)
	groupCategory["scripting"] = "scripting"
	scripting.RedisVersion = RedisVersion
}

const (
	errNoScript      = "NOSCRIPT No matching script. Please use EVAL."
	errBusyScript    = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	errBusyFunction  = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
	errNotBusy       = "NOTBUSY No scripts in execution right now."
	errUnkillable    = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
	errScriptWrite   = "ERR Write commands are not allowed from read-only scripts."
	errScriptUnknown = "ERR Unknown Redis command called from script"
	errScriptArity   = "ERR Wrong number of args calling Redis command from script"
	errScriptDenied  = "ERR This Redis command is not allowed from script"
)

// scriptEngine is the server's scripting state: the script cache and the
// scripts running now.
type scriptEngine struct {
	cache  scripting.Cache
	active atomic.Int32 // len(running), read without mu by every command
	// pending counts the EVALs, and the EXECs with a script queued, from
	// before they take their key locks until they release them: while it
	// is not zero, commands wait for their locks in awaitScripts.
	pending atomic.Int32
	mu      sync.Mutex // guards running and stopped
	running map[*scriptRun]struct{}
	stopped bool // the server is stopping: scripts are killed
}

// scriptRun is one script or function in progress.
type scriptRun struct {
	cl    *Client
	run   *scripting.Run
	start time.Time
	fn    *scripting.Function // nil for a script
	args  [][]byte            // a function's command line (FUNCTION STATS)
	// mu serializes SCRIPT KILL's decision with the script's commands.
	mu    sync.Mutex
	wrote bool // a redis.call wrote: SCRIPT KILL refuses
}

// kill stops the run unless it wrote (force: even then), and reports
// whether it did.
func (r *scriptRun) kill(force bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.wrote && !force {
		return false
	}
	r.run.Kill() // no command runs any more (Call)
	return true
}

// start registers r as running; a script that starts while the server
// stops is killed at once.
func (e *scriptEngine) start(r *scriptRun) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		r.kill(true)
	}
	if e.running == nil {
		e.running = map[*scriptRun]struct{}{}
	}
	e.running[r] = struct{}{}
	e.active.Store(int32(len(e.running)))
}

func (e *scriptEngine) finish(r *scriptRun) {
	e.mu.Lock()
	delete(e.running, r)
	e.active.Store(int32(len(e.running)))
	e.mu.Unlock()
}

// busyScript returns Redis's BUSY error when a script or function of
// another client than cl has run for longer than busy-reply-threshold
// (other clients' commands then get it, as Redis's do), "" otherwise. The
// error names SCRIPT KILL for a script, FUNCTION KILL for a function (the
// one that has run longest decides).
func (e *Env) busyScript(cl *Client) string {
	r := e.busyRun(cl)
	switch {
	case r == nil:
		return ""
	case r.fn != nil:
		return errBusyFunction
	}
	return errBusyScript
}

// busyRun returns the run of another client than cl that has run the
// longest, if it has run for longer than busy-reply-threshold.
func (e *Env) busyRun(cl *Client) *scriptRun {
	s := &e.scripts
	if s.active.Load() == 0 {
		return nil
	}
	limit := time.Duration(e.Config.Int("busy-reply-threshold")) * time.Millisecond
	s.mu.Lock()
	defer s.mu.Unlock()
	var oldest *scriptRun
	for r := range s.running {
		if r.cl != cl && time.Since(r.start) >= limit && (oldest == nil || r.start.Before(oldest.start)) {
			oldest = r
		}
	}
	return oldest
}

// scriptLockPoll is how often a command waiting in awaitScripts looks at
// its locks and at the running scripts again.
const scriptLockPoll = time.Millisecond

// awaitScripts is where a command about to take the locks of keys in cl's
// namespace (every lock with all) waits for them while scripts may hold
// them. A script keeps its locks until it ends, which for a script in a
// loop is when SCRIPT KILL or SHUTDOWN stops it; Redis answers BUSY to
// every command sent while a script has run past busy-reply-threshold, so
// a command waiting for a script's locks must get BUSY too rather than
// wait in the mutex. awaitScripts returns the BUSY error for the caller
// to reply once a script of another client has run that long; "" when no
// script is pending or the locks are free (the command then takes them as
// usual).
//
// A script that begins between the caller's look at pending and its
// taking the locks is not seen: its command then waits for the script's
// end, as every command did before this wait existed.
func (e *Env) awaitScripts(cl *Client, keys [][]byte, all bool) string {
	if e.scripts.pending.Load() == 0 {
		return ""
	}
	var idx []int
	if !all {
		idx = e.Store.Locks.Stripes(cl.Namespace, keys...)
	}
	for e.scripts.pending.Load() > 0 {
		if !all && e.Store.Locks.TryLockStripes(idx) {
			e.Store.Locks.UnlockStripes(idx)
			return ""
		}
		if busy := e.busyScript(cl); busy != "" {
			return busy
		}
		time.Sleep(scriptLockPoll)
	}
	return ""
}

// holdLibrary takes lib's Lua state for a call of one of its functions,
// waiting while another call has it; it returns Redis's BUSY error,
// without taking it, once a script or function of another client has run
// past busy-reply-threshold, "" when it took it.
func (e *Env) holdLibrary(cl *Client, lib *scripting.Library) string {
	for !lib.TryLock(libraryPoll) {
		if busy := e.busyScript(cl); busy != "" {
			return busy
		}
	}
	return ""
}

// libraryPoll is how long a call waiting for its library's Lua state
// waits before it looks at the running scripts again (it takes the state
// as soon as it is free).
const libraryPoll = 10 * time.Millisecond

// StopScripts kills the running scripts and any that starts later; the
// server calls it when it stops. A killed script's writes are never
// committed: its client never got a reply.
func (e *Env) StopScripts() {
	s := &e.scripts
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	for r := range s.running {
		r.kill(true)
	}
}

// loadScript compiles body into the cache, replying its error when it has
// one.
func loadScript(c *Ctx, body []byte) *scripting.Script {
	s, err := c.Env.scripts.cache.Load(body)
	if errors.Is(err, scripting.ErrInvalid) {
		c.W.Error("ERR " + err.Error())
		return nil
	}
	if err != nil {
		c.errorf("ERR %v", err)
		return nil
	}
	return s
}

// evalScript runs EVAL, EVALSHA and their _RO forms. The script writes
// into one batch, committed when it returns (also when it fails, as Redis
// keeps a failed script's writes), under the locks of every key it
// touched: it is atomic on this node and on replicas, which get the
// batch, and its events are published after that commit.
//
// It runs first under the locks of its declared keys (KEYS), taking the
// lock of any other key it touches without waiting (scriptLocks). When
// one is taken by another command, or when it runs a command on the
// whole keyspace or one that publishes, it is abandoned, its writes
// dropped unseen, and it runs again under every key lock, as a Redis
// script runs alone. Inside EXEC it runs under the transaction's locks
// (all of them) and writes into its batch.
func evalScript(c *Ctx, bySHA, readOnly bool) {
	// Monitors see the script before its commands, as in Redis (the
	// flag skip_monitor keeps Dispatch from showing it after them).
	c.Env.feedMonitorsFrom(c.Client, c.Client.Addr, c.Spec, c.Args, c.Now)
	numKeys, ok := parseInt(c.Args[2])
	switch {
	case !ok:
		c.W.Error(errNotInt)
		return
	case numKeys > int64(len(c.Args)-3):
		c.W.Error("ERR Number of keys can't be greater than number of args")
		return
	case numKeys < 0:
		c.W.Error("ERR Number of keys can't be negative")
		return
	}
	keys, argv := c.Args[3:3+numKeys], c.Args[3+numKeys:]
	var s *scripting.Script
	if bySHA {
		if s = c.Env.scripts.cache.Get(string(c.Args[1])); s == nil {
			c.W.Error(errNoScript)
			return
		}
	} else if s = loadScript(c, c.Args[1]); s == nil {
		return
	}
	if !s.Shebang && c.Env.servesNoStaleData() {
		// A script without flags runs on a stale replica as a command
		// that fails, as Redis's EVAL in its compatibility mode does.
		c.W.Error(errMasterDown)
		return
	}
	if s.Flags&scripting.FlagNoWrites != 0 {
		readOnly = true
	} else if !readOnly && s.Shebang && c.replica() {
		// A script that declares its flags and not no-writes is a
		// write, refused on a replica before it runs, as Redis does.
		c.W.Error(errReadOnly)
		return
	}
	runProgram(c, scriptProgram{script: s}, keys, argv, readOnly)
}

// scriptProgram is what a script run runs: a script (EVAL) or a
// function (FCALL).
type scriptProgram struct {
	script *scripting.Script
	fn     *scripting.Function
}

// runProgram runs p with its keys and arguments, in the transaction c
// runs in or under key locks of its own (see evalScript).
func runProgram(c *Ctx, p scriptProgram, keys, argv [][]byte, readOnly bool) {
	if c.txn != nil && c.txn.exec {
		if wrote, err := runScript(c, p, keys, argv, readOnly, nil); err != nil && wrote {
			// Killed after writing, as the server stops: the
			// transaction must not commit half of the script.
			c.txn.discard = true
		}
		return
	}
	// A function with upvalues may change its library's state before it
	// is abandoned: once one was, its calls run under every lock from the
	// start, as Redis runs them alone, so that no later call runs twice.
	if p.fn == nil || !p.fn.NeedsAllLocks() {
		if evalLocked(c, p, keys, argv, readOnly, false) {
			return
		}
		c.Env.Stats.ScriptReruns.Add(1)
		if p.fn != nil && !p.fn.Stateless() {
			p.fn.SetNeedsAllLocks()
		}
	}
	if busy := c.Env.awaitScripts(c.Client, nil, true); busy != "" {
		c.W.Error(busy)
		return
	}
	evalLocked(c, p, keys, argv, readOnly, true)
}

// evalLocked runs s under the locks of its keys (all: of every key) in a
// batch of its own, and reports false when the script was abandoned for
// needing every lock (errNeedAllLocks).
func evalLocked(c *Ctx, s scriptProgram, keys, argv [][]byte, readOnly, all bool) bool {
	c.Env.scripts.pending.Add(1)
	defer c.Env.scripts.pending.Add(-1)
	var locks *scriptLocks
	var unlock func()
	if all {
		unlock = c.lockTransaction(nil, true)
	} else {
		locks = lockScriptKeys(c.Env.Store.Locks, c.ns(), keys)
		unlock = c.holdLocks(locks.release)
	}
	defer unlock() // publishes the events, then releases the locks
	c.txn = &txnBatch{b: c.Env.Store.NewTxnBatch(), allLocked: all, exec: true}
	c.txn.b.Origin = c.Client.ID
	mark := c.W.Len()
	_, err := runScript(c, s, keys, argv, readOnly, locks)
	// Abandoned, or killed: only a script that has not written is
	// killed, unless the server is stopping; then its writes are
	// dropped, never acknowledged.
	c.txn.discard = err != nil
	c.endTxn(mark)
	return !errors.Is(err, errNeedAllLocks)
}

// errLibraryBusy is runScript's error when a function's library stayed
// busy with another client's call past busy-reply-threshold.
var errLibraryBusy = errors.New("commands: the function's library is busy")

// errNeedAllLocks abandons a script run under its keys' locks (see
// evalScript).
var errNeedAllLocks = errors.New("commands: the script needs every key lock")

// scriptLocks are the key locks a script running under its declared
// keys' locks holds: those, taken first, and the ones cover took since.
type scriptLocks struct {
	locks *storage.KeyLocks
	ns    string
	held  map[int]struct{} // stripes
}

// lockScriptKeys takes the locks of a script's declared keys.
func lockScriptKeys(locks *storage.KeyLocks, ns string, keys [][]byte) *scriptLocks {
	idx := locks.Stripes(ns, keys...)
	locks.LockStripes(idx)
	l := &scriptLocks{locks: locks, ns: ns, held: make(map[int]struct{}, len(idx))}
	for _, i := range idx {
		l.held[i] = struct{}{}
	}
	return l
}

// cover makes sure the script holds the locks of keys, taking the missing
// ones without waiting (so never in a deadlock), and reports whether it
// does.
func (l *scriptLocks) cover(keys [][]byte) bool {
	var missing []int
	for _, i := range l.locks.Stripes(l.ns, keys...) {
		if _, ok := l.held[i]; !ok {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return true
	}
	if !l.locks.TryLockStripes(missing) {
		return false
	}
	for _, i := range missing {
		l.held[i] = struct{}{}
	}
	return true
}

// release releases every lock the script holds.
func (l *scriptLocks) release() {
	held := make([]int, 0, len(l.held))
	for i := range l.held {
		held = append(held, i)
	}
	l.locks.UnlockStripes(held)
}

// runScript runs p in the batch c.txn, registered as running (for SCRIPT
// KILL, FUNCTION KILL and BUSY). It returns whether the script wrote and
// scripting.Execute's error (ErrKilled, or errNeedAllLocks with locks,
// under which it runs), or errLibraryBusy after replying BUSY.
func runScript(c *Ctx, p scriptProgram, keys, argv [][]byte, readOnly bool, locks *scriptLocks) (wrote bool, err error) {
	r := &scriptRun{cl: c.Client, run: scripting.NewRun(), fn: p.fn}
	if p.fn != nil {
		if busy := c.Env.holdLibrary(c.Client, p.fn.Lib); busy != "" {
			c.W.Error(busy)
			return false, errLibraryBusy
		}
		defer p.fn.Lib.Unlock()
		r.args = make([][]byte, len(c.Args))
		for i, a := range c.Args {
			r.args[i] = bytes.Clone(a)
		}
	}
	r.start = time.Now()
	c.Env.scripts.start(r)
	defer c.Env.scripts.finish(r)
	h := &scriptHost{c: c, r: r, readOnly: readOnly, locks: locks, w: resp.NewWriter()}
	if p.fn != nil {
		err = p.fn.Execute(r.run, keys, argv, h, c.W)
	} else {
		err = scripting.Execute(r.run, p.script, keys, argv, h, c.W)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.wrote, err
}

// scriptHost runs a script's redis.call commands in the EVAL's context:
// its client, its batch and its locks.
type scriptHost struct {
	c        *Ctx
	r        *scriptRun
	readOnly bool
	locks    *scriptLocks // nil under every lock
	abandon  error        // set once a command needed every lock
	w        *resp.Writer // the replies, reused by each call
}

// Call applies Redis's checks for a command called from a script, then
// runs it as EXEC runs a queued command.
func (h *scriptHost) Call(args [][]byte, proto int) ([]byte, error) {
	c, w := h.c, h.w
	if h.abandon != nil {
		return nil, h.abandon
	}
	w.Reset()
	// The errors count in the error statistics (see scripting.Host).
	w.Proto, w.OnError = proto, c.W.OnError
	spec := h.check(args)
	if spec == nil {
		return w.Bytes(), nil
	}
	if h.locks != nil && (keyspaceWide(spec, args) || spec.FirstKey == 0 && spec.Flags&FlagReadOnly != 0 ||
		!h.locks.cover(spec.Keys(args))) {
		// A command on the whole keyspace, or a key another command
		// holds. (A PUBLISH waits for the script's commit: publishInTxn.)
		h.abandon = errNeedAllLocks
		return nil, h.abandon
	}
	r := h.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.run.Killed() {
		w.Error("ERR Script killed by user with SCRIPT KILL...")
		return w.Bytes(), nil
	}
	savedArgs, savedSpec, savedW := c.Args, c.Spec, c.W
	c.W, c.scripted = w, true
	defer func() { c.Args, c.Spec, c.W, c.scripted = savedArgs, savedSpec, savedW, false }()
	writes := c.txn.writes
	start, _ := c.runInTxn(spec, args)
	if spec.Flags&(FlagAdmin|FlagSkipMonitor) == 0 {
		c.Env.feedMonitorsFrom(c.Client, "lua", spec, args, start)
	}
	if c.txn.writes != writes {
		r.wrote = true
	}
	return w.Bytes(), nil
}

// check returns the command args call, or writes the error that refuses
// it and returns nil.
func (h *scriptHost) check(args [][]byte) *Spec {
	w := h.w
	refuse := func(spec *Spec, msg string) {
		if spec != nil {
			spec.stats.rejected.Add(1)
		}
		w.Error(msg)
	}
	spec := lookupLine(args)
	switch {
	case spec == nil:
		refuse(nil, errScriptUnknown)
	case !spec.ArityOK(len(args)):
		refuse(spec, errScriptArity)
	case spec.Flags&FlagNoScript != 0:
		refuse(spec, errScriptDenied)
	case spec.Flags&(FlagWrite|FlagMayReplicate) != 0 && h.readOnly:
		// Redis counts a command that may replicate (PUBLISH, PFCOUNT)
		// as a write in a read-only script.
		refuse(spec, errScriptWrite)
	case spec.Flags&FlagWrite != 0 && h.c.replica():
		refuse(spec, errReadOnly)
	default:
		return spec
	}
	return nil
}

// Log writes a redis.log message to the server log.
func (h *scriptHost) Log(level int, msg string) { logScript(h.c.Env.Log, level, msg) }

// logScript writes a script's redis.log message at its Redis level.
func logScript(log hclog.Logger, level int, msg string) {
	switch level {
	case scripting.LogDebug:
		log.Debug(msg, "source", "script")
	case scripting.LogVerbose, scripting.LogNotice:
		log.Info(msg, "source", "script")
	default:
		log.Warn(msg, "source", "script")
	}
}

func cmdScriptLoad(c *Ctx) {
	if s := loadScript(c, c.Args[2]); s != nil {
		c.W.BulkString(s.SHA)
	}
}

func cmdScriptExists(c *Ctx) {
	c.W.Array(len(c.Args) - 2)
	for _, sha := range c.Args[2:] {
		if c.Env.scripts.cache.Get(string(sha)) != nil {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
	}
}

func cmdScriptFlush(c *Ctx) {
	switch {
	case len(c.Args) == 2:
	case len(c.Args) == 3 && (strings.EqualFold(string(c.Args[2]), "sync") || strings.EqualFold(string(c.Args[2]), "async")):
	default:
		c.W.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
		return
	}
	c.Env.scripts.cache.Flush()
	c.W.OK()
}

// cmdScriptKill kills the running scripts that have not written.
func cmdScriptKill(c *Ctx) { killRuns(c, false) }

// killRuns kills the running scripts (functions: the running functions)
// that have not written. When it kills none it replies as Redis does: an
// UNKILLABLE error when one that runs has written, else the BUSY error
// naming the other KILL command when only the other kind runs.
func killRuns(c *Ctx, functions bool) {
	e := &c.Env.scripts
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.running) == 0 {
		c.W.Error(errNotBusy)
		return
	}
	killed, wrote, other := false, false, ""
	for r := range e.running {
		if (r.fn != nil) != functions {
			if r.fn != nil {
				other = errBusyFunction
			} else {
				other = errBusyScript
			}
			r.mu.Lock()
			wrote = wrote || r.wrote
			r.mu.Unlock()
			continue
		}
		if r.kill(false) {
			killed = true
		} else {
			wrote = true
		}
	}
	switch {
	case killed:
		c.W.OK()
	case wrote:
		c.W.Error(errUnkillable)
	default:
		c.W.Error(other)
	}
}

func cmdScriptDebug(c *Ctx) {
	c.W.Error("ERR Cairn has no Lua debugger: SCRIPT DEBUG is not supported.")
}

func cmdScriptHelp(c *Ctx) {
	help(c, "SCRIPT", []string{
		"EXISTS <sha1> [<sha1> ...]", "    Return information about the existence of the scripts in the script cache.",
		"FLUSH [ASYNC|SYNC]", "    Flush the Lua scripts cache.",
		"KILL", "    Kill the currently executing Lua script, if it has not written yet.",
		"LOAD <script>", "    Load a script into the scripts cache without executing it.",
	})
}
