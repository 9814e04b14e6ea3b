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
// frames are encoded once per protocol, on first use or (the RESP2 frame
// of a publication's first message) when the message is built, and then
// shared by every subscriber; they must not be modified. A Message is
// built and encoded by the publishing goroutine only.
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
// buffers they reuse (and the compiler can keep them on the stack). The
// copy is that first message's RESP2 frame, encoded at once: channel and
// payload are slices of it, so a message to a RESP2 subscriber costs its
// frame and nothing more.
type publication struct {
	made             bool
	channel, payload []byte // slices of the first message's RESP2 frame
}

// message returns channel and payload as a message of kind (for pattern).
// Every call of one publication passes the same channel and payload.
func (p *publication) message(kind Kind, pattern, channel, payload []byte) *Message {
	m := &Message{kind: kind, pattern: pattern}
	if !p.made {
		f, at := encode(false, kind, pattern, channel, payload)
		p.channel = f[at : at+len(channel) : at+len(channel)]
		end := len(f) - 2 // the payload's bulk string ends the frame
		p.payload = f[end-len(payload) : end : end]
		p.made = true
		m.frames[0] = f
	}
	m.channel, m.payload = p.channel, p.payload
	return m
}

// Frame returns the message encoded for a RESP2 (proto 2) or RESP3
// (proto 3) connection.
func (m *Message) Frame(proto int) []byte {
	i := 0
	if proto == 3 {
		i = 1
	}
	if m.frames[i] == nil {
		m.frames[i], _ = encode(proto == 3, m.kind, m.pattern, m.channel, m.payload)
	}
	return m.frames[i]
}

// encode returns the frame of a message of kind with pattern, channel
// and payload, for RESP3 (resp3) or RESP2, and the index in the frame of
// the channel's first byte.
func encode(resp3 bool, kind Kind, pattern, channel, payload []byte) (frame []byte, channelAt int) {
	head := byte('*')
	if resp3 {
		head = '>'
	}
	var name string
	n := 3
	switch kind {
	case KindPattern:
		name, n = "pmessage", 4
	case KindShard:
		name = "smessage"
	default:
		name = "message"
	}
	b := make([]byte, 0, 48+len(pattern)+len(channel)+len(payload))
	b = append(b, head)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, '\r', '\n')
	b = appendBulk(b, []byte(name))
	if kind == KindPattern {
		b = appendBulk(b, pattern)
	}
	b = appendBulk(b, channel)
	channelAt = len(b) - len(channel) - 2
	return appendBulk(b, payload), channelAt
}

func appendBulk(b, s []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}
