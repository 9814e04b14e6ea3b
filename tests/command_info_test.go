package tests

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// cairnOnlyCommands are Cairn's commands that Redis does not have.
var cairnOnlyCommands = map[string]bool{"namespace": true}

// cairnExtraFlags are flags Cairn's commands have and Redis's do not, on
// purpose: REPLICAOF inside MULTI is refused, as a role change while
// EXEC holds key locks could wait on a replication link that waits on
// those locks.
var cairnExtraFlags = map[string]string{"replicaof": "no_multi", "slaveof": "no_multi"}

// TestCommandInfoMatchesRedis compares COMMAND INFO of every command Cairn
// has (subcommands included) with redis-server's: name, arity, flags, key
// positions and ACL categories. Tips, key specifications and the
// commands Cairn lacks are left out.
func TestCommandInfoMatchesRedis(t *testing.T) {
	cc, rc := StartCairn(t).Client(), StartRedis(t).Client()
	cx := ctx(t)
	names, err := cc.Do(cx, "COMMAND", "LIST").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	var diffs []string
	for _, name := range names {
		if cairnOnlyCommands[strings.Split(name, "|")[0]] {
			continue
		}
		ci, err := cc.Do(cx, "COMMAND", "INFO", name).Slice()
		if err != nil {
			t.Fatal(err)
		}
		ri, err := rc.Do(cx, "COMMAND", "INFO", name).Slice()
		if err != nil {
			t.Fatal(err)
		}
		if len(ri) != 1 || ri[0] == nil {
			diffs = append(diffs, fmt.Sprintf("%s: Redis has no such command", name))
			continue
		}
		c, r := commandInfoFields(ci[0], cairnExtraFlags[name]), commandInfoFields(ri[0], "")
		if c != r {
			diffs = append(diffs, fmt.Sprintf("%s:\n  cairn %s\n  redis %s", name, c, r))
		}
	}
	if len(diffs) > 0 {
		t.Fatalf("%d of %d commands differ:\n%s", len(diffs), len(names), strings.Join(diffs, "\n"))
	}
	// COMMAND LIST's filters select, among Cairn's commands, those
	// Redis's select.
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	for _, f := range [][]string{
		{"aclcat", "keyspace"}, {"aclcat", "read"}, {"aclcat", "write"}, {"aclcat", "string"}, {"aclcat", "pubsub"},
		{"aclcat", "admin"}, {"aclcat", "fast"}, {"aclcat", "slow"}, {"aclcat", "dangerous"}, {"aclcat", "connection"},
		{"aclcat", "transaction"}, {"aclcat", "hash"}, {"aclcat", "nosuch"}, {"pattern", "config*"}, {"pattern", "*ex*"},
		{"pattern", "CLIENT|K*"}, {"module", "nosuch"},
	} {
		got, err := cc.Do(cx, "COMMAND", "LIST", "FILTERBY", f[0], f[1]).StringSlice()
		if err != nil {
			t.Fatal(err)
		}
		all, err := rc.Do(cx, "COMMAND", "LIST", "FILTERBY", f[0], f[1]).StringSlice()
		if err != nil {
			t.Fatal(err)
		}
		got = slices.DeleteFunc(got, func(n string) bool { return cairnOnlyCommands[strings.Split(n, "|")[0]] })
		var want []string
		for _, n := range all {
			if have[n] {
				want = append(want, n)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("COMMAND LIST FILTERBY %s %s:\n  cairn %q\n  redis %q", f[0], f[1], got, want)
		}
	}
}

// commandInfoFields renders the compared fields of one COMMAND INFO entry,
// with flags and categories sorted, and without the flag skip.
func commandInfoFields(v any, skip string) string {
	e, ok := v.([]any)
	if !ok || len(e) < 7 {
		return fmt.Sprintf("malformed %v", v)
	}
	set := func(x any) string {
		var s []string
		xs, _ := x.([]any)
		for _, f := range xs {
			if f != skip {
				s = append(s, fmt.Sprint(f))
			}
		}
		slices.Sort(s)
		return "[" + strings.Join(s, " ") + "]"
	}
	return fmt.Sprintf("arity=%v flags=%s keys=%v,%v,%v acl=%s", e[1], set(e[2]), e[3], e[4], e[5], set(e[6]))
}
