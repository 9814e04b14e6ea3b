package tests

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// cairnOnlyCommands are Cairn's commands that Redis does not have.
var cairnOnlyCommands = map[string]bool{"namespace": true}

// TestCommandInfoMatchesRedis compares COMMAND INFO of every command Cairn
// has (subcommands included) with redis-server's, in RESP2 and in RESP3:
// the whole entry (name, arity, flags, key positions, ACL categories,
// tips, key specifications, subcommands) with its reply types. The members of the flag and ACL category sets
// and the subcommands are compared in any order (Redis lists subcommands
// in its hash table's order); tips and key specs in Redis's order. COMMAND
// DOCS must give Redis's version (since) and group. The commands Cairn
// lacks are left out.
func TestCommandInfoMatchesRedis(t *testing.T) {
	cn, rn := StartCairn(t), StartRedis(t)
	cc, rc := cn.Client(), rn.Client()
	cx := ctx(t)
	names, err := cc.Do(cx, "COMMAND", "LIST").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	var diffs []string
	for _, proto := range []string{"2", "3"} {
		craw, rraw := cn.Raw(), rn.Raw()
		if proto == "3" {
			craw.Do("HELLO", "3")
			rraw.Do("HELLO", "3")
		}
		for _, name := range names {
			if cairnOnlyCommands[strings.Split(name, "|")[0]] {
				continue
			}
			ci, ri := diffParse(craw.Do("COMMAND", "INFO", name)), diffParse(rraw.Do("COMMAND", "INFO", name))
			if len(ri.elems) != 1 || ri.elems[0].null {
				diffs = append(diffs, fmt.Sprintf("%s: Redis has no such command", name))
				continue
			}
			if len(ci.elems) != 1 {
				diffs = append(diffs, fmt.Sprintf("%s: Cairn's reply %s", name, diffRender(ci)))
				continue
			}
			c, r := commandInfoFields(ci.elems[0]), commandInfoFields(ri.elems[0])
			for i := range max(len(c), len(r)) {
				cf, rf := "(none)", "(none)"
				if i < len(c) {
					cf = c[i]
				}
				if i < len(r) {
					rf = r[i]
				}
				if cf != rf {
					diffs = append(diffs, fmt.Sprintf("%s (RESP%s):\n  cairn %s\n  redis %s", name, proto, cf, rf))
				}
			}
		}
	}
	// COMMAND DOCS: the version and the group (summaries are Cairn's own).
	for _, name := range names {
		if cairnOnlyCommands[strings.Split(name, "|")[0]] {
			continue
		}
		cd, err := cc.Do(cx, "COMMAND", "DOCS", name).Slice()
		if err != nil {
			t.Fatal(err)
		}
		rd, err := rc.Do(cx, "COMMAND", "DOCS", name).Slice()
		if err != nil {
			t.Fatal(err)
		}
		if len(cd) != 2 || len(rd) != 2 {
			diffs = append(diffs, fmt.Sprintf("%s: COMMAND DOCS %v, Redis's %v", name, cd, rd))
			continue
		}
		for _, field := range []string{"since", "group"} {
			if c, r := docsField(cd[1], field), docsField(rd[1], field); c != r {
				diffs = append(diffs, fmt.Sprintf("%s: COMMAND DOCS %s %q, Redis's %q", name, field, c, r))
			}
		}
	}
	if len(diffs) > 0 {
		t.Fatalf("%d fields differ (%d commands, each in RESP2 and RESP3):\n%s", len(diffs), len(names), strings.Join(diffs, "\n"))
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

// commandInfoFields renders the fields of one COMMAND INFO entry with
// their reply types, each named, the flags, ACL categories and
// subcommands sorted.
func commandInfoFields(e diffReply) []string {
	if e.kind != '*' || len(e.elems) != 10 {
		return []string{"malformed " + commandInfoValue(e)}
	}
	sorted := func(v diffReply) string {
		var s []string
		for _, m := range v.elems {
			s = append(s, commandInfoValue(m))
		}
		slices.Sort(s)
		return fmt.Sprintf("%c[%s]", v.kind, strings.Join(s, " "))
	}
	var subs []string
	for _, sub := range e.elems[9].elems {
		subs = append(subs, "{"+strings.Join(commandInfoFields(sub), " ")+"}")
	}
	slices.Sort(subs)
	f := e.elems
	return []string{
		"name=" + commandInfoValue(f[0]),
		"arity=" + commandInfoValue(f[1]),
		"flags=" + sorted(f[2]),
		fmt.Sprintf("keys=%s,%s,%s", commandInfoValue(f[3]), commandInfoValue(f[4]), commandInfoValue(f[5])),
		"acl=" + sorted(f[6]),
		"tips=" + commandInfoValue(f[7]),
		"keyspecs=" + commandInfoValue(f[8]),
		fmt.Sprintf("subcommands=%c[%s]", f[9].kind, strings.Join(subs, " ")),
	}
}

// commandInfoValue renders a reply with its types: a bulk string quoted,
// a simple string after '+', an aggregate as its type character and its
// members in brackets.
func commandInfoValue(v diffReply) string {
	switch {
	case v.null:
		return "null"
	case v.kind == '$':
		return strconv.Quote(v.str)
	case v.kind == '*' || v.kind == '%' || v.kind == '~':
		var s []string
		for _, m := range v.elems {
			s = append(s, commandInfoValue(m))
		}
		return fmt.Sprintf("%c[%s]", v.kind, strings.Join(s, " "))
	}
	return string(v.kind) + v.str
}

// TestCommandGetKeysMatchesRedis sends COMMAND GETKEYS and COMMAND
// GETKEYSANDFLAGS for each command line below to Cairn and to
// redis-server, in RESP2 and in RESP3, and compares the raw replies: the
// keys, in Redis's order, their flags (those of SET and BITFIELD depend on
// the arguments) and Redis's errors.
func TestCommandGetKeysMatchesRedis(t *testing.T) {
	cases := []string{
		// One key, flags by family.
		"get k", "getrange k 0 1", "strlen k", "append k v", "incrbyfloat k 1.5", "getdel k", "setnx k v",
		"setex k 10 v", "setrange k 0 v", "type k", "ttl k", "expire k 10 nx", "persist k", "dump k",
		"restore k 0 payload replace", "move k 1", "getbit k 0", "setbit k 0 1", "bitcount k 0 -1", "bitpos k 1",
		// Flags that depend on the arguments.
		"set k v", "set k v get", "set k v EX 10 GET", "set k get", "set k v getx",
		"bitfield k get u8 0", "bitfield k overflow wrap get u8 0", "bitfield k get u8 0 set u8 0 1",
		"bitfield k incrby u8 0 1", "bitfield k get u8", "bitfield k", "bitfield_ro k get u8 0",
		"getex k", "getex k persist",
		// Several keys: ranges, steps, two specs.
		"del a b c", "unlink a", "exists a b a", "touch a b", "mget a b c", "watch a b",
		"mset a 1 b 2", "mset a 1 b", "msetnx a 1 b 2", "lcs a b", "copy a b db 1 replace",
		"rename a b", "renamenx a b", "bitop and d s1 s2", "bitop not d s",
		// Subcommands.
		"object encoding k", "OBJECT FREQ k", "object idletime k", "object refcount k",
		"memory usage k", "memory usage k samples 5",
		// Scripts: keys counted by numkeys, none at all allowed.
		"eval s 2 a b c", "eval_ro s 1 a b", "evalsha s 0", "eval s 0 x", "eval s abc x", "eval s 5 x", "eval s -1 x",
		// Errors: no keys (shard channels are not keys), unknown
		// command or subcommand, wrong number of arguments.
		"ping a b c", "keys *", "publish ch m", "spublish ch m", "ssubscribe a b", "client list", "object help",
		"command getkeys get k", "nosuch k", "object nosuch k", "client nosuch", "get a b", "object encoding",
		"memory usage", "getex", "get",
	}
	cn, rn := StartCairn(t), StartRedis(t)
	for _, proto := range []string{"2", "3"} {
		c, r := cn.Raw(), rn.Raw()
		if proto == "3" {
			c.Do("HELLO", "3")
			r.Do("HELLO", "3")
		}
		for _, line := range cases {
			for _, sub := range []string{"GETKEYS", "GETKEYSANDFLAGS"} {
				args := append([]string{"COMMAND", sub}, strings.Fields(line)...)
				if got, want := c.Do(args...), r.Do(args...); got != want {
					t.Errorf("RESP%s COMMAND %s %s:\n  cairn %q\n  redis %q", proto, sub, line, got, want)
				}
			}
		}
	}
}

// docsField returns one field of a COMMAND DOCS entry (a RESP2 flat list
// of names and values), "" when it has none.
func docsField(entry any, name string) string {
	m, _ := entry.([]any)
	for i := 0; i+1 < len(m); i += 2 {
		if m[i] == name {
			return fmt.Sprint(m[i+1])
		}
	}
	return ""
}
