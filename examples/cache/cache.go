package cache

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultPattern is the pattern a Cache subscribes to when Options.Pattern
// is empty: every keyevent channel of the default namespace (database 0).
const DefaultPattern = "__keyevent@0__:*"

// ErrClosed is returned by Get and WaitReady once Close has been called.
var ErrClosed = errors.New("cache: closed")

// Options configures a Cache. The zero value is usable.
type Options struct {
	// Pattern is the keyevent pattern to subscribe to, DefaultPattern when
	// empty. It must start with "__keyevent@": the cache reads the key
	// from each message's payload and the event from the channel's last
	// part. It must match the events of the one namespace the client reads
	// and no other, since keys of different namespaces would collide: use
	// "__keyevent@ns:<percent-encoded name>__:*" for a namespace.
	Pattern string

	// MaxEntries bounds the number of cached keys; 0 means no bound. When
	// the cache is full, a fill evicts an arbitrary entry.
	MaxEntries int

	// MaxAge bounds how long an entry is served; 0 means until it is
	// invalidated (or its key's TTL elapses). It bounds the staleness left
	// by a notification lost without a disconnect.
	MaxAge time.Duration

	// PingInterval is how long the subscription may stay silent before the
	// cache sends a PING on it; if nothing, not even the reply, arrives
	// within another interval, the connection is deemed lost. The default
	// is 5 seconds.
	PingInterval time.Duration

	// MinRetryBackoff and MaxRetryBackoff bound the wait between failed
	// subscription attempts, doubled after each failure (defaults 100 ms
	// and 5 s). The first attempt after a working subscription is lost is
	// made at once.
	MinRetryBackoff time.Duration
	MaxRetryBackoff time.Duration

	// OnInvalidate, if not nil, is called from the subscription goroutine
	// for every event that invalidated a key, after the entry was dropped
	// and in the order the events arrived. event is the channel's last
	// part ("set", "del", "rename_from", ...). It must not block for long:
	// events queue up behind it.
	OnInvalidate func(event, key string)

	// OnSubscribed, if not nil, is called from the subscription goroutine
	// each time a PSUBSCRIBE is confirmed, once the cache serves from
	// memory again.
	OnSubscribed func()

	// OnSubscriptionLost, if not nil, is called from the subscription
	// goroutine after a subscription attempt failed or a working
	// subscription was lost, once the cache has been cleared and before it
	// tries again. err says what happened.
	OnSubscriptionLost func(err error)
}

// Stats are a Cache's counters since New.
type Stats struct {
	// Hits counts Gets answered from memory.
	Hits uint64
	// Misses counts Gets that read the replica in order to fill the cache.
	Misses uint64
	// Bypasses counts Gets that read the replica without filling, because
	// the subscription was not confirmed.
	Bypasses uint64
	// DroppedFills counts replies not stored because their key was
	// invalidated, or the cache reset, while the GET was in flight (or
	// because the value and the TTL read with it disagree).
	DroppedFills uint64
	// Invalidations counts the events that invalidated a key, whether or
	// not the key was cached.
	Invalidations uint64
	// Resets counts the times every entry was dropped: by Reset, or because
	// a confirmed subscription was lost.
	Resets uint64
	// Subscriptions counts confirmed PSUBSCRIBEs.
	Subscriptions uint64
	// Entries is the number of keys cached now.
	Entries int
	// Subscribed reports whether the subscription is confirmed now, that
	// is whether Get may answer from memory.
	Subscribed bool
}

// entry is one cached reply.
type entry struct {
	value    string
	found    bool
	deadline time.Time // zero: no deadline
}

// flight tracks the GETs in flight for one key: gen moves on every
// invalidation of the key, so a reply can tell whether it is still valid.
type flight struct {
	refs int
	gen  uint64
}

