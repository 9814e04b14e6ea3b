package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

func withPassword(p string) func(*redis.Options) {
	return func(o *redis.Options) { o.Password = p }
}

func TestNamespacesIsolateKeys(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "cairn.conf")
	os.WriteFile(conf, []byte("requirepass admin\nnamespace.fromfile filetoken\n"), 0o644)
	n := StartCairn(t, "-c", conf)
	c := ctx(t)
	admin := n.Client(withPassword("admin"))
	for _, cmd := range [][]any{
		{"NAMESPACE", "ADD", "tenantA", "tokenA"},
		{"NAMESPACE", "ADD", "tenantB", "tokenB"},
	} {
		if err := admin.Do(c, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	errCases := []struct {
		cmd  []any
		want string
	}{
		{[]any{"NAMESPACE", "ADD", "tenantA", "other"}, "ERR the namespace already exists"},
		{[]any{"NAMESPACE", "ADD", "tenantC", "tokenA"}, "ERR the token already exists"},
		{[]any{"NAMESPACE", "ADD", "tenantC", "admin"}, "ERR the token is duplicated with requirepass or masterauth"},
		{[]any{"NAMESPACE", "SET", "nosuch", "t"}, "ERR the namespace was not found"},
		{[]any{"NAMESPACE", "DEL", "__namespace"}, "ERR forbidden to delete the default namespace"},
	}
	for _, ec := range errCases {
		if err := admin.Do(c, ec.cmd...).Err(); err == nil || err.Error() != ec.want {
			t.Errorf("%v: got %v, want %q", ec.cmd, err, ec.want)
		}
	}
	a := n.Client(withPassword("tokenA"))
	b := n.Client(withPassword("tokenB"))
	f := n.Client(withPassword("filetoken"))
	admin.Set(c, "shared-name", "admin", 0)
	a.Set(c, "shared-name", "A", 0)
	a.Set(c, "only-a", "A", 0)
	b.Set(c, "shared-name", "B", 0)
	f.Set(c, "f", "F", 0)
	want := map[*redis.Client]string{admin: "admin", a: "A", b: "B"}
	for cl, v := range want {
		if got := cl.Get(c, "shared-name").Val(); got != v {
			t.Errorf("GET shared-name = %q, want %q", got, v)
		}
	}
	keysOf := func(cl *redis.Client) string {
		k := cl.Keys(c, "*").Val()
		sort.Strings(k)
		return strings.Join(k, ",")
	}
	if got := keysOf(a); got != "only-a,shared-name" {
		t.Errorf("KEYS in tenantA = %s", got)
	}
	if got := keysOf(b); got != "shared-name" {
		t.Errorf("KEYS in tenantB = %s", got)
	}
	if got, _, _ := b.Scan(c, 0, "*", 100).Result(); fmt.Sprint(got) != "[shared-name]" {
		t.Errorf("SCAN in tenantB = %v", got)
	}
	if got := a.DBSize(c).Val(); got != 2 {
		t.Errorf("DBSIZE tenantA = %d", got)
	}
	if err := a.Do(c, "NAMESPACE", "GET", "*").Err(); err == nil {
		t.Errorf("a namespace client ran NAMESPACE")
	}
	if err := a.FlushDB(c).Err(); err != nil {
		t.Fatal(err)
	}
	if a.DBSize(c).Val() != 0 || b.DBSize(c).Val() != 1 || admin.DBSize(c).Val() != 1 {
		t.Errorf("FLUSHDB in tenantA touched other namespaces")
	}
	// Namespaces persist across a restart; CONFIG REWRITE writes them back.
	if err := admin.ConfigRewrite(c).Err(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(conf)
	for _, line := range []string{"namespace.tenantA tokenA", "namespace.tenantB tokenB", "namespace.fromfile filetoken"} {
		if !strings.Contains(string(data), line) {
			t.Errorf("rewritten config lacks %q:\n%s", line, data)
		}
	}
	n.Stop()
	n.Restart()
	b = n.Client(withPassword("tokenB"))
	if got := b.Get(c, "shared-name").Val(); got != "B" {
		t.Fatalf("tenantB after restart: %q", got)
	}
	if got := n.Client(withPassword("filetoken")).Get(c, "f").Val(); got != "F" {
		t.Fatalf("file namespace after restart: %q", got)
	}
	if err := n.Client(withPassword("wrong")).Ping(c).Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGPASS") {
		t.Fatalf("wrong token: %v", err)
	}
}

func TestNamespaceNeedsRequirepass(t *testing.T) {
	n := StartCairn(t)
	err := n.Client().Do(ctx(t), "NAMESPACE", "ADD", "x", "y").Err()
	if err == nil || err.Error() != "ERR forbidden to add namespace when requirepass was empty" {
		t.Fatalf("got %v", err)
	}
}

func TestAuthRequired(t *testing.T) {
	n := StartCairn(t, "--requirepass", "pw")
	r := n.Raw()
	for _, c := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"GET", "k"}, "-NOAUTH Authentication required.\r\n"},
		{[]string{"NOSUCH"}, "-ERR unknown command 'NOSUCH', with args beginning with: \r\n"},
		{[]string{"AUTH", "bad"}, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{[]string{"AUTH", "pw"}, "+OK\r\n"},
		{[]string{"GET", "k"}, "$-1\r\n"},
	} {
		if got := r.Do(c.cmd...); got != c.want {
			t.Errorf("%v: got %q, want %q", c.cmd, got, c.want)
		}
	}
}
