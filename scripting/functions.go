package scripting

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cairnkv/cairn/config"
	"github.com/cairnkv/cairn/server/resp"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// functionChunk is the name error messages give a library's code, as
// Redis's.
const functionChunk = "user_function"

// LoadTimeout bounds how long a library's load-time code may run, as
// Redis bounds FUNCTION LOAD.
const LoadTimeout = 500 * time.Millisecond

// Function flags, as redis.register_function takes them and FUNCTION LIST
// reports them.
const (
	FlagNoWrites = 1 << iota
	FlagAllowOOM
	FlagAllowStale
	FlagNoCluster
	FlagAllowCrossSlot
)

// FlagNames are the function flags' names, in the order FUNCTION LIST
// reports them.
var FlagNames = []struct {
	Flag int
	Name string
}{
	{FlagNoWrites, "no-writes"}, {FlagAllowOOM, "allow-oom"}, {FlagAllowStale, "allow-stale"},
	{FlagNoCluster, "no-cluster"}, {FlagAllowCrossSlot, "allow-cross-slot-keys"},
}

// Library is a library of Redis functions (FUNCTION LOAD): its code, run
// once when it is loaded to register its functions, and the Lua state
// that code ran in, where its functions run and keep their upvalues from
// one call to the next, as in Redis. A library is immutable once loaded
// but for its Lua state, which runs one call at a time: the caller of
// Function.Execute holds the library with TryLock.
type Library struct {
	// Name is the name the shebang gives; Code the whole library, as
	// FUNCTION LOAD got it.
	Name string
	Code []byte
	// Functions are the library's functions by name.
	Functions map[string]*Function
	sem       chan struct{} // holds a token while a call runs in v (TryLock)
	v         *vm
	loading   bool // the load-time code runs: redis.register_function works
}

// Function is one function a library registered.
type Function struct {
	Name string
	// Description is the description given to redis.register_function,
	// HasDesc whether one was (FUNCTION LIST replies nil otherwise).
	Description string
	HasDesc     bool
	// Flags are the function's flags (FlagNoWrites...).
	Flags int
	// Lib is the library that registered the function.
	Lib *Library
	fn  *lua.LFunction // the callback
	// allLocks is set once a call of a function that is not stateless
	// was abandoned (SetNeedsAllLocks).
	allLocks atomic.Bool
}

// NeedsAllLocks reports whether SetNeedsAllLocks was called.
func (f *Function) NeedsAllLocks() bool { return f.allLocks.Load() }

// SetNeedsAllLocks records that the function's calls must run under
// every key lock from the start: one was abandoned half-way, and running
// it again would change its library's state twice.
func (f *Function) SetNeedsAllLocks() { f.allLocks.Store(true) }

