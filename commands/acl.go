package commands

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"
	"time"
)

func init() {
	const admin = FlagAdmin | FlagNoScript | FlagLoading | FlagStale
	const open = FlagNoScript | FlagLoading | FlagStale
	register(&Spec{Name: "acl", Arity: -2, Group: "server", Since: "6.0.0", Summary: "A container for Access List Control commands.",
		Subcommands: map[string]*Spec{
			"cat":     {Arity: -2, Flags: open, Since: "6.0.0", Summary: "Lists the ACL categories, or the commands inside a category.", Handler: cmdACLCat},
			"deluser": {Arity: -3, Flags: admin, Since: "6.0.0", Summary: "Deletes ACL users; Cairn has only the default user, which cannot be deleted.", Handler: cmdACLDelUser},
			"dryrun":  {Arity: -4, Flags: admin, Since: "7.0.0", Summary: "Simulates the execution of a command by a user, without executing the command.", Handler: cmdACLDryRun},
			"genpass": {Arity: -2, Flags: open, Since: "6.0.0", Summary: "Generates a pseudorandom, secure password that can be used to identify ACL users.", Handler: cmdACLGenPass},
			"getuser": {Arity: 3, Flags: admin, Since: "6.0.0", Summary: "Lists the ACL rules of a user.", Handler: cmdACLGetUser},
			"list":    {Arity: 2, Flags: admin, Since: "6.0.0", Summary: "Dumps the effective rules in ACL file format.", Handler: cmdACLList},
			"load":    {Arity: 2, Flags: admin, Since: "6.0.0", Summary: "Reloads the rules from the configured ACL file; Cairn has none.", Handler: cmdACLNoFile},
			"log":     {Arity: -2, Flags: admin, Since: "6.0.0", Summary: "Lists recent security events generated due to ACL rules.", Handler: cmdACLLog},
			"save":    {Arity: 2, Flags: admin, Since: "6.0.0", Summary: "Saves the effective ACL rules in the configured ACL file; Cairn has none.", Handler: cmdACLNoFile},
			"setuser": {Arity: -3, Flags: admin, Since: "6.0.0", Summary: "Creates and modifies an ACL user and its rules; not supported by Cairn.", Handler: cmdACLSetUser},
			"users":   {Arity: 2, Flags: admin, Since: "6.0.0", Summary: "Lists all ACL users.", Handler: cmdACLUsers},
			"whoami":  {Arity: 2, Flags: open, Since: "6.0.0", Summary: "Returns the authenticated username of the current connection.", Handler: cmdACLWhoAmI},
			"help":    {Arity: 2, Flags: FlagLoading | FlagStale, Since: "6.0.0", Summary: "Returns helpful text about the different subcommands.", Handler: cmdACLHelp},
		}})
}

// Cairn has one ACL user, Redis's "default": it may run every command on
// every key and channel, and its password is requirepass (none when that
// is empty). Namespace tokens (NAMESPACE) are passwords of their own that
// confine a connection to a namespace; ACL does not list them.
const defaultUser = "default"

const (
	errACLNoFile  = "ERR This Cairn instance has no ACL file: its only user is 'default', whose password is requirepass (CONFIG SET requirepass)."
	errACLSetUser = "ERR ACL SETUSER is not supported: Cairn's only user is 'default', whose password is requirepass (CONFIG SET requirepass)."
)

// The fields of the default user's rules, as ACL LIST and GETUSER show
// them.
const (
	defaultUserCommands = "+@all"
	defaultUserKeys     = "~*"
	defaultUserChannels = "&*"
)

// defaultUserPasswords returns the SHA-256 digests, in hex, of the default
// user's passwords: requirepass's, or none.
func (e *Env) defaultUserPasswords() []string {
	rp := e.Config.String("requirepass")
	if rp == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(rp))
	return []string{hex.EncodeToString(sum[:])}
}

// cmdACLCat lists Redis's ACL categories, or the commands (subcommands as
// "parent|sub") in one of them.
func cmdACLCat(c *Ctx) {
	switch len(c.Args) {
	case 2:
		c.W.Array(len(aclCategories))
		for _, cat := range aclCategories {
			c.W.BulkString(cat)
		}
		return
	case 3:
	default:
		aclSubcommandError(c)
		return
	}
	cat := lower(c.Args[2])
	if !slices.Contains(aclCategories, cat) {
		c.errorf("ERR Unknown category '%s'", c.Args[2])
		return
	}
	var names []string
	for _, s := range allSpecs() {
		if slices.Contains(s.ACLCategories(), cat) {
			names = append(names, s.FullName())
		}
	}
	c.W.Array(len(names))
	for _, n := range names {
		c.W.BulkString(n)
	}
}

