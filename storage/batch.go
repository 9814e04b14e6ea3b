package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// Batch collects the records of one command's write. It begins with the
// command's LogData and is committed with Engine.Commit, which adds the
// replication offset and key-count records. A Batch is owned by the
// goroutine that created it and is spent by Commit, whatever its result.
type Batch struct {
	b      *pebble.Batch
	deltas []nsCount // key-count change per namespace, one entry each
	flush  []string  // namespaces whose count resets to zero
	nsSet  map[string]string
	nsDel  []string
	// rows are the metadata records the batch writes (nil value: deleted),
	// for the row cache once the batch is applied and for the write
	// observer; rows0 backs the first. The records before fresh precede
	// the batch's last flush, so the cache takes only rows[fresh:].
	rows  []rowUpdate
	rows0 [1]rowUpdate
	fresh int
	// earliest is the earliest time of the expiry-index entries the batch
	// writes (0: none), for ExpireSlice (Engine.expireFloor).
	earliest int64
	// solo keeps the batch out of commit groups (see mergeable).
	solo bool
	// e is the engine that made the batch, which reads the members of a
	// hash or set the batch deletes (dropFields).
	e *Engine
	// inlineMax is the engine's Options.InlineValueMax.
	inlineMax int
	// txn is set for a transaction's batch (NewTxnBatch), whose commands
	// read what the earlier ones wrote. subkeys then holds the chunk and
	// member (field) records it wrote (nil value: deleted), by their
	// Pebble keys, for its later commands' reads, and ahead the list
	// elements read from the database ahead of the pops that take them
	// (ReadListAhead, TakeField).
	txn     bool
	subkeys map[string][]byte
	ahead   map[string][]byte

	// A transaction's batch holds each key's metadata record back until
	// it commits (writeHeld), so that a key its commands write again and
	// again gets one record, not one each: every record is a memtable
	// insert. held lists the rows whose records wait, in order, at most
	// maxHeld. A record that an events record precedes (eventsNext) is
	// written at once: replicas take events for the metadata record that
	// follows them.
	held       []int
	eventsNext bool

	// quiet is set while the context records are added under is quiet
	// (LogFlagQuiet).
	quiet bool

	// Origin is the ID of the client whose command writes the batch, 0 for
	// the server's own writes (expiry); set it before adding records. The
	// write observer hears it with each key (CLIENT TRACKING's NOLOOP
	// skips a client's own writes), also when batches of several clients
	// share a commit.
	Origin int64
}

// rowUpdate is a metadata record a batch writes: key k and value v (nil
// when deleted), the Origin of the batch that wrote it, and whether its
// context was quiet (the write observer skips it).
type rowUpdate struct {
	k, v   []byte
	origin int64
	quiet  bool
}

// nsCount is a key count, or a change of one, in one namespace. A batch
// almost always touches one namespace, so batches keep these in slices
// searched linearly, which cost less than maps.
type nsCount struct {
	ns string
	n  KeyCount
}

// setCount sets the entry of ns in counts to n, appending one if needed.
func setCount(counts []nsCount, ns string, n KeyCount) []nsCount {
	for i := range counts {
		if counts[i].ns == ns {
			counts[i].n = n
			return counts
		}
	}
	return append(counts, nsCount{ns, n})
}

// NewBatch starts a batch whose first record is the LogData l.
func (e *Engine) NewBatch(l LogData) *Batch {
	b := e.NewMultiBatch()
	b.Context(l)
	return b
}

// NewRawBatch starts a batch whose first record is the given encoded
// LogData (for records with payloads, such as EncodePublish's). Such a
// batch is always committed alone.
func (e *Engine) NewRawBatch(logData []byte) *Batch {
	b := e.NewMultiBatch()
	_ = b.b.LogData(logData, nil)
	b.solo = true
	return b
}

