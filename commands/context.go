package commands

import (
	"fmt"
	"iter"
	"maps"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cairnkv/cairn/config"
	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/pubsub"
	"github.com/cairnkv/cairn/replication"
	"github.com/cairnkv/cairn/server/resp"
	"github.com/cairnkv/cairn/storage"
)

// Error replies shared by several families, with Redis 7's exact texts.
const (
	errSyntax      = "ERR syntax error"
	errNotInt      = "ERR value is not an integer or out of range"
	errNotFloat    = "ERR value is not a valid float"
	errWrongType   = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errOverflow    = "ERR increment or decrement would overflow"
	errNoSuchKey   = "ERR no such key"
	errTooBig      = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	errNoAuth      = "NOAUTH Authentication required."
	errAdminOnly   = "ERR only administrator can use namespace command"
	errNotAdminCmd = "ERR Only administrator can use this command"
)

// Host is what the server package provides to handlers that act on the
// whole server.
type Host interface {
	// Shutdown stops the server after the current reply is written.
	Shutdown()
}

// Stats are the server-wide counters INFO reports. All fields are updated
// atomically.
type Stats struct {
	Connections    atomic.Int64 // total_connections_received
	Commands       atomic.Int64 // total_commands_processed
	Rejected       atomic.Int64 // rejected_connections
	KeyspaceHits   atomic.Int64
	KeyspaceMisses atomic.Int64
	ExpiredKeys    atomic.Int64
	NetInput       atomic.Int64
	NetOutput      atomic.Int64
	ErrorReplies   atomic.Int64 // total_error_replies; NoteError counts them
	// OutputLimitDisconnections counts clients closed by
	// client-output-buffer-limit (INFO client_output_buffer_limit_disconnections).
	OutputLimitDisconnections atomic.Int64
	// ScriptReruns counts Lua scripts run again under every key lock
	// after a first run under their keys' locks (INFO script_reruns;
	// commands/scripting.go, evalScript).
	ScriptReruns atomic.Int64

	rates rates      // the instantaneous_* fields (Sample)
	peak  memoryPeak // used_memory_peak (Sample)

	errorsMu   sync.Mutex
	errorCodes map[string]int64 // INFO errorstats: error replies by code
}

// maxErrorCodes bounds the error codes INFO errorstats tracks; replies of
// further codes are counted in total_error_replies only. Cairn's own
// replies use a handful.
const maxErrorCodes = 128

// NoteError counts an error reply with message msg: in
// total_error_replies, and in INFO errorstats under its code, the first
// word of msg ("ERR", "WRONGTYPE", ...), as Redis counts them.
func (s *Stats) NoteError(msg string) {
	s.ErrorReplies.Add(1)
	code := "ERR"
	if i := strings.IndexByte(msg[:min(len(msg), 32)], ' '); i > 0 {
		code = msg[:i]
	}
	s.errorsMu.Lock()
	defer s.errorsMu.Unlock()
	if s.errorCodes == nil {
		s.errorCodes = map[string]int64{}
	}
	if _, ok := s.errorCodes[code]; ok || len(s.errorCodes) < maxErrorCodes {
		s.errorCodes[code]++
	}
}

// ErrorCounts returns the error replies counted by code (INFO errorstats).
func (s *Stats) ErrorCounts() map[string]int64 {
	s.errorsMu.Lock()
	defer s.errorsMu.Unlock()
	return maps.Clone(s.errorCodes)
}

// Reset zeroes the counters CONFIG RESETSTAT resets.
func (s *Stats) Reset() {
	for _, c := range []*atomic.Int64{&s.Connections, &s.Commands, &s.Rejected, &s.KeyspaceHits,
		&s.KeyspaceMisses, &s.ExpiredKeys, &s.NetInput, &s.NetOutput, &s.ErrorReplies, &s.OutputLimitDisconnections, &s.ScriptReruns} {
		c.Store(0)
	}
	s.rates.reset()
	s.peak.reset()
	s.errorsMu.Lock()
	s.errorCodes = nil
	s.errorsMu.Unlock()
	for _, spec := range allSpecs() {
		spec.stats.reset()
	}
}

