package scripting

import (
	"testing"

	"github.com/cairnkv/cairn/server/resp"
)

// noHost refuses every command: the scripts here call none.
type noHost struct{}

func (noHost) Call([][]byte, int) ([]byte, error) { return []byte("-ERR no commands here\r\n"), nil }
func (noHost) Log(int, string)                    {}

// run compiles and executes body, returning its reply.
func run(t *testing.T, body string) string {
	t.Helper()
	s, err := Compile([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	w := resp.NewWriter()
	if err := Execute(NewRun(), s, nil, nil, noHost{}, w); err != nil {
		t.Fatal(err)
	}
	return string(w.Bytes())
}

// TestStateReuseLeavesNoTrace: what a script changes in its Lua state
// (globals refused, cjson settings reset) is not there for the next
// script that gets the same state from the pool.
func TestStateReuseLeavesNoTrace(t *testing.T) {
	for i := 0; i < 3; i++ {
		if got := run(t, "cjson.encode_max_depth(1) return cjson.encode({{1}})"); got[0] != '-' {
			t.Fatalf("encode beyond a depth of 1: %q, want an error", got)
		}
		if got := run(t, "return cjson.encode({{1}})"); got != "$5\r\n[[1]]\r\n" {
			t.Fatalf("the next script's encode: %q", got)
		}
		if got := run(t, "x = 1"); got[0] != '-' {
			t.Fatalf("a global write: %q, want an error", got)
		}
		if got := run(t, "return type(x)"); got[0] != '-' {
			t.Fatalf("reading x after a refused write: %q, want an error", got)
		}
	}
}

// TestKillBeforeExecute: a run killed before it starts (the server
// stopping) ends at once with ErrKilled.
func TestKillBeforeExecute(t *testing.T) {
	s, err := Compile([]byte("while true do end"))
	if err != nil {
		t.Fatal(err)
	}
	r := NewRun()
	r.Kill()
	w := resp.NewWriter()
	if err := Execute(r, s, nil, nil, noHost{}, w); err != ErrKilled {
		t.Fatalf("Execute: %v, want ErrKilled", err)
	}
}