// Publish adds a PUBLISH's record (EncodePublish) at the current position
// of a transaction's batch: replicas deliver the message in order with the
// events of the records around it (notify.Extract). A PUBLISH outside a
// transaction has a batch of its own (NewRawBatch).
func (b *Batch) Publish(channel, message []byte) {
	_ = b.b.LogData(EncodePublish(channel, message), nil)
}

// Context adds the command context l at the current position (each
// command of a transaction's batch adds its own). The records after a
// quiet context (LogFlagQuiet), up to the next context, are quiet.
func (b *Batch) Context(l LogData) {
	quiet := l.Flags&LogFlagQuiet != 0
	if quiet != b.quiet {
		// Replicas take a record's quietness from the context before it.
		b.writeHeld()
	}
	_ = b.b.LogData(l.Encode(), nil)
	b.quiet = quiet
	b.eventsNext = false
}

// LogData adds an encoded LogData record other than a context, an events
// record (notify.EncodeRecordEvents), at the current position: the next
// metadata record the batch writes is the key whose events it names, and
// is written right after it.
func (b *Batch) LogData(p []byte) {
	_ = b.b.LogData(p, nil)
	b.eventsNext = true
}

// NewMultiBatch starts a batch without a LogData record, for a
// transaction: each command in it adds its own context with LogData
// before its records.
func (e *Engine) NewMultiBatch() *Batch {
	e.dbMu.RLock()
	defer e.dbMu.RUnlock()
	b := &Batch{b: e.db.NewBatch(), e: e, inlineMax: e.InlineValueMax()}
	b.rows = b.rows0[:0]
	return b
}

// KeyDelta returns how the batch changes the key count of ns so far, and
// whether it flushes ns (the count then starts from zero).
func (b *Batch) KeyDelta(ns string) (delta int64, flushed bool) {
	for _, d := range b.deltas {
		if d.ns == ns {
			delta = d.n.Keys
		}
	}
	return delta, slices.Contains(b.flush, ns)
}

// Discard releases a batch that will not be committed.
func (b *Batch) Discard() { b.b.Close() }

// addDelta adds the change d to the batch's change of ns's key count.
func (b *Batch) addDelta(ns string, d KeyCount) {
	for i := range b.deltas {
		if b.deltas[i].ns == ns {
			b.deltas[i].n.add(d)
			return
		}
	}
	b.deltas = append(b.deltas, nsCount{ns, d})
}

// PutMeta writes m as the metadata of key in ns. old is the key's current
// metadata as read under its lock (nil when the key does not exist, expired
// or not), so the key count, the expiry index and value records stay
// exact.
//
// A hash's or a set's m names its members by ID: the same as old's keeps
// them, and old's go when they are others.
//
// A string value longer than the batch's inline maximum is written in
// chunk records, and the metadata records its length. A string m that is
// External with a nil Value (its metadata as read, the value not loaded)
// writes the metadata alone: the value records it names stay (old's, the
// source's of a RENAME, or those Engine.WriteRange just wrote), and old's
// go if they are others. PutMeta returns the metadata as written (its
// Value as given).
func (b *Batch) PutMeta(ns string, key []byte, old *Metadata, m Metadata) Metadata {
	switch {
	case m.External() && m.Value == nil:
		if old != nil && (old.HasMembers() || old.External() && (old.Chunked() != m.Chunked() || old.Version != m.Version)) {
			b.dropValue(ns, key, old, 0)
		}
	case m.Type == TypeString && len(m.Value) > b.inlineMax:
		m.Flags |= FlagExternalValue | FlagChunkedValue
		m.Size = uint64(len(m.Value))
		if old != nil && old.Chunked() {
			m.Version = old.Version // its chunks are rewritten, those past m's dropped
			b.dropValue(ns, key, old, chunkCount(m.Size))
		} else {
			m.Version = newValueID()
			b.dropValue(ns, key, old, 0)
		}
		b.putChunks(ns, m.Version, m.Value)
	default:
		if m.Type == TypeString {
			m.Flags &^= FlagExternalValue | FlagChunkedValue
			m.Size, m.Version = 0, 0
		}
		// A collection's new metadata keeps its members (same ID), or
		// names members the batch just wrote under a new one (COPY,
		// RESTORE).
		if m.Type == TypeString || old == nil || old.Type != m.Type || old.Version != m.Version {
			b.dropValue(ns, key, old, 0)
		}
	}
	var d KeyCount
	if old == nil {
		d.Keys = 1
	} else if old.ExpireAt != 0 && old.ExpireAt != m.ExpireAt {
		d.Expires--
		d.expireSum.subInt(old.ExpireAt)
		_ = b.b.Delete(expireKey(ns, old.ExpireAt, key), nil)
	}
	if m.ExpireAt != 0 && (old == nil || old.ExpireAt != m.ExpireAt) {
		d.Expires++
		d.expireSum.addInt(m.ExpireAt)
		_ = b.b.Set(expireKey(ns, m.ExpireAt, key), nil, nil)
		b.earliest = earliestExpire(b.earliest, m.ExpireAt)
	}
	if d != (KeyCount{}) {
		b.addDelta(ns, d)
	}
	// One buffer holds the key and the value, for Pebble (which copies
	// them into the batch) and the row cache (which copies them too).
	kv := appendMetaKey(make([]byte, 0, 2+len(ns)+len(key)+m.encodedLen()), ns, key)
	klen := len(kv)
	kv = m.encode(kv)
	b.putMetaRecord(kv[:klen:klen], kv[klen:])
	return m
}