// Cache is a read cache in front of a Cairn replica, invalidated by that
// replica's keyspace notifications. Its methods are safe for concurrent
// use.
type Cache struct {
	rdb  *redis.Client
	opts Options

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	entries map[string]entry
	flights map[string]*flight
	epoch   uint64        // moves on every reset
	live    bool          // the subscription is confirmed
	ready   chan struct{} // closed while live
	ps      *redis.PubSub // the current subscription, to close it on Close
	closed  bool
	stats   Stats
}

// New returns a Cache reading from replica, which it does not own (Close
// leaves it open), and starts its subscription. Until the subscription is
// confirmed, Get reads through to the replica; WaitReady waits for it. New
// fails only on invalid arguments.
func New(replica *redis.Client, opts Options) (*Cache, error) {
	if replica == nil {
		return nil, errors.New("cache: nil replica client")
	}
	if opts.Pattern == "" {
		opts.Pattern = DefaultPattern
	}
	if !strings.HasPrefix(opts.Pattern, "__keyevent@") {
		return nil, fmt.Errorf("cache: pattern %q is not a keyevent pattern (want __keyevent@<db>__:*)", opts.Pattern)
	}
	if opts.MaxEntries < 0 || opts.MaxAge < 0 || opts.PingInterval < 0 || opts.MinRetryBackoff < 0 || opts.MaxRetryBackoff < 0 {
		return nil, errors.New("cache: negative MaxEntries, MaxAge, PingInterval or retry backoff")
	}
	if opts.PingInterval == 0 {
		opts.PingInterval = 5 * time.Second
	}
	if opts.MinRetryBackoff == 0 {
		opts.MinRetryBackoff = 100 * time.Millisecond
	}
	if opts.MaxRetryBackoff == 0 {
		opts.MaxRetryBackoff = 5 * time.Second
	}
	opts.MaxRetryBackoff = max(opts.MaxRetryBackoff, opts.MinRetryBackoff)
	c := &Cache{
		rdb:     replica,
		opts:    opts,
		done:    make(chan struct{}),
		entries: map[string]entry{},
		flights: map[string]*flight{},
		ready:   make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	go c.run()
	return c, nil
}

// Get returns key's value: from memory when the cache holds a valid entry,
// otherwise from the replica, filling the cache if the subscription is
// confirmed and nothing invalidated the key while the GET was in flight.
// found is false when the key does not exist (a missing key is cached
// too). err reports a failed read, or ErrClosed.
func (c *Cache) Get(ctx context.Context, key string) (value string, found bool, err error) {
	now := time.Now()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return "", false, ErrClosed
	}
	if e, ok := c.entries[key]; ok {
		if e.deadline.IsZero() || now.Before(e.deadline) {
			c.stats.Hits++
			c.mu.Unlock()
			return e.value, e.found, nil
		}
		delete(c.entries, key)
	}
	if !c.live {
		c.stats.Bypasses++
		c.mu.Unlock()
		value, err = c.rdb.Get(ctx, key).Result()
		switch {
		case err == redis.Nil:
			return "", false, nil
		case err != nil:
			return "", false, fmt.Errorf("cache: GET %q from the replica: %w", key, err)
		}
		return value, true, nil
	}
	c.stats.Misses++
	f := c.flights[key]
	if f == nil {
		f = &flight{}
		c.flights[key] = f
	}
	f.refs++
	gen, epoch := f.gen, c.epoch
	c.mu.Unlock()

	// The GET is sent only now, after gen and epoch were read: any write
	// it misses is applied after it ran, and that write's event either
	// moves gen or epoch before the reply is stored, or arrives after and
	// drops the entry.
	sent := time.Now()
	var get *redis.StringCmd
	var pttl *redis.DurationCmd
	_, err = c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, key)
		pttl = p.PTTL(ctx, key)
		return nil
	})
	if err == redis.Nil {
		err = nil // GET of a missing key; the PTTL still tells
	}
	if err == nil {
		err = get.Err()
		if err == redis.Nil {
			err = nil
		}
	}
	if err == nil {
		err = pttl.Err()
	}
	if err == nil {
		value, found = get.Val(), get.Err() == nil
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	f.refs--
	if f.refs == 0 {
		delete(c.flights, key)
	}
	if err != nil {
		return "", false, fmt.Errorf("cache: GET %q from the replica: %w", key, err)
	}
	if !c.live || c.epoch != epoch || f.gen != gen || c.closed {
		c.stats.DroppedFills++
		return value, found, nil
	}
	e := entry{value: value, found: found}
	ttl := pttl.Val()
	switch {
	case found && ttl == -1: // no TTL
	case found && ttl > time.Millisecond:
		// PTTL counts whole milliseconds from the replica's clock when it
		// ran, which is after sent; one millisecond less covers the
		// truncation.
		e.deadline = sent.Add(ttl - time.Millisecond)
	case !found && ttl == -2:
	default:
		// The key is about to expire, or it changed between the GET and
		// the PTTL (its event is on its way): serve the reply, keep
		// nothing.
		c.stats.DroppedFills++
		return value, found, nil
	}
	if c.opts.MaxAge > 0 {
		if d := sent.Add(c.opts.MaxAge); e.deadline.IsZero() || d.Before(e.deadline) {
			e.deadline = d
		}
	}
	if _, ok := c.entries[key]; !ok && c.opts.MaxEntries > 0 && len(c.entries) >= c.opts.MaxEntries {
		for k := range c.entries {
			delete(c.entries, k)
			break
		}
	}
	c.entries[key] = e
	return value, found, nil
}