// aclSubcommandError replies as Redis does to an ACL subcommand given the
// wrong number of arguments after passing its arity check.
func aclSubcommandError(c *Ctx) {
	c.errorf("ERR unknown subcommand or wrong number of arguments for '%s'. Try ACL HELP.", c.Args[1])
}

// cmdACLDelUser deletes nothing: the default user cannot be deleted, and
// no other user exists.
func cmdACLDelUser(c *Ctx) {
	if !c.requireAdmin() {
		return
	}
	for _, u := range c.Args[2:] {
		if string(u) == defaultUser {
			c.W.Error("ERR The 'default' user cannot be removed")
			return
		}
	}
	c.W.Int(0)
}

// cmdACLDryRun checks that a command exists and has a valid number of
// arguments; the default user may run every command.
func cmdACLDryRun(c *Ctx) {
	if !c.requireAdmin() {
		return
	}
	if string(c.Args[2]) != defaultUser {
		c.errorf("ERR User '%s' not found", c.Args[2])
		return
	}
	args := c.Args[3:]
	s := lookupLine(args)
	switch {
	case s == nil:
		c.errorf("ERR Command '%s' not found", args[0])
	case !s.ArityOK(len(args)):
		c.errorf("ERR wrong number of arguments for '%s' command", s.FullName())
	default:
		c.W.OK()
	}
}

// cmdACLGenPass replies with bits (256 by default) of crypto/rand output
// in hex, rounded up to whole hex digits.
func cmdACLGenPass(c *Ctx) {
	bits := int64(256)
	switch len(c.Args) {
	case 2:
	case 3:
		n, ok := c.intArg(2)
		if !ok {
			return
		}
		if n <= 0 || n > 4096 {
			c.W.Error("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096")
			return
		}
		bits = n
	default:
		aclSubcommandError(c)
		return
	}
	digits := int((bits + 3) / 4)
	raw := make([]byte, (digits+1)/2)
	_, _ = rand.Read(raw) // crypto/rand.Read never fails (Go 1.24+)
	c.W.BulkString(hex.EncodeToString(raw)[:digits])
}

// cmdACLGetUser describes the default user as Redis's ACL GETUSER does,
// and replies a null for any other name.
func cmdACLGetUser(c *Ctx) {
	if !c.requireAdmin() {
		return
	}
	if string(c.Args[2]) != defaultUser {
		c.W.NullBulk()
		return
	}
	pass := c.Env.defaultUserPasswords()
	flags := []string{"on"}
	if pass == nil {
		flags = append(flags, "nopass")
	}
	c.W.Map(6)
	c.W.BulkString("flags")
	c.W.Set(len(flags))
	for _, f := range flags {
		c.W.BulkString(f)
	}
	c.W.BulkString("passwords")
	c.W.Array(len(pass))
	for _, p := range pass {
		c.W.BulkString(p)
	}
	for _, kv := range [][2]string{{"commands", defaultUserCommands}, {"keys", defaultUserKeys}, {"channels", defaultUserChannels}} {
		c.W.BulkString(kv[0])
		c.W.BulkString(kv[1])
	}
	c.W.BulkString("selectors")
	c.W.Array(0)
}

// cmdACLList replies with the default user's rules in ACL file format.
func cmdACLList(c *Ctx) {
	if !c.requireAdmin() {
		return
	}
	rule := "user " + defaultUser + " on"
	pass := c.Env.defaultUserPasswords()
	if pass == nil {
		rule += " nopass"
	}
	for _, p := range pass {
		rule += " #" + p
	}
	c.W.Array(1)
	c.W.BulkString(rule + " " + defaultUserKeys + " " + defaultUserChannels + " " + defaultUserCommands)
}

func cmdACLNoFile(c *Ctx) {
	if c.requireAdmin() {
		c.W.Error(errACLNoFile)
	}
}

func cmdACLSetUser(c *Ctx) {
	if c.requireAdmin() {
		c.W.Error(errACLSetUser)
	}
}

func cmdACLUsers(c *Ctx) {
	if !c.requireAdmin() {
		return
	}
	c.W.Array(1)
	c.W.BulkString(defaultUser)
}

// cmdACLWhoAmI replies "default": every connection, a namespace's too,
// is the default user's.
func cmdACLWhoAmI(c *Ctx) { c.W.BulkString(defaultUser) }