// putMetaRecord adds metadata key k's record: v, or a deletion when v is
// nil. A transaction's batch holds a Set back (see held) unless an
// events record waits for it; any other record of k replaces the one held.
func (b *Batch) putMetaRecord(k, v []byte) {
	row := rowUpdate{k: k, v: v, origin: b.Origin, quiet: b.quiet}
	h := slices.IndexFunc(b.held, func(i int) bool { return string(b.rows[i].k) == string(k) })
	if b.txn && v != nil && !b.eventsNext {
		if h >= 0 {
			b.rows[b.held[h]] = row
			return
		}
		if len(b.held) == maxHeld {
			b.writeHeld() // which bounds the search above
		}
		b.held = append(b.held, len(b.rows))
	} else {
		if h >= 0 {
			b.held = slices.Delete(b.held, h, h+1)
		}
		b.eventsNext = false
		if v == nil {
			_ = b.b.Delete(k, nil)
		} else {
			_ = b.b.Set(k, v, nil)
		}
	}
	b.rows = append(b.rows, row)
}

// maxHeld is the most metadata records a batch holds back.
const maxHeld = 32

// writeHeld adds the metadata records the batch holds back.
func (b *Batch) writeHeld() {
	for _, i := range b.held {
		_ = b.b.Set(b.rows[i].k, b.rows[i].v, nil)
	}
	b.held = b.held[:0]
}

// DeleteKey removes key from ns. old is its current metadata as read under
// its lock; the key must exist.
func (b *Batch) DeleteKey(ns string, key []byte, old Metadata) {
	b.dropValue(ns, key, &old, 0)
	b.ForgetKey(ns, key, old)
}

// ForgetKey is DeleteKey for a key whose chunked value another key takes
// over (RENAME): the value's records stay.
func (b *Batch) ForgetKey(ns string, key []byte, old Metadata) {
	d := KeyCount{Keys: -1}
	if old.ExpireAt != 0 {
		d.Expires = -1
		d.expireSum.subInt(old.ExpireAt)
		_ = b.b.Delete(expireKey(ns, old.ExpireAt, key), nil)
	}
	b.addDelta(ns, d)
	b.putMetaRecord(metaKey(ns, key), nil)
}

// MarkKey writes a deletion of key's metadata record that a later record
// of the batch overrides: it changes nothing, but events written before
// it (LogData records) belong to it. RENAME uses one to publish "new" for
// its destination before "rename_from" for its source, as Redis does.
func (b *Batch) MarkKey(ns string, key []byte) {
	b.putMetaRecord(metaKey(ns, key), nil)
}