// FunctionNames returns the library's function names, sorted.
func (l *Library) FunctionNames() []string {
	names := make([]string, 0, len(l.Functions))
	for n := range l.Functions {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// TryLock takes the library's Lua state for one call, waiting at most
// wait for the call that has it, and reports whether it did. Unlock gives
// it back.
func (l *Library) TryLock(wait time.Duration) bool {
	select {
	case l.sem <- struct{}{}:
		return true
	default:
	}
	if wait <= 0 {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case l.sem <- struct{}{}:
		return true
	case <-t.C:
		return false
	}
}

// Unlock gives back the library's Lua state taken with TryLock.
func (l *Library) Unlock() { <-l.sem }

// ValidName reports whether s is a valid library or function name:
// letters, digits and underscores, at least one.
func ValidName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

const errBadName = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

// LibraryName reads the name a library's shebang line gives it, checking
// the line as FUNCTION LOAD does; the error matches ErrInvalid and its
// text is Redis's reply without its ERR code.
func LibraryName(code []byte) (string, error) {
	name, _, err := parseLibraryShebang(code)
	return name, err
}

// parseLibraryShebang reads "#!lua name=<name>" and returns the name and
// the code after the shebang line (starting with its line break, so that
// line numbers stay the code's).
func parseLibraryShebang(code []byte) (string, []byte, error) {
	if !bytes.HasPrefix(code, []byte("#!")) {
		return "", nil, invalidError("Missing library metadata")
	}
	end := bytes.IndexByte(code, '\n')
	if end < 0 {
		return "", nil, invalidError("Invalid library metadata")
	}
	parts, err := config.Tokenize(string(code[:end]))
	if err != nil || len(parts) == 0 || len(parts[0]) < 2 {
		return "", nil, invalidError("Invalid library metadata")
	}
	engine := parts[0][2:]
	name, named := "", false
	for _, p := range parts[1:] {
		if len(p) >= 5 && strings.EqualFold(p[:5], "name=") {
			if named {
				return "", nil, invalidError("Invalid metadata value, name argument was given multiple times")
			}
			name, named = p[5:], true
			continue
		}
		return "", nil, invalidError("Invalid metadata value given: " + p)
	}
	if !named {
		return "", nil, invalidError("Library name was not given")
	}
	if !ValidName(name) {
		return "", nil, invalidError(errBadName)
	}
	if !strings.EqualFold(engine, "lua") {
		return "", nil, invalidError(fmt.Sprintf("Engine '%s' not found", engine))
	}
	return name, code[end:], nil
}

// LoadLibrary compiles a library and runs its load-time code, which
// registers its functions with redis.register_function. That code sees
// only redis.register_function, redis.log and the redis.LOG_* and
// version constants, as in Redis, and runs for at most LoadTimeout. The
// error for code Cairn cannot load matches ErrInvalid and its text is
// Redis's reply without its ERR code. Collisions with other libraries
// are the caller's to check.
//
// logf, if not nil, gets the load-time code's redis.log messages.
func LoadLibrary(code []byte, logf func(level int, msg string)) (*Library, error) {
	name, body, err := parseLibraryShebang(code)
	if err != nil {
		return nil, err
	}
	chunk, err := parse.Parse(bytes.NewReader(body), functionChunk)
	var proto *lua.FunctionProto
	if err == nil {
		proto, err = lua.Compile(chunk, functionChunk)
	}
	if err != nil {
		return nil, invalidError("Error compiling function: " + compileMessage(err))
	}
	proto.IsVarArg &^= lua.VarArgNeedsArg
	lib := &Library{Name: name, Code: bytes.Clone(code), Functions: map[string]*Function{}, sem: make(chan struct{}, 1)}
	v := newVM()
	v.chunk = functionChunk
	lib.v = v
	env, envMT := v.libraryEnv(lib)
	v.host = loadHost(logf)
	err = lib.runLoad(proto, env)
	v.host = nil
	if err != nil {
		return nil, err
	}
	// From now on the functions see every global a script sees.
	envMT.RawSetString("__index", v.L.G.Global)
	if len(lib.Functions) == 0 {
		return nil, invalidError("No functions registered")
	}
	return lib, nil
}

// loadHost is the Host of a library's load-time code, which can log but
// has no redis.call.
type loadHost func(level int, msg string)

func (h loadHost) Call([][]byte, int) ([]byte, error) {
	return nil, errors.New("scripting: no command runs while a library loads")
}

func (h loadHost) Log(level int, msg string) {
	if h != nil {
		h(level, msg)
	}
}

// runLoad runs a library's code in env, under LoadTimeout.
func (lib *Library) runLoad(proto *lua.FunctionProto, env *lua.LTable) (retErr error) {
	v := lib.v
	L := v.L
	ctx, cancel := context.WithTimeout(context.Background(), LoadTimeout)
	defer cancel()
	L.SetContext(ctx)
	defer L.RemoveContext()
	lib.loading = true
	defer func() { lib.loading = false }()
	defer func() {
		if p := recover(); p != nil {
			retErr = invalidError(fmt.Sprintf("Error registering functions: ERR %v", p))
		}
	}()
	fn := L.NewFunctionFromProto(proto)
	fn.Env = env
	L.Push(fn)
	err := L.PCall(0, 0, v.handler)
	defer L.SetTop(0)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return invalidError("Error registering functions: ERR FUNCTION LOAD timeout")
	}
	var obj lua.LValue = lua.LString(err.Error())
	if ae, ok := err.(*lua.ApiError); ok {
		obj = ae.Object
	}
	return invalidError("Error registering functions: " + oneLine(errorText(obj)))
}

// libraryEnv builds the environment of a library's code: an empty,
// read-only table whose metatable's __index is, while the code loads, the
// load-time API (a redis table with register_function, log and the
// constants), and afterwards the globals every script sees (the caller
// switches it).
func (v *vm) libraryEnv(lib *Library) (env, envMT *lua.LTable) {
	L := v.L
	readOnly := L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Attempt to modify a readonly table")
		return 0
	})
	missing := L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", L.ToString(2))
		return 0
	})
	hidden := L.NewTable()
	guard := func(t, index *lua.LTable) {
		mt := L.NewTable()
		mt.RawSetString("__newindex", readOnly)
		if index != nil {
			mt.RawSetString("__index", index)
		} else {
			mt.RawSetString("__index", missing)
		}
		mt.RawSetString("__metatable", hidden)
		L.SetMetatable(t, mt)
	}
	api := L.NewTable()
	api.RawSetString("register_function", L.NewFunction(func(L *lua.LState) int { return lib.register(L) }))
	if full, ok := v.realRedis().(*lua.LTable); ok {
		for _, name := range []string{"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING", "REDIS_VERSION", "REDIS_VERSION_NUM"} {
			api.RawSetString(name, full.RawGetString(name))
		}
	}
	guard(api, nil)
	redisProxy := L.NewTable()
	guard(redisProxy, api)
	globals := L.NewTable()
	globals.RawSetString("redis", redisProxy)
	guard(globals, nil)
	env = L.NewTable()
	envMT = L.NewTable()
	envMT.RawSetString("__newindex", readOnly)
	envMT.RawSetString("__index", globals)
	envMT.RawSetString("__metatable", hidden)
	L.SetMetatable(env, envMT)
	return env, envMT
}