// Env is the server-wide state handlers use. It is created once by
// cmd/cairn and shared by every connection.
type Env struct {
	Store   *storage.Engine
	Config  *config.Config
	PubSub  *pubsub.Hub
	Notify  *notify.Emitter
	Repl    *replication.Node
	Log     hclog.Logger
	Host    Host
	Clients *ClientRegistry
	Stats   *Stats
	Started time.Time
	// ConfigFile is the file the server was started from ("" for none),
	// for CONFIG REWRITE and INFO.
	ConfigFile string
	// Version is Cairn's version string.
	Version string
	// Faults are the test-only fault hooks; nil in production.
	Faults *Faults

	cursors   cursorTable
	pause     clientPause
	blocked   atomic.Int64 // commands blocked in Ctx.block, for INFO blocked_clients
	slowlog   slowLog
	acllog    aclLog
	failover  failover
	shutdown  shutdownState
	scripts   scriptEngine
	functions functionRegistry
	monitors  monitorSet
	saves     saveState
	hot       hotSettings
	lists     listWaiters

	runIDOnce sync.Once
	runIDHex  string
	nsMu      sync.Mutex // serializes NAMESPACE changes
}

// hotSettings are the options every command reads, and those that writes
// of a type read once or more each, resolved once (config.Setting) so that
// reading them costs no lookup.
type hotSettings struct {
	once                                         sync.Once
	latencyTracking, slowlogThreshold            config.Setting
	protoMaxBulkLen                              config.Setting
	hashMaxListpackEntries, hashMaxListpackValue config.Setting
	setMaxIntsetEntries                          config.Setting
	zsetMaxListpackEntries, zsetMaxListpackValue config.Setting
	streamNodeMaxBytes, streamNodeMaxEntries     config.Setting
	hllSparseMaxBytes                            config.Setting
}

// settings returns the resolved hot options.
func (e *Env) settings() *hotSettings {
	h := &e.hot
	h.once.Do(func() {
		for name, s := range map[string]*config.Setting{
			"latency-tracking":          &h.latencyTracking,
			"slowlog-log-slower-than":   &h.slowlogThreshold,
			"proto-max-bulk-len":        &h.protoMaxBulkLen,
			"hash-max-listpack-entries": &h.hashMaxListpackEntries,
			"hash-max-listpack-value":   &h.hashMaxListpackValue,
			"set-max-intset-entries":    &h.setMaxIntsetEntries,
			"zset-max-listpack-entries": &h.zsetMaxListpackEntries,
			"zset-max-listpack-value":   &h.zsetMaxListpackValue,
			"stream-node-max-bytes":     &h.streamNodeMaxBytes,
			"stream-node-max-entries":   &h.streamNodeMaxEntries,
			"hll-sparse-max-bytes":      &h.hllSparseMaxBytes,
		} {
			*s, _ = e.Config.Setting(name)
		}
	})
	return h
}

