package scripting

import (
	"strconv"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// vm is one Lua state with Redis's libraries and redis.* API, reused by
// one run at a time (statePool).
type vm struct {
	L       *lua.LState
	handler *lua.LFunction
	// Set for each run by Execute.
	host    Host
	proto   int    // redis.setresp
	sha     string // the script's SHA1, or the function's name
	chunk   string // the chunk name of the code (chunkName, functionChunk)
	hostErr error  // the first error of host.Call
	// cjsonSettings are the cjson module's, reset for the next script.
	cjsonSettings *cjsonConfig
	// errLine is the line of the Lua code running when the last error
	// arose (errorHandler).
	errLine int
}

// statePool keeps prepared states: building one opens every library.
type statePool struct{ p sync.Pool }

var states statePool

func (p *statePool) get() *vm {
	if v, ok := p.p.Get().(*vm); ok {
		return v
	}
	return newVM()
}

func (p *statePool) put(v *vm) {
	v.host = nil
	*v.cjsonSettings = *newCJSONConfig()
	v.L.G.Global.RawSetString("KEYS", lua.LNil)
	v.L.G.Global.RawSetString("ARGV", lua.LNil)
	p.p.Put(v)
}

// maxRegistry bounds a state's value stack (16 bytes a slot): a script
// that pushes more (unpack of a huge table) gets a Lua error. The stack
// grows in sixteenths of it, as gopher-lua copies it whole to grow.
const maxRegistry = 1 << 18

// maxStringResult bounds the strings string.rep builds, as
// proto-max-bulk-len's default bounds a value: a script cannot make the
// server allocate without limit in one call.
const maxStringResult = 512 << 20

// removedGlobals are the base library's functions Redis's sandbox does
// not offer: they reach the file system, load code from outside, or
// change a function's environment (a way around the read-only globals).
var removedGlobals = []string{"dofile", "loadfile", "print", "module", "require", "setfenv", "getfenv", "newproxy"}

func newVM() *vm {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 1024,
		RegistrySize: 1024 * 20, RegistryMaxSize: maxRegistry, RegistryGrowStep: maxRegistry / 16})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	for _, name := range removedGlobals {
		L.SetGlobal(name, lua.LNil)
	}
	if s, ok := L.GetGlobal("string").(*lua.LTable); ok {
		s.RawSetString("rep", L.NewFunction(stringRep))
	}
	overrideNumberConversions(L)
	cjsonSettings := openCJSON(L)
	openBit(L)
	v := &vm{L: L, cjsonSettings: cjsonSettings}
	L.SetGlobal("redis", v.redisTable())
	v.handler = L.NewFunction(v.errorHandler)
	protectGlobals(L)
	return v
}

// overrideNumberConversions gives tonumber and tostring Lua 5.1's rules,
// which gopher-lua's differ from: tonumber reads what C's strtod reads
// ("1e5", " 0x10 "; gopher-lua refuses exponents without a point), and
// tostring writes numbers with "%.14g" (gopher-lua writes up to 17
// digits). The .. operator still writes gopher-lua's way.
func overrideNumberConversions(L *lua.LState) {
	toNumber := L.GetGlobal("tonumber").(*lua.LFunction)
	L.SetGlobal("tonumber", L.NewFunction(func(L *lua.LState) int {
		if base := L.Get(2); base == lua.LNil || base == lua.LNumber(10) {
			L.CheckAny(1)
			if f, ok := extlibToNumber(L.Get(1)); ok {
				L.Push(lua.LNumber(f))
			} else {
				L.Push(lua.LNil)
			}
			return 1
		}
		return callWith(L, toNumber)
	}))
	toString := L.GetGlobal("tostring").(*lua.LFunction)
	L.SetGlobal("tostring", L.NewFunction(func(L *lua.LState) int {
		if n, ok := L.CheckAny(1).(lua.LNumber); ok {
			L.Push(lua.LString(extlibFormatG(float64(n), 14)))
			return 1
		}
		return callWith(L, toString)
	}))
}

// callWith calls fn with the running Go function's arguments and returns
// its first result: a wrapper's way to defer to gopher-lua's function.
func callWith(L *lua.LState, fn *lua.LFunction) int {
	n := L.GetTop()
	L.Push(fn)
	for i := 1; i <= n; i++ {
		L.Push(L.Get(i))
	}
	L.Call(n, 1)
	return 1
}

// stringRep is string.rep with a bound on the result's size.
func stringRep(L *lua.LState) int {
	s := L.CheckString(1)
	n := L.CheckInt(2)
	if n <= 0 || s == "" {
		L.Push(lua.LString(""))
		return 1
	}
	if len(s) > maxStringResult/n {
		L.RaiseError("resulting string too large")
	}
	L.Push(lua.LString(strings.Repeat(s, n)))
	return 1
}