// realRedis returns the table behind the read-only redis global.
func (v *vm) realRedis() lua.LValue {
	proxy, ok := v.L.G.Global.RawGetString("redis").(*lua.LTable)
	if !ok {
		return lua.LNil
	}
	if mt, ok := proxy.Metatable.(*lua.LTable); ok {
		return mt.RawGetString("__index")
	}
	return proxy
}

// register is redis.register_function, in its positional form (name,
// callback) and its table form (function_name, callback, flags,
// description).
func (lib *Library) register(L *lua.LState) int {
	if !lib.loading {
		raise(L, "redis.register_function can only be called on FUNCTION LOAD command")
	}
	f := &Function{Lib: lib}
	switch n := L.GetTop(); {
	case n == 1:
		t, ok := L.Get(1).(*lua.LTable)
		if !ok {
			raise(L, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).")
		}
		var failure string
		var named bool
		t.ForEach(func(k, val lua.LValue) {
			if failure != "" {
				return
			}
			key, ok := k.(lua.LString)
			if !ok {
				failure = "named argument key given to redis.register_function is not a string"
				return
			}
			switch string(key) {
			case "function_name":
				s, ok := luaString(val)
				if !ok {
					failure = "function_name argument given to redis.register_function must be a string"
					return
				}
				f.Name, named = s, true
			case "description":
				s, ok := luaString(val)
				if !ok {
					failure = "description argument given to redis.register_function must be a string"
					return
				}
				f.Description, f.HasDesc = s, true
			case "callback":
				fn, ok := val.(*lua.LFunction)
				if !ok {
					failure = "callback argument given to redis.register_function must be a function"
					return
				}
				f.fn = fn
			case "flags":
				ft, ok := val.(*lua.LTable)
				if !ok {
					failure = "flags argument to redis.register_function must be a table representing function flags"
					return
				}
				flags, ok := parseFlags(ft)
				if !ok {
					failure = "unknown flag given"
					return
				}
				f.Flags = flags
			default:
				failure = "unknown argument given to redis.register_function"
			}
		})
		switch {
		case failure != "":
			raise(L, failure)
		case !named:
			raise(L, "redis.register_function must get a function name argument")
		case f.fn == nil:
			raise(L, "redis.register_function must get a callback argument")
		}
	case n == 2:
		name, ok := luaString(L.Get(1))
		if !ok {
			raise(L, "first argument to redis.register_function must be a string")
		}
		fn, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			raise(L, "second argument to redis.register_function must be a function")
		}
		f.Name, f.fn = name, fn
	default:
		raise(L, "wrong number of arguments to redis.register_function")
	}
	if !ValidName(f.Name) {
		raise(L, errBadName)
	}
	if _, dup := lib.Functions[f.Name]; dup {
		raise(L, "Function already exists in the library")
	}
	lib.Functions[f.Name] = f
	return 0
}

// luaString returns v as a string if Lua takes it for one (a string or a
// number).
func luaString(v lua.LValue) (string, bool) {
	switch s := v.(type) {
	case lua.LString:
		return string(s), true
	case lua.LNumber:
		return extlibFormatG(float64(s), 14), true
	}
	return "", false
}

// parseFlags reads a table of flag names.
func parseFlags(t *lua.LTable) (int, bool) {
	flags, ok := 0, true
	t.ForEach(func(_, val lua.LValue) {
		s, isStr := val.(lua.LString)
		if !isStr {
			ok = false
			return
		}
		found := false
		for _, fl := range FlagNames {
			if fl.Name == string(s) {
				flags |= fl.Flag
				found = true
			}
		}
		if !found {
			ok = false
		}
	})
	return flags, ok
}

// Stateless reports whether the function's callback has no upvalues: it
// then keeps no state between calls (globals are read-only), and a call
// abandoned half-way and run again changes nothing twice.
func (f *Function) Stateless() bool { return len(f.fn.Upvalues) == 0 }

// errNoState is returned by Execute for a function of a library that
// was never loaded.
var errNoState = errors.New("scripting: the library has no Lua state")

// Execute runs the function with its keys and arguments, the two tables
// its callback gets, and writes its reply, or its error, to w, as
// Execute does for a script. The caller holds the library (TryLock).
func (f *Function) Execute(run *Run, keys, argv [][]byte, h Host, w *resp.Writer) error {
	v := f.Lib.v
	if v == nil {
		return errNoState
	}
	return execute(run, v, f.fn, f.Name, h, w, func(L *lua.LState) int {
		L.Push(stringsTable(L, keys))
		L.Push(stringsTable(L, argv))
		return 2
	}, func() { v.host = nil })
}