// Client is the state of one connection that commands read and change.
// The server package creates it and owns its network side; fields without
// a lock are touched only by the connection's own goroutine.
type Client struct {
	ID      int64
	Addr    string
	LAddr   string
	FD      int
	Created time.Time

	// Namespace is "" for the default namespace.
	Namespace string
	// Admin is true for a connection authenticated with requirepass (or
	// any connection when no requirepass is set).
	Admin bool
	// Authed is true once the connection may run commands.
	Authed bool

	// CloseAfterReply asks the server to close the connection once the
	// current reply has been written (QUIT, CLIENT KILL of itself).
	CloseAfterReply bool

	// Kill closes the connection from another goroutine.
	Kill func()
	// Closed, when set, is closed once the connection is: a command
	// waiting for CLIENT PAUSE to end gives up then. PeerGone, when set,
	// reports whether the client has closed its side, which such a
	// command checks now and then, as Redis frees a client that leaves
	// while paused.
	Closed   <-chan struct{}
	PeerGone func() bool

	// Subscriber is the connection's receiving end in the Pub/Sub hub.
	Subscriber pubsub.Subscriber
	// StartQueuedOutput switches the connection to queued output (its own
	// writer goroutine); a command calls it before its first subscription.
	StartQueuedOutput func()
	// OutputPending returns the bytes queued for the client, for CLIENT
	// LIST omem.
	OutputPending func() int64
	// Push queues a frame for the client from any goroutine, once
	// StartQueuedOutput has run (MONITOR's lines).
	Push func(frame []byte)

	// Handoff, once set by a command (PSYNC), takes the connection over
	// after the command's reply is written: the server calls it with the
	// socket and its request reader and closes the connection when it
	// returns. CanHandoff says whether the server supports that on this
	// connection.
	Handoff    func(nc net.Conn, readCommand func() ([][]byte, error))
	CanHandoff bool
	// ReplicaPort and ReplicaIP are the port and address a replica
	// announced with REPLCONF listening-port and ip-address.
	ReplicaPort int
	ReplicaIP   string
	// Committed is set when one of the connection's commands commits a
	// write; the server clears it when it writes the replies (it lets the
	// replication feeders send first, see server).
	Committed bool

	// subs is the number of subscriptions held; only the connection's
	// goroutine touches it.
	subs int
	// multi is the open transaction (nil outside MULTI), watched the keys
	// WATCHed, and group the batch of the pipelined requests being run
	// together; only the connection's goroutine touches them.
	multi   *multiState
	watched []watchedKey
	group   *txnBatch
	// replyOff, replySkip and replySkipNext are CLIENT REPLY's state:
	// the replies of every command are dropped while replyOff is set,
	// those of the one command run while replySkip is set, and
	// replySkipNext (CLIENT REPLY SKIP) becomes replySkip for the next
	// command.
	replyOff, replySkip, replySkipNext bool
	// passedGate is set while the running command is counted in flight
	// by the CLIENT PAUSE gate.
	passedGate bool
	// blocked is set while a command waits for CLIENT PAUSE to end or
	// blocks (WAIT), and
	// noEvict by CLIENT NO-EVICT; CLIENT LIST shows them as flags b and e.
	// monitoring is set in MONITOR mode.
	blocked, noEvict, monitoring atomic.Bool
	// unblock is set while the client runs a blocking command (block):
	// CLIENT UNBLOCK sends on it, true for ERROR.
	unblock atomic.Pointer[chan bool]
	// readyLists are the list keys (namespaced) with waiters that the
	// client's commands wrote lists to, which it serves once its command
	// ends (listwait.go).
	readyLists []string
	// errorMark is the connection's Writer.Errors when its running
	// command started (EXEC moves it past its queued commands' errors).
	errorMark int64
	// ctx is the context of the command running, reused from one command
	// to the next (Dispatch).
	ctx Ctx
	// watchTouched is set by any goroutine committing a write to a
	// watched key.
	watchTouched atomic.Bool
	// multiQueued is 1 + the number of commands queued in MULTI (0
	// outside), for CLIENT LIST from other goroutines.
	multiQueued atomic.Int32
	// proto is the protocol version set by HELLO (0 until then: RESP2),
	// read by publishers' goroutines for every message.
	proto atomic.Int32
	// subscribed mirrors subs > 0 (setSubscriptions), and queuedOutput is
	// set once StartQueuedOutput has run (Push works), for other
	// goroutines (output limits, CLIENT TRACKING's redirection).
	subscribed, queuedOutput atomic.Bool
	// tracking is set while CLIENT TRACKING is on; trk is the rest of its
	// state, guarded by the tracking table's lock. trackCaching is set by
	// CLIENT CACHING for the next command or transaction; only the
	// connection's goroutine touches it.
	tracking     atomic.Bool
	trk          clientTracking
	trackCaching bool

	mu       sync.Mutex
	name     string
	lastCmd  string
	lastSeen time.Time
}

// Name returns the CLIENT SETNAME name.
func (c *Client) Name() string { c.mu.Lock(); defer c.mu.Unlock(); return c.name }

// SetName sets the connection's name.
func (c *Client) SetName(n string) { c.mu.Lock(); c.name = n; c.mu.Unlock() }

// Touch records the command a client just ran.
func (c *Client) Touch(cmd string, now time.Time) {
	c.mu.Lock()
	c.lastCmd, c.lastSeen = cmd, now
	c.mu.Unlock()
}

// SetProto records the protocol version the connection speaks.
func (c *Client) SetProto(p int) { c.proto.Store(int32(p)) }

// startQueuedOutput switches the connection to queued output.
func (c *Client) startQueuedOutput() {
	c.StartQueuedOutput()
	c.queuedOutput.Store(true)
}

// Subscriptions returns how many channels, patterns and shard channels
// the client holds. Only the connection's goroutine may call it.
func (c *Client) Subscriptions() int { return c.subs }

