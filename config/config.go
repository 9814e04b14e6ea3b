package config

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Pair is one option name and value, as CONFIG SET receives them.
type Pair struct {
	Name  string
	Value string
}

// NamespaceToken is one "namespace.<ns> <token>" line: clients that AUTH
// with Token work inside namespace Namespace.
type NamespaceToken struct {
	Namespace string
	Token     string
}

// CommandRename is one rename-command line of the configuration file: the
// command Name is to be known as NewName from start-up on, or not at all
// when NewName is empty (as in redis.conf, to disable a dangerous command).
// Source is the file and line, for the server's error messages.
type CommandRename struct {
	Name, NewName string
	Source        string
}

// renameDirective is the configuration file's rename-command directive.
// It may be repeated and exists only in the file: CONFIG GET and SET do not
// know it, and CONFIG REWRITE keeps its lines as they are.
const renameDirective = "rename-command"

// Config is the server's runtime configuration: the current value of every
// option in the table, and the namespaces. It is safe for concurrent use.
//
// Reads (Get and the typed getters) take no lock: each option's value is
// swapped atomically as a whole, so the write path may read options on
// every command. Writers (Set, Override, SetNamespaces) are
// serialized with each other. A Set of several options validates all of
// them before it stores any, so it applies all or none; a concurrent reader
// may still observe the new values appear one after the other.
type Config struct {
	entries map[string]*entry // by canonical name; fixed by New
	path    string            // the file Load read, or ""; fixed by Load
	renames []CommandRename   // fixed by Load

	// outputLimits is entries["client-output-buffer-limit"], which every
	// message handed to a subscriber reads; fixed by New.
	outputLimits *entry

	// writeMu serializes writers, including the OnChange hooks they call,
	// so hooks see changes in the order they were made.
	writeMu sync.Mutex

	// mu guards the hooks of every entry and the namespaces.
	mu         sync.RWMutex
	namespaces []NamespaceToken
}

type entry struct {
	opt       *Option
	val       atomic.Pointer[value]
	validator func(string) (string, error) // fixed by Load
	hooks     []func(string)               // guarded by Config.mu
}

// New returns a Config holding every option's default value, no namespaces
// and no file. Load is the usual way to get a Config; New serves tests and
// tools.
func New() *Config {
	c := &Config{entries: make(map[string]*entry, len(options))}
	for i := range options {
		o := &options[i]
		v, err := parseValue(o, nil, o.Default)
		if err != nil {
			// The table is fixed at compile time and its defaults are
			// tested; keep the raw text rather than fail on a bad entry.
			v = &value{text: o.Default}
		}
		e := &entry{opt: o}
		e.val.Store(v)
		c.entries[o.Name] = e
	}
	c.outputLimits = c.entries["client-output-buffer-limit"]
	return c
}

// entry finds an option by name or alias, in any case, or returns nil.
func (c *Config) entry(name string) *entry {
	o := lookupOption(name)
	if o == nil {
		return nil
	}
	return c.entries[o.Name]
}

// CommandRenames returns the rename-command lines of the file Load read, in
// their order. The caller must not modify the slice.
func (c *Config) CommandRenames() []CommandRename { return c.renames }

// Path returns the configuration file Load read, or "" when the server was
// started without one. Rewrite writes to it.
func (c *Config) Path() string { return c.path }

// Get returns the current value of the option called name (or one of its
// aliases, in any case), rendered as CONFIG GET shows it: booleans as yes or
// no, memory sizes as a number of bytes. ok is false when there is no such
// option.
func (c *Config) Get(name string) (value string, ok bool) {
	e := c.entry(name)
	if e == nil {
		return "", false
	}
	return e.val.Load().text, true
}

