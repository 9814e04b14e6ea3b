package commands

import (
	"sort"

	"github.com/cairnkv/cairn/config"
	"github.com/cairnkv/cairn/storage"
)

func init() {
	register(&Spec{Name: "namespace", Arity: -3, Flags: FlagAdmin | FlagLoading | FlagStale, Group: "server", Since: "1.0.0",
		Summary: "Manages namespaces: tokens that put a connection in its own keyspace.", Handler: cmdNamespace})
}

// Namespace errors, as Kvrocks words them.
const (
	errNsExists      = "ERR the namespace already exists"
	errNsTokenExists = "ERR the token already exists"
	errNsNotFound    = "ERR the namespace was not found"
	errNsNoPass      = "ERR forbidden to add namespace when requirepass was empty"
	errNsDelDefault  = "ERR forbidden to delete the default namespace"
	errNsAddDefault  = "ERR forbidden to add the default namespace"
	errNsBadToken    = "ERR the token is duplicated with requirepass or masterauth"
	errNsTooLong     = "ERR size exceed limit 255"
)

// cmdNamespace implements NAMESPACE GET <ns>|*, SET <ns> <token>,
// ADD <ns> <token> and DEL <ns>. Namespaces are stored through the commit
// path, so they persist and replicate like data.
func cmdNamespace(c *Ctx) {
	if !c.Client.Admin {
		c.W.Error(errAdminOnly)
		return
	}
	sub := lower(c.Args[1])
	switch {
	case sub == "get" && len(c.Args) == 3:
		namespaceGet(c, string(c.Args[2]))
	case (sub == "set" || sub == "add") && len(c.Args) == 4:
		namespaceSet(c, string(c.Args[2]), string(c.Args[3]), sub == "add")
	case sub == "del" && len(c.Args) == 3:
		namespaceDel(c, string(c.Args[2]))
	default:
		c.W.Error(errSyntax)
	}
}

func namespaceGet(c *Ctx, ns string) {
	all := c.Env.Store.Namespaces()
	if ns == "*" {
		names := make([]string, 0, len(all))
		for n := range all {
			names = append(names, n)
		}
		sort.Strings(names)
		c.W.Array(2 * (len(names) + 1))
		for _, n := range names {
			c.W.BulkString(n)
			c.W.BulkString(all[n])
		}
		c.W.BulkString(defaultNamespaceName)
		c.W.BulkString(c.Env.Config.String("requirepass"))
		return
	}
	if ns == defaultNamespaceName {
		c.W.BulkString(c.Env.Config.String("requirepass"))
		return
	}
	if t, ok := all[ns]; ok {
		c.W.BulkString(t)
		return
	}
	c.W.NullBulk()
}

func namespaceSet(c *Ctx, ns, token string, add bool) {
	switch {
	case len(ns) > storage.MaxNamespaceLen:
		c.W.Error(errNsTooLong)
		return
	case c.Env.Config.String("requirepass") == "":
		c.W.Error(errNsNoPass)
		return
	case ns == defaultNamespaceName:
		c.W.Error(errNsAddDefault)
		return
	case token == c.Env.Config.String("requirepass") || token == c.Env.Config.String("masterauth"):
		c.W.Error(errNsBadToken)
		return
	}
	unlock := c.Env.nsLock()
	defer unlock()
	all := c.Env.Store.Namespaces()
	cur, exists := all[ns]
	if add && exists {
		if cur == token {
			c.W.OK()
		} else {
			c.W.Error(errNsExists)
		}
		return
	}
	if !add && !exists {
		c.W.Error(errNsNotFound)
		return
	}
	for other, t := range all {
		if t == token && other != ns {
			c.W.Error(errNsTokenExists)
			return
		}
	}
	b := c.Env.Store.NewBatch(storage.LogData{Cmd: storage.CmdNamespace})
	b.PutNamespace(ns, token)
	if c.commit(b) {
		c.W.OK()
	}
}

func namespaceDel(c *Ctx, ns string) {
	if ns == defaultNamespaceName {
		c.W.Error(errNsDelDefault)
		return
	}
	unlock := c.Env.nsLock()
	defer unlock()
	if _, ok := c.Env.Store.Namespaces()[ns]; !ok {
		c.W.Error(errNsNotFound)
		return
	}
	b := c.Env.Store.NewBatch(storage.LogData{Cmd: storage.CmdNamespace})
	b.DeleteNamespace(ns)
	if c.commit(b) {
		c.W.OK()
	}
}

// nsLock serializes namespace changes, so token uniqueness checks hold.
func (e *Env) nsLock() func() {
	e.nsMu.Lock()
	return e.nsMu.Unlock
}

// syncNamespacesToConfig copies the stored namespaces into the options
// table, so CONFIG REWRITE writes them back as namespace.<ns> lines.
func (e *Env) syncNamespacesToConfig() error {
	all := e.Store.Namespaces()
	list := make([]config.NamespaceToken, 0, len(all))
	for ns, t := range all {
		list = append(list, config.NamespaceToken{Namespace: ns, Token: t})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Namespace < list[j].Namespace })
	return e.Config.SetNamespaces(list)
}

// LoadNamespaces merges the config file's namespace lines into storage at
// start-up: a namespace named in the file takes the file's token.
func (e *Env) LoadNamespaces() error {
	stored := e.Store.Namespaces()
	b := e.Store.NewBatch(storage.LogData{Cmd: storage.CmdNamespace})
	changed := false
	for _, nt := range e.Config.Namespaces() {
		if stored[nt.Namespace] != nt.Token {
			b.PutNamespace(nt.Namespace, nt.Token)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if _, err := e.Store.Commit(b); err != nil {
		return err
	}
	return nil
}
