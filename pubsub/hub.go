// Package pubsub is Cairn's one fan-out core: clients' PUBLISH, the
// primary's keyspace notifications and replicas' reconstructed
// notifications all publish through a Hub. Publishing never waits on a
// subscriber: a Subscriber only enqueues what it is handed.
package pubsub

import (
	"sort"
	"sync"

	"github.com/cairnkv/cairn/glob"
)

// Subscriber is one connection's receiving end. The server implements it.
type Subscriber interface {
	// Deliver enqueues a copy of m's frame for the connection: m is
	// valid only until Deliver returns (the Hub reuses it). It is called
	// with the Hub's read lock held, so it must not block and must not
	// call back into the Hub; a subscriber that cannot keep up closes its
	// connection asynchronously and is dropped when that connection ends.
	Deliver(m *Message)
}

// Member is implemented by subscribers that belong to a namespace. Messages
// published with PublishIn reach only the subscribers for which InNamespace
// is true; a subscriber that does not implement Member receives them all.
type Member interface {
	InNamespace(ns string) bool
}

// Hub holds every subscription. Exact channels are a hash lookup; each
// distinct pattern is matched once per publish and then fanned out to all
// its subscribers. State is released as soon as the last subscriber of a
// channel or pattern leaves. A Hub is safe for concurrent use.
type Hub struct {
	mu      sync.RWMutex
	byKind  [3]map[string]*entry
	clients map[Subscriber]*subscriptions
	// byPrefix indexes the patterns by their literal prefix (the bytes
	// every matching channel starts with), so a publish evaluates only
	// the patterns whose prefix the channel starts with.
	byPrefix map[string][]*entry
	// prefixLens are the distinct lengths of the keys of byPrefix, sorted,
	// so a publish looks up only prefixes that exist; prefixesOfLen counts
	// the keys of each length.
	prefixLens    []int
	prefixesOfLen map[int]int
}

// entry is one channel or pattern with its subscribers.
type entry struct {
	name   []byte // the name as bytes, for matching and frames without copies
	prefix string // for patterns: glob.LiteralPrefix of name
	// anySuffix is true for a pattern that is its literal prefix followed
	// by stars only (__keyevent@0__:*): every channel with the prefix
	// matches it, so publishers skip glob.Match.
	anySuffix bool
	// at is a pattern's index in byPrefix[prefix], for removal in
	// constant time.
	at int
	// subs are the subscribers, iterated by publishers; pos is each
	// one's index in subs, for removal in constant time.
	subs []Subscriber
	pos  map[Subscriber]int
}

// add subscribes s to e (a no-op when it already is).
func (e *entry) add(s Subscriber) {
	if _, ok := e.pos[s]; !ok {
		e.pos[s] = len(e.subs)
		e.subs = append(e.subs, s)
	}
}

// remove unsubscribes s from e (a no-op when it is not subscribed).
func (e *entry) remove(s Subscriber) {
	i, ok := e.pos[s]
	if !ok {
		return
	}
	last := len(e.subs) - 1
	e.subs[i] = e.subs[last]
	e.pos[e.subs[i]] = i
	e.subs[last] = nil
	e.subs = e.subs[:last]
	delete(e.pos, s)
}

// subscriptions are one subscriber's names of each kind, in the order it
// subscribed (for UNSUBSCRIBE without arguments). Removing a name leaves a
// hole in names rather than shifting the rest, so that dropping a client
// with a million channels takes time linear in them, not quadratic; the
// holes are squeezed out once they outnumber the live names.
type subscriptions struct {
	// names holds each kind's names in subscription order; position i is
	// live when index maps names[i] to i, else a hole.
	names [3][]string
	index [3]map[string]int
}

func (s *subscriptions) add(k Kind, name string) bool {
	if s.index[k] == nil {
		s.index[k] = map[string]int{}
	}
	if _, ok := s.index[k][name]; ok {
		return false
	}
	s.index[k][name] = len(s.names[k])
	s.names[k] = append(s.names[k], name)
	return true
}

func (s *subscriptions) remove(k Kind, name string) bool {
	if _, ok := s.index[k][name]; !ok {
		return false
	}
	delete(s.index[k], name)
	if live := len(s.index[k]); len(s.names[k]) > 2*live+16 {
		s.names[k] = s.live(k)
		for i, n := range s.names[k] {
			s.index[k][n] = i
		}
	}
	return true
}

// live returns a new slice of the live names of kind k, in order.
func (s *subscriptions) live(k Kind) []string {
	out := make([]string, 0, len(s.index[k]))
	for i, n := range s.names[k] {
		if j, ok := s.index[k][n]; ok && j == i {
			out = append(out, n)
		}
	}
	return out
}

// len returns how many names of kind k are held.
func (s *subscriptions) len(k Kind) int { return len(s.index[k]) }

