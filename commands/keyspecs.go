package commands

import (
	"strconv"
	"strings"
)

// KeyFlag describes how a command uses the keys of one key specification,
// as Redis 7's key-spec flags do.
type KeyFlag uint16

// Key-spec flags, named as COMMAND INFO and COMMAND GETKEYSANDFLAGS report
// them. A spec has one of the four access kinds (KeyRO, KeyRW, KeyOW,
// KeyRM), any of the four operations on the value (KeyAccess, KeyUpdate,
// KeyInsert, KeyDelete), and the markers after them.
const (
	// KeyRO marks a key the command only reads.
	KeyRO KeyFlag = 1 << iota
	// KeyRW marks a key the command reads and writes.
	KeyRW
	// KeyOW marks a key the command overwrites without reading it.
	KeyOW
	// KeyRM marks a key the command deletes.
	KeyRM
	// KeyAccess marks a key whose value the command returns or copies.
	KeyAccess
	// KeyUpdate marks a key whose value the command replaces or modifies.
	KeyUpdate
	// KeyInsert marks a key to which the command only adds data.
	KeyInsert
	// KeyDelete marks a key whose value the command deletes or truncates.
	KeyDelete
	// KeyNotKey marks an argument that is not a key but routes like one
	// in a cluster (the shard Pub/Sub channels).
	KeyNotKey
	// KeyIncomplete marks a spec that may miss some of the keys.
	KeyIncomplete
	// KeyVariableFlags marks a spec whose flags depend on the other
	// arguments; Spec.KeyFlagsOf gives them for one command line.
	KeyVariableFlags
)

var keyFlagNames = []struct {
	f    KeyFlag
	name string
}{
	{KeyRO, "RO"}, {KeyRW, "RW"}, {KeyOW, "OW"}, {KeyRM, "RM"},
	{KeyAccess, "access"}, {KeyUpdate, "update"}, {KeyInsert, "insert"}, {KeyDelete, "delete"},
	{KeyNotKey, "not_key"}, {KeyIncomplete, "incomplete"}, {KeyVariableFlags, "variable_flags"},
}