// deleteExpireEntry removes a stale expiry-index entry.
func (b *Batch) deleteExpireEntry(ns string, ms int64, key []byte) {
	_ = b.b.Delete(expireKey(ns, ms, key), nil)
}

// FlushNamespace removes every key of ns.
func (b *Batch) FlushNamespace(ns string) {
	b.writeHeld() // the flush removes them with the rest
	for _, p := range [][]byte{metaPrefix(ns), subkeyPrefix(ns), valuePrefix(ns), chunkPrefix(ns), expirePrefix(ns)} {
		_ = b.b.DeleteRange(p, prefixEnd(p), nil)
	}
	for _, p := range []string{string(chunkPrefix(ns)), string(subkeyPrefix(ns))} {
		for k := range b.subkeys {
			if strings.HasPrefix(k, p) {
				delete(b.subkeys, k)
			}
		}
	}
	b.flush = append(b.flush, ns)
	// Earlier records of the batch for ns are gone: their count changes
	// with them, and the cache is cleared when a flush commits (the write
	// observer still hears of their keys, as Redis's WATCH does).
	b.deltas = slices.DeleteFunc(b.deltas, func(d nsCount) bool { return d.ns == ns })
	b.fresh = len(b.rows)
}

// PutNamespace records namespace ns with its token.
func (b *Batch) PutNamespace(ns, token string) {
	_ = b.b.Set(namespaceKey(ns), []byte(token), nil)
	if b.nsSet == nil {
		b.nsSet = map[string]string{}
	}
	b.nsSet[ns] = token
}

// DeleteNamespace forgets namespace ns (its keys stay until flushed).
func (b *Batch) DeleteNamespace(ns string) {
	_ = b.b.Delete(namespaceKey(ns), nil)
	b.nsDel = append(b.nsDel, ns)
}

// PutLibrary records the code of function library name, replacing any
// library of that name.
func (b *Batch) PutLibrary(name string, code []byte) {
	_ = b.b.Set(libraryKey(name), code, nil)
}

// DeleteLibrary removes function library name.
func (b *Batch) DeleteLibrary(name string) {
	_ = b.b.Delete(libraryKey(name), nil)
}

// ErrInjectedFault is what the test-only commit fault hook returns.
var ErrInjectedFault = errors.New("storage: injected commit fault")

// maxGroupBytes bounds the size of the batch a commit group merges its
// writers' batches into, so that it never becomes one of Pebble's large
// (flushable) batches.
const maxGroupBytes = 256 << 10

// commitQueue is where concurrent Commit calls meet. The first caller to
// find no commit in progress becomes the leader: it lets the other
// runnable writers queue their batches, then commits everything queued as
// few Pebble batches as it can, hands leadership to the next waiter and
// wakes its followers. Writers therefore share a Pebble commit, a WAL
// write, a replication offset and (with sync on) an fsync.
type commitQueue struct {
	mu      sync.Mutex
	waiting []*commitWaiter
	leading bool // a leader is between taking the queue and handing over
}

// commitWaiter is one Commit call in the queue.
type commitWaiter struct {
	b      *Batch
	offset uint64
	err    error
	lead   bool          // woken to lead rather than with a result
	wake   chan struct{} // buffered: the waker never blocks
	runs   []commitRun   // a leader's runs, kept for reuse
	// spare is an empty queue buffer: a leader leaves it as the queue's
	// next buffer and keeps the one it took (its group) in its place.
	spare []*commitWaiter
}

// commitRun is a run of a leader's group committed as one Pebble batch.
type commitRun struct {
	ws     []*commitWaiter
	pb     *pebble.Batch // to SyncWait, with syncOn and a successful apply
	offset uint64        // pb's offset
}

