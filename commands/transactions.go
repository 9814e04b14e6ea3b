package commands

import (
	"iter"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/server/resp"
	"github.com/cairnkv/cairn/storage"
)

func init() {
	tx := func(name string, arity int, flags Flag, since, summary string, h Handler) *Spec {
		return &Spec{Name: name, Arity: arity, Flags: flags | FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy, Group: "transactions", Since: since, Summary: summary, Handler: h}
	}
	register(
		tx("multi", 1, 0, "1.2.0", "Starts a transaction.", cmdMulti),
		// Unlike its siblings, EXEC is neither fast nor allowed while
		// busy, as in Redis.
		&Spec{Name: "exec", Arity: 1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagSkipSlowlog, Group: "transactions", Since: "1.2.0", Summary: "Executes all commands in a transaction.", Handler: cmdExec},
		tx("discard", 1, 0, "2.0.0", "Discards a transaction.", cmdDiscard),
		&Spec{Name: "watch", Arity: -2, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy, FirstKey: 1, LastKey: -1, Step: 1, KeySpecs: []KeySpec{KeyRange(1, -1, 1, KeyRO)}, Group: "transactions", Since: "2.2.0", Summary: "Monitors changes to keys to determine the execution of a transaction.", Handler: cmdWatch},
		tx("unwatch", 1, 0, "2.2.0", "Forgets about watched keys of a transaction.", cmdUnwatch),
	)
}

// multiState is a connection's open transaction: the commands queued
// since MULTI, and whether one of them was refused (EXEC then aborts).
type multiState struct {
	queued []queuedCommand
	dirty  bool
}

// flags returns the union of the queued commands' flags (commandFlags).
func (m *multiState) flags(e *Env) Flag {
	var f Flag
	for _, q := range m.queued {
		f |= e.commandFlags(q.spec, q.args)
	}
	return f
}

type queuedCommand struct {
	spec *Spec
	args [][]byte
}

// immediateInMulti are the commands a connection in MULTI runs at once
// instead of queueing them, as in Redis.
var immediateInMulti = map[string]bool{"exec": true, "discard": true, "multi": true, "watch": true, "quit": true, "reset": true}

// queue adds a command to the client's open transaction and replies
// +QUEUED.
func (c *Client) queue(spec *Spec, args [][]byte, w *resp.Writer) {
	c.multi.queued = append(c.multi.queued, queuedCommand{spec, args})
	c.multiQueued.Add(1)
	w.SimpleString("QUEUED")
}

// setMulti opens (m) or ends (nil) the client's transaction.
func (c *Client) setMulti(m *multiState) {
	c.multi = m
	if m == nil {
		c.multiQueued.Store(0)
	} else {
		c.multiQueued.Store(1)
	}
}

func cmdMulti(c *Ctx) {
	if c.Client.multi != nil {
		c.W.Error("ERR MULTI calls can not be nested")
		return
	}
	c.Client.setMulti(&multiState{})
	c.W.OK()
}

func cmdDiscard(c *Ctx) {
	if c.Client.multi == nil {
		c.W.Error("ERR DISCARD without MULTI")
		return
	}
	c.Client.setMulti(nil)
	c.Env.Clients.unwatch(c.Client)
	c.W.OK()
}