// Names returns the flag names in Redis's order.
func (f KeyFlag) Names() []string {
	var out []string
	for _, n := range keyFlagNames {
		if f&n.f != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// BeginSearch tells where the search for a spec's keys starts: at a fixed
// argument index (Index > 0), after the first argument equal to Keyword
// (any case) searched from StartFrom (from the end when negative), or
// nowhere known (the zero value).
type BeginSearch struct {
	Index     int
	Keyword   string
	StartFrom int
}

// AtIndex returns the begin search of keys starting at argument i (the
// command name is argument 0).
func AtIndex(i int) BeginSearch { return BeginSearch{Index: i} }

// AfterKeyword returns the begin search of keys starting after keyword,
// looked for from argument startFrom onwards, or from argument
// len(args)+startFrom backwards when startFrom is negative.
func AfterKeyword(keyword string, startFrom int) BeginSearch {
	return BeginSearch{Keyword: keyword, StartFrom: startFrom}
}

// FindKeysKind is how a spec finds its keys once the search has begun.
type FindKeysKind uint8

// The kinds of FindKeys.
const (
	// FindUnknown means the keys cannot be found from the spec.
	FindUnknown FindKeysKind = iota
	// FindRange finds the keys up to LastKey, KeyStep arguments apart.
	FindRange
	// FindKeyNum finds as many keys as an argument says.
	FindKeyNum
)

// FindKeys tells which arguments, from where the search began, are keys.
// For FindRange, LastKey is the last key's index relative to the first
// (or, when negative, counted from the end of the arguments), KeyStep the
// distance between keys and Limit, when LastKey is -1, the part of the
// remaining arguments that are keys (2: half). For FindKeyNum, the
// argument KeyNumIdx after the start gives the number of keys, the first
// of them FirstKey after the start, KeyStep apart.
type FindKeys struct {
	Kind      FindKeysKind
	LastKey   int
	KeyStep   int
	Limit     int
	KeyNumIdx int
	FirstKey  int
}

// Range returns a FindRange of the keys up to lastKey, step apart, the
// first 1/limit of the remaining arguments when limit is not 0.
func Range(lastKey, step, limit int) FindKeys {
	return FindKeys{Kind: FindRange, LastKey: lastKey, KeyStep: step, Limit: limit}
}

// KeyNum returns a FindKeyNum whose key count is at numIdx, the first key
// at firstKey, step apart.
func KeyNum(numIdx, firstKey, step int) FindKeys {
	return FindKeys{Kind: FindKeyNum, KeyNumIdx: numIdx, FirstKey: firstKey, KeyStep: step}
}

// KeySpec is one of a command's key specifications, as Redis 7's COMMAND
// INFO lists them: how to find a set of its key arguments and how the
// command uses them.
type KeySpec struct {
	// Notes explains the flags where they are not obvious.
	Notes string
	// Flags say how the command uses the keys.
	Flags KeyFlag
	// Begin tells where the search for the keys starts.
	Begin BeginSearch
	// Find tells which arguments from there are keys.
	Find FindKeys
}

// Key returns the spec of the single key at argument i.
func Key(i int, flags KeyFlag) KeySpec {
	return KeySpec{Flags: flags, Begin: AtIndex(i), Find: Range(0, 1, 0)}
}

// KeyRange returns the spec of the keys from argument i to lastKey (an
// index relative to i, or counted from the end of the arguments when
// negative: -1 is the last argument), step apart.
func KeyRange(i, lastKey, step int, flags KeyFlag) KeySpec {
	return KeySpec{Flags: flags, Begin: AtIndex(i), Find: Range(lastKey, step, 0)}
}

// Note returns the spec with notes set.
func (k KeySpec) Note(notes string) KeySpec {
	k.Notes = notes
	return k
}

// keyRef is one key argument a command line names: its index in the
// arguments (the command name is 0) and the flags of its spec.
type keyRef struct {
	pos   int
	flags KeyFlag
}

// hasKeys reports whether the command has a key spec of real keys (not
// only the shard channels' KeyNotKey specs).
func (s *Spec) hasKeys() bool {
	for _, k := range s.KeySpecs {
		if k.Flags&KeyNotKey == 0 {
			return true
		}
	}
	return false
}

// keyRefs returns the key arguments of args (the command name first) that
// the key specs find, in the order of the specs, with their flags; the
// flags of a KeyVariableFlags spec are those s.KeyFlagsOf gives for args.
// KeyNotKey specs are left out. It returns false when a spec cannot be
// applied to args (an unknown search, a missing or bad key count, a key
// beyond the arguments), as Redis's COMMAND GETKEYS then replies an error.
func (s *Spec) keyRefs(args [][]byte) ([]keyRef, bool) {
	var refs []keyRef
	n := len(args)
	for _, k := range s.KeySpecs {
		if k.Flags&KeyNotKey != 0 {
			continue
		}
		first := 0
		switch {
		case k.Begin.Index > 0:
			first = k.Begin.Index
		case k.Begin.Keyword != "":
			first = findKeyword(args, k.Begin.Keyword, k.Begin.StartFrom)
			if first == 0 {
				continue // no keyword, no keys of this spec
			}
		default:
			return nil, false
		}
		var last, step int
		switch k.Find.Kind {
		case FindRange:
			step = k.Find.KeyStep
			switch {
			case k.Find.LastKey >= 0:
				last = first + k.Find.LastKey
			case k.Find.Limit == 0:
				last = n + k.Find.LastKey
			default:
				last = first + (n-first)/k.Find.Limit + k.Find.LastKey
			}
		case FindKeyNum:
			step = k.Find.KeyStep
			if k.Find.KeyNumIdx >= n-first {
				return nil, false
			}
			num, err := strconv.Atoi(string(args[first+k.Find.KeyNumIdx]))
			if err != nil || num < 0 {
				return nil, false
			}
			first += k.Find.FirstKey
			last = first + num - 1
		default:
			return nil, false
		}
		if last >= n || last < first || first >= n || step <= 0 {
			return nil, false
		}
		flags := k.Flags
		if flags&KeyVariableFlags != 0 && s.KeyFlagsOf != nil {
			flags = s.KeyFlagsOf(args)
		}
		for i := first; i <= last; i += step {
			refs = append(refs, keyRef{pos: i, flags: flags})
		}
	}
	return refs, true
}

// findKeyword returns the index after the first argument equal to keyword
// (any case), searched from startFrom up to the last but one argument, or
// from len(args)+startFrom down to argument 1 when startFrom is negative;
// 0 when there is none.
func findKeyword(args [][]byte, keyword string, startFrom int) int {
	n := len(args)
	switch {
	case startFrom > 0:
		for i := startFrom; i < n-1; i++ {
			if strings.EqualFold(string(args[i]), keyword) {
				return i + 1
			}
		}
	case startFrom < 0:
		for i := n + startFrom; i >= 1; i-- {
			if strings.EqualFold(string(args[i]), keyword) {
				return i + 1
			}
		}
	}
	return 0
}

// writeKeySpecs writes a COMMAND INFO entry's key specifications as Redis
// 7.0 does: a set of maps (arrays of pairs in RESP2).
func writeKeySpecs(c *Ctx, specs []KeySpec) {
	c.W.Set(len(specs))
	for _, k := range specs {
		if k.Notes != "" {
			c.W.Map(4)
			c.W.BulkString("notes")
			c.W.BulkString(k.Notes)
		} else {
			c.W.Map(3)
		}
		c.W.BulkString("flags")
		writeKeyFlags(c, k.Flags)
		c.W.BulkString("begin_search")
		c.W.Map(2)
		c.W.BulkString("type")
		switch {
		case k.Begin.Index > 0:
			c.W.BulkString("index")
			c.W.BulkString("spec")
			c.W.Map(1)
			c.W.BulkString("index")
			c.W.Int(int64(k.Begin.Index))
		case k.Begin.Keyword != "":
			c.W.BulkString("keyword")
			c.W.BulkString("spec")
			c.W.Map(2)
			c.W.BulkString("keyword")
			c.W.BulkString(k.Begin.Keyword)
			c.W.BulkString("startfrom")
			c.W.Int(int64(k.Begin.StartFrom))
		default:
			c.W.BulkString("unknown")
			c.W.BulkString("spec")
			c.W.Map(0)
		}
		c.W.BulkString("find_keys")
		c.W.Map(2)
		c.W.BulkString("type")
		f := k.Find
		switch f.Kind {
		case FindRange:
			writeIntFields(c, "range", "lastkey", f.LastKey, "keystep", f.KeyStep, "limit", f.Limit)
		case FindKeyNum:
			writeIntFields(c, "keynum", "keynumidx", f.KeyNumIdx, "firstkey", f.FirstKey, "keystep", f.KeyStep)
		default:
			c.W.BulkString("unknown")
			c.W.BulkString("spec")
			c.W.Map(0)
		}
	}
}

// writeIntFields writes the type name of a find_keys and its spec: a map
// of the three named integers.
func writeIntFields(c *Ctx, kind, n1 string, v1 int, n2 string, v2 int, n3 string, v3 int) {
	c.W.BulkString(kind)
	c.W.BulkString("spec")
	c.W.Map(3)
	for _, f := range []struct {
		name string
		v    int
	}{{n1, v1}, {n2, v2}, {n3, v3}} {
		c.W.BulkString(f.name)
		c.W.Int(int64(f.v))
	}
}

// writeKeyFlags writes key-spec flags as a set of simple strings.
func writeKeyFlags(c *Ctx, f KeyFlag) {
	names := f.Names()
	c.W.Set(len(names))
	for _, n := range names {
		c.W.SimpleString(n)
	}
}

// writeTips writes a command's tips as a set of bulk strings.
func writeTips(c *Ctx, tips []string) {
	c.W.Set(len(tips))
	for _, t := range tips {
		c.W.BulkString(t)
	}
}
