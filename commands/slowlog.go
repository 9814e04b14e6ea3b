package commands

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

func init() {
	const flags = FlagAdmin | FlagLoading | FlagStale
	register(&Spec{Name: "slowlog", Arity: -2, Group: "server", Since: "2.2.12", Summary: "A container for slow log commands.",
		Subcommands: map[string]*Spec{
			"get":   {Arity: -2, Flags: flags, ACL: []string{"dangerous"}, Tips: []string{"request_policy:all_nodes", "nondeterministic_output"}, Since: "2.2.12", Summary: "Returns the slow log's entries.", Handler: cmdSlowlogGet},
			"len":   {Arity: 2, Flags: flags, ACL: []string{"dangerous"}, Tips: []string{"request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"}, Since: "2.2.12", Summary: "Returns the number of entries in the slow log.", Handler: cmdSlowlogLen},
			"reset": {Arity: 2, Flags: flags, ACL: []string{"dangerous"}, Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}, Since: "2.2.12", Summary: "Clears all entries from the slow log.", Handler: cmdSlowlogReset},
			"help":  {Arity: 2, Flags: FlagLoading | FlagStale, Since: "6.2.0", Summary: "Show helpful text about the different subcommands.", Handler: cmdSlowlogHelp},
		}})
}

// Limits on what an entry keeps of a command, as in Redis.
const (
	slowlogMaxArgs     = 32
	slowlogMaxArgBytes = 128
)

// slowLog keeps the commands that ran for at least
// slowlog-log-slower-than microseconds, the newest last, at most
// slowlog-max-len of them. Entry ids keep counting across SLOWLOG RESET.
type slowLog struct {
	mu      sync.Mutex
	entries []slowEntry
	nextID  int64
}

type slowEntry struct {
	id, unix, micros int64
	args             []string // capped and redacted
	addr, name       string
}

// noteSlow records spec's run of args by cl, which took d, when the
// slow log's threshold asks for it.
func (e *Env) noteSlow(cl *Client, spec *Spec, args [][]byte, d time.Duration, now time.Time) {
	threshold := e.settings().slowlogThreshold.Int()
	if threshold < 0 || d.Microseconds() < threshold || spec.Flags&FlagSkipSlowlog != 0 {
		return
	}
	n := min(len(args), slowlogMaxArgs)
	kept := make([]string, n)
	redact := redactedArgs(spec, args)
	for i := range n {
		switch a := args[i]; {
		case i == slowlogMaxArgs-1 && len(args) > slowlogMaxArgs:
			kept[i] = fmt.Sprintf("... (%d more arguments)", len(args)-slowlogMaxArgs+1)
		case redact[i]:
			kept[i] = "(redacted)"
		case len(a) > slowlogMaxArgBytes:
			kept[i] = fmt.Sprintf("%s... (%d more bytes)", a[:slowlogMaxArgBytes], len(a)-slowlogMaxArgBytes)
		default:
			kept[i] = string(a)
		}
	}
	s := &e.slowlog
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries = append(s.entries, slowEntry{id: s.nextID, unix: now.Unix(), micros: d.Microseconds(), args: kept,
		addr: cl.Addr, name: cl.Name()})
	s.nextID++
	s.trimLocked(e.Config.Int("slowlog-max-len"))
}

// trimLocked drops the oldest entries beyond max.
func (s *slowLog) trimLocked(max int64) {
	if over := int64(len(s.entries)) - max; over > 0 {
		s.entries = append(s.entries[:0], s.entries[over:]...)
	}
}

// redactedArgs marks the arguments the slow log must not keep, as Redis
// redacts them: passwords and namespace tokens.
func redactedArgs(spec *Spec, args [][]byte) []bool {
	r := make([]bool, len(args))
	switch spec.FullName() {
	case "auth":
		for i := 1; i < len(args); i++ {
			r[i] = true
		}
	case "hello":
		for i := 2; i+2 < len(args); i++ {
			if keyword(args[i]) == "auth" {
				r[i+1], r[i+2] = true, true
				break
			}
		}
	case "config|set":
		for i := 2; i+1 < len(args); i += 2 {
			switch strings.ToLower(string(args[i])) {
			case "requirepass", "masterauth":
				r[i+1] = true
			}
		}
	case "acl|setuser":
		// Refused, but its rules may hold passwords (">secret").
		for i := 2; i < len(args); i++ {
			r[i] = true
		}
	case "namespace|add", "namespace|set":
		for i := 3; i < len(args); i++ {
			r[i] = true
		}
	}
	return r
}

func cmdSlowlogGet(c *Ctx) {
	count := int64(10)
	if len(c.Args) > 3 {
		c.errorf("ERR unknown subcommand or wrong number of arguments for '%s'. Try SLOWLOG HELP.", c.Args[1])
		return
	}
	if len(c.Args) == 3 {
		n, ok := parseInt(c.Args[2])
		if !ok || n < -1 {
			c.W.Error("ERR count should be greater than or equal to -1")
			return
		}
		count = n
	}
	s := &c.Env.slowlog
	s.mu.Lock()
	s.trimLocked(c.Env.Config.Int("slowlog-max-len"))
	n := int64(len(s.entries))
	if count >= 0 && count < n {
		n = count
	}
	out := make([]slowEntry, n)
	for i := range out {
		out[i] = s.entries[len(s.entries)-1-i]
	}
	s.mu.Unlock()
	c.W.Array(len(out))
	for _, en := range out {
		c.W.Array(6)
		c.W.Int(en.id)
		c.W.Int(en.unix)
		c.W.Int(en.micros)
		c.W.Array(len(en.args))
		for _, a := range en.args {
			c.W.BulkString(a)
		}
		c.W.BulkString(en.addr)
		c.W.BulkString(en.name)
	}
}

func cmdSlowlogLen(c *Ctx) {
	s := &c.Env.slowlog
	s.mu.Lock()
	s.trimLocked(c.Env.Config.Int("slowlog-max-len"))
	n := len(s.entries)
	s.mu.Unlock()
	c.W.Int(int64(n))
}

func cmdSlowlogReset(c *Ctx) {
	s := &c.Env.slowlog
	s.mu.Lock()
	s.entries = nil
	s.mu.Unlock()
	c.W.OK()
}

func cmdSlowlogHelp(c *Ctx) {
	help(c, "SLOWLOG", []string{
		"GET [<count>]",
		"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
		"    Entries are made of:",
		"    id, timestamp, time in microseconds, arguments array, client IP and port,",
		"    client name",
		"LEN",
		"    Return the length of the slowlog.",
		"RESET",
		"    Reset the slowlog.",
	})
}
