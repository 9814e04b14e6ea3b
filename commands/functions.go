package commands

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cairnkv/cairn/glob"
	"github.com/cairnkv/cairn/rdb"
	"github.com/cairnkv/cairn/scripting"
	"github.com/cairnkv/cairn/storage"
)

func init() {
	const flags = programCmdFlags
	allShards := []string{"request_policy:all_shards", "response_policy:all_succeeded"}
	register(
		&Spec{Name: "fcall", Arity: -3, Flags: flags | FlagMayReplicate, Group: "scripting", Since: "7.0.0",
			KeySpecs: programKeys(true, true),
			Summary:  "Invokes a function.", Handler: func(c *Ctx) { fcall(c, false) }},
		&Spec{Name: "fcall_ro", Arity: -3, Flags: flags | FlagReadOnly, Group: "scripting", Since: "7.0.0",
			KeySpecs: programKeys(false, true),
			Summary:  "Invokes a read-only function.", Handler: func(c *Ctx) { fcall(c, true) }},
		&Spec{Name: "function", Arity: -2, Group: "scripting", Since: "7.0.0", Summary: "A container for function commands.",
			Subcommands: map[string]*Spec{
				"load": {Arity: -3, Flags: FlagWrite | FlagDenyOOM | FlagNoScript, Tips: allShards,
					Since: "7.0.0", Summary: "Creates a library.", Handler: cmdFunctionLoad},
				"delete": {Arity: 3, Flags: FlagWrite | FlagNoScript, Tips: allShards,
					Since: "7.0.0", Summary: "Deletes a library and its functions.", Handler: cmdFunctionDelete},
				"flush": {Arity: -2, Flags: FlagWrite | FlagNoScript, Tips: allShards,
					Since: "7.0.0", Summary: "Deletes all libraries and functions.", Handler: cmdFunctionFlush},
				"restore": {Arity: -3, Flags: FlagWrite | FlagDenyOOM | FlagNoScript, Tips: allShards,
					Since: "7.0.0", Summary: "Restores all libraries from a payload.", Handler: cmdFunctionRestore},
				"dump": {Arity: 2, Flags: FlagNoScript, Since: "7.0.0",
					Summary: "Dumps all libraries into a serialized binary payload.", Handler: cmdFunctionDump},
				"list": {Arity: -2, Flags: FlagNoScript, Tips: []string{"nondeterministic_output_order"}, Since: "7.0.0",
					Summary: "Returns information about all libraries.", Handler: cmdFunctionList},
				"stats": {Arity: 2, Flags: FlagNoScript | FlagAllowBusy,
					Tips:  []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
					Since: "7.0.0", Summary: "Returns information about a function during execution.", Handler: cmdFunctionStats},
				"kill": {Arity: 2, Flags: FlagNoScript | FlagAllowBusy, Tips: []string{"request_policy:all_shards", "response_policy:one_succeeded"},
					Since: "7.0.0", Summary: "Terminates a function during execution.", Handler: cmdFunctionKill},
				"help": {Arity: 2, Flags: FlagLoading | FlagStale, Since: "7.0.0",
					Summary: "Returns helpful text about the different subcommands.", Handler: cmdFunctionHelp},
			}},
	)
}

// functionRegistry holds the function libraries, loaded from storage at
// start-up and changed by FUNCTION LOAD, DELETE, FLUSH and RESTORE (on a
// replica: reloaded when a batch of theirs is applied).
type functionRegistry struct {
	// change serializes changes, from their checks to their commit and
	// install, so that two never build on the same libraries.
	change sync.Mutex
	mu     sync.RWMutex // guards libs and funcs
	libs   map[string]*scripting.Library
	funcs  map[string]*scripting.Function
}

// function returns the function called name, in any case (Redis's
// function names are case-insensitive, its library names are not), or
// nil.
func (r *functionRegistry) function(name string) *scripting.Function {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.funcs[strings.ToLower(name)]
}

// libraries returns the libraries by name; the map is the caller's.
func (r *functionRegistry) libraries() map[string]*scripting.Library {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return maps.Clone(r.libs)
}

