package tests

import (
	"encoding/hex"
	"slices"
	"strings"
	"testing"
)

// TestACLCategoriesMatchRedis checks ACL CAT for every category: Cairn
// lists exactly the commands (and subcommands) Redis lists that Cairn
// has. testdata/scripts/acl.txt checks the rest of ACL against Redis.
func TestACLCategoriesMatchRedis(t *testing.T) {
	cc, rc := StartCairn(t).Client(), StartRedis(t).Client()
	cx := ctx(t)
	names, err := cc.Do(cx, "COMMAND", "LIST").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	cats, err := rc.Do(cx, "ACL", "CAT").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	if len(cats) != 21 {
		t.Fatalf("Redis has %d categories: %q", len(cats), cats)
	}
	for _, cat := range cats {
		got, err := cc.Do(cx, "ACL", "CAT", cat).StringSlice()
		if err != nil {
			t.Fatalf("ACL CAT %s: %v", cat, err)
		}
		all, err := rc.Do(cx, "ACL", "CAT", cat).StringSlice()
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, n := range all {
			if slices.Contains(names, n) {
				want = append(want, n)
			}
		}
		got = slices.DeleteFunc(got, func(n string) bool { return cairnOnlyCommands[strings.Split(n, "|")[0]] })
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("ACL CAT %s:\n  cairn %q\n  redis %q", cat, got, want)
		}
	}
}

// TestACLForNamespaces checks what a namespace's connection may do with
// ACL: it is the default user (WHOAMI), may list categories and generate
// passwords, and is refused the subcommands Redis flags admin, as every
// admin command is refused to it.
func TestACLForNamespaces(t *testing.T) {
	n := StartCairn(t, "--requirepass", "adminpw")
	admin := n.Raw()
	admin.Expect("+OK\r\n", "AUTH", "adminpw")
	admin.Expect("+OK\r\n", "NAMESPACE", "ADD", "ns", "nstoken")
	tenant := n.Raw()
	tenant.Expect("+OK\r\n", "AUTH", "nstoken")
	tenant.Expect("$7\r\ndefault\r\n", "ACL", "WHOAMI")
	if got := tenant.Do("ACL", "CAT"); !strings.HasPrefix(got, "*21\r\n") {
		t.Fatalf("ACL CAT: %q", got)
	}
	for _, args := range [][]string{
		{"ACL", "LIST"}, {"ACL", "USERS"}, {"ACL", "GETUSER", "default"}, {"ACL", "LOG"}, {"ACL", "LOG", "RESET"},
		{"ACL", "DRYRUN", "default", "GET", "k"}, {"ACL", "DELUSER", "x"}, {"ACL", "SETUSER", "x"},
		{"ACL", "LOAD"}, {"ACL", "SAVE"},
	} {
		tenant.Expect("-ERR Only administrator can use this command\r\n", args...)
	}
	// A wrong namespace token is a failed authentication of the default
	// user.
	n.Raw().Expect("-WRONGPASS invalid username-password pair or user is disabled.\r\n", "AUTH", "nosuchtoken")
	if got := admin.Do("ACL", "LOG"); !strings.Contains(got, "$8\r\nusername\r\n$7\r\ndefault\r\n") || !strings.HasPrefix(got, "*1\r\n") {
		t.Fatalf("ACL LOG: %q", got)
	}
	// GENPASS: bits rounded up to whole hex digits, from a random source.
	for bits, digits := range map[string]int{"": 64, "1": 1, "4": 1, "5": 2, "255": 64, "4096": 1024} {
		args := []string{"ACL", "GENPASS"}
		if bits != "" {
			args = append(args, bits)
		}
		p1, p2 := tenant.Do(args...), tenant.Do(args...)
		for _, p := range []string{p1, p2} {
			lines := strings.Split(p, "\r\n")
			if len(lines) != 3 || len(lines[1]) != digits {
				t.Fatalf("ACL GENPASS %s: %q, want %d hex digits", bits, p, digits)
			}
			if _, err := hex.DecodeString(lines[1] + strings.Repeat("0", digits%2)); err != nil {
				t.Fatalf("ACL GENPASS %s: %q is not hex", bits, p)
			}
		}
		if digits >= 16 && p1 == p2 {
			t.Fatalf("ACL GENPASS %s gave %q twice", bits, p1)
		}
	}
}
