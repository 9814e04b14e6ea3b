package main

import (
	"fmt"
	"strings"
)

// This file holds the write kinds of the invalidation mode's -mix flag:
// the command each kind sends for a new key, the reply it must get, and
// the keyspace event it must make the replica publish.

// writeKind is one kind of write of -mix. Each command it builds creates
// its key, so that every key of a run, being new, gets at least one event.
type writeKind struct {
	// name is the kind's name in -mix.
	name string
	// event is the name of the __keyevent@<db>__:<event> channel that
	// Redis 7 publishes the key on, on the primary, when the command
	// creates the key.
	event string
	// alt is another event name that counts as the expected event, or ""
	// (see incrbyfloat).
	alt string
	// args returns the command that writes key, value being the run's
	// value of -size bytes.
	args func(key, value string) []string
	// check returns an error unless v is the reply the command must get
	// on a new key.
	check func(v Value, value string) error
}

// incrByFloatReply is the reply of INCRBYFLOAT key 1.5 on a new key.
const incrByFloatReply = "1.5"

// writeKinds lists the kinds -mix accepts, in the order the usage names
// them.
var writeKinds = []writeKind{
	{
		name: "set", event: "set",
		args:  func(key, value string) []string { return []string{"SET", key, value} },
		check: wantOK,
	},
	{
		name: "incr", event: "incrby",
		args:  func(key, _ string) []string { return []string{"INCR", key} },
		check: func(v Value, _ string) error { return wantInt(v, 1) },
	},
	{
		name: "append", event: "append",
		args:  func(key, value string) []string { return []string{"APPEND", key, value} },
		check: func(v Value, value string) error { return wantInt(v, int64(len(value))) },
	},
	{
		// SETRANGE with an empty value creates no key and publishes
		// nothing, so -mix with setrange needs a -size of at least 1.
		name: "setrange", event: "setrange",
		args:  func(key, value string) []string { return []string{"SETRANGE", key, "0", value} },
		check: func(v Value, value string) error { return wantInt(v, int64(len(value))) },
	},
	{
		// A Redis primary publishes incrbyfloat but replicates the
		// command as a SET of the result, so a Redis replica publishes
		// set; a Cairn replica publishes incrbyfloat. Either counts, so
		// that the benchmark runs against both.
		name: "incrbyfloat", event: "incrbyfloat", alt: "set",
		args:  func(key, _ string) []string { return []string{"INCRBYFLOAT", key, incrByFloatReply} },
		check: func(v Value, _ string) error { return wantBulk(v, incrByFloatReply) },
	},
	{
		name: "mset", event: "set",
		args:  func(key, value string) []string { return []string{"MSET", key, value} },
		check: wantOK,
	},
	{
		name: "getset", event: "set",
		args:  func(key, value string) []string { return []string{"GETSET", key, value} },
		check: func(v Value, _ string) error { return wantNil(v) },
	},
	{
		// SETEX publishes set and then expire; the expire event is
		// counted among the kind's other events.
		name: "setex", event: "set",
		args:  func(key, value string) []string { return []string{"SETEX", key, "100", value} },
		check: wantOK,
	},
}

// writeKindNames returns the names of writeKinds, comma-separated.
func writeKindNames() string {
	names := make([]string, len(writeKinds))
	for i, k := range writeKinds {
		names[i] = k.name
	}
	return strings.Join(names, ",")
}

// parseMix parses the value of -mix: write kind names separated by
// commas, spaces around a name ignored, a name given twice sending that
// kind twice as often. An empty or unknown name is a usage error that
// names it.
func parseMix(s string) ([]*writeKind, error) {
	var mix []*writeKind
	for name := range strings.SplitSeq(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, usageErrorf("-mix %q: empty write kind (want a comma-separated list of %s)", s, writeKindNames())
		}
		i := -1
		for j := range writeKinds {
			if writeKinds[j].name == name {
				i = j
				break
			}
		}
		if i < 0 {
			return nil, usageErrorf("-mix %q: unknown write kind %q (want a comma-separated list of %s)", s, name, writeKindNames())
		}
		mix = append(mix, &writeKinds[i])
	}
	return mix, nil
}

// mixNames returns the names of mix, in order.
func mixNames(mix []*writeKind) []string {
	names := make([]string, len(mix))
	for i, k := range mix {
		names[i] = k.name
	}
	return names
}

// accepts reports whether an event named name, for a key k wrote, is the
// event k must make the replica publish.
func (k *writeKind) accepts(name []byte) bool {
	return string(name) == k.event || (k.alt != "" && string(name) == k.alt)
}

func wantOK(v Value, _ string) error {
	if v.Kind != '+' || string(v.Str) != "OK" {
		return fmt.Errorf("unexpected reply %v, want OK", truncate(v.String(), 200))
	}
	return nil
}

func wantInt(v Value, n int64) error {
	if v.Kind != ':' || v.Int != n {
		return fmt.Errorf("unexpected reply %v, want the integer %d", truncate(v.String(), 200), n)
	}
	return nil
}

func wantBulk(v Value, s string) error {
	if v.Kind != '$' || v.Null || string(v.Str) != s {
		return fmt.Errorf("unexpected reply %v, want the bulk string %q", truncate(v.String(), 200), s)
	}
	return nil
}

// wantNil accepts the null of RESP2 ($-1) and of RESP3 (_).
func wantNil(v Value) error {
	if !v.Null || (v.Kind != '$' && v.Kind != '_') {
		return fmt.Errorf("unexpected reply %v, want nil (a new key has no old value)", truncate(v.String(), 200))
	}
	return nil
}