// Invalidate drops key's entry, and any GET of key in flight will not fill
// it, as if an event for key had arrived. It does not give an application
// read-your-writes after its own write to the primary: a Get that follows
// may read, and cache, the old value from a replica that has not applied
// the write yet; the write's event drops it when it comes.
func (c *Cache) Invalidate(key string) {
	c.mu.Lock()
	c.invalidateLocked(key)
	c.mu.Unlock()
}

func (c *Cache) invalidateLocked(key string) {
	delete(c.entries, key)
	if f := c.flights[key]; f != nil {
		f.gen++
	}
}

// Reset drops every entry, and no GET in flight will fill the cache. Call
// it after FLUSHDB or FLUSHALL, which publish no event. The subscription is
// kept.
func (c *Cache) Reset() {
	c.mu.Lock()
	c.resetLocked()
	c.mu.Unlock()
}

func (c *Cache) resetLocked() {
	clear(c.entries)
	c.epoch++
	c.stats.Resets++
}

// Stats returns a snapshot of the cache's counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Entries = len(c.entries)
	s.Subscribed = c.live
	return s
}

// WaitReady waits until the subscription is confirmed, so that Get may
// answer from memory, or until ctx is done (its error is returned) or the
// cache is closed (ErrClosed).
func (c *Cache) WaitReady(ctx context.Context) error {
	c.mu.Lock()
	ready, closed := c.ready, c.closed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	select {
	case <-ready:
		return nil
	case <-c.done:
		return ErrClosed
	case <-ctx.Done():
		return fmt.Errorf("cache: waiting for the subscription: %w", ctx.Err())
	}
}

// Close stops the subscription and waits for its goroutine to end. Gets
// that follow return ErrClosed. The replica client stays open. Close is
// idempotent.
func (c *Cache) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		<-c.done
		return nil
	}
	c.closed = true
	c.live = false
	clear(c.entries)
	ps := c.ps
	c.mu.Unlock()
	c.cancel()
	if ps != nil {
		_ = ps.Close() // unblocks the receive; the goroutine closes it again
	}
	<-c.done
	return nil
}

