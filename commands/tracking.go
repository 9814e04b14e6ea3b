package commands

import (
	"bytes"
	"fmt"
	"iter"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cairnkv/cairn/server/resp"
	"github.com/cairnkv/cairn/storage"
)

// CLIENT TRACKING: server-assisted client-side caching, as in Redis 7.0.
//
// In the default mode the server remembers, for every key a tracking
// client reads, the ids of the clients that read it (trackingTable.keys);
// the next write of the key sends each of them one invalidation and
// forgets the key. In BCAST mode a client names key prefixes instead and
// hears of every write of a key under them, one message per prefix per
// committed batch. Invalidations are sent by the committing goroutine
// from the engine's write observer, so they follow commit order on
// primaries and replicas alike (a replica's clients hear of the writes it
// applies). A tracking client's output is queued (its outbox), which holds
// a message that arrives while one of its commands runs until that
// command's reply: a read is recorded before it reads, so an invalidation
// of what it read always follows its reply, as in Redis.

// trackingTable is the server's tracking state. Its lock is taken inside
// the commit section (Written) and, from a tracking client's goroutine,
// around a read's keys; it is held while messages are queued (never
// while waiting) and taken before ClientRegistry.mu.
type trackingTable struct {
	// nclients and nkeys mirror len(clients) and len(keys) for Watching,
	// which reads them on every commit without the lock.
	nclients, nkeys atomic.Int64

	mu sync.Mutex
	// clients are the connections with tracking on.
	clients map[*Client]struct{}
	// keys maps a read key's MetaKey to the ids of the clients that read
	// it in the default mode; items counts the ids.
	keys  map[string][]int64
	items int
	// prefixes are the BCAST prefixes, ordered by key.
	prefixes []*bcastPrefix
	// hits and frame are the scratch of Written and send.
	hits  []bcastHit
	frame resp.Writer
}

// bcastPrefix is one prefix BCAST clients follow in one namespace.
type bcastPrefix struct {
	key     []byte // MetaKey(namespace, prefix): the start of every key it covers
	clients []*Client
}

// bcastHit is a written key a prefix covers, and the client that wrote it.
type bcastHit struct {
	p      int // index in prefixes
	key    []byte
	origin int64
}

// clientTracking is one client's CLIENT TRACKING state, guarded by
// trackingTable.mu (caching lives on Client: only its goroutine uses it).
type clientTracking struct {
	on, bcast, optin, optout, noloop bool
	// brokenRedir is set once the redirect client was found gone.
	brokenRedir bool
	redirect    int64
	// ns is the namespace the client's prefixes belong to, and prefixes
	// the prefixes themselves, sorted.
	ns       string
	prefixes [][]byte
}

// trackingOptions are the parsed options of CLIENT TRACKING ON.
type trackingOptions struct {
	redirect                     int64
	bcast, optin, optout, noloop bool
	prefixes                     [][]byte
}

func cmdClientTracking(c *Ctx) {
	var o trackingOptions
	for j := 3; j < len(c.Args); j++ {
		more := j+1 < len(c.Args)
		switch opt := lower(c.Args[j]); {
		case opt == "redirect" && more:
			j++
			if o.redirect != 0 {
				c.W.Error("ERR A client can only redirect to a single other client")
				return
			}
			id, ok := c.intArg(j)
			if !ok {
				return
			}
			if c.Env.Clients.get(id) == nil {
				c.W.Error("ERR The client ID you want redirect to does not exist")
				return
			}
			o.redirect = id
		case opt == "bcast":
			o.bcast = true
		case opt == "optin":
			o.optin = true
		case opt == "optout":
			o.optout = true
		case opt == "noloop":
			o.noloop = true
		case opt == "prefix" && more:
			j++
			o.prefixes = append(o.prefixes, c.Args[j])
		default:
			c.W.Error(errSyntax)
			return
		}
	}
	t := &c.Env.Clients.tracking
	switch lower(c.Args[2]) {
	case "on":
		if msg := t.enable(c.Env, c.Client, o); msg != "" {
			c.W.Error(msg)
			return
		}
	case "off":
		t.disable(c.Client)
	default:
		c.W.Error(errSyntax)
		return
	}
	c.W.OK()
}