// sorted returns the libraries in name order.
func (r *functionRegistry) sorted() []*scripting.Library {
	libs := r.libraries()
	out := make([]*scripting.Library, 0, len(libs))
	for _, l := range libs {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// stats returns the number of libraries and functions and the size of
// the libraries' code (INFO memory).
func (r *functionRegistry) stats() (libs, funcs int, code int64) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, l := range r.libs {
		code += int64(len(l.Code))
	}
	return len(r.libs), len(r.funcs), code
}

// install makes libs the registry's libraries.
func (r *functionRegistry) install(libs map[string]*scripting.Library) {
	funcs := map[string]*scripting.Function{}
	for _, l := range libs {
		for n, f := range l.Functions {
			funcs[strings.ToLower(n)] = f
		}
	}
	r.mu.Lock()
	r.libs, r.funcs = libs, funcs
	r.mu.Unlock()
}

// collision returns the name of a function of lib that another library of
// libs than lib's name has too, in any case, or "".
func collision(libs map[string]*scripting.Library, lib *scripting.Library) string {
	taken := map[string]bool{}
	for _, other := range libs {
		if other.Name != lib.Name {
			for n := range other.Functions {
				taken[strings.ToLower(n)] = true
			}
		}
	}
	for _, name := range lib.FunctionNames() {
		if taken[strings.ToLower(name)] {
			return name
		}
	}
	return ""
}

// commitLibraries stores next as the libraries in place of cur, in one
// batch, and installs them once committed. The caller holds change.
func (c *Ctx) commitLibraries(cur, next map[string]*scripting.Library) bool {
	b := c.Env.Store.NewBatch(storage.LogData{Cmd: storage.CmdFunction})
	for name := range cur {
		if _, ok := next[name]; !ok {
			b.DeleteLibrary(name)
		}
	}
	for name, l := range next {
		if cur[name] != l {
			b.PutLibrary(name, l.Code)
		}
	}
	if !c.commit(b) {
		return false
	}
	c.Env.functions.install(next)
	return true
}

// LoadFunctions loads the function libraries storage holds into the
// registry, in place of those it had, and returns how many it loaded. A
// library whose code did not change stays as it was (its functions keep
// their Lua state); one that does not load is logged and left out. The
// server calls it at start-up (a replica then follows
// ApplyLibraryChanges).
func (e *Env) LoadFunctions() (int, error) {
	r := &e.functions
	r.change.Lock()
	defer r.change.Unlock()
	cur := r.libraries()
	libs := map[string]*scripting.Library{}
	err := e.Store.Libraries(func(name string, code []byte) {
		if old := cur[name]; old != nil && bytes.Equal(old.Code, code) {
			// Unchanged: its functions keep their Lua state.
			libs[name] = old
			return
		}
		lib, err := scripting.LoadLibrary(code, e.libraryLog)
		if err != nil {
			e.Log.Warn("cannot load a stored function library", "library", name, "error", err)
			return
		}
		if f := collision(libs, lib); f != "" {
			e.Log.Warn("cannot load a stored function library", "library", name, "error", "function "+f+" already exists")
			return
		}
		libs[name] = lib
	})
	if err != nil {
		return 0, fmt.Errorf("commands: load functions: %w", err)
	}
	r.install(libs)
	return len(libs), nil
}

// libraryLog writes a library's load-time redis.log messages to the
// server log.
func (e *Env) libraryLog(level int, msg string) { logScript(e.Log, level, msg) }

// ApplyLibraryChanges brings the registry up to the library changes of a
// batch a replica applied (storage's library observer): it compiles the
// libraries stored and forgets the deleted ones; with all, changes are
// every library of a full sync's data, which replace the registry's. It
// runs in the commit's critical section (the install's), before the
// batch's offset (the new data) shows, so a client that sees them sees
// the libraries; it must not commit or read storage. A library whose
// code did not change stays as it was; one that does not load is logged
// and left out.
func (e *Env) ApplyLibraryChanges(changes []storage.LibraryChange, all bool) {
	r := &e.functions
	cur := r.libraries()
	next := cur
	if all || next == nil {
		next = map[string]*scripting.Library{}
	}
	for _, ch := range changes {
		if ch.Deleted {
			delete(next, ch.Name)
			continue
		}
		if old := cur[ch.Name]; old != nil && bytes.Equal(old.Code, ch.Code) {
			next[ch.Name] = old // unchanged: its functions keep their state
			continue
		}
		lib, err := scripting.LoadLibrary(ch.Code, e.libraryLog)
		if err != nil {
			e.Log.Warn("cannot load a replicated function library", "library", ch.Name, "error", err)
			delete(next, ch.Name)
			continue
		}
		next[ch.Name] = lib
	}
	r.install(next)
	if all {
		e.Log.Info("loaded function libraries after a full sync", "libraries", len(next))
	}
}

// fcall runs FCALL and FCALL_RO: the function runs as a script does (see
// evalScript), with its keys and arguments as its callback's two tables.
func fcall(c *Ctx, readOnly bool) {
	c.Env.feedMonitorsFrom(c.Client, c.Client.Addr, c.Spec, c.Args, c.Now)
	f := c.Env.functions.function(string(c.Args[1]))
	if f == nil {
		c.W.Error("ERR Function not found")
		return
	}
	numKeys, ok := parseInt(c.Args[2])
	switch {
	case !ok:
		c.W.Error("ERR Bad number of keys provided")
		return
	case numKeys > int64(len(c.Args)-3):
		c.W.Error("ERR Number of keys can't be greater than number of args")
		return
	case numKeys < 0:
		c.W.Error("ERR Number of keys can't be negative")
		return
	}
	switch {
	case f.Flags&scripting.FlagNoWrites != 0:
		readOnly = true
	case c.replica():
		// A function that may write is a write, refused on a replica
		// before it runs, as Redis does.
		c.W.Error(errReadOnly)
		return
	case readOnly:
		c.W.Error("ERR Can not execute a script with write flag using *_ro command.")
		return
	}
	keys, argv := c.Args[3:3+numKeys], c.Args[3+numKeys:]
	runProgram(c, scriptProgram{fn: f}, keys, argv, readOnly)
}

// programFlags returns the flags of the program args run, and whether
// it declares them: those of the function FCALL and FCALL_RO call, if it
// exists, or those of the shebang line of the script EVAL and EVALSHA
// (and their _RO forms) run, a cached one's or, for EVAL, its body's.
// Redis derives the command's flags from them when it checks a command:
// a program without no-writes is a write, one without allow-stale is
// refused by a stale replica, before it runs. A script without a shebang
// declares nothing: EVAL's own flags stand.
func (e *Env) programFlags(spec *Spec, args [][]byte) (int, bool) {
	if len(args) < 2 {
		return 0, false
	}
	switch spec.Name {
	case "fcall", "fcall_ro":
		if f := e.functions.function(string(args[1])); f != nil {
			return f.Flags, true
		}
	case "evalsha", "evalsha_ro":
		if s := e.scripts.cache.Get(lower(args[1])); s != nil {
			return s.Flags, s.Shebang
		}
	case "eval", "eval_ro":
		flags, shebang, _, err := scripting.ShebangFlags(args[1])
		return flags, shebang && err == nil
	}
	return 0, false
}

// commandFlags returns the flags of command line args as Redis counts
// them when it checks a command: spec's, but for a program that declares
// its flags (programFlags) those they imply (a write unless no-writes,
// never may-replicate).
func (e *Env) commandFlags(spec *Spec, args [][]byte) Flag {
	pFlags, declared := e.programFlags(spec, args)
	return withProgramFlags(spec.Flags, pFlags, declared)
}

// withProgramFlags returns command flags f as a program's flags pFlags
// (when it declares them) change them: see commandFlags.
func withProgramFlags(f Flag, pFlags int, declared bool) Flag {
	if !declared {
		return f
	}
	f &^= FlagWrite | FlagMayReplicate
	if pFlags&scripting.FlagNoWrites == 0 {
		f |= FlagWrite
	}
	return f
}

func cmdFunctionLoad(c *Ctx) {
	replace := false
	for _, a := range c.Args[2 : len(c.Args)-1] {
		if !strings.EqualFold(string(a), "replace") {
			c.W.Error("ERR Unknown option given: " + string(a))
			return
		}
		replace = true
	}
	code := c.Args[len(c.Args)-1]
	name, err := scripting.LibraryName(code)
	if err != nil {
		c.W.Error("ERR " + err.Error())
		return
	}
	r := &c.Env.functions
	r.change.Lock()
	defer r.change.Unlock()
	cur := r.libraries()
	if _, ok := cur[name]; ok && !replace {
		c.W.Error(fmt.Sprintf("ERR Library '%s' already exists", name))
		return
	}
	lib, err := scripting.LoadLibrary(code, c.Env.libraryLog)
	if err != nil {
		c.W.Error("ERR " + err.Error())
		return
	}
	next := maps.Clone(cur)
	if next == nil {
		next = map[string]*scripting.Library{}
	}
	next[name] = lib
	if f := collision(next, lib); f != "" {
		c.W.Error("ERR Function " + f + " already exists")
		return
	}
	if c.commitLibraries(cur, next) {
		c.W.BulkString(name)
	}
}

func cmdFunctionDelete(c *Ctx) {
	r := &c.Env.functions
	r.change.Lock()
	defer r.change.Unlock()
	cur := r.libraries()
	name := string(c.Args[2])
	if _, ok := cur[name]; !ok {
		c.W.Error("ERR Library not found")
		return
	}
	next := maps.Clone(cur)
	delete(next, name)
	if c.commitLibraries(cur, next) {
		c.W.OK()
	}
}

func cmdFunctionFlush(c *Ctx) {
	switch {
	case len(c.Args) > 3:
		subcommandSyntaxError(c)
		return
	case len(c.Args) == 3 && !strings.EqualFold(string(c.Args[2]), "sync") && !strings.EqualFold(string(c.Args[2]), "async"):
		c.W.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
		return
	}
	r := &c.Env.functions
	r.change.Lock()
	defer r.change.Unlock()
	if c.commitLibraries(r.libraries(), map[string]*scripting.Library{}) {
		c.W.OK()
	}
}

// subcommandSyntaxError replies Redis's error for a subcommand given
// arguments it does not take.
func subcommandSyntaxError(c *Ctx) {
	c.W.Error(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%s'. Try %s HELP.",
		string(c.Args[1]), strings.ToUpper(c.Spec.parentName())))
}