// Subscribed reports whether the client holds any subscription; any
// goroutine may call it.
func (c *Client) Subscribed() bool { return c.subscribed.Load() }

// setSubscriptions records that the client holds n subscriptions.
func (c *Client) setSubscriptions(n int) {
	c.subs = n
	c.subscribed.Store(n > 0)
}

// Monitoring reports whether the client is in MONITOR mode (its output
// is held to the replica class of client-output-buffer-limit, as in
// Redis).
func (c *Client) Monitoring() bool { return c.monitoring.Load() }

// Proto returns the protocol version the connection speaks (2 or 3).
func (c *Client) Proto() int {
	if p := c.proto.Load(); p != 0 {
		return int(p)
	}
	return 2
}

// ClientInfo renders a client as one CLIENT LIST line (without newline).
func (e *Env) ClientInfo(c *Client, now time.Time) string {
	var sub, psub, ssub int
	if c.Subscriber != nil {
		sub, psub, ssub = e.PubSub.Counts(c.Subscriber)
	}
	var omem int64
	if c.OutputPending != nil {
		omem = c.OutputPending()
	}
	flags := ""
	if c.monitoring.Load() {
		flags += "O"
	}
	if sub+psub+ssub > 0 {
		flags += "P"
	}
	multi := c.multiQueued.Load() - 1 // -1 outside MULTI
	if multi >= 0 {
		flags += "x"
	}
	if c.blocked.Load() {
		flags += "b"
	}
	tflags, redir := e.Clients.tracking.info(c)
	flags += tflags
	if c.watchTouched.Load() { // EXEC will fail
		flags += "d"
	}
	if c.noEvict.Load() {
		flags += "e"
	}
	if flags == "" {
		flags = "N"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	last := c.lastCmd
	if last == "" {
		last = "NULL"
	}
	proto := c.Proto()
	ns := c.Namespace
	if ns == "" {
		ns = defaultNamespaceName
	}
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=%d name=%s age=%d idle=%d flags=%s db=0 sub=%d psub=%d ssub=%d multi=%d qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=%d tot-mem=0 events=r cmd=%s user=default redir=%d resp=%d namespace=%s",
		c.ID, c.Addr, c.LAddr, c.FD, c.name, int64(now.Sub(c.Created).Seconds()), int64(now.Sub(c.lastSeen).Seconds()),
		flags, sub, psub, ssub, multi, omem, last, redir, proto, ns)
}

// ClientRegistry is the set of connected clients, for CLIENT LIST/KILL
// and INFO.
type ClientRegistry struct {
	mu       sync.Mutex
	clients  map[int64]*Client
	nextID   atomic.Int64
	watches  watchTable
	tracking trackingTable
}

// NewClientRegistry returns an empty registry.
func NewClientRegistry() *ClientRegistry { return &ClientRegistry{clients: map[int64]*Client{}} }

// NextID returns a fresh client id.
func (r *ClientRegistry) NextID() int64 { return r.nextID.Add(1) }

// Add registers c.
func (r *ClientRegistry) Add(c *Client) { r.mu.Lock(); r.clients[c.ID] = c; r.mu.Unlock() }

// Remove forgets c, the keys it watches and its CLIENT TRACKING.
func (r *ClientRegistry) Remove(c *Client) {
	r.mu.Lock()
	delete(r.clients, c.ID)
	r.mu.Unlock()
	r.unwatch(c)
	r.tracking.disable(c)
}

// get returns the connected client with id, or nil.
func (r *ClientRegistry) get(id int64) *Client {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.clients[id]
}

// Watching implements storage.WriteObserver: true while any connection
// watches a key or tracks keys.
func (r *ClientRegistry) Watching() bool { return r.watches.n.Load() > 0 || r.tracking.active() }

// Written implements storage.WriteObserver: it breaks the transactions
// watching the keys a batch wrote and sends CLIENT TRACKING's
// invalidations.
func (r *ClientRegistry) Written(writes iter.Seq[storage.Write]) {
	if r.watches.n.Load() > 0 {
		r.watches.written(writes)
	}
	if r.tracking.active() {
		r.tracking.written(r, writes)
	}
}

// Len returns the number of connected clients.
func (r *ClientRegistry) Len() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.clients) }