// libraries are the global tables protectGlobals makes read-only.
var libraries = []string{"string", "table", "math", "coroutine", "redis", "cjson", "bit"}

// protectGlobals makes the global table and the libraries read-only, as
// Redis 7 does: a script can neither create a global nor read one that
// does not exist, nor change a library, and so cannot change what the
// next script sees. Each library becomes an empty proxy that reads
// through to it; rawset and setmetatable refuse the protected tables, and
// their metatables are hidden behind a read-only one. Execute sets KEYS
// and ARGV with raw sets.
func protectGlobals(L *lua.LState) {
	readOnly := L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Attempt to modify a readonly table")
		return 0
	})
	hidden := L.NewTable()
	hiddenMT := L.NewTable()
	hiddenMT.RawSetString("__newindex", readOnly)
	hiddenMT.RawSetString("__metatable", hidden)
	L.SetMetatable(hidden, hiddenMT)
	protected := map[*lua.LTable]bool{L.G.Global: true, hidden: true}
	for _, name := range libraries {
		lib, ok := L.GetGlobal(name).(*lua.LTable)
		if !ok {
			continue
		}
		proxy := L.NewTable()
		mt := L.NewTable()
		mt.RawSetString("__index", lib)
		mt.RawSetString("__newindex", readOnly)
		mt.RawSetString("__metatable", hidden)
		L.SetMetatable(proxy, mt)
		L.SetGlobal(name, proxy)
		protected[proxy] = true
	}
	for _, name := range []string{"rawset", "setmetatable"} {
		orig := L.GetGlobal(name).(*lua.LFunction)
		L.SetGlobal(name, L.NewFunction(func(L *lua.LState) int {
			if t, ok := L.Get(1).(*lua.LTable); ok && protected[t] {
				raise(L, "Attempt to modify a readonly table")
			}
			return callWith(L, orig)
		}))
	}
	mt := L.NewTable()
	mt.RawSetString("__newindex", readOnly)
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", L.ToString(2))
		return 0
	}))
	mt.RawSetString("__metatable", hidden)
	L.SetMetatable(L.G.Global, mt)
}

// errorHandler runs where an error arose, before the stack unwinds: it
// records the source line of the innermost Lua function running, the
// place Redis names in the error reply.
func (v *vm) errorHandler(L *lua.LState) int {
	v.errLine = 0
	for level := 0; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil || dbg.What == "G" || dbg.CurrentLine <= 0 {
			continue
		}
		v.errLine = dbg.CurrentLine
		break
	}
	L.Push(L.Get(1))
	return 1
}

// redisTable builds the redis global: call and pcall, the reply helpers,
// logging and the constants scripts read.
func (v *vm) redisTable() *lua.LTable {
	L := v.L
	t := L.NewTable()
	fns := map[string]lua.LGFunction{
		"call":  func(L *lua.LState) int { return v.call(L, true) },
		"pcall": func(L *lua.LState) int { return v.call(L, false) },
		"error_reply": func(L *lua.LState) int {
			s, ok := L.Get(1).(lua.LString)
			if L.GetTop() != 1 || !ok {
				L.Push(errorTable(L, "wrong number or type of arguments"))
				return 1
			}
			L.Push(errorTable(L, "-"+string(s)))
			return 1
		},
		"status_reply": func(L *lua.LState) int {
			s, ok := L.Get(1).(lua.LString)
			if L.GetTop() != 1 || !ok {
				L.Push(errorTable(L, "wrong number or type of arguments"))
				return 1
			}
			r := L.CreateTable(0, 1)
			r.RawSetString("ok", s)
			L.Push(r)
			return 1
		},
		"sha1hex": func(L *lua.LState) int {
			if L.GetTop() != 1 {
				raise(L, "wrong number of arguments")
			}
			L.Push(lua.LString(SHA1Hex([]byte(L.ToString(1)))))
			return 1
		},
		"log": func(L *lua.LState) int {
			if L.GetTop() < 2 {
				raise(L, "redis.log() requires two arguments or more.")
			}
			level, ok := L.Get(1).(lua.LNumber)
			if !ok {
				raise(L, "First argument must be a number (log level).")
			}
			if level < LogDebug || level > LogWarning {
				raise(L, "Invalid debug level.")
			}
			parts := make([]string, 0, L.GetTop()-1)
			for i := 2; i <= L.GetTop(); i++ {
				parts = append(parts, L.ToString(i))
			}
			if v.host != nil {
				v.host.Log(int(level), strings.Join(parts, " "))
			}
			return 0
		},
		"setresp": func(L *lua.LState) int {
			if L.GetTop() != 1 {
				raise(L, "redis.setresp() requires one argument.")
			}
			n := L.CheckInt(1)
			if n != 2 && n != 3 {
				raise(L, "RESP version must be 2 or 3.")
			}
			v.proto = n
			return 0
		},
		"set_repl": func(L *lua.LState) int {
			if L.GetTop() != 1 {
				raise(L, "redis.set_repl() requires one argument.")
			}
			if n := L.CheckInt(1); n != replAll {
				// Cairn replicates the script's writes as one batch, all
				// of them: it cannot leave some out.
				raise(L, "Cairn replicates every write of a script: only redis.REPL_ALL is supported.")
			}
			return 0
		},
		"replicate_commands": func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
		"breakpoint":         func(L *lua.LState) int { L.Push(lua.LFalse); return 1 },
		"debug":              func(L *lua.LState) int { return 0 },
	}
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	for name, n := range map[string]int{"LOG_DEBUG": LogDebug, "LOG_VERBOSE": LogVerbose, "LOG_NOTICE": LogNotice,
		"LOG_WARNING": LogWarning, "REPL_NONE": 0, "REPL_AOF": 1, "REPL_SLAVE": 2, "REPL_REPLICA": 2, "REPL_ALL": replAll} {
		t.RawSetString(name, lua.LNumber(n))
	}
	t.RawSetString("REDIS_VERSION", lua.LString(RedisVersion))
	t.RawSetString("REDIS_VERSION_NUM", lua.LNumber(redisVersionNum()))
	return t
}

