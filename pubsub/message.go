package pubsub

import (
	"strconv"
	"sync"
)

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

// Message is one published message as a subscriber receives it. It is
// valid only while Deliver runs: the Hub reuses the Message and its frames
// for the next message, so a subscriber copies what it keeps. Its RESP
// frames are encoded on first use, once per protocol, and shared by every
// subscriber of the same channel or pattern; they must not be modified.
type Message struct {
	kind    Kind // KindChannel: "message", KindPattern: "pmessage", KindShard: "smessage"
	pattern []byte
	channel []byte    // the publisher's, valid during the publication
	payload []byte    // the publisher's, valid during the publication
	frames  [2][]byte // RESP2, RESP3; empty until encoded (a frame never is)
}

// maxPooledFrame is the largest frame buffer a pooled Message keeps, so a
// rare large message does not pin its buffer.
const maxPooledFrame = 64 << 10

// messages recycles Messages and their frame buffers across publications.
var messages = sync.Pool{New: func() any { return new(Message) }}

// publication returns a pooled Message for a publication of payload on
// channel. It refers to the publisher's slices, which therefore escape:
// publishers pass heap buffers (notify.Emitter pools its own).
func publication(channel, payload []byte) *Message {
	m := messages.Get().(*Message)
	m.channel, m.payload = channel, payload
	return m
}

// reset makes m the message of kind (with pattern, for KindPattern) of its
// publication.
func (m *Message) reset(kind Kind, pattern []byte) {
	m.kind, m.pattern = kind, pattern
	m.frames[0], m.frames[1] = m.frames[0][:0], m.frames[1][:0]
}

// release returns m to the pool, without large buffers.
func (m *Message) release() {
	m.pattern, m.channel, m.payload = nil, nil, nil
	for i := range m.frames {
		if cap(m.frames[i]) > maxPooledFrame {
			m.frames[i] = nil
		}
	}
	messages.Put(m)
}

// Frame returns the message encoded for a RESP2 (proto 2) or RESP3
// (proto 3) connection, valid while Deliver runs.
func (m *Message) Frame(proto int) []byte {
	i := 0
	if proto == 3 {
		i = 1
	}
	if len(m.frames[i]) == 0 {
		m.frames[i] = appendFrame(m.frames[i], proto == 3, m.kind, m.pattern, m.channel, m.payload)
	}
	return m.frames[i]
}

// appendFrame appends to b the frame of a message of kind with pattern,
// channel and payload, for RESP3 (resp3) or RESP2.
func appendFrame(b []byte, resp3 bool, kind Kind, pattern, channel, payload []byte) []byte {
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
	b = append(b, head)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, '\r', '\n')
	b = appendBulk(b, []byte(name))
	if kind == KindPattern {
		b = appendBulk(b, pattern)
	}
	b = appendBulk(b, channel)
	return appendBulk(b, payload)
}

func appendBulk(b, s []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}