// List returns the clients ordered by id.
func (r *ClientRegistry) List() []*Client {
	r.mu.Lock()
	out := make([]*Client, 0, len(r.clients))
	for _, c := range r.clients {
		out = append(out, c)
	}
	r.mu.Unlock()
	sortClients(out)
	return out
}

// Ctx is one command execution: its arguments, the connection and the
// reply writer. Handlers write exactly one reply.
type Ctx struct {
	Env    *Env
	Client *Client
	W      *resp.Writer
	Args   [][]byte
	Spec   *Spec
	// Now is the command's start time; every TTL decision in one command
	// uses it, as Redis uses one mstime per command.
	Now time.Time
	// blockedFor is how long the command waited in block, which its
	// duration leaves out (SLOWLOG, commandstats), as in Redis.
	blockedFor time.Duration

	locked bool // the command holds its key locks
	// keyStripe is the stripe of the one key lock took for a single key
	// (when oneKey is set), and unlock releases what it took otherwise;
	// release (bound to the client's Ctx once, kept across commands)
	// publishes the events and releases them.
	keyStripe int
	oneKey    bool
	unlock    func()
	release   func()
	events    []notify.Event // events of committed writes, not yet published
	staged    []notify.Event // events of the batch being built
	// txn is the shared batch of EXEC or of a pipelined group; the
	// command then holds its keys' locks already.
	txn *txnBatch
	// scripted is set while a Lua script's redis.call runs a command.
	scripted bool
}

// isReplica reports whether this node is a replica, which commits
// nothing of its own (PFCOUNT there leaves a stale cache as it is) and
// refuses clients' writes.
func (e *Env) isReplica() bool { return e.Repl != nil && e.Repl.IsReplica() }

// replica is c.Env.isReplica.
func (c *Ctx) replica() bool { return c.Env.isReplica() }

// nowMs returns the command time in Unix milliseconds.
func (c *Ctx) nowMs() int64 { return c.Now.UnixMilli() }

// ns returns the connection's namespace.
func (c *Ctx) ns() string { return c.Client.Namespace }

// errorf writes an error reply.
func (c *Ctx) errorf(format string, a ...any) { c.W.Error(fmt.Sprintf(format, a...)) }

// storageError replies for a failed storage operation and logs it.
func (c *Ctx) storageError(err error) {
	c.Env.Log.Error("storage error", "command", c.Spec.FullName(), "error", err)
	c.W.Error("ERR " + err.Error())
}

// keyState is a key's metadata as read under its lock.
type keyState struct {
	m    storage.Metadata
	raw  bool // a record exists, possibly expired
	live bool // the key exists for clients
}

// old returns the record to pass to Batch.PutMeta.
func (k *keyState) old() *storage.Metadata {
	if k.raw {
		return &k.m
	}
	return nil
}

// read returns the state of key in the connection's namespace; on a
// storage error it replies and returns ok=false.
func (c *Ctx) read(key []byte) (k keyState, ok bool) {
	k, err := c.lookup(key)
	if err != nil {
		c.storageError(err)
		return k, false
	}
	return k, true
}

// lookup returns the state of key in the connection's namespace. On a
// primary, a key found logically expired is reclaimed first, as Redis's
// lookups do: it is deleted with an "expired" event and reported missing.
func (c *Ctx) lookup(key []byte) (keyState, error) {
	k, err := c.lookupRaw(key)
	if err == nil && k.raw && !k.live && c.reclaims() {
		return c.reclaim(key, k)
	}
	return k, err
}

// lookupRaw is lookup without the reclaim: an expired key is reported as
// found (raw) but not live.
func (c *Ctx) lookupRaw(key []byte) (keyState, error) {
	var m storage.Metadata
	var found bool
	if st, ok := c.txn.get(c.ns(), key); ok {
		m, found = st.m, st.exists
	} else if c.txn == nil || !c.txn.flushed {
		get := c.Env.Store.ReadMeta
		if c.locked {
			get = c.Env.Store.GetMeta
		}
		var err error
		if m, found, err = get(c.ns(), key); err != nil {
			return keyState{}, err
		}
	}
	return c.state(m, found), nil
}

// state is the keyState of a metadata record read at the command's time.
func (c *Ctx) state(m storage.Metadata, found bool) keyState {
	return keyState{m: m, raw: found, live: found && !m.Expired(c.nowMs())}
}

