package notify

import (
	"sync"
	"sync/atomic"

	"github.com/cairnkv/cairn/pubsub"
)

// Event is one keyspace event: a key that a command changed, and the
// Redis event name it publishes under.
type Event struct {
	// Class is the flag that enables the event (String for "set",
	// Generic for "del").
	Class Flags
	// Name is the Redis event name, the payload of __keyspace@ messages.
	Name string
	// Namespace is the key's namespace, "" for the default one.
	Namespace string
	// Key is the raw key, the payload of __keyevent@ messages.
	Key []byte
	// Message is set for a message a transaction or script PUBLISHed on
	// Channel (SPUBLISHed, with Shard), which goes out in order with the
	// transaction's events, whatever the flags: Key is then the message.
	Message bool
	Shard   bool
	Channel []byte
}

// Message returns the event that delivers a PUBLISH's message (an
// SPUBLISH's with shard) in order with a transaction's events.
func Message(channel, message []byte, shard bool) Event {
	return Event{Message: true, Channel: channel, Key: message, Shard: shard}
}

// Recycle returns events emptied for reuse, their keys released, or nil
// when the slice grew beyond keep events: callers that gather events
// batch after batch keep one slice without pinning a huge one.
func Recycle(events []Event, keep int) []Event {
	if cap(events) > keep {
		return nil
	}
	clear(events[:cap(events)])
	return events[:0]
}

// Emitter publishes events on the Pub/Sub hub, filtered by the node's own
// notify-keyspace-events, which it reads at publish time. It is safe for
// concurrent use.
type Emitter struct {
	hub   *pubsub.Hub
	flags atomic.Uint32
}

// NewEmitter returns an emitter publishing on hub, with every flag off.
func NewEmitter(hub *pubsub.Hub) *Emitter { return &Emitter{hub: hub} }

// SetFlags replaces the flags (CONFIG SET notify-keyspace-events).
func (e *Emitter) SetFlags(f Flags) { e.flags.Store(uint32(f)) }

// Flags returns the current flags.
func (e *Emitter) Flags() Flags { return Flags(e.flags.Load()) }

// ClassEnabled reports whether class is on, whatever K and E say; it
// decides the notify bit of a batch's LogData, so a primary with a class
// on but no channel selector still ships the context to its replicas.
func (e *Emitter) ClassEnabled(class Flags) bool { return e.Flags()&class != 0 }

// Emit publishes ev: __keyspace@<db>__:<key> with the event name, then
// __keyevent@<db>__:<event> with the key, each when its selector (K, E)
// and the event's class are on. Messages of a namespace reach only that
// namespace's clients and the admin. A Message event is published as
// PUBLISH (or SPUBLISH) publishes, to every client.
func (e *Emitter) Emit(ev Event) {
	if ev.Message {
		if ev.Shard {
			e.hub.PublishShard(ev.Channel, ev.Key)
		} else {
			e.hub.Publish(ev.Channel, ev.Key)
		}
		return
	}
	f := e.Flags()
	if f&ev.Class == 0 || f&(Keyspace|Keyevent) == 0 {
		return
	}
	db := DB(ev.Namespace)
	// The hub reads what it is handed only while it publishes, but keeps
	// it in a pooled message meanwhile, so the names are built in a pooled
	// buffer rather than on the stack (which would escape).
	bp := channelBufs.Get().(*[]byte)
	b := *bp
	if f&Keyspace != 0 {
		// The event's name, then the channel.
		b = append(append(append(append(append(b[:0], ev.Name...), "__keyspace@"...), db...), "__:"...), ev.Key...)
		e.hub.PublishIn(ev.Namespace, b[len(ev.Name):], b[:len(ev.Name)])
	}
	if f&Keyevent != 0 {
		b = append(append(append(append(b[:0], "__keyevent@"...), db...), "__:"...), ev.Name...)
		e.hub.PublishIn(ev.Namespace, b, ev.Key)
	}
	if cap(b) <= maxChannelBuf {
		*bp = b
		channelBufs.Put(bp)
	}
}

// channelBufs recycles Emit's buffers; maxChannelBuf bounds the one a
// long key leaves behind.
var channelBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxChannelBuf = 4 << 10

// DB returns the <db> part of the channels of a namespace: "0" for the
// default namespace, and "ns:" followed by the percent-encoded name for
// another (every byte outside [A-Za-z0-9_.-] as %XX, uppercase), so no
// namespace name can collide with db 0 or with another namespace.
func DB(namespace string) string {
	if namespace == "" {
		return "0"
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, 3+3*len(namespace))
	b = append(b, "ns:"...)
	for i := 0; i < len(namespace); i++ {
		c := namespace[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '.', c == '-':
			b = append(b, c)
		default:
			b = append(b, '%', hex[c>>4], hex[c&15])
		}
	}
	return string(b)
}
