package scripting

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// libsHarness runs a script body inside pcall and formats what it returns,
// so that the same text can be run on redis-server (EVAL ... 0) and here.
// Results are separated by spaces; a string result is written as is,
// except bytes outside printable ASCII, written \xHH; tables are written
// with their keys sorted; numbers that are integers are written in full,
// other numbers with %.17g. An error gives "ERR:" and the message.
const libsHarness = `
local function esc(s)
  local out = {}
  for i = 1, #s do
    local b = string.byte(s, i)
    if b < 32 or b > 126 then
      out[#out+1] = string.format('\\x%02X', b)
    else
      out[#out+1] = string.char(b)
    end
  end
  return table.concat(out)
end
local function num(v)
  if v ~= v then return 'nan' end
  if v == 1/0 then return 'inf' end
  if v == -1/0 then return '-inf' end
  if v == 0 and 1/v < 0 then return '-0' end
  if v == math.floor(v) and v > -2^53 and v < 2^53 then return string.format('%d', v) end
  return string.format('%.17g', v)
end
local dump
dump = function(v, top)
  local t = type(v)
  if t == 'table' then
    local keys = {}
    for k in pairs(v) do keys[#keys+1] = k end
    table.sort(keys, function(a, b)
      local ta, tb = type(a), type(b)
      if ta ~= tb then return ta < tb end
      return a < b
    end)
    local parts = {}
    for _, k in ipairs(keys) do parts[#parts+1] = dump(k) .. '=' .. dump(v[k]) end
    return '{' .. table.concat(parts, ',') .. '}'
  elseif t == 'string' then
    if top then return esc(v) end
    return '"' .. esc(v) .. '"'
  elseif t == 'number' then return num(v)
  elseif cjson and v == cjson.null then return 'null'
  elseif t == 'nil' or t == 'boolean' then return tostring(v)
  else return t end
end
local r = {pcall(function()
__BODY__
end)}
if not r[1] then return 'ERR:' .. tostring(r[2]) end
local out = {}
for i = 2, table.maxn(r) do out[#out+1] = dump(r[i], true) end
return table.concat(out, ' ')
`

// libCase is a script body and what libsHarness gives for it on
// redis-server 7.0.15. A want starting with "ERR:" is an error whose
// message must contain the rest (the position prefix differs: Redis names
// the chunk user_script, gopher-lua <string>).
type libCase struct {
	script string
	want   string
}

func newLibState(t testing.TB) *lua.LState {
	t.Helper()
	L := lua.NewState()
	openCJSON(L)
	openBit(L)
	return L
}

func runLibCase(t *testing.T, c libCase) {
	t.Helper()
	L := newLibState(t)
	defer L.Close()
	if err := L.DoString(strings.Replace(libsHarness, "__BODY__", c.script, 1)); err != nil {
		t.Fatalf("%s: harness failed: %v", c.script, err)
	}
	got := L.Get(-1).String()
	if msg, isErr := strings.CutPrefix(c.want, "ERR:"); isErr {
		if !strings.HasPrefix(got, "ERR:") || !strings.Contains(got, msg) {
			t.Errorf("%s\n got: %s\nwant error containing: %s", c.script, got, msg)
		}
		return
	}
	if got != c.want {
		t.Errorf("%s\n got: %s\nwant: %s", c.script, got, c.want)
	}
}

// Every expected value below was produced by running the same script
// through libsHarness on redis-server 7.0.15 (Debian's build).

