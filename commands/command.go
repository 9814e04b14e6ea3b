package commands

import (
	"slices"
	"strings"
)

func init() {
	register(&Spec{Name: "command", Arity: -1, Flags: FlagLoading | FlagStale, Tips: []string{"nondeterministic_output_order"}, Group: "server", ACL: []string{"connection"}, Since: "2.8.13", Summary: "Returns detailed information about all commands.", Handler: cmdCommand,
		Subcommands: map[string]*Spec{
			"count":           {Arity: 2, Flags: FlagLoading | FlagStale, Since: "2.8.13", Summary: "Returns a count of commands.", Handler: cmdCommandCount},
			"info":            {Arity: -2, Flags: FlagLoading | FlagStale, Tips: []string{"nondeterministic_output_order"}, Since: "2.8.13", Summary: "Returns information about one, multiple or all commands.", Handler: cmdCommandInfo},
			"docs":            {Arity: -2, Flags: FlagLoading | FlagStale, Tips: []string{"nondeterministic_output_order"}, Since: "7.0.0", Summary: "Returns documentary information about one, multiple or all commands.", Handler: cmdCommandDocs},
			"list":            {Arity: -2, Flags: FlagLoading | FlagStale, Tips: []string{"nondeterministic_output_order"}, Since: "7.0.0", Summary: "Returns a list of command names.", Handler: cmdCommandList},
			"getkeys":         {Arity: -4, Flags: FlagLoading | FlagStale, Since: "2.8.13", Summary: "Extracts the key names from an arbitrary command.", Handler: cmdCommandGetKeys},
			"getkeysandflags": {Arity: -4, Flags: FlagLoading | FlagStale, Since: "7.0.0", Summary: "Extracts the key names and access flags for an arbitrary command.", Handler: cmdCommandGetKeysAndFlags},
			"help":            {Arity: 2, Flags: FlagLoading | FlagStale, Since: "5.0.0", Summary: "Returns helpful text about the different subcommands.", Handler: cmdCommandHelp},
		}})
}

func cmdCommand(c *Ctx) {
	all := All()
	c.W.Array(len(all))
	for _, s := range all {
		writeCommandInfo(c, s)
	}
}

func cmdCommandCount(c *Ctx) { c.W.Int(int64(len(table))) }

// writeCommandInfo writes one COMMAND INFO entry in Redis 7's ten-field
// shape: name, arity, flags, first key, last key, step, ACL categories,
// tips, key specifications, subcommands.
func writeCommandInfo(c *Ctx, s *Spec) {
	c.W.Array(10)
	c.W.BulkString(s.FullName())
	c.W.Int(int64(s.Arity))
	f := s.Flags
	if s.movableKeys() {
		f |= flagMovableKeys
	}
	flags := f.Names()
	c.W.Set(len(flags))
	for _, f := range flags {
		c.W.SimpleString(f)
	}
	c.W.Int(int64(s.FirstKey))
	c.W.Int(int64(s.LastKey))
	c.W.Int(int64(s.Step))
	cats := s.ACLCategories()
	c.W.Set(len(cats))
	for _, cat := range cats {
		c.W.SimpleString("@" + cat)
	}
	writeTips(c, s.Tips)
	writeKeySpecs(c, s.KeySpecs)
	subs := sortedSubcommands(s)
	if len(subs) == 0 {
		c.W.Set(0) // as Redis 7.0 writes no subcommands in RESP3
		return
	}
	c.W.Array(len(subs))
	for _, sub := range subs {
		writeCommandInfo(c, sub)
	}
}

func sortedSubcommands(s *Spec) []*Spec {
	out := make([]*Spec, 0, len(s.Subcommands))
	for _, sub := range s.Subcommands {
		out = append(out, sub)
	}
	sortSpecs(out)
	return out
}

func sortSpecs(s []*Spec) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].Name < s[j-1].Name; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// lookupFull finds "config|get" style names as well as plain ones.
func lookupFull(name string) *Spec {
	parent, sub, ok := strings.Cut(strings.ToLower(name), "|")
	s := table[parent]
	if !ok || s == nil {
		return s
	}
	return s.Subcommands[sub]
}