// run keeps a subscription up until Close.
func (c *Cache) run() {
	defer close(c.done)
	backoff := time.Duration(0)
	for c.ctx.Err() == nil {
		confirmed, err := c.subscribe()
		if c.ctx.Err() != nil {
			return
		}
		c.lost()
		if c.opts.OnSubscriptionLost != nil {
			c.opts.OnSubscriptionLost(err)
		}
		switch {
		case confirmed:
			backoff = 0
		case backoff == 0:
			backoff = c.opts.MinRetryBackoff
		default:
			backoff = min(2*backoff, c.opts.MaxRetryBackoff)
		}
		if backoff > 0 {
			select {
			case <-c.ctx.Done():
				return
			case <-time.After(backoff):
			}
		}
	}
}

// lost marks the subscription down and drops every entry (once per
// confirmed subscription).
func (c *Cache) lost() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ps = nil
	if c.live {
		c.live = false
		c.ready = make(chan struct{})
		c.resetLocked()
	}
}

// subscribe runs one subscription: PSUBSCRIBE, wait for the confirmation,
// then process messages until the connection fails. confirmed tells
// whether the subscription was confirmed; err is why it ended.
func (c *Cache) subscribe() (confirmed bool, err error) {
	ps := c.rdb.PSubscribe(c.ctx) // no pattern yet: no connection yet
	defer ps.Close()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false, ErrClosed
	}
	c.ps = ps
	c.mu.Unlock()

	if err := ps.PSubscribe(c.ctx, c.opts.Pattern); err != nil {
		return false, fmt.Errorf("cache: PSUBSCRIBE %s: %w", c.opts.Pattern, err)
	}
	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(c.ctx, c.opts.PingInterval)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && !pinged {
				// Quiet for an interval: ask for a sign of life. A failed
				// write may have made go-redis reconnect behind our back,
				// so any error ends this subscription.
				if err := ps.Ping(c.ctx); err != nil {
					return confirmed, fmt.Errorf("cache: PING on the subscription: %w", err)
				}
				pinged = true
				continue
			}
			if confirmed {
				return true, fmt.Errorf("cache: subscription lost: %w", err)
			}
			return false, fmt.Errorf("cache: waiting for the PSUBSCRIBE confirmation: %w", err)
		}
		pinged = false
		switch m := msg.(type) {
		case *redis.Subscription:
			switch {
			case !confirmed && m.Kind == "psubscribe" && m.Channel == c.opts.Pattern:
				confirmed = true
				c.confirm()
			case m.Kind == "punsubscribe" || m.Kind == "unsubscribe":
				return confirmed, fmt.Errorf("cache: unsubscribed from %q by the server", m.Channel)
			}
		case *redis.Message:
			if confirmed {
				c.handle(m)
			}
		case *redis.Pong:
		}
	}
}

// confirm makes the cache serve from memory again.
func (c *Cache) confirm() {
	c.mu.Lock()
	c.live = true
	c.stats.Subscriptions++
	close(c.ready)
	c.mu.Unlock()
	if c.opts.OnSubscribed != nil {
		c.opts.OnSubscribed()
	}
}

// handle invalidates the key a keyevent message names.
func (c *Cache) handle(m *redis.Message) {
	event := EventName(m.Channel)
	if event == "keymiss" {
		return // a read event: nothing changed
	}
	c.mu.Lock()
	c.invalidateLocked(m.Payload)
	c.stats.Invalidations++
	c.mu.Unlock()
	if c.opts.OnInvalidate != nil {
		c.opts.OnInvalidate(event, m.Payload)
	}
}

// EventName returns the event a keyevent channel names, the part after
// "__keyevent@<db>__:" ("set" for "__keyevent@0__:set"), or "" when
// channel is not a keyevent channel. <db> may itself contain colons (a
// namespace's "ns:<name>"), but never "__:", since namespace names are
// percent-encoded.
func EventName(channel string) string {
	rest, ok := strings.CutPrefix(channel, "__keyevent@")
	if !ok {
		return ""
	}
	_, event, ok := strings.Cut(rest, "__:")
	if !ok {
		return ""
	}
	return event
}
