package commands

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// RedisVersion is the Redis level whose behaviour Cairn implements; HELLO
// and INFO report it as redis_version.
const RedisVersion = "7.0.15"

// defaultNamespaceName is how the default namespace is named to clients.
const defaultNamespaceName = "__namespace"

func init() {
	register(
		&Spec{Name: "ping", Arity: -1, Flags: FlagFast, Tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"}, Group: "connection", Since: "1.0.0", Summary: "Returns the server's liveliness response.", Handler: cmdPing},
		&Spec{Name: "echo", Arity: 2, Flags: FlagFast | FlagLoading | FlagStale, Group: "connection", Since: "1.0.0", Summary: "Returns the given string.", Handler: cmdEcho},
		&Spec{Name: "quit", Arity: -1, Flags: FlagNoAuth | FlagFast | FlagStale | FlagLoading | FlagNoScript | FlagAllowBusy, Group: "connection", Since: "1.0.0", Summary: "Closes the connection.", Handler: cmdQuit},
		&Spec{Name: "reset", Arity: 1, Flags: FlagNoAuth | FlagFast | FlagStale | FlagLoading | FlagNoScript | FlagAllowBusy, Group: "connection", Since: "6.2.0", Summary: "Resets the connection.", Handler: cmdReset},
		&Spec{Name: "hello", Arity: -1, Flags: FlagNoAuth | FlagFast | FlagStale | FlagLoading | FlagNoScript | FlagAllowBusy, Group: "connection", Since: "6.0.0", Summary: "Handshakes with the Redis server.", Handler: cmdHello},
		&Spec{Name: "auth", Arity: -2, Flags: FlagNoAuth | FlagFast | FlagStale | FlagLoading | FlagNoScript | FlagAllowBusy, Group: "connection", Since: "1.0.0", Summary: "Authenticates the connection.", Handler: cmdAuth},
		&Spec{Name: "select", Arity: 2, Flags: FlagFast | FlagStale | FlagLoading, Group: "connection", Since: "1.0.0", Summary: "Changes the selected database.", Handler: cmdSelect},
		&Spec{Name: "client", Arity: -2, Group: "connection", Since: "2.4.0", Summary: "A container for client connection commands.", Handler: nil,
			Subcommands: map[string]*Spec{
				"id":           {Arity: 2, Flags: FlagNoScript | FlagLoading | FlagStale, Since: "5.0.0", Summary: "Returns the unique client ID of the connection.", Handler: cmdClientID},
				"setname":      {Arity: 3, Flags: FlagNoScript | FlagLoading | FlagStale, Since: "2.6.9", Summary: "Sets the connection name.", Handler: cmdClientSetName},
				"getname":      {Arity: 2, Flags: FlagNoScript | FlagLoading | FlagStale, Since: "2.6.9", Summary: "Returns the name of the connection.", Handler: cmdClientGetName},
				"list":         {Arity: -2, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Tips: []string{"nondeterministic_output"}, Since: "2.4.0", Summary: "Lists open connections.", Handler: cmdClientList},
				"info":         {Arity: 2, Flags: FlagNoScript | FlagLoading | FlagStale, Tips: []string{"nondeterministic_output"}, Since: "6.2.0", Summary: "Returns information about the connection.", Handler: cmdClientInfo},
				"kill":         {Arity: -3, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Since: "2.4.0", Summary: "Terminates open connections.", Handler: cmdClientKill},
				"help":         {Arity: 2, Flags: FlagLoading | FlagStale, Since: "5.0.0", Summary: "Returns helpful text about the different subcommands.", Handler: cmdClientHelp},
				"reply":        {Arity: 3, Flags: FlagNoScript | FlagLoading | FlagStale, Since: "3.2.0", Summary: "Instructs the server whether to reply to commands.", Handler: cmdClientReply},
				"pause":        {Arity: -3, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Since: "2.9.50", Summary: "Suspends commands processing.", Handler: cmdClientPause},
				"unpause":      {Arity: 2, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Since: "6.2.0", Summary: "Resumes processing commands from paused clients.", Handler: cmdClientUnpause},
				"no-evict":     {Arity: 3, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Since: "7.0.0", Summary: "Sets the client eviction mode of the connection.", Handler: cmdClientNoEvict},
				"unblock":      {Arity: -3, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Since: "5.0.0", Summary: "Unblocks a client blocked by a blocking command from a different connection.", Handler: cmdClientUnblock},
				"tracking":     {Arity: -3, Flags: FlagNoScript | FlagLoading | FlagStale, Since: "6.0.0", Summary: "Controls server-assisted client-side caching for the connection.", Handler: cmdClientTracking},
				"getredir":     {Arity: 2, Flags: FlagNoScript | FlagLoading | FlagStale, Since: "6.0.0", Summary: "Returns the client ID to which the connection's tracking notifications are redirected.", Handler: cmdClientGetRedir},
				"trackinginfo": {Arity: 2, Flags: FlagNoScript | FlagLoading | FlagStale, Since: "6.2.0", Summary: "Returns information about server-assisted client-side caching for the connection.", Handler: cmdClientTrackingInfo},
				"caching":      {Arity: 3, Flags: FlagNoScript | FlagLoading | FlagStale, Since: "6.0.0", Summary: "Instructs the server whether to track the keys in the next request.", Handler: cmdClientCaching},
			}},
	)
}

func cmdPing(c *Ctx) {
	if len(c.Args) > 2 {
		c.wrongArity()
		return
	}
	if c.Client.subs > 0 && c.W.Proto == 2 {
		// Subscribed mode answers with a push-shaped array.
		c.W.Array(2)
		c.W.BulkString("pong")
		if len(c.Args) > 1 {
			c.W.Bulk(c.Args[1])
		} else {
			c.W.BulkString("")
		}
		return
	}
	if len(c.Args) == 1 {
		c.W.SimpleString("PONG")
		return
	}
	c.W.Bulk(c.Args[1])
}

func cmdEcho(c *Ctx) { c.W.Bulk(c.Args[1]) }

func cmdQuit(c *Ctx) {
	c.Client.CloseAfterReply = true
	c.W.OK()
}

func cmdReset(c *Ctx) {
	if c.Client.Subscriber != nil {
		c.Env.PubSub.Drop(c.Client.Subscriber)
	}
	c.Client.setSubscriptions(0)
	c.Env.StopMonitoring(c.Client)
	c.Client.replyOff, c.Client.replySkipNext = false, false
	c.Client.setMulti(nil)
	c.Env.Clients.unwatch(c.Client)
	c.Env.Clients.tracking.disable(c.Client)
	c.W.Proto = 2
	c.Client.SetProto(2)
	c.Client.SetName("")
	c.Client.Namespace = ""
	c.Client.Admin, c.Client.Authed = c.Env.authDefaults()
	c.W.SimpleString("RESET")
}

// authDefaults returns the admin and authenticated state of a fresh
// connection: everything is allowed when no requirepass is set.
func (e *Env) authDefaults() (admin, authed bool) {
	open := e.Config.String("requirepass") == ""
	return open, open
}

// NewClientState sets a new connection's authentication state.
func (e *Env) NewClientState(cl *Client) {
	cl.Admin, cl.Authed = e.authDefaults()
}

// authenticate checks a password: requirepass makes the connection an
// admin in the default namespace; a namespace token puts it in that
// namespace.
func (c *Ctx) authenticate(pass string) bool {
	if rp := c.Env.Config.String("requirepass"); rp != "" && pass == rp {
		c.Client.Namespace, c.Client.Admin, c.Client.Authed = "", true, true
		return true
	}
	for ns, token := range c.Env.Store.Namespaces() {
		if token == pass {
			c.Client.Namespace, c.Client.Admin, c.Client.Authed = ns, false, true
			return true
		}
	}
	return false
}

const (
	errWrongPass        = "WRONGPASS invalid username-password pair or user is disabled."
	errNoPassConfigured = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
)

func cmdAuth(c *Ctx) {
	if len(c.Args) > 3 {
		c.W.Error(errSyntax)
		return
	}
	if len(c.Args) == 3 && string(c.Args[1]) != defaultUser {
		c.noteAuthFailure(string(c.Args[1]))
		c.W.Error(errWrongPass)
		return
	}
	if c.Env.Config.String("requirepass") == "" {
		if len(c.Args) == 3 {
			// The default user has no password: any password is accepted.
			c.W.OK()
			return
		}
		c.W.Error(errNoPassConfigured)
		return
	}
	if !c.authenticate(string(c.Args[len(c.Args)-1])) {
		c.noteAuthFailure(defaultUser)
		c.W.Error(errWrongPass)
		return
	}
	c.W.OK()
}

func cmdHello(c *Ctx) {
	proto := int64(c.W.Proto)
	if len(c.Args) >= 2 {
		n, ok := parseInt(c.Args[1])
		if !ok {
			c.W.Error("ERR Protocol version is not an integer or out of range")
			return
		}
		if n < 2 || n > 3 {
			c.W.Error("NOPROTO unsupported protocol version")
			return
		}
		proto = n
	}
	var user, pass, name []byte
	hasAuth, hasName := false, false
	for j := 2; j < len(c.Args); j++ {
		rest := len(c.Args) - j - 1
		switch opt := lower(c.Args[j]); {
		case opt == "auth" && rest >= 2:
			hasAuth, user, pass = true, c.Args[j+1], c.Args[j+2]
			j += 2
		case opt == "setname" && rest >= 1:
			hasName, name = true, c.Args[j+1]
			j++
		default:
			c.errorf("ERR Syntax error in HELLO option '%s'", c.Args[j])
			return
		}
	}
	if hasAuth {
		open := c.Env.Config.String("requirepass") == ""
		if string(user) != defaultUser || (!open && !c.authenticate(string(pass))) {
			c.noteAuthFailure(string(user))
			c.W.Error(errWrongPass)
			return
		}
	}
	if !c.Client.Authed {
		c.W.Error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if hasName {
		if !validClientName(name) {
			c.W.Error(errClientName)
			return
		}
		c.Client.SetName(string(name))
	}
	c.W.Proto = int(proto)
	c.Client.SetProto(int(proto))
	c.W.Map(7)
	c.W.BulkString("server")
	c.W.BulkString("redis")
	c.W.BulkString("version")
	c.W.BulkString(RedisVersion)
	c.W.BulkString("proto")
	c.W.Int(proto)
	c.W.BulkString("id")
	c.W.Int(c.Client.ID)
	c.W.BulkString("mode")
	c.W.BulkString("standalone")
	c.W.BulkString("role")
	c.W.BulkString("master")
	c.W.BulkString("modules")
	c.W.Array(0)
}

func cmdSelect(c *Ctx) {
	db, ok := c.dbIndex(c.Args[1], "")
	if !ok {
		return
	}
	if db != 0 {
		c.W.Error("ERR DB index is out of range")
		return
	}
	c.W.OK()
}

const errClientName = "ERR Client names cannot contain spaces, newlines or special characters."

// validClientName applies Redis's rule: printable ASCII without spaces.
func validClientName(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

func cmdClientID(c *Ctx) { c.W.Int(c.Client.ID) }

func cmdClientSetName(c *Ctx) {
	if !validClientName(c.Args[2]) {
		c.W.Error(errClientName)
		return
	}
	c.Client.SetName(string(c.Args[2]))
	c.W.OK()
}

func cmdClientGetName(c *Ctx) {
	if n := c.Client.Name(); n != "" {
		c.W.BulkString(n)
		return
	}
	c.W.NullBulk()
}

func cmdClientInfo(c *Ctx) { c.W.Verbatim(c.Env.ClientInfo(c.Client, c.Now) + "\n") }

func cmdClientList(c *Ctx) {
	// As in Redis 7.0: either TYPE <type> alone, or ID followed by
	// integers (an ID no client has, 0 included, matches nothing).
	var ids map[int64]bool
	var typ func(*Client) bool
	switch {
	case len(c.Args) == 2:
	case len(c.Args) == 4 && lower(c.Args[2]) == "type":
		var ok bool
		if typ, ok = c.clientType(c.Args[3]); !ok {
			return
		}
	case len(c.Args) >= 4 && lower(c.Args[2]) == "id":
		ids = map[int64]bool{}
		for _, a := range c.Args[3:] {
			id, ok := parseInt(a)
			if !ok {
				c.W.Error("ERR Invalid client ID")
				return
			}
			ids[id] = true
		}
	default:
		c.W.Error(errSyntax)
		return
	}
	var b strings.Builder
	for _, cl := range c.Env.Clients.List() {
		if (ids != nil && !ids[cl.ID]) || (typ != nil && !typ(cl)) {
			continue
		}
		if !c.Client.Admin && cl.Namespace != c.Client.Namespace {
			continue
		}
		b.WriteString(c.Env.ClientInfo(cl, c.Now))
		b.WriteByte('\n')
	}
	c.W.Verbatim(b.String())
}

// clientType parses a CLIENT LIST/KILL TYPE into a filter; it replies
// with Redis's error for an unknown type.
func (c *Ctx) clientType(name []byte) (func(*Client) bool, bool) {
	subscribed := func(cl *Client) bool {
		if cl.Subscriber == nil {
			return false
		}
		ch, p, sh := c.Env.PubSub.Counts(cl.Subscriber)
		return ch+p+sh > 0
	}
	switch lower(name) {
	case "normal":
		return func(cl *Client) bool { return !subscribed(cl) }, true
	case "pubsub":
		return subscribed, true
	case "master", "replica", "slave":
		return func(*Client) bool { return false }, true
	}
	c.errorf("ERR Unknown client type '%s'", name)
	return nil, false
}

func cmdClientKill(c *Ctx) {
	if len(c.Args) == 3 {
		// Old form: CLIENT KILL addr:port.
		for _, cl := range c.Env.Clients.List() {
			if cl.Addr == string(c.Args[2]) {
				c.kill(cl)
				c.W.OK()
				return
			}
		}
		c.W.Error("ERR No such client")
		return
	}
	if len(c.Args)%2 != 0 {
		c.W.Error(errSyntax)
		return
	}
	skipMe := true
	var match []func(*Client) bool
	for j := 2; j < len(c.Args); j += 2 {
		val := string(c.Args[j+1])
		switch lower(c.Args[j]) {
		case "id":
			id, ok := parseInt(c.Args[j+1])
			if !ok || id <= 0 {
				c.W.Error("ERR client-id should be greater than 0")
				return
			}
			match = append(match, func(cl *Client) bool { return cl.ID == id })
		case "addr":
			match = append(match, func(cl *Client) bool { return cl.Addr == val })
		case "laddr":
			match = append(match, func(cl *Client) bool { return cl.LAddr == val })
		case "type":
			typ, ok := c.clientType(c.Args[j+1])
			if !ok {
				return
			}
			match = append(match, typ)
		case "user":
			// Every client is the default user, the only one there is.
			if val != "default" {
				c.errorf("ERR No such user '%s'", val)
				return
			}
		case "skipme":
			switch strings.ToLower(val) {
			case "yes":
				skipMe = true
			case "no":
				skipMe = false
			default:
				c.W.Error(errSyntax)
				return
			}
		default:
			c.W.Error(errSyntax)
			return
		}
	}
	var n int64
	for _, cl := range c.Env.Clients.List() {
		if skipMe && cl == c.Client {
			continue
		}
		ok := true
		for _, m := range match {
			ok = ok && m(cl)
		}
		if ok {
			c.kill(cl)
			n++
		}
	}
	c.W.Int(n)
}

// kill closes cl; killing the current connection waits for its reply.
func (c *Ctx) kill(cl *Client) {
	if cl == c.Client {
		cl.CloseAfterReply = true
		return
	}
	if cl.Kill != nil {
		cl.Kill()
	}
}

// cmdClientReply sets the connection's reply mode; Dispatch drops the
// replies. OFF and SKIP reply nothing themselves.
func cmdClientReply(c *Ctx) {
	cl := c.Client
	switch lower(c.Args[2]) {
	case "on":
		cl.replyOff, cl.replySkipNext = false, false
		c.W.OK()
	case "off":
		cl.replyOff = true
	case "skip":
		if !cl.replyOff {
			cl.replySkipNext = true
		}
	default:
		c.W.Error(errSyntax)
	}
}

// maxPause bounds a CLIENT PAUSE timeout so that the end time stays
// representable; it is longer than any server runs.
const maxPause = 100 * 365 * 24 * time.Hour

func cmdClientPause(c *Ctx) {
	if len(c.Args) > 4 {
		c.errorf("ERR unknown subcommand or wrong number of arguments for '%s'. Try CLIENT HELP.", c.Args[1])
		return
	}
	all := true
	if len(c.Args) == 4 {
		switch lower(c.Args[3]) {
		case "write":
			all = false
		case "all":
		default:
			c.W.Error("ERR CLIENT PAUSE mode must be WRITE or ALL")
			return
		}
	}
	ms, ok := c.timeoutArg(2)
	if !ok {
		return
	}
	d := maxPause
	if ms < int64(maxPause/time.Millisecond) {
		d = time.Duration(ms) * time.Millisecond
	}
	c.Env.pause.pause(c.Now.Add(d), all, c.Client.passedGate)
	c.W.OK()
}

func cmdClientUnpause(c *Ctx) {
	c.Env.pause.unpause()
	c.W.OK()
}

// cmdClientNoEvict records the flag: Cairn never evicts clients
// (maxmemory-clients), so it only shows in CLIENT LIST.
func cmdClientNoEvict(c *Ctx) {
	switch lower(c.Args[2]) {
	case "on":
		c.Client.noEvict.Store(true)
	case "off":
		c.Client.noEvict.Store(false)
	default:
		c.W.Error(errSyntax)
		return
	}
	c.W.OK()
}

// cmdClientUnblock replies 0: Cairn has no blocking commands, and a client
// waiting for CLIENT PAUSE cannot be unblocked (Redis 7.0.15 crashes on
// that).
func cmdClientUnblock(c *Ctx) {
	if len(c.Args) > 4 {
		c.errorf("ERR unknown subcommand or wrong number of arguments for '%s'. Try CLIENT HELP.", c.Args[1])
		return
	}
	if len(c.Args) == 4 {
		if r := lower(c.Args[3]); r != "timeout" && r != "error" {
			c.W.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	}
	id, ok := c.intArg(2)
	if !ok {
		return
	}
	withError := len(c.Args) == 4 && lower(c.Args[3]) == "error"
	if cl := c.Env.Clients.get(id); cl != nil && unblockClient(cl, withError) {
		c.W.Int(1)
		return
	}
	c.W.Int(0)
}

func cmdClientHelp(c *Ctx) {
	help(c, "CLIENT", []string{
		"CACHING (YES|NO)", "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
		"GETREDIR", "    Return the client ID we are redirecting to when tracking is enabled.",
		"GETNAME", "    Return the name of the current connection.",
		"ID", "    Return the ID of the current connection.",
		"INFO", "    Return information about the current client connection.",
		"KILL <ip:port>", "    Kill connection made from <ip:port>.",
		"KILL <option> <value> [<option> <value> [...]]", "    Kill connections. Options are: ID, ADDR, LADDR, TYPE, USER, SKIPME.",
		"LIST [options ...]", "    Return information about client connections. Options: TYPE (normal|master|replica|pubsub), ID <id> [...].",
		"NO-EVICT (ON|OFF)", "    Protect current client connection from eviction (Cairn never evicts clients).",
		"PAUSE <timeout> [WRITE|ALL]", "    Suspend all, or just write, clients for <timeout> milliseconds.",
		"REPLY (ON|OFF|SKIP)", "    Control the replies sent to the current connection.",
		"SETNAME <name>", "    Assign the name <name> to the current connection.",
		"UNBLOCK <clientid> [TIMEOUT|ERROR]", "    Unblock the specified blocked client (Cairn has no blocking commands: 0).",
		"UNPAUSE", "    Stop the current client pause, resuming traffic.",
		"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]", "         [OPTIN] [OPTOUT] [NOLOOP]",
		"    Control server assisted client side caching.",
		"TRACKINGINFO", "    Report tracking status for the current connection.",
	})
}

// help writes a HELP reply in Redis's format.
func help(c *Ctx, cmd string, lines []string) {
	out := append([]string{fmt.Sprintf("%s <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", cmd)}, lines...)
	out = append(out, "HELP", "    Prints this help.")
	c.W.Array(len(out))
	for _, l := range out {
		c.W.SimpleString(l)
	}
}

func sortClients(cs []*Client) { sort.Slice(cs, func(i, j int) bool { return cs[i].ID < cs[j].ID }) }
