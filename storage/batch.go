package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// Batch collects the records of one command's write. It begins with the
// command's LogData and is committed with Engine.Commit, which adds the
// replication offset and key-count records. A Batch is owned by the
// goroutine that created it and is spent by Commit, whatever its result.
type Batch struct {
	b      *pebble.Batch
	deltas map[string]KeyCount // key-count change per namespace
	flush  []string            // namespaces whose count resets to zero
	nsSet  map[string]string
	nsDel  []string
	// rows are the metadata records the batch writes (nil value: deleted),
	// for the row cache once the batch is applied.
	rows []rowUpdate
}

type rowUpdate struct{ k, v []byte }

// NewBatch starts a batch whose first record is the LogData l.
func (e *Engine) NewBatch(l LogData) *Batch { return e.NewRawBatch(l.Encode()) }

// NewRawBatch starts a batch whose first record is the given encoded
// LogData (for records with payloads, such as EncodePublish's).
func (e *Engine) NewRawBatch(logData []byte) *Batch {
	e.dbMu.RLock()
	b := &Batch{b: e.db.NewBatch()}
	e.dbMu.RUnlock()
	_ = b.b.LogData(logData, nil)
	return b
}

// LogData adds a LogData record (a command context in a transaction's
// batch, or an events record) at the current position.
func (b *Batch) LogData(p []byte) { _ = b.b.LogData(p, nil) }

// NewMultiBatch starts a batch without a LogData record, for a
// transaction: each command in it adds its own context with LogData
// before its records.
func (e *Engine) NewMultiBatch() *Batch {
	e.dbMu.RLock()
	defer e.dbMu.RUnlock()
	return &Batch{b: e.db.NewBatch()}
}

// KeyDelta returns how the batch changes the key count of ns so far, and
// whether it flushes ns (the count then starts from zero).
func (b *Batch) KeyDelta(ns string) (delta int64, flushed bool) {
	return b.deltas[ns].Keys, slices.Contains(b.flush, ns)
}

// Discard releases a batch that will not be committed.
func (b *Batch) Discard() { b.b.Close() }

func (b *Batch) addDelta(ns string, keys, expires int64) {
	if b.deltas == nil {
		b.deltas = map[string]KeyCount{}
	}
	d := b.deltas[ns]
	d.Keys += keys
	d.Expires += expires
	b.deltas[ns] = d
}

// PutMeta writes m as the metadata of key in ns. old is the key's current
// metadata as read under its lock (nil when the key does not exist, expired
// or not), so the key count and the expiry index stay exact.
func (b *Batch) PutMeta(ns string, key []byte, old *Metadata, m Metadata) {
	var keys, expires int64
	if old == nil {
		keys = 1
	} else if old.ExpireAt != 0 {
		expires--
		if old.ExpireAt != m.ExpireAt {
			_ = b.b.Delete(expireKey(ns, old.ExpireAt, key), nil)
		}
	}
	if m.ExpireAt != 0 {
		expires++
	}
	if keys != 0 || expires != 0 {
		b.addDelta(ns, keys, expires)
	}
	if m.ExpireAt != 0 && (old == nil || old.ExpireAt != m.ExpireAt) {
		_ = b.b.Set(expireKey(ns, m.ExpireAt, key), nil, nil)
	}
	mk, v := metaKey(ns, key), m.encode(nil)
	_ = b.b.Set(mk, v, nil)
	b.rows = append(b.rows, rowUpdate{mk, v})
}

// DeleteKey removes key from ns. old is its current metadata as read under
// its lock; the key must exist.
func (b *Batch) DeleteKey(ns string, key []byte, old Metadata) {
	if old.ExpireAt != 0 {
		b.addDelta(ns, -1, -1)
		_ = b.b.Delete(expireKey(ns, old.ExpireAt, key), nil)
	} else {
		b.addDelta(ns, -1, 0)
	}
	mk := metaKey(ns, key)
	_ = b.b.Delete(mk, nil)
	b.rows = append(b.rows, rowUpdate{mk, nil})
	// Collections keep members under subkeys; they go when their
	// metadata goes (orphaned versions are reclaimed later).
}

// deleteExpireEntry removes a stale expiry-index entry.
func (b *Batch) deleteExpireEntry(ns string, ms int64, key []byte) {
	_ = b.b.Delete(expireKey(ns, ms, key), nil)
}