// waiters recycles commitWaiters (and their channels). A waiter returns to
// the pool when its Commit returns: by then the leader that woke it is done
// with it, as a leader touches a follower only before waking it.
var waiters = sync.Pool{New: func() any { return &commitWaiter{wake: make(chan struct{}, 1)} }}

// Commit applies the batch atomically with the next replication offset and
// the updated key counts, then calls the commit hook, all in one critical
// section so that log order equals offset order. Batches of concurrent
// writers may be merged into one (see commitQueue): they then share an
// offset, and the commit hook and replicas see one batch carrying each
// writer's records after its own LogData. Batches that flush or change
// namespaces, and PUBLISH records, are committed alone. With sync on,
// Commit waits for the WAL fsync after leaving the section, so writers
// also share fsyncs. It returns the batch's offset. An error means nothing
// of the batch was applied (ErrClosed during shutdown, or an injected
// fault); Pebble treats a failed WAL write as fatal and exits the process.
func (e *Engine) Commit(b *Batch) (uint64, error) {
	b.writeHeld()
	w := waiters.Get().(*commitWaiter)
	w.b = b
	var group []*commitWaiter
	defer func() {
		w.b, w.offset, w.err, w.lead = nil, 0, nil, false
		clear(w.runs)
		w.runs = w.runs[:0]
		if group != nil {
			clear(group[:cap(group)])
			w.spare = group[:0]
		}
		waiters.Put(w)
	}()
	q := &e.queue
	q.mu.Lock()
	q.waiting = append(q.waiting, w)
	if q.leading {
		q.mu.Unlock()
		<-w.wake
		if !w.lead {
			return w.offset, w.err
		}
	} else {
		q.leading = true
		q.mu.Unlock()
	}
	// Leading: writers that are runnable now get to queue their batches
	// first, which is what makes groups form on a single CPU.
	runtime.Gosched()
	q.mu.Lock()
	group = q.waiting
	q.waiting, w.spare = w.spare, nil
	q.mu.Unlock()

	// Commit the group in runs, hand leadership to the next waiter (whose
	// group can be applied while this one's fsync is awaited), then wait
	// for the fsyncs and wake the followers with their results.
	syncOn := e.sync.Load()
	for rest := group; len(rest) > 0; {
		n := e.runLength(rest)
		w.runs = append(w.runs, e.commitRun(rest[:n], syncOn))
		rest = rest[n:]
	}

	q.mu.Lock()
	if len(q.waiting) > 0 {
		next := q.waiting[0]
		next.lead = true
		next.wake <- struct{}{}
	} else {
		q.leading = false
	}
	q.mu.Unlock()

	for _, r := range w.runs {
		if r.pb != nil {
			err := r.pb.SyncWait()
			r.pb.Close()
			if err != nil {
				for _, f := range r.ws {
					if f.err == nil {
						f.offset, f.err = 0, fmt.Errorf("storage: sync commit %d: %w", f.offset, err)
					}
				}
			} else {
				e.noteSynced(r.offset)
			}
		}
		for _, f := range r.ws {
			if f != w {
				f.wake <- struct{}{}
			}
		}
	}
	return w.offset, w.err
}

// runLength returns how many batches at the head of group commit as one:
// a run of mergeable batches within maxGroupBytes, or one batch.
func (e *Engine) runLength(group []*commitWaiter) int {
	if !group[0].b.mergeable() {
		return 1
	}
	size := len(group[0].b.b.Repr())
	n := 1
	for n < len(group) && group[n].b.mergeable() {
		size += len(group[n].b.b.Repr())
		if size > maxGroupBytes {
			break
		}
		n++
	}
	return n
}

// mergeable reports whether the batch may share a commit with others: it
// neither flushes nor changes namespaces (those reset in-memory state) nor
// is a PUBLISH's own batch (NewRawBatch), which commits alone. (Replicas
// read a PUBLISH record anywhere in a batch, so the last could merge.)
func (b *Batch) mergeable() bool {
	return !b.solo && len(b.flush) == 0 && len(b.nsSet) == 0 && len(b.nsDel) == 0
}