// cmdExec runs the queued commands under the locks of all their keys and
// commits their writes as one batch, so the transaction is atomic on this
// node and on replicas; its events are published after that commit, in
// command order. A touched WATCHed key aborts it with a null reply.
func cmdExec(c *Ctx) {
	cl := c.Client
	m := cl.multi
	if m == nil {
		c.W.Error("ERR EXEC without MULTI")
		return
	}
	cl.setMulti(nil)
	defer c.Env.Clients.unwatch(cl)
	if m.dirty {
		c.W.Error("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	if m.flags(c.Env)&FlagWrite != 0 && c.replica() {
		// The node became a replica after the writes were queued.
		c.W.Error("ERR Transaction contains write commands but instance is now a read-only replica. EXEC aborted.")
		return
	}
	roleChange := changesRole(m.queued)
	if roleChange {
		if keys, all := transactionKeys(m.queued); all || len(keys) > 0 {
			c.W.Error(errRoleChangeWithKeys)
			return
		}
	}
	keys, allLocked := execKeys(cl, m.queued)
	watchLocked := !roleChange
	if queuesScript(m.queued) {
		c.Env.scripts.pending.Add(1)
		defer c.Env.scripts.pending.Add(-1) // after unlock
	}
	unlock := c.lockTransaction(keys, allLocked)
	defer unlock()
	if c.Env.Clients.watchBroken(c, cl, watchLocked) {
		c.W.NullArray()
		return
	}

	execArgs, execSpec := c.Args, c.Spec
	c.txn = &txnBatch{b: c.Env.Store.NewTxnBatch(), allLocked: allLocked, exec: true}
	c.txn.b.Origin = cl.ID
	mark := c.W.Len()
	c.W.Array(len(m.queued))
	// While its commands run the client still shows as in MULTI with
	// them queued (CLIENT INFO: flags=x, multi=<n>), as in Redis.
	cl.multiQueued.Store(int32(len(m.queued)) + 1)
	for _, q := range m.queued {
		start, took := c.runInTxn(q.spec, q.args)
		c.Env.noteSlow(cl, q.spec, q.args, took, start)
		c.Env.feedMonitors(cl, q.spec, q.args, start.Add(took))
	}
	cl.multiQueued.Store(0)
	cl.errorMark = c.W.Errors // see Dispatch
	c.Args, c.Spec = execArgs, execSpec
	c.endTxn(mark)
}

// runInTxn runs one command of a transaction or a script in c.txn (its
// batch, under its locks), counted as Dispatch counts a command, and
// returns when it started and how long it took. It leaves c.Args and
// c.Spec set to the command's.
func (c *Ctx) runInTxn(spec *Spec, args [][]byte) (start time.Time, took time.Duration) {
	c.Args, c.Spec = args, spec
	c.Env.Stats.Commands.Add(1)
	if c.Client.tracking.Load() {
		c.Env.trackRead(c.Client, spec, args)
	}
	start, errs := time.Now(), c.W.Errors
	spec.Handler(c)
	took = time.Since(start)
	spec.stats.record(took, c.W.Errors > errs, c.Env.settings().latencyTracking.Bool())
	return start, took
}

// endTxn ends c.txn: it drops the batch when discard is set, else commits
// it; a failed commit replaces the replies written since mark with the
// error. The events go to the command's, published when its locks are
// released.
func (c *Ctx) endTxn(mark int) {
	t := c.txn
	c.txn = nil
	if t.discard {
		t.b.Discard()
		return
	}
	if err := t.commit(c.Env, c.Client); err != nil {
		c.W.Truncate(mark)
		c.storageError(err)
		return
	}
	c.events = append(c.events, t.events...)
}

// errRoleChangeWithKeys refuses a transaction that queues REPLICAOF (or
// SLAVEOF) beside a command that takes key locks: the role change stops
// the replication link and waits for it, and the link may be waiting for
// those locks to apply a batch. Redis Sentinel's transactions (SLAVEOF,
// CONFIG REWRITE, CLIENT KILL) name no key and run.
const errRoleChangeWithKeys = "EXECABORT Transaction discarded: Cairn runs REPLICAOF in a transaction only beside commands that name no key."

// changesRole reports whether the queue holds REPLICAOF or SLAVEOF.
func changesRole(queued []queuedCommand) bool {
	for _, q := range queued {
		if q.spec.Name == "replicaof" || q.spec.Name == "slaveof" {
			return true
		}
	}
	return false
}

// queuesScript reports whether the queue holds EVAL or one of its forms.
func queuesScript(queued []queuedCommand) bool {
	for _, q := range queued {
		if q.spec.Group == "scripting" && q.spec.Name != "script" && q.spec.Name != "function" {
			return true
		}
	}
	return false
}

// lockedKeys returns the keys whose locks cl's command will take (every
// lock with all), for awaitScripts: EXEC's are its queued commands' and
// the watched keys, and an EVAL's its declared keys (one that needs every
// lock waits again before it reruns).
func lockedKeys(cl *Client, spec *Spec, args [][]byte) (keys [][]byte, all bool) {
	switch {
	case spec.Name == "exec" && cl.multi != nil:
		return execKeys(cl, cl.multi.queued)
	case spec.Group == "scripting":
		return spec.Keys(args), false
	}
	return spec.Keys(args), keyspaceWide(spec, args)
}

// execKeys returns the keys whose locks EXEC of queued takes (every lock
// with all): the queued commands' and cl's watched keys of its namespace,
// for watchBroken's reads (none beside a role change, which takes no key
// lock).
func execKeys(cl *Client, queued []queuedCommand) (keys [][]byte, all bool) {
	keys, all = transactionKeys(queued)
	if all || changesRole(queued) {
		return keys, all
	}
	for _, wk := range cl.watched {
		if wk.ns == cl.Namespace {
			keys = append(keys, wk.key)
		}
	}
	return keys, all
}

// transactionKeys returns the keys whose locks the queued commands need,
// or all true when one of them needs every lock (keyspaceWide).
func transactionKeys(queued []queuedCommand) (keys [][]byte, all bool) {
	for _, q := range queued {
		if keyspaceWide(q.spec, q.args) {
			return nil, true
		}
		keys = append(keys, q.spec.Keys(q.args)...)
	}
	return keys, false
}

// lockTransaction takes the locks transactionKeys named (every lock with
// all) and returns the function that publishes the transaction's events
// and releases them.
func (c *Ctx) lockTransaction(keys [][]byte, all bool) (unlock func()) {
	if all {
		return c.holdLocks(c.Env.Store.Locks.LockAll())
	}
	return c.holdLocks(c.Env.Store.Locks.Lock(c.ns(), keys...))
}

// keyspaceWide reports whether a command line (args) may touch keys it
// does not name: a command that names none and writes (FLUSHDB),
// reclaims the expired keys it meets (SCAN) or runs a script, and a SORT
// that reads or writes keys its elements name (sortReadsKeys). A
// transaction or script running one needs every lock, and a pipelined
// group never takes one.
func keyspaceWide(spec *Spec, args [][]byte) bool {
	if spec.Name == "sort" || spec.Name == "sort_ro" {
		return sortReadsKeys(args)
	}
	return spec.FirstKey == 0 && (spec.Flags&FlagWrite != 0 || reclaimsExpired[spec.Name] || spec.Group == "scripting")
}

// reclaimsExpired names the keyless reads that reclaim the expired keys
// they come across (reclaimAll), as Redis's do: in a transaction they need
// every key's lock.
var reclaimsExpired = map[string]bool{"scan": true, "randomkey": true}

func cmdWatch(c *Ctx) {
	if c.Client.multi != nil {
		c.W.Error("ERR WATCH inside MULTI is not allowed")
		return
	}
	for _, key := range c.Args[1:] {
		m, found, err := c.Env.Store.ReadMeta(c.ns(), key)
		if err != nil {
			c.storageError(err)
			return
		}
		c.Env.Clients.watch(c.Client, c.ns(), key, found && m.Expired(c.nowMs()))
	}
	c.W.OK()
}

func cmdUnwatch(c *Ctx) {
	c.Env.Clients.unwatch(c.Client)
	c.W.OK()
}

// txnBatch is the one batch that EXEC's queued commands, or a group of
// pipelined requests, write to, with the metadata they wrote so far (read
// by the later commands) and the events to publish once it commits.
type txnBatch struct {
	b       *storage.Batch
	writes  int
	overlay map[string]txnKey // by namespace + NUL + key
	flushed bool              // keys not in overlay are gone
	// allLocked is set when the transaction holds every key lock, so
	// that its commands may reclaim any expired key (reclaimAll).
	allLocked bool
	// exec is set for EXEC's batch (not a pipelined group's).
	exec bool
	// discard is set when a script in EXEC was killed as the server
	// stops: the batch is dropped, never acknowledged.
	discard bool
	events  []notify.Event // to publish once the batch commits
	// publishes counts the PUBLISH records added for replicas: a batch
	// with one commits even without writes.
	publishes int
	scratch   []byte // keyOf's buffer
	// popped is the list key the last pop took an element of (namespace,
	// NUL, key): the next pop of that key reads the following elements
	// ahead (readAhead).
	popped []byte
}

// commit commits the batch for cl if anything was written to it; on an
// error nothing was applied.
func (t *txnBatch) commit(e *Env, cl *Client) error {
	if t.writes == 0 && t.publishes == 0 {
		t.b.Discard()
		return nil
	}
	if _, err := e.Store.Commit(t.b); err != nil {
		return err
	}
	e.Faults.afterCommit()
	cl.Committed = true
	return nil
}

type txnKey struct {
	m      storage.Metadata
	exists bool
	// held is set in EXEC when the value is also held by a queued
	// command's arguments until EXEC ends (see valueHeld).
	held bool
}

// keyOf returns the overlay key of key in ns (namespace, NUL, key) in a
// buffer reused by the next call.
func (t *txnBatch) keyOf(ns string, key []byte) []byte {
	t.scratch = append(append(append(t.scratch[:0], ns...), 0), key...)
	return t.scratch
}

// get returns what the transaction wrote to key so far; a nil t (no
// transaction) has written nothing.
func (t *txnBatch) get(ns string, key []byte) (txnKey, bool) {
	if t == nil || len(t.overlay) == 0 {
		return txnKey{}, false
	}
	st, ok := t.overlay[string(t.keyOf(ns, key))] // no allocation for the lookup
	return st, ok
}

// writtenKey is a key a transaction wrote, and what it left there.
type writtenKey struct {
	key string
	txnKey
}

// written returns the keys of ns at or after start that the transaction
// wrote, in key order.
func (t *txnBatch) written(ns string, start []byte) []writtenKey {
	var out []writtenKey
	for k, st := range t.overlay {
		if key, ok := strings.CutPrefix(k, ns+"\x00"); ok && key >= string(start) {
			out = append(out, writtenKey{key, st})
		}
	}
	slices.SortFunc(out, func(a, b writtenKey) int { return strings.Compare(a.key, b.key) })
	return out
}

func (t *txnBatch) put(ns string, key []byte, m storage.Metadata, held bool) {
	t.set(ns, key, txnKey{m: m, exists: true, held: held})
}

func (t *txnBatch) del(ns string, key []byte) { t.set(ns, key, txnKey{}) }

// inExec reports whether the command runs inside EXEC (not alone, nor in
// a pipelined group).
func (c *Ctx) inExec() bool { return c.txn != nil && c.txn.exec }

// hold marks the value the transaction wrote to key as held (txnKey.held).
func (t *txnBatch) hold(ns string, key []byte) {
	k := string(t.keyOf(ns, key))
	if st, ok := t.overlay[k]; ok {
		st.held = true
		t.overlay[k] = st
	}
}

func (t *txnBatch) set(ns string, key []byte, st txnKey) {
	if t.overlay == nil {
		t.overlay = map[string]txnKey{}
	}
	t.overlay[string(t.keyOf(ns, key))] = st
	t.writes++
}

// flush records that the transaction removed every key of its
// namespace: later reads of keys it did not write since find nothing.
func (t *txnBatch) flush() {
	t.overlay = map[string]txnKey{}
	t.flushed = true
	t.writes++
}

// watchTable maps watched keys to the connections watching them. A write
// committed to a watched key (Engine's WriteObserver) marks its watchers'
// transactions as broken.
type watchTable struct {
	n  atomic.Int64 // watched (connection, key) pairs; 0 skips the lookups
	mu sync.Mutex
	// keys maps storage.MetaKey to the watchers, each with whether the key
	// had already expired when it watched.
	keys map[string]map[*Client]bool
}

// watchedKey is a key a connection watches, and whether it had already
// expired when WATCH ran (a key expiring later breaks the transaction).
type watchedKey struct {
	ns      string
	key     []byte
	expired bool
}

func (r *ClientRegistry) watch(cl *Client, ns string, key []byte, expired bool) {
	mk := string(storage.MetaKey(ns, key))
	w := &r.watches
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.keys == nil {
		w.keys = map[string]map[*Client]bool{}
	}
	set := w.keys[mk]
	if set == nil {
		set = map[*Client]bool{}
		w.keys[mk] = set
	}
	if _, dup := set[cl]; dup {
		return
	}
	set[cl] = expired
	w.n.Add(1)
	cl.watched = append(cl.watched, watchedKey{ns, append([]byte(nil), key...), expired})
}

// unwatch forgets every key cl watches and clears its broken mark.
func (r *ClientRegistry) unwatch(cl *Client) {
	if len(cl.watched) > 0 {
		w := &r.watches
		w.mu.Lock()
		for _, wk := range cl.watched {
			mk := string(storage.MetaKey(wk.ns, wk.key))
			if set := w.keys[mk]; set != nil {
				delete(set, cl)
				if len(set) == 0 {
					delete(w.keys, mk)
				}
			}
		}
		w.n.Add(-int64(len(cl.watched)))
		w.mu.Unlock()
		cl.watched = nil
	}
	cl.watchTouched.Store(false)
}

// written breaks the transactions watching the keys a batch wrote (its
// flushes were told to Flushing before they were applied). As in Redis,
// deleting a key that had already expired when a connection watched it
// changes nothing for that connection (the key was as good as absent);
// writing it does.
func (w *watchTable) written(writes iter.Seq[storage.Write]) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for wr := range writes {
		for cl, expired := range w.keys[string(wr.MetaKey)] {
			if !(expired && wr.Deleted) {
				cl.watchTouched.Store(true)
			}
		}
	}
}

