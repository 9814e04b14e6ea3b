// Package notify implements Redis keyspace notifications: the
// notify-keyspace-events flags, the Emitter that turns a write's events
// into __keyspace@<db>__ and __keyevent@<db>__ messages on the Pub/Sub hub,
// and the Extractor that reconstructs the events a committed batch carries,
// so replicas publish what the primary published.
package notify

import (
	"errors"
	"strings"
)

// Flags is a notify-keyspace-events bitmask. It is separate from the
// storage types: a class bit enables the events of one kind of command.
// The bits live in memory only and are never persisted; they follow the
// order of Redis's NOTIFY_* constants, leaving out NOTIFY_LOADED, which
// only modules can subscribe to and which has no character.
type Flags uint32

// The flags, one bit each, with the character notify-keyspace-events uses
// for each.
const (
	Keyspace Flags = 1 << iota // K: publish __keyspace@<db>__:<key>
	Keyevent                   // E: publish __keyevent@<db>__:<event>
	Generic                    // g: DEL, EXPIRE, RENAME, ...
	String                     // $: string commands
	List                       // l: list commands
	Set                        // s: set commands
	Hash                       // h: hash commands
	ZSet                       // z: sorted set commands
	Expired                    // x: a key expired
	Evicted                    // e: a key was evicted for maxmemory
	Stream                     // t: stream commands
	KeyMiss                    // m: a read found no key (not in A)
	Module                     // d: module key type events
	New                        // n: a key was created (not in A)
)

// All is what "A" stands for, as in Redis 7.0: "g$lshzxetd". KeyMiss and
// New are left out, so m and n must always be asked for by name.
const All = Generic | String | List | Set | Hash | ZSet | Expired | Evicted | Stream | Module

// classChars maps each class character that "A" can stand for, and n, to
// its bit, in the order Redis 7.0's keyspaceEventsFlagsToString writes them
// when not every class of All is set.
var classChars = []struct {
	c byte
	f Flags
}{
	{'g', Generic}, {'$', String}, {'l', List}, {'s', Set}, {'h', Hash}, {'z', ZSet},
	{'x', Expired}, {'e', Evicted}, {'t', Stream}, {'d', Module}, {'n', New},
}

// ErrInvalidFlags is returned by ParseFlags for a character it does not
// accept. Its text is the reason redis-server 7.0.15 gives when CONFIG SET
// notify-keyspace-events is refused.
var ErrInvalidFlags = errors.New("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")

// ParseFlags parses a notify-keyspace-events value the way Redis 7.0's
// keyspaceEventsStringToFlags does. Each character must be one of
// A g $ l s h z x e K E t m d n, in any order and repeated at will; the
// empty string means no flags. Any other character makes the whole value
// ErrInvalidFlags. As in Redis, which reads the value as a C string,
// parsing stops at the first NUL byte and ignores whatever follows it.
func ParseFlags(s string) (Flags, error) {
	var f Flags
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 0:
			return f, nil
		case 'A':
			f |= All
		case 'g':
			f |= Generic
		case '$':
			f |= String
		case 'l':
			f |= List
		case 's':
			f |= Set
		case 'h':
			f |= Hash
		case 'z':
			f |= ZSet
		case 'x':
			f |= Expired
		case 'e':
			f |= Evicted
		case 'K':
			f |= Keyspace
		case 'E':
			f |= Keyevent
		case 't':
			f |= Stream
		case 'm':
			f |= KeyMiss
		case 'd':
			f |= Module
		case 'n':
			f |= New
		default:
			return 0, ErrInvalidFlags
		}
	}
	return f, nil
}

// String renders f as Redis 7.0's keyspaceEventsFlagsToString does, which
// is what CONFIG GET notify-keyspace-events returns. It writes "A" when
// every class of All is set and otherwise the classes one by one in the
// order g $ l s h z x e t d n; then K, then E, then m. Note that, as in
// Redis, n is only written in the second case: New set together with All
// renders as "A" without "n", so "KEAn" reads back as "AKE" even though
// New stays set in the parsed flags.
func (f Flags) String() string {
	var b strings.Builder
	if f&All == All {
		b.WriteByte('A')
	} else {
		for _, cc := range classChars {
			if f&cc.f != 0 {
				b.WriteByte(cc.c)
			}
		}
	}
	if f&Keyspace != 0 {
		b.WriteByte('K')
	}
	if f&Keyevent != 0 {
		b.WriteByte('E')
	}
	if f&KeyMiss != 0 {
		b.WriteByte('m')
	}
	return b.String()
}

// Canonical validates a notify-keyspace-events value and returns the form
// the configuration stores: String's rendering, plus "n" when A hides it
// ("KEAn" is stored as "AKEn"), so that re-parsing the stored value gives
// back every flag. CONFIG GET shows Display's rendering instead.
func Canonical(s string) (string, error) {
	f, err := ParseFlags(s)
	if err != nil {
		return "", err
	}
	out := f.String()
	if f&All == All && f&New != 0 {
		out += "n"
	}
	return out, nil
}

// Display renders a stored notify-keyspace-events value as Redis's CONFIG
// GET does (String's form: "AKEn" reads back as "AKE").
func Display(stored string) string {
	f, err := ParseFlags(stored)
	if err != nil {
		return stored
	}
	return f.String()
}