// commitRun commits the batches of ws as one, setting each waiter's offset
// or error. With syncOn the run it returns holds the applied Pebble batch,
// which the caller must SyncWait and Close after leaving the critical
// section; otherwise every batch is closed.
func (e *Engine) commitRun(ws []*commitWaiter, syncOn bool) commitRun {
	run := commitRun{ws: ws}
	e.commitMu.Lock()
	defer e.commitMu.Unlock()
	var b *Batch
	for i, w := range ws {
		switch {
		case e.closed.Load():
			w.err = ErrClosed
		case e.fault != nil:
			if err := e.fault(w.b); err != nil {
				w.err = fmt.Errorf("storage: commit %d: %w", e.offset+1, err)
			}
		}
		if w.err != nil {
			w.b.b.Close()
			continue
		}
		if b == nil {
			b = w.b
			// Room for the rest at once rather than doubling b's buffer
			// as they come, which matters when one holds a large value.
			rest := 0
			for _, o := range ws[i+1:] {
				rest += len(o.b.b.Repr())
			}
			b.reserve(rest)
		} else {
			b.merge(w.b)
		}
	}
	if b == nil {
		return run
	}
	offset := e.offset + 1
	// Pebble copies keys and values into the batch: the scratch buffer is
	// free again after each call.
	e.scratch = binary.BigEndian.AppendUint64(e.scratch[:0], offset)
	_ = b.b.Set(keyReplOffset, e.scratch, nil)
	e.pending = e.pendingCounts(e.pending[:0], b)
	for _, c := range e.pending {
		e.scratch = appendNS(append(e.scratch[:0], keyCountPrefix...), c.ns)
		k := len(e.scratch)
		if c.n == (KeyCount{}) {
			_ = b.b.Delete(e.scratch, nil)
		} else {
			e.scratch = c.n.append(e.scratch)
			_ = b.b.Set(e.scratch[:k], e.scratch[k:], nil)
		}
	}
	// The hook gets the batch's bytes as they are before Apply: b.b.Repr()
	// afterwards is not the batch (Pebble lets go of a large batch's bytes
	// when it makes them a memtable of their own, and Repr then returns an
	// empty batch). They stay valid, unchanged but for the sequence number
	// Pebble writes into the header, until b.b is closed, which is after
	// the hook returns.
	repr := b.b.Repr()
	if len(b.flush) > 0 {
		e.observeFlush(b.flush, e.present)
	}
	if err := e.apply(b.b, syncOn); err != nil {
		b.b.Close()
		for _, w := range ws {
			if w.err == nil {
				w.err = fmt.Errorf("storage: commit %d: %w", offset, err)
			}
		}
		return run
	}
	e.applied(offset, repr, b.rows, b.fresh, len(b.flush) > 0, b.flush, e.pending, b.nsSet, b.nsDel)
	if b.earliest != 0 {
		e.noteExpireWritten(b.earliest)
	}
	for _, w := range ws {
		if w.err == nil {
			w.offset = offset
		}
	}
	if syncOn {
		run.pb, run.offset = b.b, offset
		return run
	}
	b.b.Close()
	return run
}

// applied brings the engine's in-memory state up to a batch just applied
// at offset (the row cache, key counts, namespaces), tells the write
// observer and calls the commit hook with repr; the caller holds commitMu.
// rows[fresh:] are the batch's records after its last flush, if flush is
// set; flushed names the namespaces emptied. Commit and ApplyReplicated
// share it.
func (e *Engine) applied(offset uint64, repr []byte, rows []rowUpdate, fresh int, flush bool, flushed []string,
	counts []nsCount, nsSet map[string]string, nsDel []string) {
	e.offset = offset
	if flush {
		e.rows.clear()
		e.members.clear()
	}
	e.cacheMembers(repr, e.memberMask)
	for _, r := range rows[fresh:] {
		e.rows.put(r.k, r.v)
	}
	e.applyCounts(counts)
	e.applyNamespaces(nsSet, nsDel)
	e.observe(rows, fresh, flush, flushed)
	if e.hook != nil {
		e.hook(offset, repr)
	}
}

