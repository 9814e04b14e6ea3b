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

// publication holds the hub's copy of one publication's channel and
// payload, made when the first message that has a receiver is built and
// shared by every message of the publication, so publishers may pass
// buffers they reuse (and the compiler can keep them on the stack).
type publication struct {
	owned []byte // channel then payload, once copied
}

// message returns channel and payload as a message of kind (for pattern).
// Every call of one publication passes the same channel and payload.
func (p *publication) message(kind Kind, pattern, channel, payload []byte) *Message {
	if p.owned == nil {
		p.owned = make([]byte, 0, len(channel)+len(payload))
		p.owned = append(append(p.owned, channel...), payload...)
	}
	n := len(channel)
	return &Message{kind: kind, pattern: pattern, channel: p.owned[:n:n], payload: p.owned[n:]}
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
