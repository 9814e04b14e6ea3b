package tests

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// monitorPrefix is the time and client address of a MONITOR line.
var monitorPrefix = regexp.MustCompile(`^\+\d+\.\d{6} \[0 (127\.0\.0\.1:\d+|lua)\] `)

// TestMonitor: a MONITOR client sees every command that ran, as Redis
// shows it (arguments quoted and escaped, passwords redacted, the
// commands of a transaction when EXEC runs them, then EXEC; a script,
// then its commands from "lua"), and neither admin commands nor refused
// ones. Its own keyspace commands are refused;
// RESET ends monitoring.
func TestMonitor(t *testing.T) {
	want := []string{
		`"set" "k" "a\"b\\c\nd\x01\xff\t"`,
		`"auth" "(redacted)"`,
		`"MULTI"`,
		`"SET" "m" "1"`,
		`"INCR" "m"`,
		`"EXEC"`,
		`"hello" "2" "auth" "(redacted)" "(redacted)"`,
		`"publish" "ch" "m"`,
		// A script, then its commands "[0 lua]".
		`"eval" "redis.call('set', KEYS[1], '1') return redis.call('get', KEYS[1])" "1" "mk"`,
		`[lua] "set" "mk" "1"`,
		`[lua] "get" "mk"`,
		`"echo" "end"`,
	}
	forEachTarget(t, func(t *testing.T, n *Node) {
		mon := n.Raw()
		mon.Expect("+OK\r\n", "MONITOR")
		c := n.Raw()
		for _, cmd := range [][]string{
			{"set", "k", "a\"b\\c\nd\x01\xff\t"},
			{"auth", "secret"},
			{"config", "get", "maxclients"}, // admin: not shown
			{"nosuch"},                      // refused: not shown
			{"get"},
			{"MULTI"}, {"SET", "m", "1"}, {"INCR", "m"}, {"EXEC"},
			{"hello", "2", "auth", "default", "pw"},
			{"publish", "ch", "m"},
			{"eval", "redis.call('set', KEYS[1], '1') return redis.call('get', KEYS[1])", "1", "mk"},
			{"echo", "end"},
		} {
			c.Do(cmd...)
		}
		var got []string
		for !slices.Contains(got, `"echo" "end"`) {
			line := mon.Reply()
			if !monitorPrefix.MatchString(line) {
				t.Fatalf("MONITOR line %q lacks the time and address", line)
			}
			shown := monitorPrefix.ReplaceAllString(line[:len(line)-2], "")
			if strings.Contains(line, "[0 lua]") {
				shown = "[lua] " + shown
			}
			got = append(got, shown)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("MONITOR showed\n%q\nwant\n%q", got, want)
		}
		mon.Expect("-ERR Replica can't interact with the keyspace\r\n", "GET", "k")
		mon.Expect("+RESET\r\n", "RESET")
		mon.Expect("$1\r\n2\r\n", "GET", "m")
	})
}

// TestMonitorNamespace: a monitor in a namespace sees only the commands
// of that namespace's clients; the admin's monitor sees everyone's.
func TestMonitorNamespace(t *testing.T) {
	n := StartCairn(t, "--requirepass", "admin")
	admin := n.Raw()
	admin.Do("AUTH", "admin")
	admin.Expect("+OK\r\n", "NAMESPACE", "ADD", "ns", "tok")
	nsMon, adminMon, tenant := n.Raw(), n.Raw(), n.Raw()
	nsMon.Do("AUTH", "tok")
	adminMon.Do("AUTH", "admin")
	tenant.Do("AUTH", "tok")
	for _, m := range []*RawConn{nsMon, adminMon} {
		m.Expect("+OK\r\n", "MONITOR")
	}
	admin.Do("SET", "admin-key", "1")
	tenant.Do("SET", "tenant-key", "1")
	tenant.Do("ECHO", "end")
	read := func(m *RawConn) []string {
		var got []string
		for !slices.Contains(got, `"ECHO" "end"`) {
			line := m.Reply()
			shown := monitorPrefix.ReplaceAllString(line[:len(line)-2], "")
			if strings.Contains(line, "[0 lua]") {
				shown = "[lua] " + shown
			}
			got = append(got, shown)
		}
		return got
	}
	if got, want := read(nsMon), []string{`"SET" "tenant-key" "1"`, `"ECHO" "end"`}; !slices.Equal(got, want) {
		t.Fatalf("the namespace's monitor showed %q, want %q", got, want)
	}
	want := []string{`"SET" "admin-key" "1"`, `"SET" "tenant-key" "1"`, `"ECHO" "end"`}
	if got := read(adminMon); !slices.Equal(got, want) {
		t.Fatalf("the admin's monitor showed %q, want %q", got, want)
	}
}
