// Package commands holds Cairn's declarative command table and the
// handlers of every command, one file per command family. The server
// package owns connections and calls Dispatch; handlers reach storage,
// configuration and server-wide state through Env.
package commands

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// Flag describes a command for COMMAND, arity checks, authentication and
// (on replicas) read-only rejection.
type Flag uint32

// Command flags, named as Redis's COMMAND INFO reports them.
const (
	FlagWrite Flag = 1 << iota
	FlagReadOnly
	FlagAdmin
	FlagPubSub
	FlagFast
	FlagNoAuth
	FlagLoading
	FlagStale
	FlagNoScript
	FlagDenyOOM
	FlagAllowBusy
	FlagSkipMonitor
	FlagSkipSlowlog
	FlagNoMulti
	FlagNoAsyncLoading
	// FlagMayReplicate marks a command that is not a write but that Redis
	// propagates (PUBLISH): CLIENT PAUSE WRITE holds it back. Redis 7.0's
	// COMMAND INFO does not list it, so neither does Cairn's.
	FlagMayReplicate
	// FlagProtected marks a command Redis refuses before running it unless
	// a configuration option enables it (DEBUG: enable-debug-command).
	// Cairn enables DEBUG only with its test-only faults (Faults.Enabled).
	// COMMAND INFO does not list the flag, as Redis's does not.
	FlagProtected
	// FlagNoMandatoryKeys marks a command that may name no key although
	// it takes keys (EVAL with numkeys 0).
	FlagNoMandatoryKeys
	// FlagBlocking marks a command that may block the client (BLPOP).
	FlagBlocking
	// flagMovableKeys is never set in the table: COMMAND INFO derives it
	// from the key specs (Spec.movableKeys), as Redis does.
	flagMovableKeys
)

var flagNames = []struct {
	f    Flag
	name string
}{
	{FlagWrite, "write"}, {FlagReadOnly, "readonly"}, {FlagDenyOOM, "denyoom"},
	{FlagAdmin, "admin"}, {FlagPubSub, "pubsub"}, {FlagNoScript, "noscript"}, {FlagBlocking, "blocking"},
	{FlagLoading, "loading"}, {FlagStale, "stale"}, {FlagSkipMonitor, "skip_monitor"},
	{FlagSkipSlowlog, "skip_slowlog"}, {FlagFast, "fast"}, {FlagNoAuth, "no_auth"}, {FlagNoMandatoryKeys, "no_mandatory_keys"},
	{FlagNoAsyncLoading, "no_async_loading"}, {FlagNoMulti, "no_multi"}, {flagMovableKeys, "movablekeys"}, {FlagAllowBusy, "allow_busy"},
}

// aclCategories are Redis's ACL categories, in the order COMMAND INFO
// lists them.
var aclCategories = []string{"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous",
	"connection", "transaction", "scripting"}

// oneKeyCommand returns the constructor of group's commands that name one
// key, their first argument (key: its key-spec flags), as each command
// family's table declares most of its commands.
func oneKeyCommand(group string) func(name string, arity int, flags Flag, key KeyFlag, since, summary string, h Handler) *Spec {
	return func(name string, arity int, flags Flag, key KeyFlag, since, summary string, h Handler) *Spec {
		return &Spec{Name: name, Arity: arity, Flags: flags, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{Key(1, key)}, Group: group, Since: since, Summary: summary, Handler: h}
	}
}

// groupCategory is the ACL category a command's group gives it.
var groupCategory = map[string]string{"string": "string", "generic": "keyspace", "connection": "connection", "bitmap": "bitmap",
	"transactions": "transaction", "hash": "hash", "set": "set", "list": "list", "sorted-set": "sortedset", "geo": "geo",
	"hyperloglog": "hyperloglog", "stream": "stream"}