// FlushNamespace removes every key of ns.
func (b *Batch) FlushNamespace(ns string) {
	for _, p := range [][]byte{metaPrefix(ns), subkeyPrefix(ns), expirePrefix(ns)} {
		_ = b.b.DeleteRange(p, prefixEnd(p), nil)
	}
	b.flush = append(b.flush, ns)
	// Earlier records of the batch for ns are gone: their count changes
	// with them, and the cache is cleared when a flush commits.
	delete(b.deltas, ns)
	b.rows = b.rows[:0]
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

// ErrInjectedFault is what the test-only commit fault hook returns.
var ErrInjectedFault = errors.New("storage: injected commit fault")

// Commit applies the batch atomically with the next replication offset and
// the updated key counts, then calls the commit hook, all in one critical
// section so that log order equals offset order. With sync on it waits for
// the WAL fsync after leaving the section, so concurrent writers share
// fsyncs. It returns the batch's offset. An error means nothing of the
// batch was applied (ErrClosed during shutdown, or an injected fault);
// Pebble treats a failed WAL write as fatal and exits the process.
func (e *Engine) Commit(b *Batch) (uint64, error) {
	syncOn := e.sync.Load()
	e.commitMu.Lock()
	if e.closed.Load() {
		e.commitMu.Unlock()
		b.b.Close()
		return 0, ErrClosed
	}
	if e.fault != nil {
		if err := e.fault(b); err != nil {
			e.commitMu.Unlock()
			b.b.Close()
			return 0, fmt.Errorf("storage: commit %d: %w", e.offset+1, err)
		}
	}
	offset := e.offset + 1
	_ = b.b.Set(keyReplOffset, binary.BigEndian.AppendUint64(nil, offset), nil)
	newCounts := e.pendingCounts(b)
	for ns, n := range newCounts {
		if n == (KeyCount{}) {
			_ = b.b.Delete(countKey(ns), nil)
		} else {
			_ = b.b.Set(countKey(ns), n.encode(), nil)
		}
	}
	// The hook's copy is taken before Apply: b.b's bytes are not reliable
	// afterwards (passing b.b.Repr() after Apply shipped batches without
	// their offset record to replicas).
	var repr []byte
	if e.hook != nil {
		repr = append([]byte(nil), b.b.Repr()...)
	}
	err := e.apply(b.b, syncOn)
	if err != nil {
		e.commitMu.Unlock()
		b.b.Close()
		return 0, fmt.Errorf("storage: commit %d: %w", offset, err)
	}
	e.offset = offset
	if len(b.flush) > 0 {
		e.rows.clear()
	}
	for _, r := range b.rows {
		e.rows.put(r.k, r.v)
	}
	e.applyCounts(newCounts)
	e.applyNamespaces(b.nsSet, b.nsDel)
	e.observe(b.rows, len(b.flush) > 0)
	if e.hook != nil {
		e.hook(offset, repr)
	}
	e.commitMu.Unlock()
	if syncOn {
		err = b.b.SyncWait()
	}
	b.b.Close()
	if err != nil {
		return 0, fmt.Errorf("storage: sync commit %d: %w", offset, err)
	}
	return offset, nil
}

// apply hands a batch to Pebble; the caller holds commitMu. With syncOn
// the caller must SyncWait after leaving the critical section.
func (e *Engine) apply(b *pebble.Batch, syncOn bool) error {
	e.dbMu.RLock()
	defer e.dbMu.RUnlock()
	if syncOn {
		return e.db.ApplyNoSyncWait(b, pebble.Sync)
	}
	return e.db.Apply(b, pebble.NoSync)
}

// pendingCounts returns the key counts the batch leaves behind, for the
// namespaces it touches.
func (e *Engine) pendingCounts(b *Batch) map[string]KeyCount {
	if len(b.deltas) == 0 && len(b.flush) == 0 {
		return nil
	}
	out := make(map[string]KeyCount, len(b.deltas)+len(b.flush))
	e.countsMu.RLock()
	for _, ns := range b.flush {
		out[ns] = KeyCount{}
	}
	for ns, d := range b.deltas {
		n, flushed := out[ns]
		if !flushed {
			n = e.counts[ns]
		}
		n.Keys += d.Keys
		n.Expires += d.Expires
		out[ns] = n
	}
	e.countsMu.RUnlock()
	return out
}

func (e *Engine) applyCounts(c map[string]KeyCount) {
	if len(c) == 0 {
		return
	}
	e.countsMu.Lock()
	for ns, n := range c {
		if n == (KeyCount{}) {
			delete(e.counts, ns)
		} else {
			e.counts[ns] = n
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