func cmdFunctionDump(c *Ctx) {
	libs := c.Env.functions.sorted()
	codes := make([][]byte, len(libs))
	for i, l := range libs {
		codes[i] = l.Code
	}
	c.W.Bulk(rdb.EncodeFunctions(codes))
}

func cmdFunctionRestore(c *Ctx) {
	if len(c.Args) > 4 {
		subcommandSyntaxError(c)
		return
	}
	policy := "append"
	if len(c.Args) == 4 {
		policy = lower(c.Args[3])
		if policy != "flush" && policy != "append" && policy != "replace" {
			c.W.Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
			return
		}
	}
	codes, err := rdb.DecodeFunctions(c.Args[2], c.Env.Config.Int("proto-max-bulk-len"))
	switch {
	case errors.Is(err, rdb.ErrChecksum):
		c.W.Error("ERR DUMP payload version or checksum are wrong")
		return
	case err != nil:
		c.W.Error("ERR " + err.Error())
		return
	}
	restored := map[string]*scripting.Library{}
	order := make([]*scripting.Library, 0, len(codes))
	for _, code := range codes {
		name, err := scripting.LibraryName(code)
		if err == nil {
			if _, dup := restored[name]; dup {
				err = fmt.Errorf("Library '%s' already exists", name)
			}
		}
		var lib *scripting.Library
		if err == nil {
			lib, err = scripting.LoadLibrary(code, c.Env.libraryLog)
		}
		if err == nil {
			if f := collision(restored, lib); f != "" {
				err = fmt.Errorf("Function %s already exists", f)
			}
		}
		if err != nil {
			c.W.Error("ERR " + err.Error())
			return
		}
		restored[name] = lib
		order = append(order, lib)
	}
	r := &c.Env.functions
	r.change.Lock()
	defer r.change.Unlock()
	cur := r.libraries()
	next := restored
	if policy != "flush" {
		next = maps.Clone(cur)
		if next == nil {
			next = map[string]*scripting.Library{}
		}
		for _, lib := range order {
			if _, ok := next[lib.Name]; ok && policy != "replace" {
				c.W.Error("ERR Library " + lib.Name + " already exists")
				return
			}
			next[lib.Name] = lib
		}
		for _, lib := range order {
			if f := collision(next, lib); f != "" {
				c.W.Error("ERR Function " + f + " already exists")
				return
			}
		}
	}
	if c.commitLibraries(cur, next) {
		c.W.OK()
	}
}

