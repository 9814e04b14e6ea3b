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
type Flags uint32

// The flags, one bit each.
const (
	Keyspace Flags = 1 << iota // K: publish __keyspace@<db>__:<key>
	Keyevent                   // E: publish __keyevent@<db>__:<event>
	Generic                    // g: DEL, EXPIRE, RENAME, ...
	String                     // $: string commands
	List                       // l
	Set                        // s
	Hash                       // h
	ZSet                       // z
	Stream                     // t
)

// All is what "A" stands for: every class Cairn accepts today.
const All = Generic | String | List | Set | Hash | ZSet | Stream

// flagChars maps each accepted character to its bit, in the order Redis
// renders classes.
var flagChars = []struct {
	c byte
	f Flags
}{
	{'g', Generic}, {'$', String}, {'l', List}, {'s', Set}, {'h', Hash}, {'z', ZSet}, {'t', Stream},
}

// ErrInvalidFlags is returned by ParseFlags for a character it does not
// accept; its text is the reason CONFIG SET reports.
var ErrInvalidFlags = errors.New("Invalid event class character. Use 'Ag$lshzKEt'.")

// ParseFlags parses a notify-keyspace-events value. Every character must
// be one of K E A g $ l s h z t; anything else is ErrInvalidFlags.
func ParseFlags(s string) (Flags, error) {
	var f Flags
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case 'A':
			f |= All
		case 'K':
			f |= Keyspace
		case 'E':
			f |= Keyevent
		default:
			bit := Flags(0)
			for _, fc := range flagChars {
				if fc.c == c {
					bit = fc.f
				}
			}
			if bit == 0 {
				return 0, ErrInvalidFlags
			}
			f |= bit
		}
	}
	return f, nil
}

// String renders f canonically, as Redis's CONFIG GET does: "A" when every
// class is set (else the classes one by one), then K, then E. "KEA" reads
// back as "AKE".
func (f Flags) String() string {
	var b strings.Builder
	if f&All == All {
		b.WriteByte('A')
	} else {
		for _, fc := range flagChars {
			if f&fc.f != 0 {
				b.WriteByte(fc.c)
			}
		}
	}
	if f&Keyspace != 0 {
		b.WriteByte('K')
	}
	if f&Keyevent != 0 {
		b.WriteByte('E')
	}
	return b.String()
}

// Canonical validates a notify-keyspace-events value and returns its
// canonical rendering; the config package calls it for CONFIG SET.
func Canonical(s string) (string, error) {
	f, err := ParseFlags(s)
	if err != nil {
		return "", err
	}
	return f.String(), nil
}