// enable turns tracking on for cl with o, or returns the error reply that
// refuses it (Redis's checks, in its order).
func (t *trackingTable) enable(e *Env, cl *Client, o trackingOptions) string {
	if cl.StartQueuedOutput == nil || cl.Push == nil {
		return "ERR CLIENT TRACKING is not supported on this connection"
	}
	if !o.bcast && len(o.prefixes) > 0 {
		return "ERR PREFIX option requires BCAST mode to be enabled"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &cl.trk
	switch {
	case s.on && s.bcast != o.bcast:
		return "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode."
	case o.bcast && (o.optin || o.optout):
		return "ERR OPTIN and OPTOUT are not compatible with BCAST"
	case o.optin && o.optout:
		return "ERR You can't specify both OPTIN mode and OPTOUT mode"
	case o.optin && s.optout || o.optout && s.optin:
		return "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode."
	}
	if o.bcast {
		if msg := prefixCollision(s.prefixes, o.prefixes); msg != "" {
			return msg
		}
	}
	cl.startQueuedOutput()
	if !s.on {
		if t.clients == nil {
			t.clients = map[*Client]struct{}{}
		}
		t.clients[cl] = struct{}{}
		t.nclients.Store(int64(len(t.clients)))
	}
	s.on, s.brokenRedir, s.redirect = true, false, o.redirect
	s.bcast, s.optin, s.optout, s.noloop = o.bcast, o.optin, o.optout, o.noloop
	cl.tracking.Store(true)
	if o.bcast {
		if len(s.prefixes) == 0 {
			s.ns = cl.Namespace
		}
		if len(o.prefixes) == 0 {
			t.follow(cl, nil)
		}
		for _, p := range o.prefixes {
			t.follow(cl, p)
		}
	}
	return ""
}

// prefixCollision returns Redis's error when a new prefix is a prefix of
// one the client has, or of another new one, or the other way round.
func prefixCollision(have, add [][]byte) string {
	overlap := func(a, b []byte) bool { return bytes.HasPrefix(a, b) || bytes.HasPrefix(b, a) }
	for i, p := range add {
		for _, h := range have {
			if overlap(p, h) {
				return fmt.Sprintf("ERR Prefix '%s' overlaps with an existing prefix '%s'. Prefixes for a single client must not overlap.", p, h)
			}
		}
		for _, q := range add[i+1:] {
			if overlap(p, q) {
				return fmt.Sprintf("ERR Prefix '%s' overlaps with another provided prefix '%s'. Prefixes for a single client must not overlap.", p, q)
			}
		}
	}
	return ""
}

// follow adds prefix p (in cl's tracking namespace) to cl's BCAST
// prefixes, unless it has it; t.mu is held.
func (t *trackingTable) follow(cl *Client, p []byte) {
	s := &cl.trk
	i, found := slices.BinarySearchFunc(s.prefixes, p, bytes.Compare)
	if found {
		return
	}
	s.prefixes = slices.Insert(s.prefixes, i, append([]byte{}, p...))
	key := storage.MetaKey(s.ns, p)
	j, found := t.findPrefix(key)
	if !found {
		t.prefixes = slices.Insert(t.prefixes, j, &bcastPrefix{key: key})
	}
	t.prefixes[j].clients = append(t.prefixes[j].clients, cl)
}

// findPrefix returns where the BCAST prefix of MetaKey key is, or would
// be, in t.prefixes, and whether it is there; t.mu is held.
func (t *trackingTable) findPrefix(key []byte) (int, bool) {
	return slices.BinarySearchFunc(t.prefixes, key, func(bp *bcastPrefix, k []byte) int { return bytes.Compare(bp.key, k) })
}

// disable turns tracking off for cl (CLIENT TRACKING OFF, RESET, a closed
// connection). The keys it read stay in the table, as in Redis: their
// next write skips it.
func (t *trackingTable) disable(cl *Client) {
	if !cl.tracking.Load() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &cl.trk
	for _, p := range s.prefixes {
		key := storage.MetaKey(s.ns, p)
		j, found := t.findPrefix(key)
		if !found {
			continue
		}
		bp := t.prefixes[j]
		bp.clients = slices.DeleteFunc(bp.clients, func(o *Client) bool { return o == cl })
		if len(bp.clients) == 0 {
			t.prefixes = slices.Delete(t.prefixes, j, j+1)
		}
	}
	delete(t.clients, cl)
	t.nclients.Store(int64(len(t.clients)))
	*s = clientTracking{}
	cl.tracking.Store(false)
	cl.trackCaching = false
}

// active reports whether commits must tell the table of their writes.
func (t *trackingTable) active() bool { return t.nclients.Load() > 0 || t.nkeys.Load() > 0 }

// trackRead records the keys a read-only command of cl is about to read,
// before it reads them.
func (e *Env) trackRead(cl *Client, spec *Spec, args [][]byte) {
	if spec.Flags&FlagReadOnly != 0 && (spec.FirstKey > 0 || spec.hasKeys()) {
		e.remember(cl, spec.Keys(args))
	}
}

// remember records that cl, which tracks in the default mode, reads keys,
// unless OPTIN without CLIENT CACHING YES or OPTOUT with CLIENT CACHING
// NO says otherwise. A command calls it before it reads: a write that
// commits while the read runs finds the record and invalidates. Beyond
// tracking-table-max-keys, keys picked at random are forgotten, and their
// readers told to drop them.
func (e *Env) remember(cl *Client, keys [][]byte) {
	t := &e.Clients.tracking
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &cl.trk
	if !s.on || s.bcast || (s.optin && !cl.trackCaching) || (s.optout && cl.trackCaching) {
		return
	}
	if t.keys == nil {
		t.keys = map[string][]int64{}
	}
	for _, k := range keys {
		mk := string(storage.MetaKey(cl.Namespace, k))
		ids := t.keys[mk]
		if !slices.Contains(ids, cl.ID) {
			t.keys[mk] = append(ids, cl.ID)
			t.items++
		}
	}
	t.trim(e.Clients, e.Config.Int("tracking-table-max-keys"), len(keys))
	t.nkeys.Store(int64(len(t.keys)))
}

// trackingTrimPerTick bounds the keys TrimTracking forgets in one call.
const trackingTrimPerTick = 1000

// TrimTracking forgets keys beyond tracking-table-max-keys (at most
// trackingTrimPerTick of them) and tells their readers. The server calls
// it hz times a second, as Redis trims the table in its cron, so that a
// limit lowered with CONFIG SET takes effect without waiting for reads.
func (e *Env) TrimTracking() {
	t := &e.Clients.tracking
	n := t.nkeys.Load()
	if n == 0 {
		return // the common case: no config lookup hz times a second
	}
	limit := e.Config.Int("tracking-table-max-keys")
	if limit <= 0 || n <= limit {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.trim(e.Clients, limit, trackingTrimPerTick)
	t.nkeys.Store(int64(len(t.keys)))
}

// trim forgets at most budget keys picked at random while the table holds
// more than limit (0: no limit), telling their readers; t.mu is held.
func (t *trackingTable) trim(r *ClientRegistry, limit int64, budget int) {
	if limit <= 0 {
		return
	}
	for mk := range t.keys {
		if int64(len(t.keys)) <= limit || budget <= 0 {
			return
		}
		t.invalidate(r, []byte(mk), -1)
		budget--
	}
}

// invalidate sends the invalidation of metadata key mk to every client
// that read it in the default mode, except origin when it asked for
// NOLOOP, and forgets the key; t.mu is held.
func (t *trackingTable) invalidate(r *ClientRegistry, mk []byte, origin int64) {
	ids, ok := t.keys[string(mk)]
	if !ok {
		return
	}
	delete(t.keys, string(mk))
	t.items -= len(ids)
	_, key, err := storage.DecodeMetaKey(mk)
	if err != nil {
		return
	}
	for _, id := range ids {
		cl := r.get(id)
		if cl == nil || !cl.trk.on || cl.trk.bcast || (cl.trk.noloop && id == origin) {
			continue
		}
		t.send(r, cl, [][]byte{key})
	}
}

// written sends the invalidations of a committed batch's writes; the
// caller holds the commit section.
func (t *trackingTable) written(r *ClientRegistry, writes iter.Seq[storage.Write]) {
	t.mu.Lock()
	defer t.mu.Unlock()
	hits := t.hits[:0]
	for w := range writes {
		if w.MetaKey == nil {
			t.flushed(r, w.Flushed)
			continue
		}
		t.invalidate(r, w.MetaKey, w.Origin)
		for i, p := range t.prefixes {
			if bytes.HasPrefix(w.MetaKey, p.key) {
				_, key, _ := storage.DecodeMetaKey(w.MetaKey)
				hits = append(hits, bcastHit{p: i, key: key, origin: w.Origin})
			}
		}
	}
	t.nkeys.Store(int64(len(t.keys)))
	if len(hits) > 0 {
		t.broadcast(r, hits)
	}
	clear(hits)
	t.hits = hits[:0]
}

// broadcast sends BCAST clients the keys of one batch their prefixes
// cover: one message per prefix with its keys sorted and once each, as
// Redis sends those of one event-loop turn. A NOLOOP client does not hear
// of the keys it wrote last itself.
func (t *trackingTable) broadcast(r *ClientRegistry, hits []bcastHit) {
	slices.SortStableFunc(hits, func(a, b bcastHit) int {
		if a.p != b.p {
			return a.p - b.p
		}
		return bytes.Compare(a.key, b.key)
	})
	// Keep the last write of each key: its writer is the one NOLOOP
	// compares.
	n := 0
	for i, h := range hits {
		if i+1 < len(hits) && hits[i+1].p == h.p && bytes.Equal(hits[i+1].key, h.key) {
			continue
		}
		hits[n] = h
		n++
	}
	hits = hits[:n]
	var keys [][]byte
	for i := 0; i < len(hits); {
		j := i
		for j < len(hits) && hits[j].p == hits[i].p {
			j++
		}
		for _, cl := range t.prefixes[hits[i].p].clients {
			keys = keys[:0]
			for _, h := range hits[i:j] {
				if !(cl.trk.noloop && h.origin == cl.ID) {
					keys = append(keys, h.key)
				}
			}
			if len(keys) > 0 {
				t.send(r, cl, keys)
			}
		}
		i = j
	}
}

// flushed tells every tracking client of the flushed namespaces (nil:
// all) to drop everything it cached: an invalidation with a null key
// list. Emptying everything (a full sync) also forgets every read key, as
// Redis's FLUSHALL does.
func (t *trackingTable) flushed(r *ClientRegistry, namespaces []string) {
	for cl := range t.clients {
		if namespaces == nil || slices.Contains(namespaces, cl.Namespace) {
			t.send(r, cl, nil)
		}
	}
	if namespaces == nil {
		clear(t.keys)
		t.items = 0
	}
}

// send queues an invalidation of keys (nil: of everything) for tracking
// client cl: as a push when the receiving connection speaks RESP3, or as
// a message of channel __redis__:invalidate when it is a RESP2
// connection that cl redirects to and that is subscribed to something. A
// RESP2 client that does not redirect gets nothing, as in Redis. When the
// redirect client is gone, cl is marked (CLIENT TRACKINGINFO's
// broken_redirect) and, in RESP3, told with a tracking-redir-broken push.
// t.mu is held.
func (t *trackingTable) send(r *ClientRegistry, cl *Client, keys [][]byte) {
	w := &t.frame
	w.Reset()
	dest := cl
	if id := cl.trk.redirect; id != 0 {
		dest = r.get(id)
		if dest == nil {
			cl.trk.brokenRedir = true
			if cl.Proto() == 3 {
				w.Proto = 3
				w.Push(2)
				w.BulkString("tracking-redir-broken")
				w.Int(id)
				cl.Push(w.Bytes())
			}
			return
		}
	}
	if !dest.queuedOutput.Load() {
		return // a connection that never queued its output: nowhere to put it
	}
	w.Proto = dest.Proto()
	switch {
	case w.Proto == 3:
		w.Push(2)
		w.BulkString("invalidate")
	case dest != cl && dest.subscribed.Load():
		w.Array(3)
		w.BulkString("message")
		w.BulkString("__redis__:invalidate")
	default:
		return
	}
	if keys == nil {
		w.NullBulk()
	} else {
		w.Array(len(keys))
		for _, k := range keys {
			w.Bulk(k)
		}
	}
	dest.Push(w.Bytes())
}

// info returns cl's CLIENT LIST flags for tracking (t, R, B) and its
// redir field.
func (t *trackingTable) info(cl *Client) (flags string, redir int64) {
	if !cl.tracking.Load() {
		return "", -1
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &cl.trk
	if !s.on {
		return "", -1
	}
	flags = "t"
	if s.brokenRedir {
		flags += "R"
	}
	if s.bcast {
		flags += "B"
	}
	return flags, s.redirect
}

// stats returns INFO's tracking figures.
func (t *trackingTable) stats() (keys, items, prefixes int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.keys), t.items, len(t.prefixes)
}

func cmdClientCaching(c *Ctx) {
	t := &c.Env.Clients.tracking
	t.mu.Lock()
	s := c.Client.trk
	t.mu.Unlock()
	if !s.on {
		c.W.Error("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
		return
	}
	switch lower(c.Args[2]) {
	case "yes":
		if !s.optin {
			c.W.Error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
			return
		}
	case "no":
		if !s.optout {
			c.W.Error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
			return
		}
	default:
		c.W.Error(errSyntax)
		return
	}
	c.Client.trackCaching = true
	c.W.OK()
}

func cmdClientGetRedir(c *Ctx) {
	_, redir := c.Env.Clients.tracking.info(c.Client)
	c.W.Int(redir)
}

func cmdClientTrackingInfo(c *Ctx) {
	t := &c.Env.Clients.tracking
	t.mu.Lock()
	s := c.Client.trk
	t.mu.Unlock()
	flags := []string{"off"}
	if s.on {
		flags[0] = "on"
		if s.bcast {
			flags = append(flags, "bcast")
		}
		if s.optin {
			flags = append(flags, "optin")
			if c.Client.trackCaching {
				flags = append(flags, "caching-yes")
			}
		}
		if s.optout {
			flags = append(flags, "optout")
			if c.Client.trackCaching {
				flags = append(flags, "caching-no")
			}
		}
		if s.noloop {
			flags = append(flags, "noloop")
		}
		if s.brokenRedir {
			flags = append(flags, "broken_redirect")
		}
	}
	c.W.Map(3)
	c.W.BulkString("flags")
	c.W.Set(len(flags))
	for _, f := range flags {
		c.W.BulkString(f)
	}
	c.W.BulkString("redirect")
	if s.on {
		c.W.Int(s.redirect)
	} else {
		c.W.Int(-1)
	}
	c.W.BulkString("prefixes")
	c.W.Array(len(s.prefixes))
	for _, p := range s.prefixes {
		c.W.Bulk(p)
	}
}