func cmdFunctionList(c *Ctx) {
	withCode, named := false, false
	var pattern []byte
	for i := 2; i < len(c.Args); i++ {
		a := c.Args[i]
		switch {
		case !withCode && strings.EqualFold(string(a), "withcode"):
			withCode = true
		case !named && strings.EqualFold(string(a), "libraryname"):
			if i == len(c.Args)-1 {
				c.W.Error("ERR library name argument was not given")
				return
			}
			i++
			pattern, named = c.Args[i], true
		default:
			c.W.Error("ERR Unknown argument " + string(a))
			return
		}
	}
	var libs []*scripting.Library
	for _, l := range c.Env.functions.sorted() {
		if !named || glob.Match(pattern, []byte(l.Name), true) {
			libs = append(libs, l)
		}
	}
	c.W.Array(len(libs))
	for _, l := range libs {
		if withCode {
			c.W.Map(4)
		} else {
			c.W.Map(3)
		}
		c.W.BulkString("library_name")
		c.W.BulkString(l.Name)
		c.W.BulkString("engine")
		c.W.BulkString("LUA")
		c.W.BulkString("functions")
		names := l.FunctionNames()
		c.W.Array(len(names))
		for _, n := range names {
			f := l.Functions[n]
			c.W.Map(3)
			c.W.BulkString("name")
			c.W.BulkString(f.Name)
			c.W.BulkString("description")
			if f.HasDesc {
				c.W.BulkString(f.Description)
			} else {
				c.W.NullBulk()
			}
			c.W.BulkString("flags")
			var flags []string
			for _, fl := range scripting.FlagNames {
				if f.Flags&fl.Flag != 0 {
					flags = append(flags, fl.Name)
				}
			}
			c.W.Set(len(flags))
			for _, fl := range flags {
				c.W.SimpleString(fl)
			}
		}
		if withCode {
			c.W.BulkString("library_code")
			c.W.Bulk(l.Code)
		}
	}
}

