package notify

import (
	"fmt"

	"github.com/cairnkv/cairn/storage"
)

// Extract returns the events a committed batch carries, in record order,
// so a replica publishes exactly what the primary published: keyspace
// events and PUBLISHed messages (Message events). A batch
// carries events when a LogData context with the notify bit is followed by
// events records (EncodeRecordEvents): each names the events of the next
// metadata record (a Set or Delete of a key), whose key the events take.
// A primary writes events records only for the classes its
// notify-keyspace-events enabled at write time. The events' keys are
// copies: they do not refer to repr.
//
// Records that cannot be understood (an unknown LogData version, an
// unknown event code, a key that does not decode) yield no events; the
// returned error describes the first such problem for the caller to log,
// and never means the batch is bad to apply.
func Extract(repr []byte) ([]Event, error) {
	return extract(nil, repr, true)
}

// AppendEvents appends the events Extract returns for repr to dst and
// returns the extended slice, with Extract's error. The appended events'
// keys alias repr: they are valid as long as repr is and must not be
// modified. A replica publishes a batch's events this way, into a slice
// it reuses from batch to batch.
func AppendEvents(dst []Event, repr []byte) ([]Event, error) {
	return extract(dst, repr, false)
}

// extract is Extract and AppendEvents: it appends repr's events to events,
// with copies of their keys when copyKeys is true.
func extract(events []Event, repr []byte, copyKeys bool) ([]Event, error) {
	var (
		notify  bool   // the current context has the notify bit
		pending []byte // codes of the next metadata record (recordEvents)
		problem error
	)
	note := func(err error) {
		if problem == nil {
			problem = err
		}
	}
	err := storage.ReadBatch(repr, func(r storage.Record) {
		switch r.Kind {
		case storage.RecordLogData:
			if IsRecordEvents(r.Key) {
				if !notify {
					return
				}
				codes, err := recordEvents(r.Key)
				if err != nil {
					note(err)
				}
				pending = codes
				return
			}
			pending = nil
			if ch, msg, err := storage.DecodePublish(r.Key); err == nil {
				// A PUBLISH, alone in its batch or in a transaction's.
				if copyKeys {
					ch, msg = append([]byte(nil), ch...), append([]byte(nil), msg...)
				}
				events = append(events, Message(ch, msg, false))
				notify = false
				return
			}
			l, err := storage.DecodeLogData(r.Key)
			if err != nil {
				note(fmt.Errorf("notify: skipping records after LogData: %w", err))
				notify = false
				return
			}
			notify = l.Flags&storage.LogFlagNotify != 0
		case storage.RecordSet, storage.RecordDelete:
			if len(pending) == 0 || !storage.IsMetaKey(r.Key) {
				return
			}
			codes := pending
			pending = nil
			ns, key, err := storage.DecodeMetaKey(r.Key)
			if err != nil {
				note(fmt.Errorf("notify: %w", err))
				return
			}
			if copyKeys {
				key = append([]byte(nil), key...)
			}
			for _, x := range codes {
				if c := Code(x); c.Valid() {
					events = append(events, c.Event(string(ns), key))
				}
			}
		}
	})
	if err != nil {
		note(fmt.Errorf("notify: reading batch: %w", err))
	}
	return events, problem
}