// replAll is redis.REPL_ALL: propagate to the AOF and the replicas.
const replAll = 3

// RedisVersion is the Redis version redis.REDIS_VERSION reports; the
// commands package sets it to the level INFO's redis_version reports.
var RedisVersion = "7.0.15"

// redisVersionNum encodes RedisVersion as Redis does: 0x00MMmmpp.
func redisVersionNum() int {
	n := 0
	for _, p := range strings.SplitN(RedisVersion, ".", 3) {
		d, _ := strconv.Atoi(p)
		n = n<<8 | d
	}
	return n
}

// call is redis.call (raise) and redis.pcall (return the error table).
func (v *vm) call(L *lua.LState, raise bool) int {
	n := L.GetTop()
	if n == 0 {
		return v.fail(L, raise, "ERR Please specify at least one argument for this redis lib call")
	}
	args := make([][]byte, n)
	for i := 1; i <= n; i++ {
		switch a := L.Get(i).(type) {
		case lua.LString:
			args[i-1] = []byte(a)
		case lua.LNumber:
			args[i-1] = strconv.AppendFloat(nil, float64(a), 'g', 17, 64)
		default:
			return v.fail(L, raise, "ERR Lua redis lib command arguments must be strings or integers")
		}
	}
	reply, err := v.host.Call(args, v.proto)
	if err != nil {
		if v.hostErr == nil {
			v.hostErr = err
		}
		L.RaiseError("%s", err.Error())
	}
	val, _, err := parseReply(L, reply)
	if err != nil {
		return v.fail(L, raise, "ERR "+err.Error())
	}
	if t, ok := val.(*lua.LTable); ok && t.RawGetString("err") != lua.LNil {
		t.RawSetString(countedField, lua.LTrue)
	}
	if t, ok := val.(*lua.LTable); ok && raise {
		if _, isErr := t.RawGetString("err").(lua.LString); isErr {
			L.Error(t, 0)
		}
	}
	L.Push(val)
	return 1
}

// fail raises (redis.call) or returns (redis.pcall) an error table with
// msg, which has its code.
func (v *vm) fail(L *lua.LState, raise bool, msg string) int {
	t := errorTable(L, "-"+msg)
	if raise {
		L.Error(t, 0)
	}
	L.Push(t)
	return 1
}

// countedField marks an error table made from a command's error reply,
// which the Host counted in the error statistics already: passed on as
// the script's reply, it is not counted again. Redis names the field so.
const countedField = "ignore_error_stats_update"

// counted reports whether t is marked with countedField.
func counted(t *lua.LTable) bool { return t.RawGetString(countedField) == lua.LTrue }

// raise raises Redis's error table for msg (an error of the redis.*
// API), which EVAL replies with ERR and where the script was.
func raise(L *lua.LState, msg string) {
	L.Error(errorTable(L, msg), 0)
}

// errorTable is the Lua form of an error reply: {err = "CODE message"}.
// A message without a leading '-' or without a code gets ERR, as Redis's
// does.
func errorTable(L *lua.LState, s string) *lua.LTable {
	s = strings.TrimRight(s, "\r\n")
	code, msg := "ERR", s
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		if c, m, found := strings.Cut(rest, " "); found {
			code, msg = c, m
		} else {
			msg = rest
		}
	}
	t := L.CreateTable(0, 2)
	t.RawSetString("err", lua.LString(code+" "+msg))
	return t
}
