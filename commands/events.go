package commands

import (
	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/storage"
)

// Keyspace events follow one path. A command builds its batch with
// newBatch, which writes the LogData context; put and del add each key's
// record preceded by an events record naming what Redis publishes for it
// (only the classes this node's notify-keyspace-events enables at write
// time, so replicas can reconstruct them); the events are staged on the
// Ctx and move to the publish list when the batch commits; they are
// published in order when the command releases its key locks, after the
// commit and before anyone else can write those keys. A failed commit
// publishes nothing. Inside EXEC, or in a group of pipelined requests, one
// batch collects every command's records and its events wait for that
// batch's commit.

// eventClasses are the flags that enable some event; K and E only select
// channels.
const eventClasses = ^(notify.Keyspace | notify.Keyevent)

// newBatch returns the batch a write of cmd adds its records to, after its
// LogData context: a fresh one, or the shared batch of EXEC or of a
// pipelined group (c.txn). The
// notify bit is set when any event class is on at write time.
func (c *Ctx) newBatch(t storage.Type, cmd storage.Command) *storage.Batch {
	l := storage.LogData{Type: t, Cmd: cmd}
	if c.Env.Notify != nil && c.Env.Notify.Flags()&eventClasses != 0 {
		l.Flags |= storage.LogFlagNotify
	}
	return c.batchFor(l)
}

// batchFor returns the batch for a write whose context is l: a fresh one,
// or the shared batch of EXEC or of a pipelined group with l added.
func (c *Ctx) batchFor(l storage.LogData) *storage.Batch {
	if c.txn != nil {
		c.txn.b.Context(l)
		return c.txn.b
	}
	b := c.Env.Store.NewBatch(l)
	if c.Client != nil {
		b.Origin = c.Client.ID
	}
	return b
}

// put adds m as key's new metadata to b with the events the write
// publishes for key: "new" first when the key did not exist, then codes.
// k is the key's state as read under its lock. A transaction's later
// commands read the metadata as written (an out-of-line value's flag
// included, which a later write of the key needs as its old state), and
// so does the caller, from put's result.
func (c *Ctx) put(b *storage.Batch, key []byte, k *keyState, m storage.Metadata, codes ...notify.Code) storage.Metadata {
	var buf [4]notify.Code
	all := buf[:0]
	if !k.live {
		all = append(all, notify.CodeNew)
	}
	c.stage(b, key, append(all, codes...))
	m = b.PutMeta(c.ns(), key, k.old(), m)
	// A stream's waiters wake when a key is made (RENAME, COPY, RESTORE,
	// XGROUP CREATE ... MKSTREAM), as Redis's dbAdd signals it, and on
	// XADD and XGROUP DESTROY (which call keyWritten), not on its other
	// writes.
	if m.Type == storage.TypeList || m.Type == storage.TypeZSet || m.Type == storage.TypeStream && !k.live {
		c.keyWritten(m.Type, key)
	}
	if c.txn != nil {
		c.txn.put(c.ns(), key, m, c.valueHeld(key, k))
	}
	return m
}

// announce adds key's events codes to b without writing the key (a
// record that the key's later write in b overrides carries them), so
// that they come before the events of records written in between.
func (c *Ctx) announce(b *storage.Batch, key []byte, codes ...notify.Code) {
	c.stage(b, key, codes)
	b.MarkKey(c.ns(), key)
}

// del adds the deletion of key (k: its state as read under its lock) to b
// with the events it publishes.
func (c *Ctx) del(b *storage.Batch, key []byte, k *keyState, codes ...notify.Code) {
	c.remove(b, key, k, false, codes)
}

// moveFrom is del for RENAME's source, whose chunked value or hash
// fields the destination takes over: those records stay.
func (c *Ctx) moveFrom(b *storage.Batch, key []byte, k *keyState, codes ...notify.Code) {
	c.remove(b, key, k, true, codes)
}