// ACLCategories returns the command's ACL categories (without the '@'),
// in Redis's order: those its flags imply, as Redis derives them (write,
// read but not for scripting commands, admin and dangerous, pubsub,
// fast, else slow), and those of its group (Spec.Group, a subcommand's
// parent's), or Spec.ACL where it is set. A container command (CONFIG,
// CLIENT) has only slow.
func (s *Spec) ACLCategories() []string {
	has := map[string]bool{}
	f := s.Flags
	has["write"] = f&FlagWrite != 0
	group := s.Group
	if s.parent != nil {
		group = s.parent.Group
	}
	has["read"] = f&FlagReadOnly != 0 && group != "scripting" // Redis's exception for EVAL_RO
	has["admin"], has["dangerous"] = f&FlagAdmin != 0, f&FlagAdmin != 0
	has["pubsub"] = f&FlagPubSub != 0
	has["fast"] = f&FlagFast != 0
	has["blocking"] = f&FlagBlocking != 0
	has["slow"] = f&FlagFast == 0
	acl := s.ACL
	if acl == nil && s.parent != nil {
		acl = s.parent.ACL
	}
	switch {
	case acl != nil:
		for _, c := range acl {
			has[c] = true
		}
	case s.Handler != nil || s.Subcommands == nil:
		has[groupCategory[group]] = true
	}
	var out []string
	for _, c := range aclCategories {
		if has[c] {
			out = append(out, c)
		}
	}
	return out
}

// movableKeys reports whether the command's key positions depend on its
// arguments: a key spec begins at a keyword or counts its keys from an
// argument.
func (s *Spec) movableKeys() bool {
	for _, k := range s.KeySpecs {
		if k.Begin.Index == 0 || k.Find.Kind != FindRange {
			return true
		}
	}
	return false
}

