// Package scripting runs Redis Lua scripts (EVAL) on gopher-lua: it
// compiles and caches script bodies by SHA1, gives scripts Redis's
// sandbox and its redis.* API, and converts between Lua values and RESP
// replies as Redis does. It knows nothing of commands or storage: the
// commands package runs each redis.call through a Host, under the locks
// and in the batch that make the script atomic.
package scripting

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/cairnkv/cairn/server/resp"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// ErrInvalid is matched (errors.Is) by every error Compile returns: the
// body is not a script Cairn can run. The error's text is Redis's reply
// without its ERR code.
var ErrInvalid = errors.New("scripting: invalid script")

type invalidError string

func (e invalidError) Error() string        { return string(e) }
func (e invalidError) Is(target error) bool { return target == ErrInvalid }

// ErrKilled is returned by Run when SCRIPT KILL (Kill) stopped the
// script.
var ErrKilled = errors.New("scripting: script killed")

// chunkName is the name error messages give a script's code, as Redis's.
const chunkName = "user_script"

// Script is one compiled script body. It is immutable and shared by
// every run.
type Script struct {
	// SHA is the body's SHA1 in lowercase hex, the name EVALSHA uses.
	SHA  string
	Body []byte
	// Shebang is set when the body starts with a "#!lua" line, which
	// declares the script's Flags (FlagNoWrites...; with no-writes the
	// script runs as with EVAL_RO).
	Shebang bool
	Flags   int
	proto   *lua.FunctionProto
}

// SHA1Hex returns the lowercase hex SHA1 of b, as redis.sha1hex and
// SCRIPT LOAD give it.
func SHA1Hex(b []byte) string {
	sum := sha1.Sum(b)
	return hex.EncodeToString(sum[:])
}

// Compile compiles a script body, after its shebang line if it has one.
// The error for a body Cairn cannot run matches ErrInvalid.
func Compile(body []byte) (*Script, error) {
	s := &Script{SHA: SHA1Hex(body), Body: body}
	var skip int
	var err error
	if s.Flags, s.Shebang, skip, err = ShebangFlags(body); err != nil {
		return nil, err
	}
	// The shebang line is left out but its line break kept, so that
	// error messages keep the script's line numbers.
	code := body[skip:]
	chunk, err := parse.Parse(bytes.NewReader(code), chunkName)
	if err == nil {
		s.proto, err = lua.Compile(chunk, chunkName)
	}
	if err != nil {
		return nil, invalidError("Error compiling script (new function): " + compileMessage(err))
	}
	// A chunk is a vararg function, for which gopher-lua builds Lua
	// 5.0's "arg" table on every call. Redis runs the body as a function
	// without parameters: no script reads arg.
	s.proto.IsVarArg &^= lua.VarArgNeedsArg
	return s, nil
}

// parserError matches gopher-lua's syntax errors: "name line:3(column:8)
// near 'x':   syntax error", or "name at EOF:   syntax error".
var parserError = regexp.MustCompile(`^(\S+) (?:line:(\d+)\(column:\d+\) near '(.*)'|at EOF):\s+(.*)$`)

// compileMessage renders a compile error as Lua does, "user_script:3:
// syntax error near 'x'", where gopher-lua's wording allows.
func compileMessage(err error) string {
	msg := oneLine(strings.TrimSpace(err.Error()))
	m := parserError.FindStringSubmatch(msg)
	switch {
	case m == nil:
		return msg
	case m[2] == "":
		return fmt.Sprintf("%s: %s near '<eof>'", m[1], m[4])
	}
	return fmt.Sprintf("%s:%s: %s near '%s'", m[1], m[2], m[4], m[3])
}

