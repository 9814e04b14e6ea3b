package notify

import (
	"fmt"

	"github.com/cairnkv/cairn/storage"
)

// Extract returns the events a committed batch carries, in record order.
// Only a batch whose LogData has the notify bit yields events: its
// command code names the event, and its metadata records name the keys
// (a Set of string metadata for "set", a Delete for "del"). A batch
// without LogData, with an unknown LogData version or command, or with
// records that do not decode yields no events for those records; the
// returned error describes the first such problem for the caller to log,
// and never means the batch is bad to apply.
func Extract(repr []byte) ([]Event, error) {
	var events []Event
	var ld storage.LogData
	var haveContext bool
	var problem error
	note := func(err error) {
		if problem == nil {
			problem = err
		}
	}
	err := storage.ReadBatch(repr, func(r storage.Record) {
		switch r.Kind {
		case storage.RecordLogData:
			l, err := storage.DecodeLogData(r.Key)
			if err != nil {
				note(fmt.Errorf("notify: skipping records after LogData: %w", err))
				haveContext = false
				return
			}
			ld, haveContext = l, true
		case storage.RecordSet, storage.RecordDelete:
			if !haveContext || ld.Flags&storage.LogFlagNotify == 0 || !storage.IsMetaKey(r.Key) {
				return
			}
			ns, key, err := storage.DecodeMetaKey(r.Key)
			if err != nil {
				note(fmt.Errorf("notify: %w", err))
				return
			}
			ev, ok := eventFor(ld, r)
			if !ok {
				return
			}
			ev.Namespace, ev.Key = string(ns), append([]byte(nil), key...)
			events = append(events, ev)
		}
	})
	if err != nil {
		note(fmt.Errorf("notify: reading batch: %w", err))
	}
	return events, problem
}

// eventFor maps a command's record to its event.
func eventFor(ld storage.LogData, r storage.Record) (Event, bool) {
	switch {
	case ld.Cmd == storage.CmdSet && r.Kind == storage.RecordSet:
		m, err := storage.DecodeMetadata(r.Value)
		if err != nil || m.Type != storage.TypeString {
			return Event{}, false
		}
		return Event{Class: String, Name: "set"}, true
	case ld.Cmd == storage.CmdDel && r.Kind == storage.RecordDelete:
		return Event{Class: Generic, Name: "del"}, true
	}
	return Event{}, false
}