func (s *subscriptions) total() int {
	return s.len(KindChannel) + s.len(KindPattern) + s.len(KindShard)
}

// NewHub returns an empty Hub.
func NewHub() *Hub {
	h := &Hub{clients: map[Subscriber]*subscriptions{}, byPrefix: map[string][]*entry{}, prefixesOfLen: map[int]int{}}
	for k := range h.byKind {
		h.byKind[k] = map[string]*entry{}
	}
	return h
}

// Counts returns how many channels, patterns and shard channels s holds.
func (h *Hub) Counts(s Subscriber) (channels, patterns, shards int) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if c := h.clients[s]; c != nil {
		return c.len(KindChannel), c.len(KindPattern), c.len(KindShard)
	}
	return 0, 0, 0
}

// count is the number Redis reports in (un)subscribe replies: channels
// plus patterns, or shard channels for the shard kind.
func (c *subscriptions) count(k Kind) int {
	if c == nil {
		return 0
	}
	if k == KindShard {
		return c.len(KindShard)
	}
	return c.len(KindChannel) + c.len(KindPattern)
}

// Subscribe adds name of kind k to s's subscriptions (a no-op when s
// already holds it) and returns the count for the reply.
func (h *Hub) Subscribe(s Subscriber, k Kind, name []byte) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.clients[s]
	if c == nil {
		c = &subscriptions{}
		h.clients[s] = c
	}
	n := string(name)
	if c.add(k, n) {
		e := h.byKind[k][n]
		if e == nil {
			e = &entry{name: []byte(n), pos: map[Subscriber]int{}}
			h.byKind[k][n] = e
			if k == KindPattern {
				e.prefix = string(glob.LiteralPrefix(e.name))
				e.anySuffix = onlyStarsAfter(e.name, e.prefix)
				if h.byPrefix[e.prefix] == nil {
					h.addPrefixLen(len(e.prefix))
				}
				e.at = len(h.byPrefix[e.prefix])
				h.byPrefix[e.prefix] = append(h.byPrefix[e.prefix], e)
			}
		}
		e.add(s)
	}
	return c.count(k)
}

// Unsubscribe removes name of kind k from s's subscriptions (a no-op when
// s does not hold it) and returns the count for the reply.
func (h *Hub) Unsubscribe(s Subscriber, k Kind, name []byte) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.clients[s]
	if c == nil {
		return 0
	}
	h.unsubscribeLocked(s, c, k, string(name))
	return c.count(k)
}

func (h *Hub) unsubscribeLocked(s Subscriber, c *subscriptions, k Kind, n string) {
	if !c.remove(k, n) {
		return
	}
	if e := h.byKind[k][n]; e != nil {
		e.remove(s)
		if len(e.subs) == 0 {
			delete(h.byKind[k], n)
			if k == KindPattern {
				h.unindex(e)
			}
		}
	}
	if c.total() == 0 {
		delete(h.clients, s)
	}
}

// Names returns the names of kind k that s holds, in subscription order.
func (h *Hub) Names(s Subscriber, k Kind) []string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if c := h.clients[s]; c != nil {
		return c.live(k)
	}
	return nil
}

// Drop removes every subscription of s; the server calls it when a
// connection ends.
func (h *Hub) Drop(s Subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.clients[s]
	if c == nil {
		return
	}
	for k := range c.names {
		for _, n := range c.live(Kind(k)) {
			h.unsubscribeLocked(s, c, Kind(k), n)
		}
	}
	delete(h.clients, s)
}

// Publish delivers payload on channel to the exact subscribers of the
// channel and to the subscribers of every matching pattern, and returns
// the number of deliveries (Redis's PUBLISH reply). A subscriber holding
// both the channel and a matching pattern gets "message" then "pmessage".
func (h *Hub) Publish(channel, payload []byte) int {
	return h.publish(channel, payload, nil)
}

// PublishIn is Publish restricted to the subscribers of namespace ns (see
// Member); keyspace notifications of a namespace are published this way.
func (h *Hub) PublishIn(ns string, channel, payload []byte) int {
	return h.publish(channel, payload, &ns)
}

// Receivers returns the number of deliveries Publish(channel, ...) would
// make now, without making them: a transaction's PUBLISH replies it and
// delivers its message when the transaction commits.
func (h *Hub) Receivers(channel []byte) int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	n := 0
	h.match(channel, func(e *entry, _ bool) { n += len(e.subs) })
	return n
}

// match calls fn with the entry of channel's exact subscribers, if any,
// then with the entry of each pattern that matches channel (pattern
// true). The caller holds h.mu.
func (h *Hub) match(channel []byte, fn func(e *entry, pattern bool)) {
	if e := h.byKind[KindChannel][string(channel)]; e != nil {
		fn(e, false)
	}
	for _, i := range h.prefixLens {
		if i > len(channel) {
			break
		}
		for _, e := range h.byPrefix[string(channel[:i])] {
			if e.anySuffix || glob.Match(e.name, channel, false) {
				fn(e, true)
			}
		}
	}
}

