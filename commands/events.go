package commands

import (
	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/storage"
)

// commandEvent is the keyspace event a command publishes for each key it
// writes.
type commandEvent struct {
	class notify.Flags
	name  string
}

// commandEvents lists the commands that publish keyspace events. The
// proposal's first step covers the literal SET and DEL commands only;
// every other write publishes nothing rather than a wrong event name.
var commandEvents = map[storage.Command]commandEvent{
	storage.CmdSet: {notify.String, "set"},
	storage.CmdDel: {notify.Generic, "del"},
}

// logData returns the LogData a batch of cmd begins with: its type and
// command code, and the notify bit when the command's event class is on in
// this node's notify-keyspace-events at write time (K and E do not matter:
// a primary that only ships context to its replicas still sets it).
func (c *Ctx) logData(t storage.Type, cmd storage.Command) storage.LogData {
	l := storage.LogData{Type: t, Cmd: cmd}
	if ev, ok := commandEvents[cmd]; ok && c.Env.Notify != nil && c.Env.Notify.ClassEnabled(ev.class) {
		l.Flags |= storage.LogFlagNotify
	}
	return l
}

// written records that the running command's committed batch wrote key;
// the event (if cmd has one) is published when the command releases its
// key locks, after the commit and before anyone else can write the key.
func (c *Ctx) written(cmd storage.Command, key []byte) {
	ev, ok := commandEvents[cmd]
	if !ok || c.Env.Notify == nil {
		return
	}
	c.events = append(c.events, notify.Event{Class: ev.class, Name: ev.name, Namespace: c.ns(), Key: key})
}

// publishEvents emits the recorded events in order, exactly once.
func (c *Ctx) publishEvents() {
	for _, ev := range c.events {
		c.Env.Notify.Emit(ev)
	}
	c.events = c.events[:0]
}