// reclaims reports whether this node deletes expired keys it meets: only
// a primary does; a replica hides them and waits for the primary's delete.
// While CLIENT PAUSE lasts, a primary does not either, as in Redis.
func (c *Ctx) reclaims() bool {
	return !c.replica() && !c.Env.pause.paused()
}

// reclaim deletes the expired key k and publishes "expired" for it. A
// command holding the key's lock reclaims in a commit of its own (or, in
// EXEC or a pipelined group, in the shared batch); a lock-free read takes
// the lock and re-reads first.
func (c *Ctx) reclaim(key []byte, k keyState) (keyState, error) {
	if !c.locked {
		unlock := c.Env.Store.Locks.Lock(c.ns(), key)
		defer unlock()
		m, found, err := c.Env.Store.GetMeta(c.ns(), key)
		if err != nil {
			return keyState{}, err
		}
		if k = c.state(m, found); !k.raw || k.live {
			return k, nil
		}
	}
	b := c.newBatch(k.m.Type, storage.CmdExpired)
	if c.txn == nil {
		saved := c.staged // the command's own staged events wait for its batch
		c.staged = nil
		c.del(b, key, &k, notify.CodeExpired)
		_, err := c.Env.Store.Commit(b)
		if err == nil {
			c.events = append(c.events, c.staged...)
		}
		c.staged = saved
		if err != nil {
			return keyState{}, err
		}
	} else {
		c.del(b, key, &k, notify.CodeExpired)
	}
	c.Env.Stats.ExpiredKeys.Add(1)
	if !c.locked {
		c.publishEvents()
	}
	return keyState{}, nil
}

// lookupString returns a string key with its value loaded, for a command
// that reads key as Redis's lookupKeyRead does: the lookup counts as a
// keyspace hit or miss, and a miss publishes keymiss (lookedUp). It
// writes a WRONGTYPE or storage error reply and returns ok=false when the
// key holds another type or cannot be read.
func (c *Ctx) lookupString(key []byte) (k keyState, ok bool) {
	if k, ok = c.lookupStringMeta(key); !ok {
		return k, false
	}
	return k, c.loadValue(key, &k)
}

// lookupStringMeta is readStringMeta for a command that reads key as
// Redis's lookupKeyRead does: the lookup counts as a keyspace hit or miss
// (lookedUp) before the type check, so a WRONGTYPE is a hit.
func (c *Ctx) lookupStringMeta(key []byte) (k keyState, ok bool) {
	if k, ok = c.read(key); !ok {
		return k, false
	}
	c.lookedUp(key, k.live)
	if k.live && k.m.Type != storage.TypeString {
		c.W.Error(errWrongType)
		return k, false
	}
	return k, true
}

// readStringMeta returns key's state (a string's, if live) without reading an
// out-of-line value (for commands that need its length or a part of it),
// or writes a WRONGTYPE or storage error reply and returns ok=false.
func (c *Ctx) readStringMeta(key []byte) (k keyState, ok bool) {
	if k, ok = c.read(key); !ok {
		return k, false
	}
	if k.live && k.m.Type != storage.TypeString {
		c.W.Error(errWrongType)
		return k, false
	}
	return k, true
}

// readStringMetaForPart is lookupStringMeta for a command that then reads
// part of an out-of-line value: for such a value it takes the key's lock,
// released by unlock (which the caller defers, whatever ok is), and reads
// the metadata again under it, so that the length it returns and the
// bytes read next come from the same write.
func (c *Ctx) readStringMetaForPart(key []byte) (k keyState, unlock func(), ok bool) {
	unlock = func() {}
	k, ok = c.lookupStringMeta(key)
	if ok && k.live && k.m.External() && !c.locked {
		unlock = c.lock(key)
		k, ok = c.readStringMeta(key)
	}
	return k, unlock, ok
}

// readStringBytes returns bytes [from, to) of key's string value, cut
// at its end (none for a missing key), with the key's state. Of an
// out-of-line value only those bytes are read, under the key's lock so
// that its length and bytes come from the same write. It replies and
// returns ok=false on an error.
func (c *Ctx) readStringBytes(key []byte, from, to int64) (k keyState, b []byte, ok bool) {
	k, unlock, ok := c.readStringMetaForPart(key)
	defer unlock()
	if !ok || !k.live {
		return k, nil, ok
	}
	b, err := c.valueRange(key, &k, from, to)
	if err != nil {
		c.storageError(err)
		return k, nil, false
	}
	return k, b, true
}

