package pubsub

import "strconv"

// Kind names the three kinds of subscription Redis has.
type Kind uint8

// Subscription kinds.
const (
	// KindChannel is SUBSCRIBE: an exact channel name.
	KindChannel Kind = iota
	// KindPattern is PSUBSCRIBE: a glob pattern over channel names.
	KindPattern
	// KindShard is SSUBSCRIBE: an exact name in the separate namespace of
	// shard channels (there is no cluster: they are simply local).
	KindShard
)

// Message is one published message as a subscriber receives it. Its RESP
// frames are encoded once per protocol on first use and then shared by
// every subscriber; they must not be modified. A Message is built and
// encoded by the publishing goroutine only.
type Message struct {
	kind    Kind // KindChannel: "message", KindPattern: "pmessage", KindShard: "smessage"
	pattern []byte
	channel []byte
	payload []byte
	frames  [2][]byte // RESP2, RESP3
}

// newMessage returns a message holding its own copy of channel and
// payload, so publishers may pass buffers they reuse (and the compiler can
// keep them on the stack): only a message that has a receiver is built.
func newMessage(kind Kind, pattern, channel, payload []byte) *Message {
	buf := make([]byte, len(channel)+len(payload))
	n := copy(buf, channel)
	copy(buf[n:], payload)
	return &Message{kind: kind, pattern: pattern, channel: buf[:n:n], payload: buf[n:]}
}

// Frame returns the message encoded for a RESP2 (proto 2) or RESP3
// (proto 3) connection.
func (m *Message) Frame(proto int) []byte {
	i := 0
	if proto == 3 {
		i = 1
	}
	if m.frames[i] == nil {
		m.frames[i] = m.encode(proto == 3)
	}
	return m.frames[i]
}

func (m *Message) encode(resp3 bool) []byte {
	head := byte('*')
	if resp3 {
		head = '>'
	}
	var name string
	n := 3
	switch m.kind {
	case KindPattern:
		name, n = "pmessage", 4
	case KindShard:
		name = "smessage"
	default:
		name = "message"
	}
	b := make([]byte, 0, 48+len(m.pattern)+len(m.channel)+len(m.payload))
	b = append(b, head)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, '\r', '\n')
	b = appendBulk(b, []byte(name))
	if m.kind == KindPattern {
		b = appendBulk(b, m.pattern)
	}
	b = appendBulk(b, m.channel)
	return appendBulk(b, m.payload)
}

func appendBulk(b, s []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}