// Names returns the canonical names of every option, sorted. Aliases are
// not included.
func (c *Config) Names() []string {
	names := make([]string, 0, len(c.entries))
	for n := range c.entries {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// String returns the current value of any option as Get renders it, or ""
// for an unknown name.
func (c *Config) String(name string) string {
	v, _ := c.Get(name)
	return v
}

// Int returns the current value of an integer or memory-size option, or 0
// when name is not such an option.
func (c *Config) Int(name string) int64 {
	e := c.entry(name)
	if e == nil {
		return 0
	}
	return e.val.Load().num
}

// Bytes returns the current value, in bytes, of a memory-size option such
// as proto-max-bulk-len, or 0 when name is not such an option.
func (c *Config) Bytes(name string) int64 { return c.Int(name) }

// Setting is one option resolved once: reading its value is an atomic
// load, where Int and Bool also look the name up on every call. A Setting
// stays valid for the life of its Config; the zero Setting reads as zero
// and false.
type Setting struct{ e *entry }

// Setting returns the option called name (or one of its aliases); ok is
// false for an unknown name.
func (c *Config) Setting(name string) (s Setting, ok bool) {
	e := c.entry(name)
	return Setting{e}, e != nil
}

// Int returns the current value of an integer or memory-size option.
func (s Setting) Int() int64 {
	if s.e == nil {
		return 0
	}
	return s.e.val.Load().num
}

// Bool returns the current value of a yes/no option.
func (s Setting) Bool() bool {
	if s.e == nil {
		return false
	}
	return s.e.val.Load().flag
}

// Bool returns the current value of a yes/no option, or false when name is
// not such an option.
func (c *Config) Bool(name string) bool {
	e := c.entry(name)
	if e == nil {
		return false
	}
	return e.val.Load().flag
}

// Floats returns the current list of numbers of a list option (such as
// latency-tracking-info-percentiles), or nil. The caller must not modify
// it.
func (c *Config) Floats(name string) []float64 {
	e := c.entry(name)
	if e == nil {
		return nil
	}
	return e.val.Load().floats
}

// BufferLimit returns the current client-output-buffer-limit of one client
// class.
func (c *Config) BufferLimit(class ClientClass) BufferLimit {
	e := c.outputLimits
	if e == nil || class < ClientNormal || class > ClientPubSub {
		return BufferLimit{}
	}
	if l := e.val.Load().limits; l != nil {
		return l[class]
	}
	return BufferLimit{}
}

// Master returns the primary named by slaveof. ok is false when slaveof is
// empty, that is when this node is a primary.
func (c *Config) Master() (host string, port int, ok bool) {
	f := strings.Fields(c.String("slaveof"))
	if len(f) != 2 {
		return "", 0, false
	}
	p, err := strconv.Atoi(f[1])
	if err != nil {
		return "", 0, false
	}
	return f[0], p, true
}

// Set changes options at runtime with the semantics of Redis 7's
// multi-argument CONFIG SET: it first checks every pair (unknown option,
// immutable option, the same option named twice, including through an
// alias) and reports the first problem found in Redis's order; then it
// validates every value; only if all are valid does it store them all, and
// then it calls the OnChange hooks of each pair in order. Any error leaves
// every option unchanged. The error is a *SetError whose text is Redis's
// reply.
func (c *Config) Set(pairs []Pair) error { return c.set(pairs, false) }

// Override sets one option as Set does, but also immutable ones. It is for
// the server's own state changes that the configuration must reflect (for
// example REPLICAOF updating slaveof so that CONFIG REWRITE persists it),
// never for client requests. Errors are as for Set.
func (c *Config) Override(name, value string) error {
	return c.set([]Pair{{Name: name, Value: value}}, true)
}

func (c *Config) set(pairs []Pair, internal bool) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()

	ents := make([]*entry, len(pairs))
	var first error
	for i, p := range pairs {
		e := c.entry(p.Name)
		if e == nil {
			if first == nil {
				first = &SetError{Arg: p.Name, Err: ErrUnknownOption}
			}
			continue
		}
		if first != nil {
			continue
		}
		if !e.opt.Mutable && !internal {
			first = &SetError{Arg: p.Name, Err: ErrImmutable}
			continue
		}
		// As in Redis, an option named twice is refused, but an option
		// and its alias are two names and both apply, the last winning.
		if slices.ContainsFunc(pairs[:i], func(q Pair) bool { return strings.EqualFold(q.Name, p.Name) }) {
			first = &SetError{Arg: p.Name, Err: ErrDuplicateOption}
			continue
		}
		ents[i] = e
	}
	if first != nil {
		return first
	}

	c.mu.RLock()
	vals := make([]*value, len(pairs))
	hooks := make([][]func(string), len(pairs))
	for i, p := range pairs {
		v, err := ents[i].parse(ents[i].val.Load(), p.Value)
		if err == nil && ents[i].opt.Name == "requirepass" {
			err = checkPassAgainstNamespaces(v.text, c.namespaces)
			if err != nil {
				err = &ValueError{Option: "requirepass", Value: p.Value, Err: err}
			}
		}
		if err != nil {
			c.mu.RUnlock()
			// Redis names the option as its table spells it here.
			return &SetError{Arg: strings.ToLower(p.Name), Err: err}
		}
		vals[i] = v
		hooks[i] = slices.Clone(ents[i].hooks)
	}
	c.mu.RUnlock()

	for i, e := range ents {
		e.val.Store(vals[i])
	}
	for i, hs := range hooks {
		for _, h := range hs {
			h(vals[i].text)
		}
	}
	return nil
}

// parse parses raw for e, then passes the result through e's validator,
// if any.
func (e *entry) parse(prev *value, raw string) (*value, error) {
	v, err := parseValue(e.opt, prev, raw)
	if err != nil || e.validator == nil {
		return v, err
	}
	return applyValidator(e.opt, e.validator, prev, v, raw)
}

func applyValidator(o *Option, fn func(string) (string, error), prev, v *value, raw string) (*value, error) {
	canon, err := fn(v.text)
	if err != nil {
		return nil, &ValueError{Option: o.Name, Value: raw, Err: err}
	}
	if canon == v.text {
		return v, nil
	}
	v2, err := parseValue(o, prev, canon)
	if err != nil {
		reason := err
		if ve, ok := err.(*ValueError); ok {
			reason = ve.Err
		}
		return nil, &ValueError{Option: o.Name, Value: raw,
			Err: fmt.Errorf("validator returned %q, which the option does not accept: %w", canon, reason)}
	}
	return v2, nil
}

// Validator hands the parsing of one option to the package that owns it
// (notify-keyspace-events to the notify package), for Load to install. Check
// receives a value that already passed the option's own checks and returns
// the canonical form to store, or an error whose text becomes the reason in
// Load's and Set's errors. Check must be safe to call from any goroutine.
type Validator struct {
	Option string
	Check  func(string) (canonical string, err error)
}

// OnChange registers fn to be called with the new canonical value each time
// Set or Override changes option name (looked up by name or alias). Hooks
// run in the goroutine that called Set, after all the new values are visible
// to readers, with the lock released, so a hook may call Get, the getters,
// Namespaces and OnChange. Hooks run in the order of the changes and of
// their registration; to keep that order, other writers wait until the
// hooks return, so a hook must not call Set, Override or SetNamespaces,
// which would deadlock. Loading the configuration calls no
// hooks. OnChange returns an error only for an unknown option.
func (c *Config) OnChange(name string, fn func(value string)) error {
	e := c.entry(name)
	if e == nil {
		return fmt.Errorf("config: on change: %w %q", ErrUnknownOption, name)
	}
	if fn == nil {
		return nil
	}
	c.mu.Lock()
	e.hooks = append(e.hooks, fn)
	c.mu.Unlock()
	return nil
}

// Namespaces returns a copy of the namespaces, in the order they were
// configured.
func (c *Config) Namespaces() []NamespaceToken {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Clone(c.namespaces)
}

// SetNamespaces replaces the namespaces, for example after a NAMESPACE ADD,
// so that CONFIG REWRITE writes them back. It returns an error wrapping
// ErrNamespace, and changes nothing, when a name or token is empty, a name
// or a token appears twice, a token equals requirepass, or namespaces are
// given while requirepass is empty.
func (c *Config) SetNamespaces(ns []NamespaceToken) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := validateNamespaces(ns, c.String("requirepass")); err != nil {
		return fmt.Errorf("config: set namespaces: %w", err)
	}
	c.mu.Lock()
	c.namespaces = slices.Clone(ns)
	c.mu.Unlock()
	return nil
}