// Flushing implements storage.WriteObserver. As in Redis, emptying a
// namespace breaks the transactions watching a key of it that is there,
// except those that watched it already expired (for them nothing changes:
// an expired key is as good as absent).
func (r *ClientRegistry) Flushing(namespaces []string, present func(metaKey []byte) bool) {
	w := &r.watches
	w.mu.Lock()
	defer w.mu.Unlock()
	for mk, set := range w.keys {
		k := []byte(mk)
		ns, _, err := storage.DecodeMetaKey(k)
		if err != nil || (namespaces != nil && !slices.Contains(namespaces, string(ns))) || !present(k) {
			continue
		}
		for cl, expired := range set {
			if !expired {
				cl.watchTouched.Store(true)
			}
		}
	}
}

// watchBroken reports whether EXEC must abort: a watched key was written,
// or has expired since WATCH. With locked, EXEC holds the locks of the
// watched keys of its namespace.
func (r *ClientRegistry) watchBroken(c *Ctx, cl *Client, locked bool) bool {
	if cl.watchTouched.Load() {
		return true
	}
	for _, wk := range cl.watched {
		if wk.expired {
			continue
		}
		// With locked, EXEC holds the locks of the keys it watched in its
		// namespace: ReadMeta would take the lock again on a row-cache miss.
		read := c.Env.Store.ReadMeta
		if locked && wk.ns == c.ns() {
			read = c.Env.Store.GetMeta
		}
		m, found, err := read(wk.ns, wk.key)
		if err == nil && found && m.Expired(c.nowMs()) {
			return true
		}
	}
	return false
}