func cmdCommandInfo(c *Ctx) {
	if len(c.Args) == 2 {
		cmdCommand(c)
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, a := range c.Args[2:] {
		if s := lookupFull(string(a)); s != nil {
			writeCommandInfo(c, s)
		} else {
			c.W.NullBulk() // Redis's null: $-1 in RESP2, not *-1
		}
	}
}

func cmdCommandDocs(c *Ctx) {
	var specs []*Spec
	if len(c.Args) == 2 {
		specs = All()
	} else {
		for _, a := range c.Args[2:] {
			if s := lookupFull(string(a)); s != nil {
				specs = append(specs, s)
			}
		}
	}
	c.W.Map(len(specs))
	for _, s := range specs {
		c.W.BulkString(s.FullName())
		writeCommandDoc(c, s)
	}
}

func writeCommandDoc(c *Ctx, s *Spec) {
	subs := sortedSubcommands(s)
	n := 3
	if len(subs) > 0 {
		n++
	}
	c.W.Map(n)
	c.W.BulkString("summary")
	c.W.BulkString(s.Summary)
	c.W.BulkString("since")
	c.W.BulkString(s.Since)
	c.W.BulkString("group")
	c.W.BulkString(s.Group)
	if len(subs) > 0 {
		c.W.BulkString("subcommands")
		c.W.Map(len(subs))
		for _, sub := range subs {
			c.W.BulkString(sub.FullName())
			writeCommandDoc(c, sub)
		}
	}
}

func cmdCommandList(c *Ctx) {
	var filter func(*Spec) bool
	if len(c.Args) > 2 {
		if len(c.Args) != 5 || lower(c.Args[2]) != "filterby" {
			c.W.Error(errSyntax)
			return
		}
		val := lower(c.Args[4])
		switch lower(c.Args[3]) {
		case "module":
			filter = func(*Spec) bool { return false }
		case "aclcat":
			filter = func(s *Spec) bool { return slices.Contains(s.ACLCategories(), val) }
		case "pattern":
			filter = func(s *Spec) bool { return matchNoCase(val, s.FullName()) }
		default:
			c.W.Error(errSyntax)
			return
		}
	}
	var names []string
	for _, s := range allSpecs() {
		if filter == nil || filter(s) {
			names = append(names, s.FullName())
		}
	}
	c.W.Array(len(names))
	for _, n := range names {
		c.W.BulkString(n)
	}
}

// cmdCommandGetKeys replies with the keys a command line names.
func cmdCommandGetKeys(c *Ctx) { getKeys(c, false) }

// cmdCommandGetKeysAndFlags replies with the keys a command line names,
// each with the flags of its key spec: [key, [flag ...]] pairs.
func cmdCommandGetKeysAndFlags(c *Ctx) { getKeys(c, true) }

// getKeys finds the keys of the command line after COMMAND GETKEYS or
// GETKEYSANDFLAGS by its command's key specs, with Redis's errors, in
// Redis's order: an unknown command or subcommand, a command without keys
// (shard channels are not keys), a wrong number of arguments, key specs
// that do not fit the arguments.
func getKeys(c *Ctx, withFlags bool) {
	args := c.Args[2:]
	s := lookupLine(args)
	switch {
	case s == nil:
		c.W.Error("ERR Invalid command specified")
		return
	case !s.hasKeys():
		c.W.Error("ERR The command has no key arguments")
		return
	case !s.ArityOK(len(args)):
		c.W.Error("ERR Invalid number of arguments specified for command")
		return
	}
	refs, ok := s.keyRefs(args)
	if !ok || len(refs) == 0 {
		if s.Flags&FlagNoMandatoryKeys != 0 {
			c.W.Array(0) // EVAL with no key, or a numkeys that does not fit
			return
		}
		c.W.Error("ERR Invalid arguments specified for command")
		return
	}
	c.W.Array(len(refs))
	for _, r := range refs {
		if !withFlags {
			c.W.Bulk(args[r.pos])
			continue
		}
		c.W.Array(2)
		c.W.Bulk(args[r.pos])
		writeKeyFlags(c, r.flags)
	}
}

func cmdCommandHelp(c *Ctx) {
	help(c, "COMMAND", []string{
		"(no subcommand)", "    Return details about all Redis commands.",
		"COUNT", "    Return the total number of commands in this Redis server.",
		"LIST", "    Return a list of all commands in this Redis server.",
		"INFO [<command-name> ...]", "    Return details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"DOCS [<command-name> ...]", "    Return documentation details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"GETKEYS <full-command>", "    Return the keys from a full Redis command.",
		"GETKEYSANDFLAGS <full-command>", "    Return the keys and the access flags from a full Redis command.",
	})
}
