package scripting

import (
	"bytes"
	"errors"
	"math"
	"strconv"

	"github.com/cairnkv/cairn/server/resp"
	lua "github.com/yuin/gopher-lua"
)

// errBadReply is returned by parseReply for bytes that are not one whole
// RESP reply. Host.Call always returns one; the check guards the parser.
var errBadReply = errors.New("malformed reply")

// maxReplyDepth bounds the nesting parseReply follows.
const maxReplyDepth = 512

// parseReply converts one RESP2 or RESP3 reply at the start of b to the
// Lua value Redis gives a script, and returns the bytes after it:
//
//	integer -> number            bulk string -> string
//	null bulk or array -> false  (RESP3 null -> nil)
//	array -> table (1..n)        status -> {ok = s}
//	error -> {err = s}           RESP3 boolean -> boolean
//	RESP3 map -> {map = {k = v}} RESP3 set -> {set = {m = true}}
//	RESP3 double -> {double = n} RESP3 big number -> {big_number = s}
//	RESP3 verbatim -> {verbatim_string = {format = f, string = s}}
func parseReply(L *lua.LState, b []byte) (lua.LValue, []byte, error) {
	return parseValue(L, b, 0)
}

func parseValue(L *lua.LState, b []byte, depth int) (lua.LValue, []byte, error) {
	if len(b) < 3 || depth > maxReplyDepth {
		return nil, nil, errBadReply
	}
	i := bytes.Index(b, []byte("\r\n"))
	if i < 1 {
		return nil, nil, errBadReply
	}
	kind, line, rest := b[0], b[1:i], b[i+2:]
	field := func(name string, v lua.LValue) *lua.LTable {
		t := L.CreateTable(0, 1)
		t.RawSetString(name, v)
		return t
	}
	switch kind {
	case '+':
		return field("ok", lua.LString(line)), rest, nil
	case '-':
		return errorTable(L, "-"+string(line)), rest, nil
	case ':':
		n, err := strconv.ParseInt(string(line), 10, 64)
		if err != nil {
			return nil, nil, errBadReply
		}
		return lua.LNumber(n), rest, nil
	case '_':
		return lua.LNil, rest, nil
	case '#':
		return lua.LBool(string(line) == "t"), rest, nil
	case ',':
		f, err := strconv.ParseFloat(string(line), 64)
		if err != nil {
			return nil, nil, errBadReply
		}
		return field("double", lua.LNumber(f)), rest, nil
	case '(':
		return field("big_number", lua.LString(line)), rest, nil
	case '$', '=', '!':
		n, err := strconv.Atoi(string(line))
		if kind == '$' && err == nil && n == -1 {
			return lua.LFalse, rest, nil
		}
		if err != nil || n < 0 || len(rest) < n+2 {
			return nil, nil, errBadReply
		}
		s, rest := string(rest[:n]), rest[n+2:]
		switch kind {
		case '!':
			return errorTable(L, "-"+s), rest, nil
		case '=':
			if len(s) < 4 {
				return nil, nil, errBadReply
			}
			v := L.CreateTable(0, 2)
			v.RawSetString("format", lua.LString(s[:3]))
			v.RawSetString("string", lua.LString(s[4:]))
			return field("verbatim_string", v), rest, nil
		}
		return lua.LString(s), rest, nil
	case '*', '~', '%', '>':
		n, err := strconv.Atoi(string(line))
		if kind == '*' && err == nil && n == -1 {
			return lua.LFalse, rest, nil
		}
		if err != nil || n < 0 || n > len(rest) {
			return nil, nil, errBadReply
		}
		var t *lua.LTable
		switch kind {
		case '%', '~':
			t = L.CreateTable(0, n)
		default:
			t = L.CreateTable(n, 0)
		}
		for j := 0; j < n; j++ {
			var k, v lua.LValue
			if k, rest, err = parseValue(L, rest, depth+1); err != nil {
				return nil, nil, err
			}
			switch kind {
			case '%':
				if v, rest, err = parseValue(L, rest, depth+1); err != nil {
					return nil, nil, err
				}
				t.RawSet(k, v)
			case '~':
				t.RawSet(k, lua.LTrue)
			default:
				t.RawSetInt(j+1, k)
			}
		}
		switch kind {
		case '%':
			return field("map", t), rest, nil
		case '~':
			return field("set", t), rest, nil
		}
		return t, rest, nil
	}
	return nil, nil, errBadReply
}