// remove is del, which keeps the key's value records with keepValue.
func (c *Ctx) remove(b *storage.Batch, key []byte, k *keyState, keepValue bool, codes []notify.Code) {
	c.stage(b, key, codes)
	if keepValue {
		b.ForgetKey(c.ns(), key, k.m)
	} else {
		b.DeleteKey(c.ns(), key, k.m)
	}
	if c.txn != nil {
		c.txn.del(c.ns(), key)
	}
}

// flush adds the removal of every key of ns to b.
func (c *Ctx) flush(b *storage.Batch, ns string) {
	b.FlushNamespace(ns)
	if c.txn != nil {
		c.txn.flush()
	}
}

// stage records key's events for publication once b commits and writes
// the events record of the enabled ones before key's record.
func (c *Ctx) stage(b *storage.Batch, key []byte, codes []notify.Code) {
	if c.Env.Notify == nil || len(codes) == 0 {
		return
	}
	f := c.Env.Notify.Flags()
	var buf [4]notify.Code
	enabled := buf[:0]
	staged := &c.staged
	if c.txn != nil {
		staged = &c.txn.events
	}
	for _, code := range codes {
		*staged = append(*staged, code.Event(c.ns(), key))
		if f&code.Class() != 0 {
			enabled = append(enabled, code)
		}
	}
	if len(enabled) > 0 {
		b.LogData(notify.EncodeRecordEvents(enabled))
	}
}

// lookedUp accounts for a read of key that found it live or not, where
// Redis's lookupKeyRead would: it counts a keyspace hit or miss (INFO
// stats) and, for a miss, publishes "keymiss", a read event of this
// node's clients: never written to a batch or replicated. Writes that
// look a key up call neither, as Redis's lookupKeyWrite.
func (c *Ctx) lookedUp(key []byte, live bool) {
	if live {
		c.Env.Stats.KeyspaceHits.Add(1)
		return
	}
	c.Env.Stats.KeyspaceMisses.Add(1)
	if c.Env.Notify == nil || c.Env.Notify.Flags()&notify.KeyMiss == 0 {
		return
	}
	ev := notify.CodeKeyMiss.Event(c.ns(), key)
	switch {
	case c.txn != nil:
		c.txn.events = append(c.txn.events, ev) // in command order with the writes
	case c.locked:
		c.events = append(c.events, ev)
	default:
		c.Env.Notify.Emit(ev)
	}
}

// publishEvents emits the committed events in order, exactly once.
func (c *Ctx) publishEvents() {
	for _, ev := range c.events {
		c.Env.Notify.Emit(ev)
	}
	c.events = c.events[:0]
}

// Paused reports whether a CLIENT PAUSE is in effect; the active expiry
// cycle does not run while one is.
func (e *Env) Paused() bool { return e.pause.paused() }

// StopClientPause ends any CLIENT PAUSE for good: commands waiting for it
// are dropped unrun, and blocked commands (WAIT, see Ctx.block) give up.
// The server calls it when it stops.
func (e *Env) StopClientPause() { e.pause.stop() }

// ExpireSlice runs one slice of the active expiry cycle (a primary's
// server calls it): up to limit expired keys are deleted, each publishing
// "expired" after its commit and carrying it to replicas when the class is
// on at write time. It returns storage.Engine.ExpireSlice's results.
func (e *Env) ExpireSlice(nowMs int64, limit int) (deleted int, more bool, err error) {
	var ev *storage.ExpireEvents
	if e.Notify != nil {
		ev = &storage.ExpireEvents{
			Record: func() []byte {
				if e.Notify.Flags()&notify.Expired == 0 {
					return nil
				}
				return notify.EncodeRecordEvents([]notify.Code{notify.CodeExpired})
			},
			Deleted: func(ns string, key []byte) { e.Notify.Emit(notify.CodeExpired.Event(ns, key)) },
		}
	}
	deleted, more, err = e.Store.ExpireSlice(nowMs, limit, ev)
	e.Stats.ExpiredKeys.Add(int64(deleted))
	return deleted, more, err
}