func validateNamespaces(ns []NamespaceToken, requirepass string) error {
	names := make(map[string]bool, len(ns))
	tokens := make(map[string]string, len(ns))
	for _, n := range ns {
		switch {
		case n.Namespace == "":
			return fmt.Errorf("%w: empty namespace name", ErrNamespace)
		case n.Token == "":
			return fmt.Errorf("%w: namespace %q has an empty token", ErrNamespace, n.Namespace)
		case names[n.Namespace]:
			return fmt.Errorf("%w: namespace %q appears twice", ErrNamespace, n.Namespace)
		}
		if other, dup := tokens[n.Token]; dup {
			return fmt.Errorf("%w: namespaces %q and %q have the same token", ErrNamespace, other, n.Namespace)
		}
		names[n.Namespace] = true
		tokens[n.Token] = n.Namespace
	}
	if err := checkPassAgainstNamespaces(requirepass, ns); err != nil {
		return fmt.Errorf("%w: %w", ErrNamespace, err)
	}
	return nil
}

// checkPassAgainstNamespaces applies Kvrocks's rules: with namespaces,
// requirepass (the admin password) must be set and must differ from every
// namespace token.
func checkPassAgainstNamespaces(pass string, ns []NamespaceToken) error {
	if len(ns) == 0 {
		return nil
	}
	if pass == "" {
		return errors.New("requirepass can't be empty while namespaces exist")
	}
	for _, n := range ns {
		if n.Token == pass {
			return fmt.Errorf("requirepass is the token of namespace %q", n.Namespace)
		}
	}
	return nil
}
