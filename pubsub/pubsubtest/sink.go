// Package pubsubtest holds helpers for tests and benchmarks of code that
// publishes through a pubsub.Hub.
package pubsubtest

import "github.com/cairnkv/cairn/pubsub"

// FrameSink is a pubsub.Subscriber that, like a connection queuing a
// message in its outbox, copies each message's RESP2 frame. It keeps only
// the count and the latest frame, in a buffer it reuses, so a benchmark's
// deliveries allocate nothing of their own.
type FrameSink struct {
	N    int    // messages delivered
	Last []byte // the RESP2 frame of the latest
}

// Deliver counts m and copies its RESP2 frame into Last.
func (s *FrameSink) Deliver(m *pubsub.Message) {
	s.N++
	s.Last = append(s.Last[:0], m.Frame(2)...)
}