var cjsonCases = []libCase{
	// Basics.
	{`return cjson.encode({1,2})`, `[1,2]`},
	{`return cjson.encode({})`, `{}`},
	{`return cjson.encode("a/b\n\t\1\31\127")`, `"a\/b\n\t\u0001\u001f\u007f"`},
	{`return cjson.encode(0.1), cjson.encode(1/3), cjson.encode(1e300), cjson.encode(-0), cjson.encode(100), cjson.encode(1e14), cjson.encode(1e15), cjson.encode(123456789012345678)`, `0.1 0.33333333333333 1e+300 -0 100 1e+14 1e+15 1.2345678901235e+17`},
	{`return cjson.encode(1/0)`, `ERR:Cannot serialise number: must not be NaN or Inf`},
	{`return cjson.encode(0/0)`, `ERR:Cannot serialise number: must not be NaN or Inf`},
	{`return cjson.encode(function() end)`, `ERR:Cannot serialise function: type not supported`},
	{`return cjson.encode({a=function() end})`, `ERR:Cannot serialise function: type not supported`},
	{`return cjson.decode('x')`, `ERR:Expected value but found invalid token at character 1`},
	{`return cjson.decode('[1,2,{"a":null}]')`, `{1=1,2=2,3={"a"=null}}`},
	{`return bit.tohex()`, `ERR:bad argument #1 to 'tohex' (number expected, got no value)`},
	// Encoding: arrays, objects, keys, strings, unsupported types.
	{`return cjson.encode(cjson.null), cjson.encode(nil), cjson.encode(true), cjson.encode(false)`, `null null true false`},
	{`return cjson.encode()`, `ERR:bad argument #1 to 'encode' (expected 1 argument)`},
	{`return cjson.encode(1, 2)`, `ERR:bad argument #1 to 'encode' (expected 1 argument)`},
	{`return cjson.encode({1,2,nil,4})`, `[1,2,null,4]`},
	{`return cjson.encode({[1]=1,[3]=3})`, `[1,null,3]`},
	{`return cjson.encode({[1]=1,[4]=4})`, `[1,null,null,4]`},
	{`return cjson.encode({[10]=1})`, `[null,null,null,null,null,null,null,null,null,1]`},
	{`return cjson.encode({[11]=1})`, `ERR:Cannot serialise table: excessively sparse array`},
	{`return cjson.encode({[20]=1, [1]=1})`, `ERR:Cannot serialise table: excessively sparse array`},
	{`return cjson.encode({[21]=1, [1]=1, [2]=2, [3]=3,[4]=4,[5]=5,[6]=6,[7]=7,[8]=8,[9]=9,[10]=10})`, `[1,2,3,4,5,6,7,8,9,10,null,null,null,null,null,null,null,null,null,null,1]`},
	{`return cjson.encode({[0]=1})`, `{"0":1}`},
	{`return cjson.encode({[-1]=1})`, `{"-1":1}`},
	{`return cjson.encode({[1.5]=1})`, `{"1.5":1}`},
	{`return cjson.encode({[true]=1})`, `ERR:Cannot serialise boolean: table key must be a number or string`},
	{`return cjson.encode({[1]='a', [true]=1})`, `ERR:Cannot serialise boolean: table key must be a number or string`},
	{`return cjson.encode({x={1,{}}})`, `{"x":[1,{}]}`},
	{`return cjson.encode({[1]=cjson.null, [2]=false})`, `[null,false]`},
	{`return cjson.encode({["1"]=1})`, `{"1":1}`},
	{`return cjson.encode({[12]=1})`, `ERR:Cannot serialise table: excessively sparse array`},
	{`return cjson.encode({[3.0]=1})`, `[null,null,1]`},
	{`return cjson.encode({[2^53]=1})`, `{"9.007199254741e+15":1}`},
	{`return cjson.encode("\0")`, `"\u0000"`},
	{`return cjson.encode("\"\\\b\f\r/")`, `"\"\\\b\f\r\/"`},
	{`return cjson.encode("\200\255é")`, `"\xC8\xFF\xC3\xA9"`},
	{`return cjson.encode(coroutine.create(function() end))`, `ERR:Cannot serialise thread: type not supported`},
	{`return cjson.encode({{{}}})`, `[[{}]]`},
	// Configuration functions and their effect.
	{`return cjson._NAME, cjson._VERSION`, `cjson 2.1.0`},
	{`return cjson.encode_max_depth()`, `1000`},
	{`return cjson.encode_max_depth(5)`, `5`},
	{`return cjson.encode_max_depth(0)`, `ERR:bad argument #1 to 'encode_max_depth' (expected integer between 1 and 2147483647)`},
	{`return cjson.encode_max_depth(2147483648)`, `ERR:bad argument #1 to 'encode_max_depth' (expected integer between 1 and 2147483647)`},
	{`return cjson.encode_max_depth("3")`, `3`},
	{`return cjson.encode_max_depth("x")`, `ERR:bad argument #1 to 'encode_max_depth' (number expected, got string)`},
	{`return cjson.encode_max_depth(1, 2)`, `ERR:bad argument #2 to 'encode_max_depth' (found too many arguments)`},
	{`return cjson.encode_max_depth(2.7), cjson.encode_max_depth()`, `2 2`},
	{`return cjson.encode_max_depth(2), cjson.encode({{1}})`, `2 [[1]]`},
	{`return cjson.encode_max_depth(2), cjson.encode({{{1}}})`, `ERR:Cannot serialise, excessive nesting (3)`},
	{`return cjson.encode_max_depth(1), cjson.encode({})`, `1 {}`},
	{`return cjson.encode_max_depth(1), cjson.encode({{}})`, `ERR:Cannot serialise, excessive nesting (2)`},
	{`return cjson.decode_max_depth()`, `1000`},
	{`return cjson.decode_max_depth(2), cjson.decode('[[1]]')`, `2 {1={1=1}}`},
	{`return cjson.decode_max_depth(2), cjson.decode('[[[1]]]')`, `ERR:Found too many nested data structures (3) at character 3`},
	{`return cjson.decode_max_depth(2), cjson.decode('{"a":{"b":{"c":1}}}')`, `ERR:Found too many nested data structures (3) at character 11`},
	{`return cjson.encode_sparse_array()`, `false 2 10`},
	{`return cjson.encode_sparse_array(true)`, `true 2 10`},
	{`return cjson.encode_sparse_array(true, 3, 5)`, `true 3 5`},
	{`return cjson.encode_sparse_array(true, 1), cjson.encode({[1]=1,[3]=1})`, `true [1,null,1]`},
	{`return cjson.encode_sparse_array(true, 1, 0), cjson.encode({[1]=1,[2]=1})`, `true [1,1]`},
	{`return cjson.encode_sparse_array("on")`, `true 2 10`},
	{`return cjson.encode_sparse_array("off")`, `false 2 10`},
	{`return cjson.encode_sparse_array("yes")`, `ERR:bad argument #1 to 'encode_sparse_array' (invalid option 'yes')`},
	{`return cjson.encode_sparse_array(1)`, `ERR:bad argument #1 to 'encode_sparse_array' (invalid option '1')`},
	{`return cjson.encode_sparse_array(nil, 4)`, `false 4 10`},
	{`return cjson.encode_sparse_array(true, -1)`, `ERR:bad argument #1 to 'encode_sparse_array' (expected integer between 0 and 2147483647)`},
	{`return cjson.encode_sparse_array(true, 2, -1)`, `ERR:bad argument #1 to 'encode_sparse_array' (expected integer between 0 and 2147483647)`},
	{`return cjson.encode_sparse_array(true, 2, 2147483648)`, `ERR:bad argument #1 to 'encode_sparse_array' (expected integer between 0 and 2147483647)`},
	{`return cjson.encode_keep_buffer()`, `true`},
	{`return cjson.encode_keep_buffer(false)`, `false`},
	{`return cjson.encode_keep_buffer("off")`, `false`},
	{`return cjson.encode_number_precision()`, `14`},
	{`return cjson.encode_number_precision(3), cjson.encode(1/3), cjson.encode({[1/3]=1})`, `3 0.333 {"0.333":1}`},
	{`return cjson.encode_number_precision(0)`, `ERR:bad argument #1 to 'encode_number_precision' (expected integer between 1 and 14)`},
	{`return cjson.encode_number_precision(1), cjson.encode(123.456)`, `1 1e+02`},
	{`return cjson.encode_number_precision(14)`, `14`},
	{`return cjson.encode_number_precision(15)`, `ERR:bad argument #1 to 'encode_number_precision' (expected integer between 1 and 14)`},
	{`return cjson.encode_number_precision(16)`, `ERR:bad argument #1 to 'encode_number_precision' (expected integer between 1 and 14)`},
	{`return cjson.encode_number_precision(17)`, `ERR:bad argument #1 to 'encode_number_precision' (expected integer between 1 and 14)`},
	{`return cjson.encode_number_precision(15), cjson.encode(0.1), cjson.encode(1/3)`, `ERR:bad argument #1 to 'encode_number_precision' (expected integer between 1 and 14)`},
	{`return cjson.encode_invalid_numbers()`, `false`},
	{`return cjson.encode_invalid_numbers(true), cjson.encode(1/0), cjson.encode(-1/0), cjson.encode(0/0), cjson.encode(-(0/0))`, `true inf -inf nan nan`},
	{`return cjson.encode_invalid_numbers("null"), cjson.encode(1/0), cjson.encode(-1/0), cjson.encode(0/0)`, `null null null null`},
	{`return cjson.encode_invalid_numbers("on")`, `true`},
	{`return cjson.encode_invalid_numbers("foo")`, `ERR:bad argument #1 to 'encode_invalid_numbers' (invalid option 'foo')`},
	{`return cjson.decode_invalid_numbers()`, `true`},
	{`return cjson.decode_invalid_numbers(false)`, `false`},
	{`return cjson.decode_invalid_numbers("null")`, `ERR:bad argument #1 to 'decode_invalid_numbers' (invalid option 'null')`},
	{`return cjson.decode('[NaN, Infinity, -Infinity, nan, inf, -inf, 0x10, 1e1000, -1e1000]')`, `{1=nan,2=inf,3=-inf,4=nan,5=inf,6=-inf,7=16,8=inf,9=-inf}`},
	{`return cjson.decode_invalid_numbers(false), cjson.decode('0x10')`, `ERR:Expected value but found invalid number at character 1`},
	{`return cjson.decode_invalid_numbers(false), cjson.decode('NaN')`, `ERR:Expected value but found invalid token at character 1`},
	{`return cjson.decode_invalid_numbers(false), cjson.decode('inf')`, `ERR:Expected value but found invalid token at character 1`},
	{`return cjson.decode_invalid_numbers(false), cjson.decode('1e1000')`, `false inf`},
	{`return type(cjson.new), cjson.new == cjson.new`, `function true`},
	{`local c = cjson.new() return c.encode({1}), c.encode_max_depth(), c ~= cjson, c.null == cjson.null`, `[1] 1000 true true`},
	{`local c = cjson.new() c.encode_max_depth(3) return cjson.encode_max_depth(), c.encode_max_depth()`, `1000 3`},
	{`return pcall(cjson.encode_max_depth, 0)`, `false bad argument #1 to '?' (expected integer between 1 and 2147483647)`},
	// Decoding: syntax errors, strings, escapes, numbers.
	{`return cjson.decode('')`, `ERR:Expected value but found T_END at character 1`},
	{`return cjson.decode('   ')`, `ERR:Expected value but found T_END at character 4`},
	{`return cjson.decode()`, `ERR:bad argument #1 to 'decode' (expected 1 argument)`},
	{`return cjson.decode('1', 2)`, `ERR:bad argument #1 to 'decode' (expected 1 argument)`},
	{`return cjson.decode(123)`, `123`},
	{`return cjson.decode({})`, `ERR:bad argument #1 to 'decode' (string expected, got table)`},
	{`return cjson.decode(nil)`, `ERR:bad argument #1 to 'decode' (string expected, got nil)`},
	{`return cjson.decode('[1,2')`, `ERR:Expected comma or array end but found T_END at character 5`},
	{`return cjson.decode('[1,2,]')`, `ERR:Expected value but found T_ARR_END at character 6`},
	{`return cjson.decode('[,]')`, `ERR:Expected value but found T_COMMA at character 2`},
	{`return cjson.decode('[]')`, `{}`},
	{`return cjson.decode('{}')`, `{}`},
	{`return cjson.decode('{"a":1,}')`, `ERR:Expected object key string but found T_OBJ_END at character 8`},
	{`return cjson.decode('{"a" 1}')`, `ERR:Expected colon but found T_NUMBER at character 6`},
	{`return cjson.decode('{1:2}')`, `ERR:Expected object key string but found T_NUMBER at character 2`},
	{`return cjson.decode('{"a":1')`, `ERR:Expected comma or object end but found T_END at character 7`},
	{`return cjson.decode('{"a":}')`, `ERR:Expected value but found T_OBJ_END at character 6`},
	{`return cjson.decode('{"a":1 "b":2}')`, `ERR:Expected comma or object end but found T_STRING at character 8`},
	{`return cjson.decode('[1 2]')`, `ERR:Expected comma or array end but found T_NUMBER at character 4`},
	{`return cjson.decode('1 2')`, `ERR:Expected the end but found T_NUMBER at character 3`},
	{`return cjson.decode('1 x')`, `ERR:Expected the end but found invalid token at character 3`},
	{`return cjson.decode('"abc')`, `ERR:Expected value but found unexpected end of string at character 5`},
	{`return cjson.decode('"a\\qb"')`, `ERR:Expected value but found invalid escape code at character 3`},
	{`return cjson.decode('"\\u00e9\\u20ac\\ud83d\\ude00"')`, `\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80`},
	{`return cjson.decode('"\\u0000"')`, `\x00`},
	{`return cjson.decode('"\\ud83d"')`, `ERR:Expected value but found invalid unicode escape code at character 2`},
	{`return cjson.decode('"\\ud83dx"')`, `ERR:Expected value but found invalid unicode escape code at character 2`},
	{`return cjson.decode('"\\ud83d\\u0041"')`, `ERR:Expected value but found invalid unicode escape code at character 2`},
	{`return cjson.decode('"\\ude00"')`, `ERR:Expected value but found invalid unicode escape code at character 2`},
	{`return cjson.decode('"\\u12"')`, `ERR:Expected value but found invalid unicode escape code at character 2`},
	{`return cjson.decode('"\\u12g4"')`, `ERR:Expected value but found invalid unicode escape code at character 2`},
	{`return cjson.decode('"\\uABCD"')`, `\xEA\xAF\x8D`},
	{`return cjson.decode('"\\/\\b\\f\\n\\r\\t\\"\\\\"')`, `/\x08\x0C\x0A\x0D\x09"\`},
	{`return cjson.decode('"a\1b\31"')`, `a\x01b\x1F`},
	{`return cjson.decode('"\200\255"')`, `\xC8\xFF`},
	{`return cjson.decode('true'), cjson.decode('false'), cjson.decode('null')`, `true false null`},
	{`return cjson.decode('tru')`, `ERR:Expected value but found invalid token at character 1`},
	{`return cjson.decode('truex')`, `ERR:Expected the end but found invalid token at character 5`},
	{`return cjson.decode('nul')`, `ERR:Expected value but found invalid token at character 1`},
	{`return cjson.decode('[true,false,null]')`, `{1=true,2=false,3=null}`},
	{`return cjson.decode('12345678901234567890')`, `1.2345678901234567e+19`},
	{`return cjson.encode(cjson.decode('12345678901234567890'))`, `1.2345678901235e+19`},
	{`return cjson.decode('-0'), cjson.decode('0.5'), cjson.decode('1e2'), cjson.decode('1E-2'), cjson.decode('-1.5e+3')`, `-0 0.5 100 0.01 -1500`},
	{`return cjson.decode('01')`, `1`},
	{`return cjson.decode('-01')`, `-1`},
	{`return cjson.decode('+1')`, `1`},
	{`return cjson.decode('.5')`, `ERR:Expected value but found invalid token at character 1`},
	{`return cjson.decode('-.5')`, `-0.5`},
	{`return cjson.decode('1.')`, `1`},
	{`return cjson.decode('1.e2')`, `100`},
	{`return cjson.decode('1e')`, `ERR:Expected the end but found invalid token at character 2`},
	{`return cjson.decode('1e+')`, `ERR:Expected the end but found invalid token at character 2`},
	{`return cjson.decode('-')`, `ERR:Expected value but found invalid number at character 1`},
	{`return cjson.decode('--1')`, `ERR:Expected value but found invalid number at character 1`},
	{`return cjson.decode('0x')`, `ERR:Expected the end but found invalid token at character 2`},
	{`return cjson.decode('0x1p4')`, `16`},
	{`return cjson.decode('0x1.8')`, `1.5`},
	{`return cjson.decode('0X1F')`, `31`},
	{`return cjson.decode('-0x10')`, `-16`},
	{`return cjson.decode('infinity')`, `inf`},
	{`return cjson.decode('-Infinity')`, `-inf`},
	{`return cjson.decode('infinit')`, `ERR:Expected the end but found invalid token at character 4`},
	{`return cjson.decode('nan(123)')`, `nan`},
	{`return cjson.decode('-nan')`, `nan`},
	{`return cjson.decode('NAN')`, `nan`},
	{`return cjson.decode('[1,nan]')`, `{1=1,2=nan}`},
	{`return cjson.decode('+inf')`, `inf`},
	{`return cjson.decode('+nan')`, `nan`},
	{`return cjson.decode('+')`, `ERR:Expected value but found invalid number at character 1`},
	{`return cjson.decode('1e400'), cjson.decode('1e-400'), cjson.decode('4.9e-324')`, `inf 0 4.9406564584124654e-324`},
	{`return cjson.decode('{"a":1,"a":2}')`, `{"a"=2}`},
	{`return cjson.decode('{"":1}')`, `{""=1}`},
	{`return cjson.decode('[1,[2,[3]]]')`, `{1=1,2={1=2,2={1=3}}}`},
	{`return cjson.decode(' \t\r\n[ 1 , 2 ] \n')`, `{1=1,2=2}`},
	{`return cjson.decode('\v1')`, `ERR:Expected value but found invalid token at character 1`},
	{`return cjson.decode('\f1')`, `ERR:Expected value but found invalid token at character 1`},
	{`return cjson.decode('[1]]')`, `ERR:Expected the end but found T_ARR_END at character 4`},
	{`return cjson.decode(']')`, `ERR:Expected value but found T_ARR_END at character 1`},
	{`return cjson.decode('}')`, `ERR:Expected value but found T_OBJ_END at character 1`},
	{`return cjson.decode(':')`, `ERR:Expected value but found T_COLON at character 1`},
	{`return cjson.decode(',')`, `ERR:Expected value but found T_COMMA at character 1`},
	{`return cjson.decode('{"a":1}}')`, `ERR:Expected the end but found T_OBJ_END at character 8`},
	{`return cjson.decode('{"a"')`, `ERR:Expected colon but found T_END at character 5`},
	{`return cjson.decode('{"a":')`, `ERR:Expected value but found T_END at character 6`},
	{`return cjson.decode('{')`, `ERR:Expected object key string but found T_END at character 2`},
	{`return cjson.decode('[')`, `ERR:Expected value but found T_END at character 2`},
	{`return cjson.decode('"\\u')`, `ERR:Expected value but found invalid unicode escape code at character 2`},
	{`return cjson.decode('"\\')`, `ERR:Expected value but found invalid escape code at character 2`},
	{`return cjson.decode('\0\0')`, `ERR:JSON parser does not support UTF-16 or UTF-32`},
	{`return cjson.decode('1\0')`, `ERR:JSON parser does not support UTF-16 or UTF-32`},
	{`return cjson.decode('\0')`, `ERR:Expected value but found T_END at character 1`},
	{`return cjson.decode('[1,"a\0b"]')`, `ERR:Expected value but found unexpected end of string at character 6`},
	{`return cjson.decode('"\\u00"')`, `ERR:Expected value but found invalid unicode escape code at character 2`},
	{`return cjson.decode('"\\uD800\\uDBFF"')`, `ERR:Expected value but found invalid unicode escape code at character 2`},
	{`return cjson.decode('"\\uDBFF\\uDFFF"')`, `\xF4\x8F\xBF\xBF`},
	{`return cjson.decode('"\\uD800\\u"')`, `ERR:Expected value but found invalid unicode escape code at character 2`},
	{`return cjson.decode('"\\uD800\\"')`, `ERR:Expected value but found invalid unicode escape code at character 2`},
	{`return cjson.decode('"\\uD800\\n"')`, `ERR:Expected value but found invalid unicode escape code at character 2`},
	// Encoding: key edge cases, nesting, numbers, escapes.
	{`return cjson.encode({[2^31]=1})`, `{"2147483648":1}`},
	{`return cjson.encode({[2^31-1]=1})`, `ERR:Cannot serialise table: excessively sparse array`},
	{`return cjson.encode({[1/0]=1})`, `ERR:Cannot serialise number: must not be NaN or Inf`},
	{`return cjson.encode_invalid_numbers(true), cjson.encode({[1/0]=1})`, `true {"inf":1}`},
	{`return cjson.encode_invalid_numbers('null'), cjson.encode({[-1/0]=1})`, `null {"null":1}`},
	{`local t = {} t[1] = t return cjson.encode(t)`, `ERR:Cannot serialise, excessive nesting (1001)`},
	{`local t = {} local c = t for i=1,999 do c[1] = {} c = c[1] end return #cjson.encode(t)`, `2000`},
	{`local t = {} local c = t for i=1,1000 do c[1] = {} c = c[1] end return #cjson.encode(t)`, `ERR:Cannot serialise, excessive nesting (1001)`},
	{`return cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000)) ~= nil`, `true`},
	{`return cjson.decode(string.rep('[', 1001) .. string.rep(']', 1001))`, `ERR:Found too many nested data structures (1001) at character 1001`},
	{`return cjson.decode_max_depth(100000), cjson.decode(string.rep('[', 100000) .. string.rep(']', 100000)) ~= nil`, `ERR:Found too many nested data structures (7999) at character 7999`},
	{`return cjson.decode_max_depth(100000), cjson.decode(string.rep('{"a":', 100000) .. '1' .. string.rep('}', 100000)) ~= nil`, `ERR:Found too many nested data structures (4000) at character 19996`},
	{`return cjson.encode_max_depth(100000), pcall(cjson.encode, (function() local t = {} t[1] = t return t end)())`, `100000 false Cannot serialise, excessive nesting (7998)`},
	{`return cjson.encode_max_depth(100000), pcall(cjson.encode, (function() local t = {} t.a = t return t end)())`, `100000 false Cannot serialise, excessive nesting (4000)`},
	{`local t = setmetatable({}, {__index=function() return 1 end}) return cjson.encode(t)`, `{}`},
	{`local t = setmetatable({1,2}, {__len=function() return 5 end}) return cjson.encode(t)`, `[1,2]`},
	{`return cjson.encode({"a", {b="c"}})`, `["a",{"b":"c"}]`},
	{`return cjson.encode({[1]={}, [2]={[1]={}}})`, `[{},[{}]]`},
	{`return cjson.encode(12345678901234), cjson.encode(123456789012345), cjson.encode(0.000001), cjson.encode(0.0000001), cjson.encode(-1.5), cjson.encode(2^63), cjson.encode(1e-300)`, `12345678901234 1.2345678901234e+14 1e-06 1e-07 -1.5 9.2233720368548e+18 1e-300`},
	{`return cjson.encode(3.14159265358979), cjson.encode(100000000000000), cjson.encode(99999999999999.9)`, `3.1415926535898 1e+14 1e+14`},
	{`return cjson.encode("\226\128\168\226\128\169")`, `"\xE2\x80\xA8\xE2\x80\xA9"`},
	{`return cjson.encode({"\127"})`, `["\u007f"]`},
	{`return cjson.encode(string.char(0,1,2,7,8,9,10,11,12,13,14,27,31,32,34,39,47,92,126,127,128))`, `"\u0000\u0001\u0002\u0007\b\t\n\u000b\f\r\u000e\u001b\u001f \"'\/\\~\u007f\x80"`},
	{`return cjson.encode(cjson)`, `ERR:Cannot serialise function: type not supported`},
	// Option argument conversion, call names, more decoding.
	{`return cjson.encode_max_depth(2^32+5)`, `5`},
	{`return cjson.encode_max_depth(1e20)`, `ERR:bad argument #1 to 'encode_max_depth' (expected integer between 1 and 2147483647)`},
	{`return cjson.encode_max_depth(-2^32+3)`, `3`},
	{`return cjson.encode_max_depth(0/0)`, `ERR:bad argument #1 to 'encode_max_depth' (expected integer between 1 and 2147483647)`},
	{`return cjson.encode_max_depth(" 0x10 ")`, `16`},
	{`return cjson.encode_max_depth(true)`, `ERR:bad argument #1 to 'encode_max_depth' (number expected, got boolean)`},
	{`return cjson.encode_max_depth({})`, `ERR:bad argument #1 to 'encode_max_depth' (number expected, got table)`},
	{`return cjson.encode_invalid_numbers({})`, `ERR:bad argument #1 to 'encode_invalid_numbers' (string expected, got table)`},
	{`return cjson.encode_invalid_numbers(2)`, `ERR:bad argument #1 to 'encode_invalid_numbers' (invalid option '2')`},
	{`return cjson.encode_sparse_array(true, "x")`, `ERR:bad argument #2 to 'encode_sparse_array' (number expected, got string)`},
	{`return cjson.encode_sparse_array(true, 1, 2, 3)`, `ERR:bad argument #4 to 'encode_sparse_array' (found too many arguments)`},
	{`return cjson.encode_sparse_array("bad", 5), cjson.encode_sparse_array()`, `ERR:bad argument #1 to 'encode_sparse_array' (invalid option 'bad')`},
	{`local ok = pcall(cjson.encode_sparse_array, true, -1) return cjson.encode_sparse_array()`, `true 2 10`},
	{`local enc = cjson.encode return enc()`, `ERR:bad argument #1 to 'enc' (expected 1 argument)`},
	{`return cjson:encode()`, `ERR:Cannot serialise function: type not supported`},
	{`local t = {cjson.decode} return t[1]()`, `ERR:bad argument #1 to '?' (expected 1 argument)`},
	{`return cjson.encode_number_precision("14")`, `14`},
	{`return cjson.decode('[1,2,3]')[3], #cjson.decode('[1,2,3]')`, `3 3`},
	{`return cjson.decode('"\\u0080\\u07ff\\u0800\\uffff"')`, `\xC2\x80\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF`},
	{`return cjson.decode('{"a":[1,{"b":null}],"c":"d"}')`, `{"a"={1=1,2={"b"=null}},"c"="d"}`},
	{`return cjson.encode(cjson.decode('{"a":[1,2,3]}'))`, `{"a":[1,2,3]}`},
	{`return cjson.encode({a={b={c={}}}})`, `{"a":{"b":{"c":{}}}}`},
	{`return cjson.encode({"x", "y"}) , cjson.encode({[1]="x", [2]="y", [3]=nil})`, `["x","y"] ["x","y"]`},
	{`return cjson.encode(-1e-7), cjson.encode(123e-20), cjson.encode(5e-324), cjson.encode(1.7976931348623157e308)`, `-1e-07 1.23e-18 4.9406564584125e-324 1.7976931348623e+308`},
	{`return cjson.decode('1e-5'), cjson.decode('0.1e1'), cjson.decode('123456.789e3')`, `1.0000000000000001e-05 1 123456789`},
	{`return cjson.decode('[1,2] ')`, `{1=1,2=2}`},
	{`return cjson.decode('[1,2]\0garbage')`, `{1=1,2=2}`},
	{`return cjson.decode('"a\\u0000b"')`, `a\x00b`},
	{`return cjson.decode_invalid_numbers(false), cjson.decode('-0'), cjson.decode('0'), cjson.decode('-1.5e3'), cjson.decode('0.5')`, `false -0 0 -1500 0.5`},
	{`return cjson.decode_invalid_numbers(false), cjson.decode('00')`, `ERR:Expected value but found invalid number at character 1`},
	{`return cjson.decode_invalid_numbers(false), cjson.decode('-')`, `ERR:Expected value but found invalid number at character 1`},
	{`return cjson.decode_invalid_numbers(false), cjson.decode('+1')`, `ERR:Expected value but found invalid token at character 1`},
	{`return cjson.decode_invalid_numbers(false), cjson.decode('-inf')`, `ERR:Expected value but found invalid number at character 1`},
	{`return cjson.decode_invalid_numbers(false), cjson.decode('-Infinity')`, `ERR:Expected value but found invalid number at character 1`},
	{`return cjson.decode_invalid_numbers(false), cjson.decode('-x')`, `ERR:Expected value but found invalid number at character 1`},
	{`return cjson.decode_invalid_numbers(false), cjson.decode('[0x1]')`, `ERR:Expected value but found invalid number at character 2`},
	{`return cjson.decode('0x1p')`, `ERR:Expected the end but found invalid token at character 4`},
	{`return cjson.decode('0x.8')`, `0.5`},
	{`return cjson.decode('0x.')`, `ERR:Expected the end but found invalid token at character 2`},
	{`return cjson.decode('0xg')`, `ERR:Expected the end but found invalid token at character 2`},
	{`return cjson.decode('1.5e+5x')`, `ERR:Expected the end but found invalid token at character 7`},
	{`return cjson.decode('nan(12')`, `ERR:Expected the end but found invalid token at character 4`},
	{`return cjson.decode('nan()')`, `nan`},
	{`return cjson.decode('nan(a_b)')`, `nan`},
	{`return cjson.decode('InFiNiTy')`, `inf`},
	{`return cjson.decode('Inf')`, `inf`},
	{`return cjson.decode('NULL')`, `ERR:Expected value but found invalid token at character 1`},
	{`return cjson.decode('True')`, `ERR:Expected value but found invalid token at character 1`},
	{`return cjson.decode('[1true]')`, `ERR:Expected comma or array end but found T_BOOLEAN at character 3`},
	{`return cjson.decode('[1 "abc')`, `ERR:Expected comma or array end but found unexpected end of string at character 8`},
	{`return cjson.decode('{"a":1 null}')`, `ERR:Expected comma or object end but found T_NULL at character 8`},
	{`return cjson.decode('{"a":1,"b"}')`, `ERR:Expected colon but found T_OBJ_END at character 11`},
	{`return cjson.decode('{"a":1,"b":[1,2}')`, `ERR:Expected comma or array end but found T_OBJ_END at character 16`},
	{`return cjson.decode('"\\u00e9"', 1)`, `ERR:bad argument #1 to 'decode' (expected 1 argument)`},
	{`return cjson.decode('12', nil)`, `ERR:bad argument #1 to 'decode' (expected 1 argument)`},
	// pcall without a Lua caller, cjson.null, sparse arrays, depth and stack limits.
	{`return pcall(cjson.decode, 'x')`, `false Expected value but found invalid token at character 1`},
	{`return pcall(cjson.encode)`, `false bad argument #1 to '?' (expected 1 argument)`},
	{`return pcall(bit.tohex)`, `false bad argument #1 to '?' (number expected, got no value)`},
	{`return pcall(cjson.encode, {[cjson.null]=1})`, `false Cannot serialise userdata: table key must be a number or string`},
	{`return cjson.encode({[cjson.null]=1})`, `ERR:Cannot serialise userdata: table key must be a number or string`},
	{`return cjson.encode({1, function() end})`, `ERR:Cannot serialise function: type not supported`},
	{`return cjson.decode('null') == cjson.null, cjson.decode('[null]')[1] == cjson.null, cjson.decode('{"a":null}').a == cjson.null`, `true true true`},
	{`return cjson.encode({cjson.null, cjson.null})`, `[null,null]`},
	{`return cjson.encode_sparse_array(false, 0, 5), cjson.encode({[1]=1,[14]=1})`, `false [1,null,null,null,null,null,null,null,null,null,null,null,null,1]`},
	{`return cjson.encode_sparse_array(true, 0), cjson.encode({[1]=1,[14]=1})`, `true [1,null,null,null,null,null,null,null,null,null,null,null,null,1]`},
	{`return cjson.encode({[1]=1,[2]=2,[3]=3,[4]=4,[5]=5,[6]=6,[7]=7,[8]=8,[9]=9,[10]=10,[11]=11,[22]=22})`, `[1,2,3,4,5,6,7,8,9,10,11,null,null,null,null,null,null,null,null,null,null,22]`},
	{`return cjson.encode({[1]=1,[2]=2,[3]=3,[4]=4,[5]=5,[6]=6,[7]=7,[8]=8,[9]=9,[10]=10,[11]=11,[12]=12,[25]=25})`, `[1,2,3,4,5,6,7,8,9,10,11,12,null,null,null,null,null,null,null,null,null,null,null,null,25]`},
	{`local t = {} local c = t for i=1,1000 do c[1] = {} c = c[1] end return cjson.encode(t)`, `ERR:Cannot serialise, excessive nesting (1001)`},
	{`local t = {} local c = t for i=1,999 do c.k = {} c = c.k end return #cjson.encode(t)`, `5996`},
	{`local t = {} local c = t for i=1,1000 do c.k = {} c = c.k end return cjson.encode(t)`, `ERR:Cannot serialise, excessive nesting (1001)`},
	{`local t = {} t.a = t return cjson.encode(t)`, `ERR:Cannot serialise, excessive nesting (1001)`},
	{`return #cjson.encode(cjson.decode(string.rep('{"k":', 1000) .. '1' .. string.rep('}', 1000)))`, `6001`},
	{`return cjson.decode(string.rep('{"k":', 1001) .. '1' .. string.rep('}', 1001))`, `ERR:Found too many nested data structures (1001) at character 5001`},
	{`return cjson.decode_max_depth(100000), cjson.decode(string.rep('[', 7998) .. string.rep(']', 7998)) ~= nil`, `100000 true`},
	{`return cjson.decode_max_depth(100000), cjson.decode(string.rep('[', 7999) .. string.rep(']', 7999))`, `ERR:Found too many nested data structures (7999) at character 7999`},
	{`return cjson.decode_max_depth(100000), cjson.decode(string.rep('{"a":', 3999) .. '1' .. string.rep('}', 3999)) ~= nil`, `100000 true`},
	{`return cjson.decode_max_depth(100000), cjson.decode(string.rep('{"a":', 4000) .. '1' .. string.rep('}', 4000))`, `ERR:Found too many nested data structures (4000) at character 19996`},
	{`return cjson.decode_max_depth(100000), cjson.decode(string.rep('{"a":[', 2666) .. string.rep(']}', 2666)) ~= nil`, `100000 true`},
	{`return cjson.decode_max_depth(100000), cjson.decode(string.rep('{"a":[', 2667) .. string.rep(']}', 2667))`, `ERR:Found too many nested data structures (5333) at character 15997`},
	{`return cjson.encode_max_depth(100000), pcall(cjson.encode, (function() local t = {} t.a = {t} return t end)())`, `100000 false Cannot serialise, excessive nesting (5332)`},
	{`return #cjson.encode(string.rep('\1', 100))`, `602`},
	{`return cjson.decode('{"\\u0041\\n":"\\t"}')`, `{"A\x0A"="\x09"}`},
	{`return cjson.decode('[1.5,-2,"x",true,false,null,{},[]]')`, `{1=1.5,2=-2,3="x",4=true,5=false,6=null,7={},8={}}`},
	{`return cjson.decode(' "a" ')`, `a`},
	{`return cjson.encode(cjson.decode('"\\ud83d\\ude00"'))`, `"\xF0\x9F\x98\x80"`},
	{`return cjson.encode({["a\0b"]={["\127"]=1}})`, `{"a\u0000b":{"\u007f":1}}`},
	// Sparse array converted to an object.
	{`return cjson.encode_sparse_array(true), cjson.encode({[20]=1})`, `true {"20":1}`},
}

var bitCases = []libCase{
	{`return bit.tobit(0xffffffff), bit.tobit(0x80000000), bit.tobit(2^32+5), bit.tobit(-1), bit.tobit(0.5), bit.tobit(1.5), bit.tobit(2.5), bit.tobit(-0.5), bit.tobit(-1.5)`, `-1 -2147483648 5 -1 0 2 2 0 -2`},
	{`return bit.tobit(2^52), bit.tobit(2^53), bit.tobit(2^53+2), bit.tobit(2^60+12345), bit.tobit(-2^60-12345), bit.tobit(1e300), bit.tobit(1/0), bit.tobit(-1/0), bit.tobit(0/0), bit.tobit(-(0/0))`, `0 0 1 48 96 -2013235812 0 0 0 0`},
	{`return bit.tobit("10"), bit.tobit("0x10"), bit.tobit(" 7 ")`, `10 16 7`},
	{`return bit.tobit("x")`, `ERR:bad argument #1 to 'tobit' (number expected, got string)`},
	{`return bit.tobit()`, `ERR:bad argument #1 to 'tobit' (number expected, got no value)`},
	{`return bit.tobit(nil)`, `ERR:bad argument #1 to 'tobit' (number expected, got nil)`},
	{`return bit.tobit({})`, `ERR:bad argument #1 to 'tobit' (number expected, got table)`},
	{`return bit.tobit(1, 2)`, `1`},
	{`return bit.tohex(1), bit.tohex(-1), bit.tohex(0xdeadbeef), bit.tohex(0xdeadbeef, 4), bit.tohex(0xdeadbeef, -4), bit.tohex(255, -8), bit.tohex(255, 0), bit.tohex(255, 12), bit.tohex(255, -12), bit.tohex(255, 1)`, `00000001 ffffffff deadbeef beef BEEF 000000FF  000000ff 000000FF f`},
	{`return bit.tohex(1, nil)`, `ERR:bad argument #2 to 'tohex' (number expected, got nil)`},
	{`return bit.tohex(1, "x")`, `ERR:bad argument #2 to 'tohex' (number expected, got string)`},
	{`return bit.tohex(1, 2^32 + 3)`, `001`},
	{`return bit.tohex(1, -2^31)`, `00000001`},
	{`return bit.bnot(0), bit.bnot(-1), bit.bnot(0x12345678)`, `-1 0 -305419897`},
	{`return bit.band()`, `ERR:bad argument #1 to 'band' (number expected, got no value)`},
	{`return bit.band(1, "x", {})`, `ERR:bad argument #3 to 'band' (number expected, got table)`},
	{`return bit.band(1, "3")`, `1`},
	{`return bit.lshift(1, 31), bit.lshift(1, 32), bit.lshift(1, 33), bit.lshift(1, -1), bit.lshift(0xff, 28)`, `-2147483648 1 2 -2147483648 -268435456`},
	{`return bit.rshift(-1, 28), bit.rshift(0x80000000, 31), bit.rshift(1, 32), bit.rshift(256, -24)`, `15 1 1 1`},
	{`return bit.arshift(-256, 4), bit.arshift(0x80000000, 31), bit.arshift(256, 4), bit.arshift(-1, 0)`, `-16 -1 16 -1`},
	{`return bit.rol(0x12345678, 12), bit.rol(0x12345678, 0), bit.rol(0x12345678, 32), bit.rol(1, 31), bit.rol(0x80000000, 1)`, `1164411171 305419896 305419896 -2147483648 1`},
	{`return bit.ror(0x12345678, 12), bit.ror(0x12345678, 0), bit.ror(1, 1), bit.ror(1, -1)`, `1736516421 305419896 -2147483648 2`},
	{`return bit.bswap(0x12345678), bit.bswap(0x80), bit.bswap(-1)`, `2018915346 -2147483648 -1`},
	{`return bit.lshift(1)`, `ERR:bad argument #2 to 'lshift' (number expected, got no value)`},
	{`return bit.lshift()`, `ERR:bad argument #1 to 'lshift' (number expected, got no value)`},
	{`return bit.rshift("x", {})`, `ERR:bad argument #1 to 'rshift' (number expected, got string)`},
	{`return bit.bnot("0x10"), bit.bnot(1.5)`, `-17 -3`},
	{`return bit.tohex(-2^31, 8), bit.tohex(0x7fffffff), bit.tohex(2^31), bit.tohex(1.5)`, `80000000 7fffffff 80000000 00000002`},
	{`return bit.bswap()`, `ERR:bad argument #1 to 'bswap' (number expected, got no value)`},
	{`return bit.band(0xff, 0x0f0), bit.band(0xffffffff, 0xffffffff), bit.band(7), bit.bor(1, 2, 4, 8), bit.bxor(0xff, 0x0f, 1)`, `240 -1 7 15 241`},
	{`return bit.bor()`, `ERR:bad argument #1 to 'bor' (number expected, got no value)`},
	{`return bit.bxor(1, {})`, `ERR:bad argument #2 to 'bxor' (number expected, got table)`},
	{`return bit.tohex(0x1234, -3), bit.tohex(-1, 3), bit.tohex(0xabcdef01, -8)`, `234 fff ABCDEF01`},
	{`return pcall(bit.band, 1, "y")`, `false bad argument #2 to '?' (number expected, got string)`},
	{`local b = bit.bnot return b("z")`, `ERR:bad argument #1 to 'b' (number expected, got string)`},
}

func TestCJSONScripts(t *testing.T) {
	for _, c := range cjsonCases {
		runLibCase(t, c)
	}
}

func TestBitScripts(t *testing.T) {
	for _, c := range bitCases {
		runLibCase(t, c)
	}
}

// callLib calls a library function directly from Go, with no Lua caller,
// and returns its results or its error message.
func callLib(t *testing.T, L *lua.LState, lib, fn string, args ...lua.LValue) ([]lua.LValue, string) {
	t.Helper()
	f := L.GetField(L.GetGlobal(lib), fn)
	top := L.GetTop()
	if err := L.CallByParam(lua.P{Fn: f, NRet: lua.MultRet, Protect: true}, args...); err != nil {
		apiErr, ok := err.(*lua.ApiError)
		if !ok {
			t.Fatalf("%s.%s: unexpected error type %T: %v", lib, fn, err, err)
		}
		return nil, apiErr.Object.String()
	}
	var res []lua.LValue
	for i := top + 1; i <= L.GetTop(); i++ {
		res = append(res, L.Get(i))
	}
	L.SetTop(top)
	return res, ""
}

// With no Lua function calling them, errors carry no position and
// argument errors name the function '?', as luaL_error and luaL_argerror
// do when a script uses pcall(cjson.decode, s).
func TestCJSONErrorsWithoutLuaCaller(t *testing.T) {
	L := newLibState(t)
	defer L.Close()
	cases := []struct {
		lib, fn string
		args    []lua.LValue
		want    string
	}{
		{"cjson", "decode", []lua.LValue{lua.LString("[1,")}, "Expected value but found T_END at character 4"},
		{"cjson", "decode", nil, "bad argument #1 to '?' (expected 1 argument)"},
		{"cjson", "encode", []lua.LValue{L.NewFunction(func(*lua.LState) int { return 0 })}, "Cannot serialise function: type not supported"},
		{"cjson", "encode_max_depth", []lua.LValue{lua.LNumber(0)}, "bad argument #1 to '?' (expected integer between 1 and 2147483647)"},
		{"bit", "tohex", []lua.LValue{lua.LString("x")}, "bad argument #1 to '?' (number expected, got string)"},
	}
	for _, c := range cases {
		_, msg := callLib(t, L, c.lib, c.fn, c.args...)
		if msg != c.want {
			t.Errorf("%s.%s: got error %q, want %q", c.lib, c.fn, msg, c.want)
		}
	}
}

func TestCJSONNullSentinel(t *testing.T) {
	L := newLibState(t)
	defer L.Close()
	null := L.GetField(L.GetGlobal("cjson"), "null")
	if _, ok := null.(*lua.LUserData); !ok {
		t.Fatalf("cjson.null is %s, want userdata", null.Type())
	}
	res, msg := callLib(t, L, "cjson", "decode", lua.LString(`[null,{"a":null}]`))
	if msg != "" {
		t.Fatal(msg)
	}
	arr := res[0].(*lua.LTable)
	if arr.RawGetInt(1) != null || arr.RawGetInt(2).(*lua.LTable).RawGetString("a") != null {
		t.Errorf("decoded nulls are not cjson.null")
	}
	res, msg = callLib(t, L, "cjson", "encode", arr)
	if msg != "" || res[0].String() != `[null,{"a":null}]` {
		t.Errorf("encode: got %v %q", res, msg)
	}
	// A table from cjson.new shares the sentinel but not the settings.
	if err := L.DoString(`
		local c = cjson.new()
		assert(c.null == cjson.null)
		assert(c.decode("null") == cjson.null)
		c.encode_max_depth(1)
		assert(cjson.encode({{}}) == "[{}]")
		assert(not pcall(c.encode, {{}}))
		assert(c.new().encode_max_depth() == 1000)
	`); err != nil {
		t.Error(err)
	}
}

// A table graph whose encoding would be enormous stops with a Lua error.
func TestCJSONOutputLimit(t *testing.T) {
	saved := cjsonMaxOutput
	cjsonMaxOutput = 1 << 16
	defer func() { cjsonMaxOutput = saved }()
	L := newLibState(t)
	defer L.Close()
	err := L.DoString(`local t = {} for i = 1, 40 do t = {t, t} end return cjson.encode(t)`)
	if err == nil || !strings.Contains(err.Error(), "Cannot serialise, output too large") {
		t.Fatalf("got %v, want the output size error", err)
	}
	if err := L.DoString(`assert(#cjson.encode({string.rep("x", 60000)}) == 60004)`); err != nil {
		t.Fatal(err)
	}
}

func TestCJSONFormatG(t *testing.T) {
	// Expected values are C's printf("%.<p>g").
	cases := []struct {
		f    float64
		p    int
		want string
	}{
		{0, 14, "0"},
		{0.1, 14, "0.1"},
		{1.0 / 3, 14, "0.33333333333333"},
		{100, 1, "1e+02"},
		{123456, 6, "123456"},
		{1234567, 6, "1.23457e+06"},
		{0.0001, 14, "0.0001"},
		{0.00001, 14, "1e-05"},
		{9.9999999999999e-5, 2, "0.0001"},
		{99999999999999.9, 14, "1e+14"},
		{1e100, 14, "1e+100"},
		{5e-324, 14, "4.9406564584125e-324"},
		{2.5, 1, "2"},
		{-2.5e-7, 14, "-2.5e-07"},
	}
	for _, c := range cases {
		if got := extlibFormatG(c.f, c.p); got != c.want {
			t.Errorf("formatG(%v, %d) = %q, want %q", c.f, c.p, got, c.want)
		}
	}
}

// FuzzCJSONDecode checks that cjson.decode never panics, that it either
// returns one value or raises a Lua error, and that encoding what it
// returns is stable: encode(decode(encode(v))) == encode(v).
func FuzzCJSONDecode(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,2,{"b":null}],"c":"d\u00e9\ud83d\ude00"}`,
		`[1e309,-0,0x1p4,NaN,-Infinity,"\/"]`,
		`[[[[[[[[[[]]]]]]]]]]`,
		`{"a":1,"a":2}`,
		"\"\\u",
		"",
	} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, input string, strict bool) {
		L := newLibState(t)
		defer L.Close()
		cj := L.GetGlobal("cjson").(*lua.LTable)
		call := func(fn string, args ...lua.LValue) (lua.LValue, error) {
			if err := L.CallByParam(lua.P{Fn: L.GetField(cj, fn), NRet: 1, Protect: true}, args...); err != nil {
				if _, ok := err.(*lua.ApiError); !ok {
					t.Fatalf("%s: error is %T: %v", fn, err, err)
				}
				return nil, err
			}
			v := L.Get(-1)
			L.Pop(1)
			return v, nil
		}
		if _, err := call("decode_invalid_numbers", lua.LBool(!strict)); err != nil {
			t.Fatal(err)
		}
		if _, err := call("encode_invalid_numbers", lua.LTrue); err != nil {
			t.Fatal(err)
		}
		v, err := call("decode", lua.LString(input))
		if err != nil {
			return
		}
		e1, err := call("encode", v)
		if err != nil {
			t.Fatalf("encode of decoded %q: %v", input, err)
		}
		// The encoding may hold inf or nan, which strict decoding refuses.
		if _, err := call("decode_invalid_numbers", lua.LTrue); err != nil {
			t.Fatal(err)
		}
		v2, err := call("decode", e1)
		if err != nil {
			t.Fatalf("decode of %q (encoded from %q): %v", e1, input, err)
		}
		e2, err := call("encode", v2)
		if err != nil {
			t.Fatalf("re-encode of %q: %v", e1, err)
		}
		if e1.String() != e2.String() {
			t.Fatalf("unstable encoding for %q: %q then %q", input, e1, e2)
		}
	})
}