// MaxPipelineGroup bounds how many pipelined requests share one batch.
const MaxPipelineGroup = 64

// Groupable reports whether a request may join a group of pipelined
// requests (DispatchGroup): a string, bitmap, hash, set, list, sorted-set,
// geo, HyperLogLog, stream or key command with the right number of
// arguments that names its keys (Spec.Keys), and never blocks (a blocking
// one would wait holding the group's locks).
func Groupable(args [][]byte) bool {
	spec := Lookup(args[0])
	return spec != nil && spec.FirstKey > 0 && spec.Subcommands == nil && spec.Flags&FlagBlocking == 0 && !keyspaceWide(spec, args) &&
		groupableFamilies[spec.Group] && spec.ArityOK(len(args))
}

// groupableFamilies are the command groups (Spec.Group) whose commands
// may join a pipelined group.
var groupableFamilies = map[string]bool{"string": true, "generic": true, "bitmap": true, "hash": true, "set": true,
	"list": true, "sorted-set": true, "geo": true, "hyperloglog": true, "stream": true}

// DispatchGroup runs requests a client pipelined (each Groupable) as
// Dispatch would, in order, but commits all their writes as one batch:
// under the locks of all their keys, taken up front, so no other client
// sees a state between them; their events are published after that
// commit, in order. Pebble then pays one commit for the group instead of
// one per write. A failed commit applies nothing and fails every request.
// Groups with fewer than two writes, a client in MULTI or subscribed or
// with replies off (CLIENT REPLY), and a replica run the requests one by
// one.
func (e *Env) DispatchGroup(cl *Client, w *resp.Writer, reqs [][][]byte) {
	defer func() { // after the group's locks are released
		if len(cl.readyLists) > 0 {
			e.serveReadyLists(cl)
		}
	}()
	writes := 0
	for _, args := range reqs {
		if Lookup(args[0]).Flags&FlagWrite != 0 {
			writes++
		}
	}
	if writes < 2 || cl.multi != nil || cl.subs > 0 || !cl.Authed || cl.replyOff || cl.replySkip ||
		e.isReplica() {
		for _, args := range reqs {
			e.Dispatch(cl, w, args)
		}
		return
	}
	// The group passes CLIENT PAUSE as one write, before it takes any
	// lock: a client waiting for a pause holds none.
	cl.Touch(Lookup(reqs[0][0]).FullName(), time.Now())
	ok, waited := e.pause.enter(cl, true)
	if !ok {
		return
	}
	if waited {
		e.pause.leave(cl)
		e.DispatchGroup(cl, w, reqs) // checked again: the node may be a replica now
		return
	}
	var keys [][]byte
	for _, args := range reqs {
		keys = append(keys, Lookup(args[0]).Keys(args)...)
	}
	if e.awaitScripts(cl, keys, false) != "" {
		// A script ran too long holding one of the locks: each
		// command gets BUSY, as it would alone.
		e.pause.leave(cl)
		for _, args := range reqs {
			e.Dispatch(cl, w, args)
		}
		return
	}
	defer e.pause.leave(cl)
	unlock := e.Store.Locks.Lock(cl.Namespace, keys...)
	defer unlock()
	t := &txnBatch{b: e.Store.NewTxnBatch(), overlay: make(map[string]txnKey, writes)}
	t.b.Origin = cl.ID
	cl.group = t
	defer func() { cl.group = nil }()
	mark := w.Len()
	for _, args := range reqs {
		e.Dispatch(cl, w, args)
	}
	cl.group = nil
	if err := t.commit(e, cl); err != nil {
		e.Log.Error("storage error", "command", "pipelined group", "error", err)
		w.Truncate(mark)
		for range reqs {
			w.Error("ERR " + err.Error())
		}
		return
	}
	for _, ev := range t.events {
		e.Notify.Emit(ev)
	}
}