// ShardReceivers returns the number of subscribers of shard channel
// channel, to whom PublishShard would deliver.
func (h *Hub) ShardReceivers(channel []byte) int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if e := h.byKind[KindShard][string(channel)]; e != nil {
		return len(e.subs)
	}
	return 0
}

func (h *Hub) publish(channel, payload []byte, ns *string) int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	n := 0
	var m *Message // one for the whole publication, reset for each entry
	h.match(channel, func(e *entry, pattern bool) {
		if m == nil {
			m = publication(channel, payload)
		}
		if pattern {
			m.reset(KindPattern, e.name)
		} else {
			m.reset(KindChannel, nil)
		}
		n += e.deliver(m, ns)
	})
	if m != nil {
		m.release()
	}
	return n
}

// onlyStarsAfter reports whether pattern is a non-empty prefix itself
// followed by one or more '*' and nothing else. (A pattern of stars alone
// is left to glob.Match: like Redis's, it does not match the empty channel.)
func onlyStarsAfter(pattern []byte, prefix string) bool {
	if prefix == "" || len(pattern) <= len(prefix) || string(pattern[:len(prefix)]) != prefix {
		return false
	}
	for _, b := range pattern[len(prefix):] {
		if b != '*' {
			return false
		}
	}
	return true
}

// addPrefixLen records that a new prefix of length n is indexed.
func (h *Hub) addPrefixLen(n int) {
	h.prefixesOfLen[n]++
	if h.prefixesOfLen[n] > 1 {
		return
	}
	i := sort.SearchInts(h.prefixLens, n)
	h.prefixLens = append(h.prefixLens, 0)
	copy(h.prefixLens[i+1:], h.prefixLens[i:])
	h.prefixLens[i] = n
}

// dropPrefixLen records that a prefix of length n is no longer indexed,
// and forgets the length once no indexed prefix has it.
func (h *Hub) dropPrefixLen(n int) {
	if h.prefixesOfLen[n]--; h.prefixesOfLen[n] > 0 {
		return
	}
	delete(h.prefixesOfLen, n)
	if i := sort.SearchInts(h.prefixLens, n); i < len(h.prefixLens) && h.prefixLens[i] == n {
		h.prefixLens = append(h.prefixLens[:i], h.prefixLens[i+1:]...)
	}
}

// unindex removes a pattern entry from the prefix index.
func (h *Hub) unindex(e *entry) {
	list := h.byPrefix[e.prefix]
	last := len(list) - 1
	list[e.at] = list[last]
	list[e.at].at = e.at
	list[last] = nil
	list = list[:last]
	if len(list) == 0 {
		delete(h.byPrefix, e.prefix)
		h.dropPrefixLen(len(e.prefix))
	} else {
		h.byPrefix[e.prefix] = list
	}
}

// PublishShard delivers payload to the subscribers of shard channel
// channel (SPUBLISH) and returns their number.
func (h *Hub) PublishShard(channel, payload []byte) int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	e := h.byKind[KindShard][string(channel)]
	if e == nil {
		return 0
	}
	m := publication(channel, payload)
	m.reset(KindShard, nil)
	defer m.release()
	return e.deliver(m, nil)
}

// deliver hands m to every subscriber of e (of namespace *ns only, when ns
// is not nil) and returns their number.
func (e *entry) deliver(m *Message, ns *string) int {
	if ns == nil {
		for _, s := range e.subs {
			s.Deliver(m)
		}
		return len(e.subs)
	}
	n := 0
	for _, s := range e.subs {
		if mb, ok := s.(Member); ok && !mb.InNamespace(*ns) {
			continue
		}
		s.Deliver(m)
		n++
	}
	return n
}

// Channels returns the active channels of kind KindChannel or KindShard
// matching pattern (all of them for a nil pattern), sorted.
func (h *Hub) Channels(k Kind, pattern []byte) []string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var out []string
	for n, e := range h.byKind[k] {
		if pattern == nil || glob.Match(pattern, e.name, false) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// NumSub returns the number of subscribers of an exact or shard channel.
func (h *Hub) NumSub(k Kind, channel []byte) int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if e := h.byKind[k][string(channel)]; e != nil {
		return len(e.subs)
	}
	return 0
}

// Stats are the Hub's sizes, for INFO and PUBSUB NUMPAT.
type Stats struct {
	Channels, Patterns, ShardChannels, Clients int
}

// Stats returns the current sizes.
func (h *Hub) Stats() Stats {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return Stats{
		Channels:      len(h.byKind[KindChannel]),
		Patterns:      len(h.byKind[KindPattern]),
		ShardChannels: len(h.byKind[KindShard]),
		Clients:       len(h.clients),
	}
}