func cmdACLHelp(c *Ctx) {
	help(c, "ACL", []string{
		"CAT [<category>]", "    List all commands that belong to <category>, or all command categories", "    when no category is specified.",
		"DELUSER <username> [<username> ...]", "    Delete a list of users.",
		"DRYRUN <username> <command> [<arg> ...]", "    Returns whether the user can execute the given command without executing the command.",
		"GETUSER <username>", "    Get the user's details.",
		"GENPASS [<bits>]", "    Generate a secure 256-bit user password. The optional `bits` argument can", "    be used to specify a different size.",
		"LIST", "    Show users details in config file format.",
		"LOAD", "    Reload users from the ACL file.",
		"LOG [<count> | RESET]", "    Show the ACL log entries.",
		"SAVE", "    Save the current config to the ACL file.",
		"SETUSER <username> <attribute> [<attribute> ...]", "    Create or modify a user with the specified attributes.",
		"USERS", "    List all the registered usernames.",
		"WHOAMI", "    Return the current connection username.",
	})
}

// aclLogGrouping is how long a failure joins an earlier entry with the
// same reason, context, object and username (counting it) instead of
// starting a new one, as in Redis.
const aclLogGrouping = 60 * time.Second

// aclLog keeps the security events ACL LOG shows, newest first, at most
// acllog-max-len of them. Cairn's only events are failed authentications
// (AUTH, HELLO AUTH): with one all-powerful user, no command or key is
// ever denied.
type aclLog struct {
	mu      sync.Mutex
	entries []*aclLogEntry
}

// aclLogEntry is one event of the ACL log: count occurrences, the
// latest at time, seen by the client clientInfo describes.
type aclLogEntry struct {
	count                         int64
	reason, context, object, user string
	time                          time.Time
	clientInfo                    string
}

// noteAuthFailure records a failed authentication as user by the command
// running in c (AUTH or HELLO, named as the client spelled it).
func (c *Ctx) noteAuthFailure(user string) {
	context := "toplevel"
	if c.inExec() {
		context = "multi"
	}
	e := aclLogEntry{count: 1, reason: "auth", context: context, object: string(c.Args[0]), user: user,
		time: c.Now, clientInfo: c.Env.ClientInfo(c.Client, c.Now)}
	l := &c.Env.acllog
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, old := range l.entries {
		if old.reason == e.reason && old.context == e.context && old.object == e.object && old.user == e.user &&
			e.time.Sub(old.time) < aclLogGrouping {
			old.count++
			old.time, old.clientInfo = e.time, e.clientInfo
			copy(l.entries[1:i+1], l.entries[:i])
			l.entries[0] = old
			return
		}
	}
	l.entries = slices.Insert(l.entries, 0, &e)
	l.trimLocked(c.Env.Config.Int("acllog-max-len"))
}

// trimLocked drops the oldest entries beyond max.
func (l *aclLog) trimLocked(max int64) {
	if int64(len(l.entries)) > max {
		clear(l.entries[max:])
		l.entries = l.entries[:max]
	}
}

// cmdACLLog implements ACL LOG [count|RESET]: the newest count entries
// (10 by default), or clearing the log.
func cmdACLLog(c *Ctx) {
	if !c.requireAdmin() {
		return
	}
	count := int64(10)
	switch {
	case len(c.Args) > 3:
		aclSubcommandError(c)
		return
	case len(c.Args) == 3 && lower(c.Args[2]) == "reset":
		l := &c.Env.acllog
		l.mu.Lock()
		l.entries = nil
		l.mu.Unlock()
		c.W.OK()
		return
	case len(c.Args) == 3:
		n, ok := c.intArg(2)
		if !ok {
			return
		}
		count = max(n, 0)
	}
	l := &c.Env.acllog
	l.mu.Lock()
	l.trimLocked(c.Env.Config.Int("acllog-max-len"))
	out := make([]aclLogEntry, min(int64(len(l.entries)), count))
	for i := range out {
		out[i] = *l.entries[i]
	}
	l.mu.Unlock()
	c.W.Array(len(out))
	for _, e := range out {
		c.W.Map(7)
		c.W.BulkString("count")
		c.W.Int(e.count)
		for _, kv := range [][2]string{{"reason", e.reason}, {"context", e.context}, {"object", e.object}, {"username", e.user}} {
			c.W.BulkString(kv[0])
			c.W.BulkString(kv[1])
		}
		c.W.BulkString("age-seconds")
		c.W.Double(float64(c.Now.Sub(e.time).Milliseconds()) / 1000)
		c.W.BulkString("client-info")
		c.W.BulkString(e.clientInfo)
	}
}