// ShebangFlags reads the flags a script body's "#!lua [flags=f1,f2]"
// first line declares, if it has one (shebang), as Redis reads them both
// to run the script and to judge an EVAL before it runs; skip is the
// length of that line. A body without one has no flags.
func ShebangFlags(body []byte) (flags int, shebang bool, skip int, err error) {
	if !bytes.HasPrefix(body, []byte("#!")) {
		return 0, false, 0, nil
	}
	line, _, _ := strings.Cut(string(body), "\n")
	fields := strings.Fields(line)
	if fields[0] != "#!lua" {
		return 0, true, 0, invalidError("Unexpected engine in script shebang: " + fields[0])
	}
	for _, f := range fields[1:] {
		list, ok := strings.CutPrefix(f, "flags=")
		if !ok {
			return 0, true, 0, invalidError("Unknown lua shebang option: " + f)
		}
	flags:
		for _, name := range strings.Split(list, ",") {
			if name == "" {
				continue
			}
			for _, fl := range FlagNames {
				if fl.Name == name {
					flags |= fl.Flag
					continue flags
				}
			}
			return 0, true, 0, invalidError("Unexpected flag in script shebang: " + name)
		}
	}
	return flags, true, len(line), nil
}

// Cache holds the compiled scripts EVAL and SCRIPT LOAD saw, by SHA1, as
// Redis's script cache does (in memory, until SCRIPT FLUSH or a
// restart). It is safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	scripts map[string]*Script
	bytes   int64
}

// Load compiles body unless the cache already has it, and returns the
// cached script. An invalid body (ErrInvalid) caches nothing.
func (c *Cache) Load(body []byte) (*Script, error) {
	sha := SHA1Hex(body)
	if s := c.Get(sha); s != nil {
		return s, nil
	}
	s, err := Compile(bytes.Clone(body))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.scripts[sha]; old != nil {
		return old, nil
	}
	if c.scripts == nil {
		c.scripts = map[string]*Script{}
	}
	c.scripts[sha] = s
	c.bytes += int64(len(body))
	return s, nil
}

// Get returns the script with the given SHA1 (hex, either case), or nil.
func (c *Cache) Get(sha string) *Script {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.scripts[strings.ToLower(sha)]
}

// Flush empties the cache.
func (c *Cache) Flush() {
	c.mu.Lock()
	c.scripts, c.bytes = nil, 0
	c.mu.Unlock()
}

// Stats returns the number of cached scripts and the size of their
// bodies.
func (c *Cache) Stats() (n int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.scripts), c.bytes
}

// Host runs the Redis commands a script calls. The commands package
// implements it for one EVAL.
type Host interface {
	// Call runs one command line and returns its reply, encoded in RESP
	// version proto (2, or 3 after redis.setresp(3)). Refusals (unknown
	// command, arity, a write in a read-only script) are error replies.
	// The Host counts error replies in the error statistics: when the
	// script passes one on, Execute does not count it again.
	//
	// An error abandons the run: the script gets a Lua error, every
	// later Call should return an error too, and Execute returns the
	// first one without a reply, for the caller to run the script again
	// (after undoing its writes).
	Call(args [][]byte, proto int) ([]byte, error)
	// Log writes a redis.log message at a Redis log level (LogDebug...).
	Log(level int, msg string)
}

// Redis's log levels, as redis.LOG_DEBUG ... redis.LOG_WARNING give them.
const (
	LogDebug = iota
	LogVerbose
	LogNotice
	LogWarning
)

// Run is one script run in progress. Kill may be called from another
// goroutine while it runs.
type Run struct {
	cancel context.CancelFunc
	mu     sync.Mutex
	killed bool
}

// Kill stops the run at its next Lua instruction: Execute then replies
// Redis's "Script killed" error and returns ErrKilled. The caller
// decides whether the script may be killed (SCRIPT KILL refuses once it
// wrote).
func (r *Run) Kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.killed = true
	if r.cancel != nil { // else Execute sees killed when it starts
		r.cancel()
	}
}

// Killed reports whether Kill was called.
func (r *Run) Killed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.killed
}

// NewRun returns a run to pass to Execute.
func NewRun() *Run { return &Run{} }