// Names returns the flag names in Redis's order.
func (f Flag) Names() []string {
	var out []string
	for _, n := range flagNames {
		if f&n.f != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// Handler executes one command. It writes exactly one reply to c.W.
type Handler func(c *Ctx)

// Spec is one entry of the command table. Arity follows Redis: a positive
// number is the exact argument count including the name; a negative one
// is the minimum. FirstKey, LastKey and Step give the key positions (0 when
// the command takes no key; LastKey -1 means the last argument).
type Spec struct {
	Name     string
	Arity    int
	Flags    Flag
	FirstKey int
	LastKey  int
	Step     int
	// KeySpecs are the command's key specifications, in Redis's order:
	// COMMAND INFO lists them and COMMAND GETKEYS and GETKEYSANDFLAGS
	// find the keys of a command line with them.
	KeySpecs []KeySpec
	// KeyFlagsOf gives, for a command whose key spec has
	// KeyVariableFlags, the flags of its keys in one command line (args,
	// the command name first).
	KeyFlagsOf func(args [][]byte) KeyFlag
	// Tips are Redis's command tips (nondeterministic_output,
	// request_policy:..., response_policy:...), in Redis's order.
	Tips    []string
	Group   string
	Summary string
	Since   string
	// ACL lists the ACL categories the command has beyond those its
	// flags imply, where its group's (groupCategory) is not right.
	ACL     []string
	Handler Handler
	// Subcommands of a container command such as CONFIG or CLIENT, by
	// lower-case name.
	Subcommands map[string]*Spec
	// parent is set on subcommands.
	parent *Spec
	// stats are the command's INFO commandstats counters.
	stats commandStats
}

// withTips returns s with its command tips set.
func withTips(s *Spec, tips ...string) *Spec {
	s.Tips = tips
	return s
}

// commandStats counts a command's runs for INFO commandstats, as Redis
// does: calls and their time, rejections before a run (arity,
// authentication, a read-only replica, ...), and runs that replied an
// error.
type commandStats struct {
	calls, usec, rejected, failed atomic.Int64
	// latency is the distribution of run times (INFO latencystats).
	latency latencyHistogram
}

// record counts one run that took d and replied an error or not, and adds
// d to the latency histogram when track is set (latency-tracking).
func (s *commandStats) record(d time.Duration, failed, track bool) {
	s.calls.Add(1)
	s.usec.Add(d.Microseconds())
	if failed {
		s.failed.Add(1)
	}
	if track {
		s.latency.record(d)
	}
}

func (s *commandStats) reset() {
	for _, c := range []*atomic.Int64{&s.calls, &s.usec, &s.rejected, &s.failed} {
		c.Store(0)
	}
	s.latency.reset()
}

// FullName returns "config|get" for a subcommand and the name otherwise.
func (s *Spec) FullName() string {
	if s.parent != nil {
		return s.parent.Name + "|" + s.Name
	}
	return s.Name
}

// parentName returns the top-level command's name.
func (s *Spec) parentName() string {
	if s.parent != nil {
		return s.parent.Name
	}
	return s.Name
}

// ArityOK reports whether n arguments (name included) satisfy the arity.
func (s *Spec) ArityOK(n int) bool {
	if s.Arity >= 0 {
		return n == s.Arity
	}
	return n >= -s.Arity
}

// Keys returns the key arguments of args: those the key specifications
// find when one counts its keys (numkeys, as ZUNIONSTORE's and LMPOP's
// do) or begins at a keyword (GEORADIUS's STORE), which the legacy key
// positions do not cover, else those of the key positions. The locks of
// transactions and pipelined groups, scripts' key checks and CLIENT
// TRACKING take them.
func (s *Spec) Keys(args [][]byte) [][]byte {
	for _, k := range s.KeySpecs {
		if k.Find.Kind != FindKeyNum && k.Begin.Keyword == "" {
			continue
		}
		refs, ok := s.keyRefs(args)
		if !ok {
			break // a bad count: the command fails on it
		}
		keys := make([][]byte, len(refs))
		for i, r := range refs {
			keys[i] = args[r.pos]
		}
		return keys
	}
	if s.FirstKey <= 0 || s.FirstKey >= len(args) {
		return nil
	}
	last := s.LastKey
	if last < 0 {
		last = len(args) + last
	}
	if last >= len(args) {
		last = len(args) - 1
	}
	step := s.Step
	if step <= 0 {
		step = 1
	}
	var keys [][]byte
	for i := s.FirstKey; i <= last; i += step {
		keys = append(keys, args[i])
	}
	return keys
}

// table maps lower-case command names to their specs.
var table = map[string]*Spec{}

// byName maps both the lower-case and the upper-case spelling of every
// command name to its spec, so Lookup finds the usual spellings in one
// probe.
var byName = map[string]*Spec{}

// register adds specs to the table; each command family file calls it from
// an init function.
func register(specs ...*Spec) {
	for _, s := range specs {
		s.Name = strings.ToLower(s.Name)
		for name, sub := range s.Subcommands {
			sub.Name = name
			sub.parent = s
			if sub.Group == "" {
				sub.Group = s.Group
			}
		}
		table[s.Name] = s
		byName[s.Name] = s
		byName[strings.ToUpper(s.Name)] = s
	}
}

// Errors of Rename, with Redis's texts for the same rename-command mistakes.
var (
	// ErrNoSuchCommand reports a rename of a command the table does not
	// have (or no longer has under that name).
	ErrNoSuchCommand = errors.New("No such command in rename-command")
	// ErrCommandExists reports a new name that another command has.
	ErrCommandExists = errors.New("Target command name already exists")
)

// Rename makes the command called name (any case) answer to newName
// instead, or to no name when newName is empty, as redis.conf's
// rename-command does. The command keeps its own name in replies (arity
// errors, COMMAND INFO), as in Redis. Rename changes the process-wide
// table: the server calls it at start-up, before it serves, never later.
func Rename(name, newName string) error {
	name, newName = strings.ToLower(name), strings.ToLower(newName)
	s := table[name]
	if s == nil {
		return fmt.Errorf("%w: %q", ErrNoSuchCommand, name)
	}
	if newName != "" && newName != name && table[newName] != nil {
		return fmt.Errorf("%w: %q", ErrCommandExists, newName)
	}
	delete(table, name)
	delete(byName, name)
	delete(byName, strings.ToUpper(name))
	if newName != "" {
		table[newName] = s
		byName[newName] = s
		byName[strings.ToUpper(newName)] = s
	}
	return nil
}

// lookupLine returns the spec a command line names (args[0] the command
// name): a container's subcommand when the line names one, nil for an
// unknown command or subcommand.
func lookupLine(args [][]byte) *Spec {
	s := Lookup(args[0])
	if s != nil && s.Subcommands != nil && len(args) > 1 {
		s = s.Subcommands[lower(args[1])]
	}
	return s
}

// Lookup returns the spec of a command name in any case, or nil.
func Lookup(name []byte) *Spec {
	if s, ok := byName[string(name)]; ok {
		return s
	}
	// Fold ASCII case only, as Redis's strcasecmp does, without allocating
	// for names of a usual length.
	var buf [32]byte
	lower := buf[:0]
	if len(name) > len(buf) {
		lower = make([]byte, 0, len(name))
	}
	for _, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower = append(lower, c)
	}
	return table[string(lower)]
}

// allSpecs returns every spec, subcommands included, sorted by full name.
func allSpecs() []*Spec {
	var out []*Spec
	for _, s := range All() {
		out = append(out, s)
		for _, name := range slices.Sorted(maps.Keys(s.Subcommands)) {
			out = append(out, s.Subcommands[name])
		}
	}
	return out
}

// All returns every top-level spec sorted by name.
func All() []*Spec {
	out := make([]*Spec, 0, len(table))
	for _, s := range table {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
