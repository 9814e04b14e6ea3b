package scripting

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/server/resp"
)

// nopHost answers every redis.call with OK.
type nopHost struct{}

func (nopHost) Call([][]byte, int) ([]byte, error) { return []byte("+OK\r\n"), nil }
func (nopHost) Log(int, string)                    {}

func TestLoadLibrary(t *testing.T) {
	lib, err := LoadLibrary([]byte("#!lua name=lib\nlocal n = 0\n"+
		"redis.register_function('inc', function(keys, args) n = n + #keys + #args return n end)\n"+
		"redis.register_function{function_name='ro', callback=function() return redis.call('get', 'k') end, flags={'no-writes', 'allow-stale'}, description='d'}"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if lib.Name != "lib" || len(lib.Functions) != 2 {
		t.Fatalf("library %q with %d functions", lib.Name, len(lib.Functions))
	}
	ro := lib.Functions["ro"]
	if ro.Flags != FlagNoWrites|FlagAllowStale || ro.Description != "d" || !ro.HasDesc || !ro.Stateless() {
		t.Fatalf("ro: %+v", ro)
	}
	inc := lib.Functions["inc"]
	if inc.Stateless() {
		t.Fatal("inc has an upvalue")
	}
	for _, want := range []string{":3\r\n", ":6\r\n"} {
		w := resp.NewWriter()
		if !lib.TryLock(0) {
			t.Fatal("the library is held")
		}
		err := inc.Execute(NewRun(), [][]byte{[]byte("k")}, [][]byte{[]byte("a"), []byte("b")}, nopHost{}, w)
		lib.Unlock()
		if err != nil || string(w.Bytes()) != want {
			t.Fatalf("inc: %q, %v; want %q", w.Bytes(), err, want)
		}
	}
}

func TestLoadLibraryErrors(t *testing.T) {
	for code, want := range map[string]string{
		"return 1":                                   "Missing library metadata",
		"#!lua name=x":                               "Invalid library metadata",
		"#!lua\nreturn 1":                            "Library name was not given",
		"#!lua name=a name=b\n":                      "Invalid metadata value, name argument was given multiple times",
		"#!lua name=a b=c\n":                         "Invalid metadata value given: b=c",
		"#!js name=a\n":                              "Engine 'js' not found",
		"#!lua name=a-b\n":                           "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long",
		"#!lua name=a\nlocal x = 1":                  "No functions registered",
		"#!lua name=a\nwhile true do end":            "Error registering functions: ERR FUNCTION LOAD timeout",
		"#!lua name=a\nredis.call('x')":              "Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'call'",
		"#!lua name=a\nredis.register_function('f')": "Error registering functions: ERR calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).",
		"#!\"\"\n":                                   "Library name was not given",
		"#!\"\n":                                     "Invalid library metadata",
		"#!  name=x\n":                               "Engine '' not found",
	} {
		start := time.Now()
		_, err := LoadLibrary([]byte(code), nil)
		if err == nil || !errors.Is(err, ErrInvalid) || err.Error() != want {
			t.Errorf("%q: %v, want %q", code, err, want)
		}
		if time.Since(start) > 5*LoadTimeout {
			t.Errorf("%q took %v", code, time.Since(start))
		}
	}
}

// FuzzLoadLibrary: no library code makes LoadLibrary panic.
func FuzzLoadLibrary(f *testing.F) {
	for _, s := range []string{"#!lua name=a\nredis.register_function('f', function() return 1 end)",
		"#!lua name=a\nredis.register_function{function_name='f', callback=function() end, flags={'no-writes'}}", "#!\"", "#!lua name=\"a b\"\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		if strings.Contains(code, "while") || strings.Contains(code, "repeat") || strings.Contains(code, "for") || strings.Contains(code, "goto") {
			return // loops only time out
		}
		_, _ = LoadLibrary([]byte(code), nil)
	})
}