// cmdFunctionStats replies the function running (the one that has run
// the longest, as Cairn may run several) and the engine's counts. While
// a script (EVAL) of another client is busy it replies BUSY, as Redis
// does.
func cmdFunctionStats(c *Ctx) {
	if r := c.Env.busyRun(c.Client); r != nil && r.fn == nil {
		c.W.Error(errBusyScript)
		return
	}
	var running *scriptRun
	s := &c.Env.scripts
	s.mu.Lock()
	for r := range s.running {
		if r.fn != nil && r.cl != c.Client && (running == nil || r.start.Before(running.start)) {
			running = r
		}
	}
	var name string
	var args [][]byte
	var took time.Duration
	if running != nil {
		name, args, took = running.fn.Name, running.args, time.Since(running.start)
	}
	s.mu.Unlock()
	c.W.Map(2)
	c.W.BulkString("running_script")
	if running == nil {
		c.W.NullBulk()
	} else {
		c.W.Map(3)
		c.W.BulkString("name")
		c.W.BulkString(name)
		c.W.BulkString("command")
		c.W.Array(len(args))
		for _, a := range args {
			c.W.Bulk(a)
		}
		c.W.BulkString("duration_ms")
		c.W.Int(took.Milliseconds())
	}
	libs := c.Env.functions.libraries()
	nfuncs := 0
	for _, l := range libs {
		nfuncs += len(l.Functions)
	}
	c.W.BulkString("engines")
	c.W.Map(1)
	c.W.BulkString("LUA")
	c.W.Map(2)
	c.W.BulkString("libraries_count")
	c.W.Int(int64(len(libs)))
	c.W.BulkString("functions_count")
	c.W.Int(int64(nfuncs))
}

// cmdFunctionKill kills the running functions that have not written.
func cmdFunctionKill(c *Ctx) { killRuns(c, true) }

func cmdFunctionHelp(c *Ctx) {
	help(c, "FUNCTION", []string{
		"LOAD [REPLACE] <FUNCTION CODE>",
		"    Create a new library with the given library name and code.",
		"DELETE <LIBRARY NAME>",
		"    Delete the given library.",
		"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
		"    Return general information on all the libraries:",
		"    * Library name",
		"    * The engine used to run the Library",
		"    * Library description",
		"    * Functions list",
		"    * Library code (if WITHCODE is given)",
		"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
		"STATS",
		"    Return information about the current function running:",
		"    * Function name",
		"    * Command used to run the function",
		"    * Duration in MS that the function is running",
		"    If no function is running, return nil",
		"    In addition, returns a list of available engines.",
		"KILL",
		"    Kill the current running function.",
		"FLUSH [ASYNC|SYNC]",
		"    Delete all the libraries.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the libraries.",
		"    * SYNC: Synchronously flush the libraries.",
		"DUMP",
		"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
		"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
		"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
		"    control how to handle existing libraries (default APPEND):",
		"    * FLUSH: delete all existing libraries.",
		"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
		"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
		"      libraries with the new libraries (notice that even on this option there is a chance of failure",
		"      in case of functions name collision with another library).",
	})
}
