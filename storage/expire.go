package storage

import (
	"errors"
	"fmt"
	"sort"

	"github.com/cockroachdb/pebble/v2"
)

// ExpireSlice reclaims up to limit expired keys whose expiry-index entries
// are due at nowMs, across all namespaces, and returns how many keys it
// deleted and whether due entries remain. Each key is re-checked under its
// lock before it is deleted (a SET may have just replaced it), and each
// deletion is its own batch with LogData CmdExpired, so replicas apply
// exactly the deletes the primary made. Only a primary calls it. ev, if
// not nil, annotates and reports the deletions for keyspace events.
func (e *Engine) ExpireSlice(nowMs int64, limit int, ev *ExpireEvents) (deleted int, more bool, err error) {
	counts := e.KeyCounts()
	nss := make([]string, 0, len(counts))
	for ns, n := range counts {
		if n.Expires > 0 {
			nss = append(nss, ns)
		}
	}
	sort.Strings(nss)
	for _, ns := range nss {
		type due struct {
			ms  int64
			key []byte
		}
		var batch []due
		err := e.ScanExpiring(ns, nowMs, func(ms int64, key []byte) bool {
			if len(batch) == limit-deleted {
				more = true
				return false
			}
			batch = append(batch, due{ms, append([]byte(nil), key...)})
			return true
		})
		if err != nil {
			return deleted, more, err
		}
		for _, d := range batch {
			ok, err := e.expireKey(ns, d.key, d.ms, nowMs, ev)
			if err != nil {
				return deleted, more, err
			}
			if ok {
				deleted++
			}
		}
		if deleted >= limit {
			return deleted, true, nil
		}
	}
	return deleted, more, nil
}

// ExpireEvents connects ExpireSlice to keyspace notifications.
type ExpireEvents struct {
	// Record returns the LogData record to write just before a deleted
	// key's metadata record (nil for none); it is called for each
	// deletion, so it can follow configuration changes. A non-nil record
	// also sets the batch's LogFlagNotify.
	Record func() []byte
	// Deleted is called after each deletion has committed, while the
	// key's lock is still held.
	Deleted func(ns string, key []byte)
}

// expireKey deletes key if it is still expired with the indexed time ms,
// or drops the stale index entry otherwise. It reports whether a key was
// deleted.
func (e *Engine) expireKey(ns string, key []byte, ms, nowMs int64, ev *ExpireEvents) (bool, error) {
	unlock := e.Locks.Lock(ns, key)
	defer unlock()
	m, found, err := e.GetMeta(ns, key)
	if err != nil {
		return false, err
	}
	if found && m.ExpireAt == ms && m.Expired(nowMs) {
		var rec []byte
		if ev != nil && ev.Record != nil {
			rec = ev.Record()
		}
		l := LogData{Type: m.Type, Cmd: CmdExpired}
		if rec != nil {
			l.Flags |= LogFlagNotify
		}
		b := e.NewBatch(l)
		if rec != nil {
			b.LogData(rec)
		}
		b.DeleteKey(ns, key, m)
		if _, err := e.Commit(b); err != nil {
			return false, fmt.Errorf("storage: expire %q: %w", key, err)
		}
		if ev != nil && ev.Deleted != nil {
			ev.Deleted(ns, key)
		}
		return true, nil
	}
	if found && m.ExpireAt == ms {
		return false, nil // not due yet after all
	}
	// The index entry outlived its key's TTL: drop it alone.
	b := e.NewBatch(LogData{Type: m.Type, Cmd: CmdExpired})
	b.deleteExpireEntry(ns, ms, key)
	if _, err := e.Commit(b); err != nil && !errors.Is(err, pebble.ErrClosed) {
		return false, fmt.Errorf("storage: drop stale expiry entry of %q: %w", key, err)
	}
	return false, nil
}