// valueRange returns bytes [from, to) of the live string key (k: its
// state as read under its lock, which the caller holds), cut at its end,
// reading only those of an out-of-line value.
func (c *Ctx) valueRange(key []byte, k *keyState, from, to int64) ([]byte, error) {
	n := stringLen(&k.m)
	from, to = min(from, n), min(to, n)
	if !k.m.External() || k.m.Value != nil || from == to {
		return k.m.Value[min(from, int64(len(k.m.Value))):min(to, int64(len(k.m.Value)))], nil
	}
	return c.Env.Store.LoadValueRange(c.batch(), c.ns(), key, &k.m, from, to)
}

// replyRange replies with bytes [from, to) of the live string key (k: as
// valueRange takes it), cut at its end. Those of an out-of-line value are
// read from storage straight into the reply, so a GET of a long value
// holds one copy of it, not two.
func (c *Ctx) replyRange(key []byte, k *keyState, from, to int64) {
	if err := c.bulkRange(key, k, from, to); err != nil {
		c.storageError(err)
	}
}

// bulkRange writes bytes [from, to) of k's value as a bulk string,
// reading an out-of-line value straight into the reply; on an error it
// writes nothing.
func (c *Ctx) bulkRange(key []byte, k *keyState, from, to int64) error {
	if !k.m.External() || k.m.Value != nil {
		v, err := c.valueRange(key, k, from, to)
		if err == nil {
			c.W.Bulk(v)
		}
		return err
	}
	n := stringLen(&k.m)
	from, to = min(from, n), min(to, n)
	return c.W.BulkFill(int(max(to-from, 0)), func(dst []byte) error {
		return c.Env.Store.ReadValueAt(c.batch(), c.ns(), key, &k.m, dst, from)
	})
}

// loadValue reads the out-of-line value of a live string key read by
// lookup into k.m.Value (storage.Metadata.External); on a storage error
// it replies and returns false.
func (c *Ctx) loadValue(key []byte, k *keyState) bool {
	if err := c.readValue(key, k); err != nil {
		c.storageError(err)
		return false
	}
	return true
}

// readValue is loadValue without the reply. A command that holds no key
// lock (a read on a row-cache hit) reads the metadata again with the
// value under the key's lock, so that both come from the same write; k
// then becomes that state, whatever it is.
func (c *Ctx) readValue(key []byte, k *keyState) error {
	if !k.live || !k.m.External() || k.m.Value != nil {
		return nil
	}
	if !c.locked {
		unlock := c.Env.Store.Locks.Lock(c.ns(), key)
		defer unlock()
		m, found, err := c.Env.Store.GetMeta(c.ns(), key)
		if err != nil {
			return err
		}
		*k = c.state(m, found)
		if !k.live || !k.m.External() {
			return nil
		}
	}
	return c.Env.Store.LoadValue(c.batch(), c.ns(), key, &k.m)
}

// batch returns the shared batch of EXEC or of a pipelined group, whose
// writes the command's reads of out-of-line values must see, or nil.
func (c *Ctx) batch() *storage.Batch {
	if c.txn == nil {
		return nil
	}
	return c.txn.b
}

// stringLen returns the length of the string value m describes.
func stringLen(m *storage.Metadata) int64 {
	if m.External() {
		return int64(m.Size)
	}
	return int64(len(m.Value))
}

// chunked reports whether an edit leaves a string value of n bytes in
// chunks, whose parts putRange writes alone (storage.Engine.EditedInlineMax).
func (c *Ctx) chunked(n int64) bool { return n > int64(c.Env.Store.EditedInlineMax()) }

// putRange commits cmd's write of data at offset off of key's string
// value with the events codes, and reports success, writing only the
// chunks the bytes fall in (for a value chunked() after the write). k is
// the key's state as read under its lock, its value not loaded; m is its
// new metadata, whose value and length the write sets. Bytes between the
// old end and off are zeros.
func (c *Ctx) putRange(cmd storage.Command, key []byte, k *keyState, m storage.Metadata, off int64, data []byte, codes ...notify.Code) bool {
	b := c.newBatch(storage.TypeString, cmd)
	m, err := c.Env.Store.WriteRange(b, c.ns(), key, k.old(), k.live, off, data, m)
	if err != nil {
		if c.txn == nil {
			b.Discard()
		}
		c.storageError(err)
		return false
	}
	c.put(b, key, k, m, codes...)
	return c.commit(b)
}

