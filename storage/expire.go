package storage

import (
	"fmt"
	"sort"
)

// expireRescan is how often (in ms of the callers' clock) ExpireSlice
// scans each namespace's expiry index from its start rather than from
// where its last scan ended.
const expireRescan = 10_000

// ExpireSlice reclaims up to limit expired keys whose expiry-index entries
// are due at nowMs, across all namespaces, and returns how many keys it
// deleted and whether due entries remain. Each key is re-checked under its
// lock before it is deleted (a SET may have just replaced it); the
// deletions of a namespace commit as one batch with a LogData CmdExpired
// record for each key (expireKeys), so replicas apply exactly the deletes
// the primary made. Only a primary calls it. ev, if
// not nil, annotates and reports the deletions for keyspace events.
//
// Each entry it handles goes from the index, but stays in Pebble as a
// tombstone until compactions drop it, and a scan from the index's start
// steps over every tombstone: with keys expiring by thousands, each slice
// took milliseconds. A scan therefore starts at the time of the last entry
// the previous one handled, or earlier when a commit has written an entry
// behind that time since (an absolute expiry time in the past, such as
// SET ... EXAT of a past second: Redis reclaims such a key at once too),
// and from the start once per expireRescan (for a clock stepped back).
func (e *Engine) ExpireSlice(nowMs int64, limit int, ev *ExpireEvents) (deleted int, more bool, err error) {
	e.expireMu.Lock()
	defer e.expireMu.Unlock()
	if e.expireFrom == nil || nowMs >= e.expireRescanAt || nowMs < e.expireRescanAt-expireRescan {
		e.expireFrom = map[string]int64{}
		e.expireRescanAt = nowMs + expireRescan
	}
	if floor := e.expireFloor.Swap(0); floor != 0 {
		for ns, from := range e.expireFrom {
			e.expireFrom[ns] = min(from, floor)
		}
	}
	counts := e.KeyCounts()
	nss := make([]string, 0, len(counts))
	for ns, n := range counts {
		if n.Expires > 0 {
			nss = append(nss, ns)
		}
	}
	sort.Strings(nss)
	for _, ns := range nss {
		var batch []dueEntry
		err := e.ScanExpiring(ns, e.expireFrom[ns], nowMs, func(ms int64, key []byte) bool {
			if len(batch) == limit-deleted {
				more = true
				return false
			}
			batch = append(batch, dueEntry{ms, append([]byte(nil), key...)})
			return true
		})
		if err != nil {
			return deleted, more, err
		}
		if len(batch) == 0 {
			continue
		}
		n, err := e.expireKeys(ns, batch, nowMs, ev)
		deleted += n
		if err != nil {
			return deleted, more, err
		}
		e.expireFrom[ns] = batch[len(batch)-1].ms
		if deleted >= limit {
			return deleted, true, nil
		}
	}
	return deleted, more, nil
}

// noteExpireWritten records that a commit wrote an expiry-index entry at
// ms, so that the next ExpireSlice scans from there if that is behind
// where it would resume.
func (e *Engine) noteExpireWritten(ms int64) {
	for {
		cur := e.expireFloor.Load()
		if cur != 0 && cur <= ms || e.expireFloor.CompareAndSwap(cur, ms) {
			return
		}
	}
}

// dueEntry is an expiry-index entry found due: the key and its time.
type dueEntry struct {
	ms  int64
	key []byte
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

// expireKeys deletes the keys of due in ns that are still expired with
// their indexed times, and drops the index entries that outlived their
// key's TTL, all in one commit: the batch carries one LogData CmdExpired
// record before each key's records, as a transaction's does, so replicas
// apply it atomically and reconstruct each key's events. It holds every
// key's lock from the re-check to the events and returns how many keys it
// deleted.
func (e *Engine) expireKeys(ns string, due []dueEntry, nowMs int64, ev *ExpireEvents) (int, error) {
	keys := make([][]byte, len(due))
	for i, d := range due {
		keys[i] = d.key
	}
	unlock := e.Locks.Lock(ns, keys...)
	defer unlock()
	b := e.NewMultiBatch()
	records := 0
	var deleted [][]byte
	for _, d := range due {
		m, found, err := e.GetMeta(ns, d.key)
		if err != nil {
			b.Discard()
			return 0, err
		}
		l := LogData{Type: m.Type, Cmd: CmdExpired}
		switch {
		case found && m.ExpireAt == d.ms && m.Expired(nowMs):
			var rec []byte
			if ev != nil && ev.Record != nil {
				rec = ev.Record()
			}
			if rec != nil {
				l.Flags |= LogFlagNotify
			}
			b.Context(l)
			if rec != nil {
				b.LogData(rec)
			}
			b.DeleteKey(ns, d.key, m)
			deleted = append(deleted, d.key)
		case found && m.ExpireAt == d.ms:
			continue // not due yet after all
		default:
			// The index entry outlived its key's TTL: drop it alone.
			b.Context(l)
			b.deleteExpireEntry(ns, d.ms, d.key)
		}
		records++
	}
	if records == 0 {
		b.Discard()
		return 0, nil
	}
	if _, err := e.Commit(b); err != nil {
		return 0, fmt.Errorf("storage: expire %d keys from %q: %w", len(deleted), due[0].key, err)
	}
	if ev != nil && ev.Deleted != nil {
		for _, k := range deleted {
			ev.Deleted(ns, k)
		}
	}
	return len(deleted), nil
}