// earliestExpire returns the earlier of two expiry times, 0 being none.
func earliestExpire(a, b int64) int64 {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

// reserveMin is the least room reserve makes: below it, Pebble's doubling
// of a batch's buffer costs less than reserving (which rescans the batch).
const reserveMin = 64 << 10

// reserve makes room in b for n more bytes of records, so that a large
// write grows the Pebble batch's buffer once instead of doubling it step by
// step (each step copies what the batch holds and leaves the old buffer to
// the garbage collector: a 100 MB value cost 255 MB of buffers).
func (b *Batch) reserve(n int) {
	repr := b.b.Repr()
	if n < reserveMin || cap(repr)-len(repr) >= n {
		return
	}
	grown := make([]byte, len(repr), len(repr)+n)
	copy(grown, repr)
	// SetRepr fails only on a repr shorter than a batch header, which
	// Repr never returns.
	_ = b.b.SetRepr(grown)
}

// merge appends o's records to b, and what they change, and closes o.
func (b *Batch) merge(o *Batch) {
	_ = b.b.Apply(o.b, nil)
	b.earliest = earliestExpire(b.earliest, o.earliest)
	for _, d := range o.deltas {
		b.addDelta(d.ns, d.n)
	}
	b.rows = append(b.rows, o.rows...)
	o.b.Close()
}

// apply hands a batch to Pebble; the caller holds commitMu. With syncOn
// the caller must SyncWait after leaving the critical section.
// It marks the member cache's shards the batch writes (beginMembers)
// until applied, or until it fails.
func (e *Engine) apply(b *pebble.Batch, syncOn bool) (err error) {
	e.noteApply()
	e.applying.Store(true)
	defer e.applying.Store(false)
	e.memberMask = e.beginMembers(b.Repr())
	defer func() {
		if err != nil {
			e.members.endWrites(e.memberMask)
		}
	}()
	e.dbMu.RLock()
	defer e.dbMu.RUnlock()
	if syncOn {
		return e.db.ApplyNoSyncWait(b, pebble.Sync)
	}
	return e.db.Apply(b, pebble.NoSync)
}

// pendingCounts appends to dst the key counts the batch leaves behind,
// one per namespace it touches, and returns the result.
func (e *Engine) pendingCounts(dst []nsCount, b *Batch) []nsCount {
	if len(b.deltas) == 0 && len(b.flush) == 0 {
		return dst
	}
	for _, ns := range b.flush {
		dst = setCount(dst, ns, KeyCount{})
	}
	e.countsMu.RLock()
	for _, d := range b.deltas {
		n := e.counts[d.ns]
		if slices.Contains(b.flush, d.ns) {
			n = KeyCount{} // the changes after the flush count from zero
		}
		n.add(d.n)
		dst = setCount(dst, d.ns, n)
	}
	e.countsMu.RUnlock()
	return dst
}

// applyCounts makes counts the engine's key counts of their namespaces
// (a zero count removes the namespace's entry).
func (e *Engine) applyCounts(counts []nsCount) {
	if len(counts) == 0 {
		return
	}
	e.countsMu.Lock()
	for _, c := range counts {
		if c.n == (KeyCount{}) {
			delete(e.counts, c.ns)
		} else {
			e.counts[c.ns] = c.n
		}
	}
	e.countsMu.Unlock()
}

// applyNamespaces updates the in-memory namespace table after a commit.
func (e *Engine) applyNamespaces(set map[string]string, del []string) {
	if len(set) == 0 && len(del) == 0 {
		return
	}
	e.nsMu.Lock()
	for _, ns := range del {
		delete(e.namespaces, ns)
	}
	for ns, t := range set {
		e.namespaces[ns] = t
	}
	e.nsMu.Unlock()
}