// Execute runs s with KEYS and ARGV and writes its reply, or its error,
// to w in w's protocol. It returns ErrKilled when Kill stopped it, the
// first error of Host.Call (and no reply) when one failed, nil otherwise
// (a script's error is a reply, not an error).
func Execute(run *Run, s *Script, keys, argv [][]byte, h Host, w *resp.Writer) error {
	v := states.get()
	v.chunk = chunkName
	v.L.G.Global.RawSetString("KEYS", stringsTable(v.L, keys))
	v.L.G.Global.RawSetString("ARGV", stringsTable(v.L, argv))
	return execute(run, v, v.L.NewFunctionFromProto(s.proto), s.SHA, h, w, nil, func() { states.put(v) })
}

// execute calls fn in v, with the arguments push pushes (it returns
// their number), as the script or function name; done runs after a run
// that leaves v fit for another (a panic leaves it to the garbage
// collector).
func execute(run *Run, v *vm, fn *lua.LFunction, name string, h Host, w *resp.Writer,
	push func(L *lua.LState) int, done func()) (retErr error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run.mu.Lock()
	run.cancel = cancel
	killed := run.killed
	run.mu.Unlock()
	if killed {
		cancel()
	}
	defer func() {
		// gopher-lua panics past PCall on some failures of its own
		// (an error while handling an error): the run fails with an
		// error reply and its state, maybe inconsistent, is dropped.
		if p := recover(); p != nil {
			w.Error(v.withOrigin(fmt.Sprintf("ERR %v", p)))
			retErr = nil
			return
		}
		done()
	}()
	v.host, v.proto, v.sha, v.hostErr = h, 2, name, nil
	v.errLine = 0
	v.L.SetContext(ctx)
	defer v.L.RemoveContext()
	v.L.Push(fn)
	nargs := 0
	if push != nil {
		nargs = push(v.L)
	}
	err := v.L.PCall(nargs, 1, v.handler)
	defer v.L.SetTop(0)
	if v.hostErr != nil {
		return v.hostErr
	}
	if err != nil {
		if run.Killed() {
			w.Error(v.withOrigin("ERR Script killed by user with SCRIPT KILL..."))
			return ErrKilled
		}
		var obj lua.LValue = lua.LString(err.Error())
		if ae, ok := err.(*lua.ApiError); ok {
			obj = ae.Object
		}
		if t, ok := obj.(*lua.LTable); ok && counted(t) {
			w.RepeatError(v.withOrigin(errorText(obj)))
		} else {
			w.Error(v.withOrigin(errorText(obj)))
		}
		return nil
	}
	writeReply(w, v.L.Get(-1), v.proto)
	return nil
}

// errorText is the message of a script's runtime error: the err field of
// an error table (as redis.call raises), else ERR and the value.
func errorText(obj lua.LValue) string {
	if t, ok := obj.(*lua.LTable); ok {
		if e, ok := t.RawGetString("err").(lua.LString); ok {
			return string(e)
		}
		return "ERR unknown error"
	}
	if str, ok := obj.(lua.LString); ok {
		// gopher-lua appends a traceback to some of its own errors.
		msg, _, _ := strings.Cut(string(str), "\nstack traceback:")
		return "ERR " + msg
	}
	return "ERR " + obj.String()
}

// withOrigin appends where the error arose, as Redis does: the script's
// SHA1 and the source and line of the Lua code running.
func (v *vm) withOrigin(msg string) string {
	line := v.errLine
	if line <= 0 {
		line = 1
	}
	return fmt.Sprintf("%s script: %s, on @%s:%d.", oneLine(msg), v.sha, v.chunk, line)
}

// oneLine replaces the line breaks an error reply cannot carry with
// spaces, as Redis does.
func oneLine(s string) string {
	// Byte by byte: strings.Map would turn bytes that are not UTF-8 (a
	// key's, in a NOGROUP error) into U+FFFD.
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

func stringsTable(L *lua.LState, items [][]byte) *lua.LTable {
	t := L.CreateTable(len(items), 0)
	for _, it := range items {
		t.Append(lua.LString(it))
	}
	return t
}