// commit commits b and reports success, writing an error reply on
// failure. The events staged for b become due for publication; a failed
// commit drops them. The shared batch of EXEC or of a pipelined group is
// committed by its owner, after the last command.
func (c *Ctx) commit(b *storage.Batch) bool { return c.commitReplying(b, -1) }

// commitReplying is commit for a command that wrote its reply before
// committing, from mark on (replyOldValue; mark < 0: no reply yet): a
// failed commit replaces that reply with the error.
func (c *Ctx) commitReplying(b *storage.Batch, mark int) bool {
	if c.txn != nil && b == c.txn.b {
		return true
	}
	if _, err := c.Env.Store.Commit(b); err != nil {
		c.staged = c.staged[:0]
		if mark >= 0 {
			c.W.Truncate(mark)
		}
		c.storageError(err)
		return false
	}
	c.Env.Faults.afterCommit()
	c.Client.Committed = true
	c.events = append(c.events, c.staged...)
	c.staged = c.staged[:0]
	return true
}

// lock takes the locks of keys in the connection's namespace for the rest
// of the command; reads then go through the lock-holder's path.
func (c *Ctx) lock(keys ...[]byte) func() {
	if c.txn != nil {
		return func() {} // EXEC or the pipelined group holds every key's lock
	}
	if len(keys) == 1 && !c.locked {
		c.keyStripe = c.Env.Store.Locks.LockKey(c.ns(), keys[0])
		c.locked, c.oneKey = true, true
		return c.releaser()
	}
	return c.holdLocks(c.Env.Store.Locks.Lock(c.ns(), keys...))
}

// releaser returns c.releaseLocks as a func, bound once per client.
func (c *Ctx) releaser() func() {
	if c.release == nil {
		c.release = c.releaseLocks
	}
	return c.release
}

// releaseLocks publishes the command's committed events and releases the
// locks lock or holdLocks took.
func (c *Ctx) releaseLocks() {
	c.publishEvents()
	c.locked = false
	if c.oneKey {
		c.oneKey = false
		c.Env.Store.Locks.UnlockStripe(c.keyStripe)
		return
	}
	u := c.unlock
	c.unlock = nil
	u()
}

// lockAll takes every key lock (FLUSHDB, FLUSHALL), like lock.
func (c *Ctx) lockAll() func() {
	if c.txn != nil {
		return func() {}
	}
	return c.holdLocks(c.Env.Store.Locks.LockAll())
}

// holdLocks marks the command as holding its locks and returns the function
// that publishes its committed events and releases them.
func (c *Ctx) holdLocks(unlock func()) func() {
	if c.locked { // nested: the outer release must still find its own
		return func() {
			c.publishEvents()
			unlock()
		}
	}
	c.locked, c.unlock = true, unlock
	return c.releaser()
}

// parseInt parses a Redis integer argument (string2ll rules: no spaces,
// no plus sign, no leading zeros, fits in int64).
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	s := b
	if s[0] == '-' {
		s = s[1:]
	}
	if len(s) == 0 || s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	for _, ch := range s {
		if ch < '0' || ch > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

// timeoutArg parses argument i as a timeout in milliseconds, as Redis's
// getTimeoutFromObjectOrReply does (WAIT, CLIENT PAUSE), replying with
// its errors.
func (c *Ctx) timeoutArg(i int) (int64, bool) {
	n, ok := parseInt(c.Args[i])
	switch {
	case !ok:
		c.W.Error("ERR timeout is not an integer or out of range")
	case n < 0:
		c.W.Error("ERR timeout is negative")
	default:
		return n, true
	}
	return 0, false
}

// intArg parses args[i] as an integer, replying with Redis's error when it
// is not one.
func (c *Ctx) intArg(i int) (int64, bool) {
	n, ok := parseInt(c.Args[i])
	if !ok {
		c.W.Error(errNotInt)
	}
	return n, ok
}

// errWrongArity is the arity error of the running command.
func (c *Ctx) wrongArity() {
	c.errorf("ERR wrong number of arguments for '%s' command", c.Spec.FullName())
}