// writeReply writes a script's return value to w as Redis converts it:
//
//	string -> bulk string     number -> integer (truncated)
//	true -> 1 (RESP3: true)   false -> null (RESP3: false)   nil -> null
//	{err = s} -> error        {ok = s} -> status
//	{double = n}, {big_number = s}, {map = t}, {set = t},
//	{verbatim_string = t} -> their RESP3 types (RESP2: bulk, array)
//	other tables -> array of the items 1..n up to the first nil
//
// Booleans follow the script's protocol (redis.setresp), as in Redis 7.0;
// the other RESP3 types follow the client's (w.Proto).
func writeReply(w *resp.Writer, v lua.LValue, scriptProto int) { writeValue(w, v, scriptProto, 0) }

// maxReturnDepth bounds the nesting of a returned table, as Redis's Lua
// stack bounds it; deeper levels are written as null.
const maxReturnDepth = 1000

func writeValue(w *resp.Writer, v lua.LValue, proto, depth int) {
	if depth > maxReturnDepth {
		w.NullBulk()
		return
	}
	switch v := v.(type) {
	case lua.LString:
		w.BulkString(string(v))
	case lua.LNumber:
		w.Int(toInt64(float64(v)))
	case lua.LBool:
		switch {
		case proto == 3:
			w.Bool(bool(v))
		case bool(v):
			w.Int(1)
		default:
			w.NullBulk()
		}
	case *lua.LTable:
		writeTable(w, v, proto, depth)
	default:
		w.NullBulk()
	}
}

func writeTable(w *resp.Writer, t *lua.LTable, proto, depth int) {
	if s, ok := t.RawGetString("err").(lua.LString); ok {
		if counted(t) {
			w.RepeatError(oneLine(string(s)))
		} else {
			w.Error(oneLine(string(s)))
		}
		return
	}
	if s, ok := t.RawGetString("ok").(lua.LString); ok {
		w.SimpleString(oneLine(string(s)))
		return
	}
	if n, ok := t.RawGetString("double").(lua.LNumber); ok {
		w.Double(float64(n))
		return
	}
	if s, ok := t.RawGetString("big_number").(lua.LString); ok {
		if w.Proto == 3 {
			w.Raw([]byte("(" + oneLine(string(s)) + "\r\n"))
		} else {
			w.BulkString(string(s))
		}
		return
	}
	if m, ok := t.RawGetString("map").(*lua.LTable); ok {
		var pairs []lua.LValue
		m.ForEach(func(k, v lua.LValue) { pairs = append(pairs, k, v) })
		w.Map(len(pairs) / 2)
		for _, x := range pairs {
			writeValue(w, x, proto, depth+1)
		}
		return
	}
	if s, ok := t.RawGetString("set").(*lua.LTable); ok {
		var members []lua.LValue
		s.ForEach(func(k, _ lua.LValue) { members = append(members, k) })
		w.Set(len(members))
		for _, x := range members {
			writeValue(w, x, proto, depth+1)
		}
		return
	}
	if vs, ok := t.RawGetString("verbatim_string").(*lua.LTable); ok {
		f, _ := vs.RawGetString("format").(lua.LString)
		s, _ := vs.RawGetString("string").(lua.LString)
		if w.Proto == 3 && len(f) == 3 {
			w.Raw([]byte("=" + strconv.Itoa(len(s)+4) + "\r\n" + string(f) + ":" + string(s) + "\r\n"))
		} else {
			w.BulkString(string(s))
		}
		return
	}
	n := 0
	for t.RawGetInt(n+1) != lua.LNil {
		n++
	}
	w.Array(n)
	for i := 1; i <= n; i++ {
		writeValue(w, t.RawGetInt(i), proto, depth+1)
	}
}

// toInt64 converts a Lua number to a reply integer as Redis's C cast does
// on x86-64: toward zero, and the minimum for what does not fit.
func toInt64(f float64) int64 {
	if math.IsNaN(f) || f >= math.MaxInt64 || f < math.MinInt64 {
		return math.MinInt64
	}
	return int64(f)
}
