package commands

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/rdb"
	"github.com/cairnkv/cairn/storage"
)

// Consumer groups keep a record per group, per consumer and per pending
// entry beside the stream's entries (storage/streams.go).

func init() {
	x := oneKeyCommand("stream")
	sub := func(arity int, flags Flag, key KeyFlag, since, summary string, h Handler) *Spec {
		return &Spec{Arity: arity, Flags: flags, FirstKey: 2, LastKey: 2, Step: 1, KeySpecs: []KeySpec{Key(2, key)}, Since: since, Summary: summary, Handler: h}
	}
	help := func(h Handler) *Spec {
		return &Spec{Arity: 2, Flags: FlagLoading | FlagStale, Since: "5.0.0", Summary: "Returns helpful text about the different subcommands.", Handler: h}
	}
	register(
		&Spec{Name: "xreadgroup", Arity: -7, Flags: FlagWrite | FlagBlocking, KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, Begin: AfterKeyword("STREAMS", 4), Find: Range(-1, 1, 2)}},
			Group: "stream", Since: "5.0.0", Summary: "Returns new or historical messages from a stream for a consumer in a group. Blocks until a message is available otherwise.", Handler: cmdXRead},
		x("xack", -4, FlagWrite|FlagFast, KeyRW|KeyUpdate, "5.0.0", "Returns the number of messages that were successfully acknowledged by the consumer group member of a stream.", cmdXAck),
		withTips(x("xpending", -3, FlagReadOnly, KeyRO|KeyAccess, "5.0.0", "Returns the information and entries from a stream consumer group's pending entries list.", cmdXPending), "nondeterministic_output"),
		withTips(x("xclaim", -6, FlagWrite|FlagFast, KeyRW|KeyUpdate, "5.0.0", "Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered a consumer group member.", cmdXClaim), "nondeterministic_output"),
		withTips(x("xautoclaim", -6, FlagWrite|FlagFast, KeyRW|KeyDelete, "6.2.0", "Changes, or acquires, ownership of messages in a consumer group, as if the messages were delivered to as consumer group member.", cmdXAutoClaim), "nondeterministic_output"),
		&Spec{Name: "xgroup", Arity: -2, Group: "stream", Since: "5.0.0", Summary: "A container for consumer groups commands.",
			Subcommands: map[string]*Spec{
				"create":         sub(-5, FlagWrite|FlagDenyOOM, KeyRW|KeyInsert, "5.0.0", "Creates a consumer group.", cmdXGroupCreate),
				"setid":          sub(-5, FlagWrite, KeyRW|KeyUpdate, "5.0.0", "Sets the last-delivered ID of a consumer group.", cmdXGroupSetID),
				"destroy":        sub(4, FlagWrite, KeyRW|KeyDelete, "5.0.0", "Destroys a consumer group.", cmdXGroupDestroy),
				"createconsumer": sub(5, FlagWrite|FlagDenyOOM, KeyRW|KeyInsert, "6.2.0", "Creates a consumer in a consumer group.", cmdXGroupCreateConsumer),
				"delconsumer":    sub(5, FlagWrite, KeyRW|KeyDelete, "5.0.0", "Deletes a consumer from a consumer group.", cmdXGroupDelConsumer),
				"help":           help(cmdXGroupHelp),
			}},
		&Spec{Name: "xinfo", Arity: -2, Group: "stream", Since: "5.0.0", Summary: "A container for stream introspection commands.",
			Subcommands: map[string]*Spec{
				"stream":    sub(-3, FlagReadOnly, KeyRO|KeyAccess, "5.0.0", "Returns information about a stream.", cmdXInfoStream),
				"groups":    sub(3, FlagReadOnly, KeyRO|KeyAccess, "5.0.0", "Returns a list of the consumer groups of a stream.", cmdXInfoGroups),
				"consumers": withTips(sub(4, FlagReadOnly, KeyRO|KeyAccess, "5.0.0", "Returns a list of the consumers in a consumer group.", cmdXInfoConsumers), "nondeterministic_output"),
				"help":      help(cmdXInfoHelp),
			}},
	)
}

// entriesReadInvalid is a group's unknown entries-read counter.
const entriesReadInvalid = -1

// group returns the group named name of the stream m.
func (c *Ctx) group(m *storage.Metadata, name []byte) (g storage.StreamGroup, found, ok bool) {
	v, found, ok := c.field(m, storage.StreamGroupField(name))
	if !ok || !found {
		return g, false, ok
	}
	g, err := storage.DecodeStreamGroup(v)
	if err != nil {
		c.storageError(err)
		return g, false, false
	}
	return g, true, true
}

// streamGroup is a group read from storage.
type streamGroup struct {
	name []byte
	storage.StreamGroup
}

// groups returns the groups of the stream m, by name.
func (c *Ctx) groups(m *storage.Metadata) ([]streamGroup, bool) {
	var out []streamGroup
	prefix := storage.StreamGroupPrefix()
	ok := c.scanStream(m, prefix, storage.PrefixEnd(prefix), false, func(f, v []byte) (bool, error) {
		g, err := storage.DecodeStreamGroup(v)
		if err != nil {
			return false, err
		}
		out = append(out, streamGroup{bytes.Clone(f[1:]), g})
		return true, nil
	})
	return out, ok
}

// streamConsumer is a consumer read from storage.
type streamConsumer struct {
	name []byte
	seen int64
}

// consumers returns the consumers of group of the stream m, by name.
func (c *Ctx) consumers(m *storage.Metadata, group []byte) ([]streamConsumer, bool) {
	var out []streamConsumer
	prefix := storage.StreamConsumerPrefix(group)
	ok := c.scanStream(m, prefix, storage.PrefixEnd(prefix), false, func(f, v []byte) (bool, error) {
		seen, err := storage.DecodeStreamConsumer(v)
		if err != nil {
			return false, err
		}
		out = append(out, streamConsumer{bytes.Clone(f[len(prefix):]), seen})
		return true, nil
	})
	return out, ok
}

// pendingEntry is a pending entry read from storage.
type pendingEntry struct {
	id streamID
	storage.StreamPending
}

// pending calls fn with the pending entries of group of the stream m
// from start to end, in ID order, until fn returns false.
func (c *Ctx) pending(m *storage.Metadata, group []byte, start, end streamID, fn func(p *pendingEntry) bool) bool {
	if end.Less(start) {
		return true
	}
	from := storage.StreamPendingField(group, start)
	var to []byte
	if next, ok := incrID(end); ok {
		to = storage.StreamPendingField(group, next)
	} else {
		to = storage.PrefixEnd(storage.StreamPendingPrefix(group))
	}
	return c.scanStream(m, from, to, false, func(f, v []byte) (bool, error) {
		p, err := storage.DecodeStreamPending(v)
		if err != nil {
			return false, err
		}
		return fn(&pendingEntry{storage.StreamFieldID(f), p}), nil
	})
}

// allPending returns the pending entries of group (of consumer alone when
// it is not nil).
func (c *Ctx) allPending(m *storage.Metadata, group, consumer []byte) ([]*pendingEntry, bool) {
	var out []*pendingEntry
	ok := c.pending(m, group, streamID{}, maxStreamID, func(p *pendingEntry) bool {
		if consumer == nil || bytes.Equal(p.Consumer, consumer) {
			out = append(out, p)
		}
		return true
	})
	return out, ok
}

// pendingEntryOf returns the pending entry id of group.
func (c *Ctx) pendingEntryOf(m *storage.Metadata, group []byte, id streamID) (*pendingEntry, bool, bool) {
	v, found, ok := c.field(m, storage.StreamPendingField(group, id))
	if !ok || !found {
		return nil, false, ok
	}
	p, err := storage.DecodeStreamPending(v)
	if err != nil {
		c.storageError(err)
		return nil, false, false
	}
	return &pendingEntry{id, p}, true, true
}

// entryExists reports whether the stream m has entry id.
func (c *Ctx) entryExists(m *storage.Metadata, id streamID) (*streamEntry, bool) {
	es, ok := c.entriesIn(m, id, id, 1, false)
	if !ok {
		return nil, false
	}
	if len(es) == 0 {
		return nil, true
	}
	return es[0], true
}

// hasTombstones reports whether a deleted entry may lie in [start, end]
// of the stream s (Redis's streamRangeHasTombstones).
func hasTombstones(m *storage.Metadata, start, end streamID) bool {
	s := &m.Stream
	if m.Size == 0 || s.MaxDeleted.IsZero() {
		return false
	}
	if s.MaxDeleted.Less(s.FirstID) {
		return false
	}
	return !s.MaxDeleted.Less(start) && !end.Less(s.MaxDeleted)
}

// estimateEntriesRead returns the entries-read counter of id in the
// stream m, or entriesReadInvalid when it cannot be known (Redis's
// streamEstimateDistanceFromFirstEverEntry).
func estimateEntriesRead(m *storage.Metadata, id streamID) int64 {
	s := &m.Stream
	if s.EntriesAdded == 0 {
		return 0
	}
	if m.Size == 0 && compareIDs(id, s.LastID) < 1 {
		return int64(s.EntriesAdded)
	}
	switch compareIDs(id, s.LastID) {
	case 0:
		return int64(s.EntriesAdded)
	case 1:
		return entriesReadInvalid
	}
	cmpFirst := compareIDs(id, s.FirstID)
	if s.MaxDeleted.IsZero() || s.MaxDeleted.Less(s.FirstID) {
		switch cmpFirst {
		case -1:
			return int64(s.EntriesAdded - m.Size)
		case 0:
			return int64(s.EntriesAdded - m.Size + 1)
		}
	}
	return entriesReadInvalid
}

// groupLag returns a group's lag, and false when it is unknown.
func groupLag(m *storage.Metadata, g *storage.StreamGroup) (int64, bool) {
	s := &m.Stream
	if s.EntriesAdded == 0 {
		return 0, true
	}
	if g.EntriesRead != entriesReadInvalid && !hasTombstones(m, g.LastID, maxStreamID) {
		return int64(s.EntriesAdded) - g.EntriesRead, true
	}
	if read := estimateEntriesRead(m, g.LastID); read != entriesReadInvalid {
		return int64(s.EntriesAdded) - read, true
	}
	return 0, false
}

// errNoGroup is the NOGROUP error of XPENDING, XCLAIM and XAUTOCLAIM.
func (c *Ctx) errNoGroup(key, group []byte) {
	c.errorf("NOGROUP No such key '%s' or consumer group '%s'", cString(key), cString(group))
}

// errNoGroupForKey is the NOGROUP error of XGROUP and XINFO.
func (c *Ctx) errNoGroupForKey(key, group []byte) {
	c.errorf("NOGROUP No such consumer group '%s' for key name '%s'", cString(group), cString(key))
}

// putConsumer writes consumer of group with its seen time; created
// reports whether it is new, which publishes xgroup-createconsumer.
func (c *Ctx) putConsumer(b *storage.Batch, m *storage.Metadata, group, consumer []byte) {
	b.PutField(c.ns(), m.Version, storage.StreamConsumerField(group, consumer), storage.EncodeStreamConsumer(c.nowMs()))
}

// consumerExists reports whether group has consumer.
func (c *Ctx) consumerExists(m *storage.Metadata, group, consumer []byte) (bool, bool) {
	_, found, ok := c.field(m, storage.StreamConsumerField(group, consumer))
	return found, ok
}

// putPending writes a pending entry of group.
func (c *Ctx) putPending(b *storage.Batch, m *storage.Metadata, group []byte, p *pendingEntry) {
	b.PutField(c.ns(), m.Version, storage.StreamPendingField(group, p.id), p.Encode())
}

// xreadStream is one stream of an XREAD or XREADGROUP call.
type xreadStream struct {
	key    []byte
	id     streamID
	dollar bool // "$": the last ID when the command first ran
	newer  bool // ">"
}

func cmdXRead(c *Ctx) {
	xreadgroup := len(c.Spec.Name) == 10
	timeout := int64(-1)
	count := int64(0)
	streamsAt, nStreams := 0, 0
	noack := false
	var group, consumer []byte
	for i := 1; i < len(c.Args); i++ {
		more := len(c.Args) - i - 1
		opt := keyword(c.Args[i])
		switch {
		case opt == "block" && more > 0:
			if c.scripted {
				c.errorf("ERR %s command is not allowed with BLOCK option from scripts", cString(c.Args[0]))
				return
			}
			i++
			n, ok := c.timeoutArg(i)
			if !ok {
				return
			}
			timeout = n
		case opt == "count" && more > 0:
			i++
			n, ok := c.intArg(i)
			if !ok {
				return
			}
			count = max(n, 0)
		case opt == "streams" && more > 0:
			streamsAt = i + 1
			nStreams = len(c.Args) - streamsAt
			if nStreams%2 != 0 {
				symbol := '$'
				if xreadgroup {
					symbol = '>'
				}
				c.errorf("ERR Unbalanced %s list of streams: for each stream key an ID or '%c' must be specified.", strings.ToUpper(c.Spec.Name), symbol)
				return
			}
			nStreams /= 2
			i = len(c.Args)
		case opt == "group" && more >= 2:
			if !xreadgroup {
				c.W.Error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			group, consumer = c.Args[i+1], c.Args[i+2]
			i += 2
		case opt == "noack":
			if !xreadgroup {
				c.W.Error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			noack = true
		default:
			c.W.Error(errSyntax)
			return
		}
	}
	if streamsAt == 0 {
		c.W.Error(errSyntax)
		return
	}
	if xreadgroup && group == nil {
		c.W.Error("ERR Missing GROUP option for XREADGROUP")
		return
	}
	streams := make([]xreadStream, nStreams)
	keys := make([][]byte, nStreams)
	for i := range streams {
		streams[i].key = c.Args[streamsAt+i]
		keys[i] = streams[i].key
	}
	// The IDs are parsed under the keys' locks: "$" reads the stream.
	var wait time.Duration
	if timeout > 0 {
		wait = time.Duration(timeout) * time.Millisecond
	}
	first := true
	try := func(ready []byte) bool {
		if first {
			first = false
			if !c.xreadParseIDs(streams, streamsAt+nStreams, xreadgroup, group) {
				return true
			}
		}
		served, ok := c.xreadServe(streams, count, group, consumer, noack, ready)
		if !ok || served {
			return true
		}
		if timeout == -1 {
			c.W.NullArray()
			return true
		}
		return false
	}
	if timeout == -1 || c.txn != nil || c.scripted {
		unlock := c.lock(keys...)
		defer unlock()
		if !try(nil) {
			c.W.NullArray()
		}
		return
	}
	c.blockOn(storage.TypeStream, keys, nil, wait, c.W.NullArray, c.W.NullArray, try)
}

// xreadParseIDs parses the IDs of XREAD and XREADGROUP (from Args[at]),
// replying its errors.
func (c *Ctx) xreadParseIDs(streams []xreadStream, at int, xreadgroup bool, group []byte) bool {
	for i := range streams {
		s := &streams[i]
		arg := c.Args[at+i]
		k, ok := c.read(s.key)
		if !ok {
			return false
		}
		c.lookedUp(s.key, k.live)
		if k.live && k.m.Type != storage.TypeStream {
			c.W.Error(errWrongType)
			return false
		}
		if group != nil {
			found := false
			if k.live {
				if _, found, ok = c.group(&k.m, group); !ok {
					return false
				}
			}
			if !found {
				c.errorf("NOGROUP No such key '%s' or consumer group '%s' in XREADGROUP with GROUP option", cString(s.key), cString(group))
				return false
			}
		}
		switch {
		case string(cString(arg)) == "$":
			if xreadgroup {
				c.W.Error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
				return false
			}
			s.dollar = true
			if k.live {
				s.id = k.m.Stream.LastID
			}
		case string(cString(arg)) == ">":
			if !xreadgroup {
				c.W.Error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
				return false
			}
			s.newer = true
			s.id = maxStreamID
		default:
			if s.id, ok = c.streamIDArg(at+i, 0); !ok {
				return false
			}
			// The greatest ID is how Redis marks ">".
			s.newer = xreadgroup && s.id == maxStreamID
		}
	}
	return true
}

// xreadServe replies to XREAD or XREADGROUP if any stream has something
// for it, and reports whether it did. A blocked command woken by a write
// to ready looks at that stream alone, as Redis's does, and fails when
// its group is gone.
func (c *Ctx) xreadServe(streams []xreadStream, count int64, group, consumer []byte, noack bool, ready []byte) (served, ok bool) {
	type result struct {
		key     []byte
		entries []*streamEntry
		history []*pendingEntry // XREADGROUP with an ID: the consumer's pending entries
	}
	var results []result
	var b *storage.Batch
	for i := range streams {
		s := &streams[i]
		if ready != nil && !bytes.Equal(s.key, ready) {
			continue
		}
		k, ok := c.read(s.key)
		if !ok {
			return false, false
		}
		if ready == nil {
			c.lookedUp(s.key, k.live)
		}
		if !k.live || k.m.Type != storage.TypeStream {
			continue
		}
		m := k.m
		if group == nil {
			if m.Size == 0 || !s.id.Less(m.Stream.LastID) {
				continue
			}
			start, _ := incrID(s.id)
			es, ok := c.entriesIn(&m, start, maxStreamID, count, false)
			if !ok {
				return false, false
			}
			if len(es) == 0 {
				continue
			}
			results = append(results, result{key: s.key, entries: es})
			continue
		}
		g, found, ok := c.group(&m, group)
		if !ok {
			return false, false
		}
		if !found {
			// Destroyed while it waited.
			if b != nil {
				c.discard(b)
			}
			c.W.Error("NOGROUP the consumer group this client was blocked on no longer exists")
			return true, true
		}
		if b == nil {
			b = c.newBatch(storage.TypeStream, storage.CmdXReadGroup)
		}
		// Serve the consumer's history, or new entries when the stream has
		// any past the group's last ID.
		serve, history := false, false
		gt := s.id
		if !s.newer {
			serve, history = true, true
		} else if m.Size > 0 {
			last, ok := c.edgeEntry(&m, true)
			if !ok {
				return false, false
			}
			if last != nil && g.LastID.Less(last.id) {
				serve, gt = true, g.LastID
			}
		}
		if !serve {
			continue
		}
		// The consumer is looked up, and made, only to serve it.
		exists, ok := c.consumerExists(&m, group, consumer)
		if !ok {
			return false, false
		}
		codes := []notify.Code(nil)
		if !exists {
			codes = append(codes, notify.CodeXGroupCreateConsumer)
		}
		c.putConsumer(b, &m, group, consumer)
		r := result{key: s.key}
		{
			start, _ := incrID(gt)
			if history {
				n := int64(0)
				if !c.pending(&m, group, start, maxStreamID, func(p *pendingEntry) bool {
					if bytes.Equal(p.Consumer, consumer) {
						r.history = append(r.history, p)
						n++
					}
					return count == 0 || n < count
				}) {
					return false, false
				}
				for _, p := range r.history {
					e, ok := c.entryExists(&m, p.id)
					if !ok {
						return false, false
					}
					r.entries = append(r.entries, e)
					if e != nil {
						p.DeliveryTime = c.nowMs()
						p.Deliveries++
						c.putPending(b, &m, group, p)
					}
				}
			} else {
				es, ok := c.entriesIn(&m, start, maxStreamID, count, false)
				if !ok {
					return false, false
				}
				for _, e := range es {
					if g.LastID.Less(e.id) {
						if g.EntriesRead != entriesReadInvalid && !hasTombstones(&m, e.id, maxStreamID) {
							g.EntriesRead++
						} else if m.Stream.EntriesAdded != 0 {
							g.EntriesRead = estimateEntriesRead(&m, e.id)
						}
						g.LastID = e.id
					}
					if !noack {
						c.putPending(b, &m, group, &pendingEntry{e.id, storage.StreamPending{DeliveryTime: c.nowMs(), Deliveries: 1, Consumer: consumer}})
					}
				}
				b.PutField(c.ns(), m.Version, storage.StreamGroupField(group), g.Encode())
				r.entries = es
			}
			results = append(results, r)
		}
		c.put(b, s.key, &k, m, codes...)
		// Committed at once, so that the same key named again reads
		// what this one did, as in Redis.
		if !c.commit(b) {
			return false, false
		}
		b = nil
	}
	if b != nil {
		c.discard(b)
	}
	if len(results) == 0 {
		return false, true
	}
	if c.Client.Proto() >= 3 {
		c.W.Map(len(results))
	} else {
		c.W.Array(len(results))
	}
	for _, r := range results {
		if c.Client.Proto() < 3 {
			c.W.Array(2)
		}
		c.W.Bulk(r.key)
		c.W.Array(len(r.entries))
		for i, e := range r.entries {
			if e == nil {
				c.W.Array(2)
				c.W.Bulk(formatID(r.history[i].id))
				c.W.NullArray()
				continue
			}
			c.writeEntry(e)
		}
	}
	return true, true
}

func cmdXAck(c *Ctx) {
	key, group := c.Args[1], c.Args[2]
	k, unlock, ok := c.lookupOf(key, storage.TypeStream, true)
	defer unlock()
	if !ok {
		return
	}
	found := false
	if k.live {
		if _, found, ok = c.group(&k.m, group); !ok {
			return
		}
	}
	if !found {
		c.W.Int(0)
		return
	}
	ids, ok := c.streamIDArgs(3)
	if !ok {
		return
	}
	m := k.m
	var b *storage.Batch
	acked := int64(0)
	seen := map[streamID]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		_, found, ok := c.pendingEntryOf(&m, group, id)
		if !ok {
			if b != nil {
				c.discard(b)
			}
			return
		}
		if !found {
			continue
		}
		if b == nil {
			b = c.newBatch(storage.TypeStream, storage.CmdXAck)
		}
		b.PutField(c.ns(), m.Version, storage.StreamPendingField(group, id), nil)
		acked++
	}
	if b != nil {
		c.put(b, key, &k, m)
		if !c.commit(b) {
			return
		}
	}
	c.W.Int(acked)
}

func cmdXPending(c *Ctx) {
	key, group := c.Args[1], c.Args[2]
	n := len(c.Args)
	if n != 3 && (n < 6 || n > 9) {
		c.W.Error(errSyntax)
		return
	}
	var start, end streamID
	count, minIdle := int64(0), int64(0)
	var consumer []byte
	if n >= 6 {
		at := 3
		if keyword(c.Args[3]) == "idle" {
			v, ok := c.intArg(4)
			if !ok {
				return
			}
			minIdle = v
			if n < 8 {
				c.W.Error(errSyntax)
				return
			}
			at += 2
		}
		v, ok := c.intArg(at + 2)
		if !ok {
			return
		}
		count = max(v, 0)
		var ex bool
		if start, ex, ok = c.intervalIDArg(c.Args[at], 0); !ok {
			return
		}
		if ex {
			if start, ok = incrID(start); !ok {
				c.W.Error("ERR invalid start ID for the interval")
				return
			}
		}
		if end, ex, ok = c.intervalIDArg(c.Args[at+1], math.MaxUint64); !ok {
			return
		}
		if ex {
			if end, ok = decrID(end); !ok {
				c.W.Error("ERR invalid end ID for the interval")
				return
			}
		}
		if at+3 < n {
			consumer = c.Args[at+3]
		}
	}
	k, unlock, ok := c.lookupOf(key, storage.TypeStream, true)
	defer unlock()
	if !ok {
		return
	}
	found := false
	if k.live {
		if _, found, ok = c.group(&k.m, group); !ok {
			return
		}
	}
	if !found {
		c.errNoGroup(key, group)
		return
	}
	if n == 3 {
		all, ok := c.allPending(&k.m, group, nil)
		if !ok {
			return
		}
		c.W.Array(4)
		c.W.Int(int64(len(all)))
		if len(all) == 0 {
			c.W.NullBulk()
			c.W.NullBulk()
			c.W.NullArray()
			return
		}
		c.W.Bulk(formatID(all[0].id))
		c.W.Bulk(formatID(all[len(all)-1].id))
		per := map[string]int64{}
		for _, p := range all {
			per[string(p.Consumer)]++
		}
		cs, ok := c.consumers(&k.m, group)
		if !ok {
			return
		}
		var with []streamConsumer
		for _, cn := range cs {
			if per[string(cn.name)] > 0 {
				with = append(with, cn)
			}
		}
		c.W.Array(len(with))
		for _, cn := range with {
			c.W.Array(2)
			c.W.Bulk(cn.name)
			c.W.BulkString(fmt.Sprint(per[string(cn.name)]))
		}
		return
	}
	if consumer != nil {
		exists, ok := c.consumerExists(&k.m, group, consumer)
		if !ok {
			return
		}
		if !exists {
			c.W.Array(0)
			return
		}
	}
	now := c.nowMs()
	var out []*pendingEntry
	if count > 0 && !c.pending(&k.m, group, start, end, func(p *pendingEntry) bool {
		if consumer != nil && !bytes.Equal(p.Consumer, consumer) {
			return true
		}
		if minIdle != 0 && now-p.DeliveryTime < minIdle {
			return true
		}
		out = append(out, p)
		return int64(len(out)) < count
	}) {
		return
	}
	c.W.Array(len(out))
	for _, p := range out {
		c.W.Array(4)
		c.W.Bulk(formatID(p.id))
		c.W.Bulk(p.Consumer)
		c.W.Int(max(now-p.DeliveryTime, 0))
		c.W.Int(int64(p.Deliveries))
	}
}

// claimTo moves the pending entry p of group to consumer (creating the
// consumer, with its event, the first time), with its delivery time and
// count as given.
func (c *Ctx) claimTo(b *storage.Batch, m *storage.Metadata, group, consumer []byte, created *bool, codes *[]notify.Code, p *pendingEntry) bool {
	if !*created {
		exists, ok := c.consumerExists(m, group, consumer)
		if !ok {
			return false
		}
		if !exists {
			*codes = append(*codes, notify.CodeXGroupCreateConsumer)
		}
		c.putConsumer(b, m, group, consumer)
		*created = true
	}
	p.Consumer = consumer
	c.putPending(b, m, group, p)
	return true
}

func cmdXClaim(c *Ctx) {
	key, group, consumer := c.Args[1], c.Args[2], c.Args[3]
	k, unlock, ok := c.lookupOf(key, storage.TypeStream, true)
	defer unlock()
	if !ok {
		return
	}
	var g storage.StreamGroup
	found := false
	if k.live {
		if g, found, ok = c.group(&k.m, group); !ok {
			return
		}
	}
	if !found {
		c.errNoGroup(key, group)
		return
	}
	minIdle, ok := parseInt(c.Args[4])
	if !ok {
		c.W.Error("ERR Invalid min-idle-time argument for XCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	j := 5
	for ; j < len(c.Args); j++ {
		if _, ok := parseStreamID(c.Args[j], 0, true, nil); !ok {
			break
		}
	}
	lastIDArg := j - 1
	now := c.nowMs()
	retryCount, deliveryTime := int64(-1), int64(-1)
	force, justID := false, false
	var lastID streamID
	for ; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		opt := keyword(c.Args[j])
		switch {
		case opt == "force":
			force = true
		case opt == "justid":
			justID = true
		case opt == "idle" && more > 0:
			j++
			v, ok := parseInt(c.Args[j])
			if !ok {
				c.W.Error("ERR Invalid IDLE option argument for XCLAIM")
				return
			}
			deliveryTime = now - v
		case opt == "time" && more > 0:
			j++
			v, ok := parseInt(c.Args[j])
			if !ok {
				c.W.Error("ERR Invalid TIME option argument for XCLAIM")
				return
			}
			deliveryTime = v
		case opt == "retrycount" && more > 0:
			j++
			v, ok := parseInt(c.Args[j])
			if !ok {
				c.W.Error("ERR Invalid RETRYCOUNT option argument for XCLAIM")
				return
			}
			retryCount = v
		case opt == "lastid" && more > 0:
			j++
			if lastID, ok = c.streamIDArg(j, 0); !ok {
				return
			}
		default:
			c.errorf("ERR Unrecognized XCLAIM option '%s'", cString(c.Args[j]))
			return
		}
	}
	m := k.m
	b := c.newBatch(storage.TypeStream, storage.CmdXClaim)
	changed := false
	if g.LastID.Less(lastID) {
		g.LastID = lastID
		b.PutField(c.ns(), m.Version, storage.StreamGroupField(group), g.Encode())
		changed = true
	}
	if deliveryTime == -1 || deliveryTime < 0 || deliveryTime > now {
		deliveryTime = now
	}
	created := false
	var codes []notify.Code
	type claimed struct {
		id    streamID
		entry *streamEntry
	}
	var out []claimed
	for i := 5; i <= lastIDArg; i++ {
		id, _ := parseStreamID(c.Args[i], 0, true, nil)
		p, pfound, ok := c.pendingEntryOf(&m, group, id)
		if !ok {
			c.discard(b)
			return
		}
		e, ok := c.entryExists(&m, id)
		if !ok {
			c.discard(b)
			return
		}
		if e == nil {
			if pfound {
				b.PutField(c.ns(), m.Version, storage.StreamPendingField(group, id), nil)
				changed = true
			}
			continue
		}
		fresh := false
		if force && !pfound {
			p = &pendingEntry{id, storage.StreamPending{DeliveryTime: now, Deliveries: 1}}
			pfound, fresh = true, true
		}
		if !pfound {
			continue
		}
		if !fresh && minIdle != 0 && now-p.DeliveryTime < minIdle {
			continue
		}
		p.DeliveryTime = deliveryTime
		if retryCount >= 0 {
			p.Deliveries = uint64(retryCount)
		} else if !justID {
			p.Deliveries++
		}
		if !c.claimTo(b, &m, group, consumer, &created, &codes, p) {
			c.discard(b)
			return
		}
		changed = true
		out = append(out, claimed{id, e})
	}
	if changed {
		c.put(b, key, &k, m, codes...)
		if !c.commit(b) {
			return
		}
	} else {
		c.discard(b)
	}
	c.W.Array(len(out))
	for _, cl := range out {
		if justID {
			c.W.Bulk(formatID(cl.id))
		} else {
			c.writeEntry(cl.entry)
		}
	}
}

func cmdXAutoClaim(c *Ctx) {
	key, group, consumer := c.Args[1], c.Args[2], c.Args[3]
	// Redis looks the key up first, its type checked after the options.
	defer c.lock(key)()
	k, ok := c.read(key)
	if !ok {
		return
	}
	c.lookedUp(key, k.live)
	minIdle, ok := parseInt(c.Args[4])
	if !ok {
		c.W.Error("ERR Invalid min-idle-time argument for XAUTOCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	start, ex, ok := c.intervalIDArg(c.Args[5], 0)
	if !ok {
		return
	}
	if ex {
		if start, ok = incrID(start); !ok {
			c.W.Error("ERR invalid start ID for the interval")
			return
		}
	}
	count := int64(100)
	justID := false
	for j := 6; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		opt := keyword(c.Args[j])
		switch {
		case opt == "count" && more > 0:
			v, ok := parseInt(c.Args[j+1])
			if !ok || v < 1 || v > math.MaxInt64/16 {
				c.W.Error("ERR COUNT must be > 0")
				return
			}
			count = v
			j++
		case opt == "justid":
			justID = true
		default:
			c.W.Error(errSyntax)
			return
		}
	}
	if k.live && k.m.Type != storage.TypeStream {
		c.W.Error(errWrongType)
		return
	}
	found := false
	if k.live {
		if _, found, ok = c.group(&k.m, group); !ok {
			return
		}
	}
	if !found {
		c.errNoGroup(key, group)
		return
	}
	m := k.m
	attempts := count * 10
	now := c.nowMs()
	b := c.newBatch(storage.TypeStream, storage.CmdXAutoClaim)
	created := false
	var codes []notify.Code
	var claimed []*streamEntry
	var claimedIDs, deleted []streamID
	next := streamID{}
	changed := false
	failed := false
	// The walk reads the pending entries from start on; it stops at the
	// first it cannot look at, which becomes the cursor.
	stopped := false
	if !c.pending(&m, group, start, maxStreamID, func(p *pendingEntry) bool {
		if stopped {
			next = p.id
			return false
		}
		if attempts == 0 || count == 0 {
			next = p.id
			return false
		}
		attempts--
		e, ok := c.entryExists(&m, p.id)
		if !ok {
			failed = true
			return false
		}
		if e == nil {
			b.PutField(c.ns(), m.Version, storage.StreamPendingField(group, p.id), nil)
			deleted = append(deleted, p.id)
			changed = true
			count--
			return true
		}
		if minIdle != 0 && now-p.DeliveryTime < minIdle {
			return true
		}
		p.DeliveryTime = now
		if !justID {
			p.Deliveries++
		}
		if !c.claimTo(b, &m, group, consumer, &created, &codes, p) {
			failed = true
			return false
		}
		changed = true
		claimed = append(claimed, e)
		claimedIDs = append(claimedIDs, p.id)
		count--
		return true
	}) || failed {
		c.discard(b)
		return
	}
	if changed {
		c.put(b, key, &k, m, codes...)
		if !c.commit(b) {
			return
		}
	} else {
		c.discard(b)
	}
	c.W.Array(3)
	c.W.Bulk(formatID(next))
	c.W.Array(len(claimed))
	for i, e := range claimed {
		if justID {
			c.W.Bulk(formatID(claimedIDs[i]))
		} else {
			c.writeEntry(e)
		}
	}
	c.W.Array(len(deleted))
	for _, id := range deleted {
		c.W.Bulk(formatID(id))
	}
}

// xgroupKey reads the stream of an XGROUP subcommand (Args[2]) under its
// lock, replying the errors Redis gives for a missing key (unless
// mkstream) or a wrong type.
func (c *Ctx) xgroupKey(mkstream bool) (k keyState, ok bool) {
	if k, ok = c.readOf(c.Args[2], storage.TypeStream); !ok {
		return k, false
	}
	if !k.live && !mkstream {
		c.W.Error("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
		return k, false
	}
	return k, true
}

// xgroupSyntaxError is Redis's addReplySubcommandSyntaxError for XGROUP.
func (c *Ctx) subcommandSyntaxError() {
	c.errorf("ERR unknown subcommand or wrong number of arguments for '%.128s'. Try %s HELP.", cString(c.Args[1]), strings.ToUpper(c.Spec.parentName()))
}

// entriesReadArg parses an ENTRIESREAD value.
func (c *Ctx) entriesReadArg(i int) (int64, bool) {
	n, ok := c.intArg(i)
	if !ok {
		return 0, false
	}
	if n < 0 && n != entriesReadInvalid {
		c.W.Error("ERR value for ENTRIESREAD must be positive or -1")
		return 0, false
	}
	return n, true
}

// groupID parses the ID of XGROUP CREATE and SETID ("$": the stream's
// last ID); strict for CREATE.
func (c *Ctx) groupID(k *keyState, strict bool) (streamID, bool) {
	if string(cString(c.Args[4])) == "$" {
		if k.live {
			return k.m.Stream.LastID, true
		}
		return streamID{}, true
	}
	id, ok := parseStreamID(c.Args[4], 0, strict, nil)
	if !ok {
		c.W.Error(errInvalidStreamID)
	}
	return id, ok
}

func cmdXGroupCreate(c *Ctx) {
	mkstream := false
	entriesRead := int64(entriesReadInvalid)
	for i := 5; i < len(c.Args); {
		switch opt := keyword(c.Args[i]); {
		case opt == "mkstream":
			mkstream = true
			i++
		case opt == "entriesread" && i+1 < len(c.Args):
			n, ok := c.entriesReadArg(i + 1)
			if !ok {
				return
			}
			entriesRead = n
			i += 2
		default:
			c.subcommandSyntaxError()
			return
		}
	}
	key, group := c.Args[2], c.Args[3]
	defer c.lock(key)()
	k, ok := c.xgroupKey(mkstream)
	if !ok {
		return
	}
	if len(c.Args) > 8 {
		c.subcommandSyntaxError()
		return
	}
	id, ok := c.groupID(&k, true)
	if !ok {
		return
	}
	m := k.m
	if k.live {
		_, found, ok := c.group(&m, group)
		if !ok {
			return
		}
		if found {
			c.W.Error("BUSYGROUP Consumer Group name already exists")
			return
		}
	} else {
		m = storage.Metadata{Type: storage.TypeStream, Version: storage.NewHashID()}
	}
	b := c.newBatch(storage.TypeStream, storage.CmdXGroup)
	b.PutField(c.ns(), m.Version, storage.StreamGroupField(group), storage.StreamGroup{LastID: id, EntriesRead: entriesRead}.Encode())
	m.Stream.Groups++
	c.put(b, key, &k, m, notify.CodeXGroupCreate)
	if c.commit(b) {
		c.W.OK()
	}
}

func cmdXGroupSetID(c *Ctx) {
	key, group := c.Args[2], c.Args[3]
	defer c.lock(key)()
	k, ok := c.xgroupKey(false)
	if !ok {
		return
	}
	g, found, ok := c.group(&k.m, group)
	if !ok {
		return
	}
	if !found {
		c.errNoGroupForKey(key, group)
		return
	}
	if len(c.Args) != 5 && len(c.Args) != 7 {
		c.subcommandSyntaxError()
		return
	}
	id, ok := c.groupID(&k, false)
	if !ok {
		return
	}
	entriesRead := int64(entriesReadInvalid)
	if len(c.Args) == 7 {
		if keyword(c.Args[5]) != "entriesread" {
			c.subcommandSyntaxError()
			return
		}
		if entriesRead, ok = c.entriesReadArg(6); !ok {
			return
		}
	}
	g.LastID, g.EntriesRead = id, entriesRead
	b := c.newBatch(storage.TypeStream, storage.CmdXGroup)
	b.PutField(c.ns(), k.m.Version, storage.StreamGroupField(group), g.Encode())
	c.put(b, key, &k, k.m, notify.CodeXGroupSetID)
	if c.commit(b) {
		c.W.OK()
	}
}

// dropPrefix deletes the records of the stream m whose field names begin
// with prefix.
func (c *Ctx) dropPrefix(b *storage.Batch, m *storage.Metadata, prefix []byte) bool {
	var fields [][]byte
	if !c.scanStream(m, prefix, storage.PrefixEnd(prefix), false, func(f, _ []byte) (bool, error) {
		fields = append(fields, bytes.Clone(f))
		return true, nil
	}) {
		return false
	}
	for _, f := range fields {
		b.PutField(c.ns(), m.Version, f, nil)
	}
	return true
}

func cmdXGroupDestroy(c *Ctx) {
	key, group := c.Args[2], c.Args[3]
	defer c.lock(key)()
	k, ok := c.xgroupKey(false)
	if !ok {
		return
	}
	_, found, ok := c.group(&k.m, group)
	if !ok {
		return
	}
	if !found {
		c.W.Int(0)
		return
	}
	m := k.m
	b := c.newBatch(storage.TypeStream, storage.CmdXGroup)
	b.PutField(c.ns(), m.Version, storage.StreamGroupField(group), nil)
	if !c.dropPrefix(b, &m, storage.StreamConsumerPrefix(group)) || !c.dropPrefix(b, &m, storage.StreamPendingPrefix(group)) {
		c.discard(b)
		return
	}
	m.Stream.Groups--
	c.put(b, key, &k, m, notify.CodeXGroupDestroy)
	c.keyWritten(storage.TypeStream, key) // its XREADGROUP waiters fail
	if c.commit(b) {
		c.W.Int(1)
	}
}

// xgroupConsumer looks up the consumer of XGROUP CREATECONSUMER and
// DELCONSUMER (key, group, consumer in Args[2:5]) in its stream, whose
// key state it returns; when the key is not a stream or has no such group
// it replies the error and returns ok=false.
func (c *Ctx) xgroupConsumer() (k keyState, exists, ok bool) {
	key, group, consumer := c.Args[2], c.Args[3], c.Args[4]
	if k, ok = c.xgroupKey(false); !ok {
		return k, false, false
	}
	_, found, ok := c.group(&k.m, group)
	if !ok {
		return k, false, false
	}
	if !found {
		c.errNoGroupForKey(key, group)
		return k, false, false
	}
	exists, ok = c.consumerExists(&k.m, group, consumer)
	return k, exists, ok
}

func cmdXGroupCreateConsumer(c *Ctx) {
	key, group, consumer := c.Args[2], c.Args[3], c.Args[4]
	defer c.lock(key)()
	k, exists, ok := c.xgroupConsumer()
	if !ok {
		return
	}
	if exists {
		c.W.Int(0)
		return
	}
	b := c.newBatch(storage.TypeStream, storage.CmdXGroup)
	c.putConsumer(b, &k.m, group, consumer)
	c.put(b, key, &k, k.m, notify.CodeXGroupCreateConsumer)
	if c.commit(b) {
		c.W.Int(1)
	}
}

func cmdXGroupDelConsumer(c *Ctx) {
	key, group, consumer := c.Args[2], c.Args[3], c.Args[4]
	defer c.lock(key)()
	k, exists, ok := c.xgroupConsumer()
	if !ok {
		return
	}
	if !exists {
		c.W.Int(0)
		return
	}
	owned, ok := c.allPending(&k.m, group, consumer)
	if !ok {
		return
	}
	b := c.newBatch(storage.TypeStream, storage.CmdXGroup)
	b.PutField(c.ns(), k.m.Version, storage.StreamConsumerField(group, consumer), nil)
	for _, p := range owned {
		b.PutField(c.ns(), k.m.Version, storage.StreamPendingField(group, p.id), nil)
	}
	c.put(b, key, &k, k.m, notify.CodeXGroupDelConsumer)
	if c.commit(b) {
		c.W.Int(int64(len(owned)))
	}
}

func cmdXGroupHelp(c *Ctx) {
	help(c, "XGROUP", []string{
		"CREATE <key> <groupname> <id|$> [option]",
		"    Create a new consumer group. Options are:",
		"    * MKSTREAM",
		"      Create the empty stream if it does not exist.",
		"    * ENTRIESREAD entries_read",
		"      Set the group's entries_read counter (internal use).",
		"CREATECONSUMER <key> <groupname> <consumer>",
		"    Create a new consumer in the specified group.",
		"DELCONSUMER <key> <groupname> <consumer>",
		"    Remove the specified consumer.",
		"DESTROY <key> <groupname>",
		"    Remove the specified group.",
		"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
		"    Set the current group ID and entries_read counter.",
	})
}

func cmdXInfoHelp(c *Ctx) {
	help(c, "XINFO", []string{
		"CONSUMERS <key> <groupname>",
		"    Show consumers of <groupname>.",
		"GROUPS <key>",
		"    Show the stream consumer groups.",
		"STREAM <key> [FULL [COUNT <count>]",
		"    Show information about the stream.",
	})
}

// xinfoKey reads the stream of an XINFO subcommand (Args[2]), replying
// "no such key" for none.
func (c *Ctx) xinfoKey() (k keyState, unlock func(), ok bool) {
	k, unlock, ok = c.lookupOf(c.Args[2], storage.TypeStream, true)
	if ok && !k.live {
		c.W.Error(errNoSuchKey)
		return k, unlock, false
	}
	return k, unlock, ok
}

// writeMapHeader writes a map of n pairs: a map in RESP3, a flat array
// in RESP2.
func (c *Ctx) writeMapHeader(n int) {
	if c.Client.Proto() >= 3 {
		c.W.Map(n)
	} else {
		c.W.Array(2 * n)
	}
}

func cmdXInfoConsumers(c *Ctx) {
	k, unlock, ok := c.xinfoKey()
	defer unlock()
	if !ok {
		return
	}
	group := c.Args[3]
	_, found, ok := c.group(&k.m, group)
	if !ok {
		return
	}
	if !found {
		c.errNoGroupForKey(c.Args[2], group)
		return
	}
	cs, ok := c.consumers(&k.m, group)
	if !ok {
		return
	}
	all, ok := c.allPending(&k.m, group, nil)
	if !ok {
		return
	}
	per := map[string]int64{}
	for _, p := range all {
		per[string(p.Consumer)]++
	}
	now := time.Now().UnixMilli()
	c.W.Array(len(cs))
	for _, cn := range cs {
		c.writeMapHeader(3)
		c.W.BulkString("name")
		c.W.Bulk(cn.name)
		c.W.BulkString("pending")
		c.W.Int(per[string(cn.name)])
		c.W.BulkString("idle")
		c.W.Int(max(now-cn.seen, 0))
	}
}

// writeGroupCounters writes a group's entries-read and lag fields.
func (c *Ctx) writeGroupCounters(m *storage.Metadata, g *storage.StreamGroup) {
	c.W.BulkString("entries-read")
	if g.EntriesRead != entriesReadInvalid {
		c.W.Int(g.EntriesRead)
	} else {
		c.W.NullBulk()
	}
	c.W.BulkString("lag")
	if lag, ok := groupLag(m, g); ok {
		c.W.Int(lag)
	} else {
		c.W.NullBulk()
	}
}

func cmdXInfoGroups(c *Ctx) {
	k, unlock, ok := c.xinfoKey()
	defer unlock()
	if !ok {
		return
	}
	gs, ok := c.groups(&k.m)
	if !ok {
		return
	}
	c.W.Array(len(gs))
	for _, g := range gs {
		cs, ok := c.consumers(&k.m, g.name)
		if !ok {
			return
		}
		all, ok := c.allPending(&k.m, g.name, nil)
		if !ok {
			return
		}
		c.writeMapHeader(6)
		c.W.BulkString("name")
		c.W.Bulk(g.name)
		c.W.BulkString("consumers")
		c.W.Int(int64(len(cs)))
		c.W.BulkString("pending")
		c.W.Int(int64(len(all)))
		c.W.BulkString("last-delivered-id")
		c.W.Bulk(formatID(g.LastID))
		c.writeGroupCounters(&k.m, &g.StreamGroup)
	}
}

// raxNodes returns how many nodes Redis's radix tree holds for keys
// (sorted, distinct, of one length): a compressed node for each run
// without a branch, a node for each branch and one for each key's end.
func raxNodes(keys [][]byte) int {
	if len(keys) == 0 {
		return 1
	}
	var count func(keys [][]byte, depth int) int
	count = func(keys [][]byte, depth int) int {
		if len(keys[0]) == depth {
			return 1
		}
		// The common prefix from depth on.
		l := depth
		for l < len(keys[0]) && keys[0][l] == keys[len(keys)-1][l] {
			l++
		}
		if l > depth {
			return 1 + count(keys, l)
		}
		n := 1
		for i := 0; i < len(keys); {
			j := i
			for j < len(keys) && keys[j][depth] == keys[i][depth] {
				j++
			}
			n += count(keys[i:j], depth+1)
			i = j
		}
		return n
	}
	return count(keys, 0)
}

// streamNodes returns the master IDs of the stream's nodes, in order.
func (c *Ctx) streamNodes(m *storage.Metadata) ([][]byte, bool) {
	var nodes [][]byte
	var last streamID
	ok := c.scanEntries(m, streamID{}, maxStreamID, false, func(e *streamEntry) bool {
		if len(nodes) == 0 || e.node != last {
			last = e.node
			nodes = append(nodes, storage.StreamEntryField(e.node)[1:])
		}
		return true
	})
	return nodes, ok
}

func cmdXInfoStream(c *Ctx) {
	k, unlock, ok := c.xinfoKey()
	defer unlock()
	if !ok {
		return
	}
	opts := c.Args[3:]
	full := len(opts) > 0
	count := int64(10)
	if full {
		if len(opts) != 1 && len(opts) != 3 || keyword(opts[0]) != "full" {
			c.subcommandSyntaxError()
			return
		}
		if len(opts) == 3 {
			if keyword(opts[1]) != "count" {
				c.subcommandSyntaxError()
				return
			}
			n, ok := c.intArg(5)
			if !ok {
				return
			}
			if n < 0 {
				n = 10
			}
			count = n
		}
	}
	m := &k.m
	nodes, ok := c.streamNodes(m)
	if !ok {
		return
	}
	gs, ok := c.groups(m)
	if !ok {
		return
	}
	var entries []*streamEntry
	var firstLast [2]*streamEntry
	if full {
		if entries, ok = c.entriesIn(m, streamID{}, maxStreamID, count, false); !ok {
			return
		}
	} else {
		for i := range firstLast {
			if firstLast[i], ok = c.edgeEntry(m, i == 1); !ok {
				return
			}
		}
	}
	if full {
		c.writeMapHeader(9)
	} else {
		c.writeMapHeader(10)
	}
	c.W.BulkString("length")
	c.W.Int(int64(m.Size))
	c.W.BulkString("radix-tree-keys")
	c.W.Int(int64(len(nodes)))
	c.W.BulkString("radix-tree-nodes")
	c.W.Int(int64(raxNodes(nodes)))
	c.W.BulkString("last-generated-id")
	c.W.Bulk(formatID(m.Stream.LastID))
	c.W.BulkString("max-deleted-entry-id")
	c.W.Bulk(formatID(m.Stream.MaxDeleted))
	c.W.BulkString("entries-added")
	c.W.Int(int64(m.Stream.EntriesAdded))
	c.W.BulkString("recorded-first-entry-id")
	c.W.Bulk(formatID(m.Stream.FirstID))
	if !full {
		c.W.BulkString("groups")
		c.W.Int(int64(len(gs)))
		for i, name := range []string{"first-entry", "last-entry"} {
			c.W.BulkString(name)
			if firstLast[i] == nil {
				c.W.NullBulk()
			} else {
				c.writeEntry(firstLast[i])
			}
		}
		return
	}
	c.W.BulkString("entries")
	c.writeEntries(entries)
	c.W.BulkString("groups")
	c.W.Array(len(gs))
	for _, g := range gs {
		all, ok := c.allPending(m, g.name, nil)
		if !ok {
			return
		}
		cs, ok := c.consumers(m, g.name)
		if !ok {
			return
		}
		c.writeMapHeader(7)
		c.W.BulkString("name")
		c.W.Bulk(g.name)
		c.W.BulkString("last-delivered-id")
		c.W.Bulk(formatID(g.LastID))
		c.writeGroupCounters(m, &g.StreamGroup)
		c.W.BulkString("pel-count")
		c.W.Int(int64(len(all)))
		c.W.BulkString("pending")
		shown := all
		if count != 0 && int64(len(shown)) > count {
			shown = shown[:count]
		}
		c.W.Array(len(shown))
		for _, p := range shown {
			c.W.Array(4)
			c.W.Bulk(formatID(p.id))
			c.W.Bulk(p.Consumer)
			c.W.Int(p.DeliveryTime)
			c.W.Int(int64(p.Deliveries))
		}
		c.W.BulkString("consumers")
		c.W.Array(len(cs))
		for _, cn := range cs {
			var own []*pendingEntry
			for _, p := range all {
				if bytes.Equal(p.Consumer, cn.name) {
					own = append(own, p)
				}
			}
			c.writeMapHeader(4)
			c.W.BulkString("name")
			c.W.Bulk(cn.name)
			c.W.BulkString("seen-time")
			c.W.Int(cn.seen)
			c.W.BulkString("pel-count")
			c.W.Int(int64(len(own)))
			c.W.BulkString("pending")
			if count != 0 && int64(len(own)) > count {
				own = own[:count]
			}
			c.W.Array(len(own))
			for _, p := range own {
				c.W.Array(3)
				c.W.Bulk(formatID(p.id))
				c.W.Int(p.DeliveryTime)
				c.W.Int(int64(p.Deliveries))
			}
		}
	}
}

// rdbID and storageID convert stream IDs between the rdb and storage
// packages.
func rdbID(id streamID) rdb.StreamID     { return rdb.StreamID{Ms: id.Ms, Seq: id.Seq} }
func storageID(id rdb.StreamID) streamID { return streamID{Ms: id.Ms, Seq: id.Seq} }

// dumpStream reads the whole stream m for DUMP.
func (c *Ctx) dumpStream(m *storage.Metadata) (*rdb.Stream, bool) {
	s := &rdb.Stream{Length: m.Size, LastID: rdbID(m.Stream.LastID), FirstID: rdbID(m.Stream.FirstID),
		MaxDeleted: rdbID(m.Stream.MaxDeleted), EntriesAdded: m.Stream.EntriesAdded}
	if !c.scanEntries(m, streamID{}, maxStreamID, false, func(e *streamEntry) bool {
		s.Entries = append(s.Entries, rdb.StreamEntry{ID: rdbID(e.id), Node: rdbID(e.node), Pairs: e.pairs})
		return true
	}) {
		return nil, false
	}
	gs, ok := c.groups(m)
	if !ok {
		return nil, false
	}
	for _, g := range gs {
		rg := rdb.StreamGroup{Name: g.name, LastID: rdbID(g.LastID), EntriesRead: g.EntriesRead}
		all, ok := c.allPending(m, g.name, nil)
		if !ok {
			return nil, false
		}
		for _, p := range all {
			rg.Pending = append(rg.Pending, rdb.StreamPending{ID: rdbID(p.id), DeliveryTime: p.DeliveryTime, DeliveryCount: p.Deliveries, Consumer: p.Consumer})
		}
		cs, ok := c.consumers(m, g.name)
		if !ok {
			return nil, false
		}
		for _, cn := range cs {
			rg.Consumers = append(rg.Consumers, rdb.StreamConsumer{Name: cn.name, SeenTime: cn.seen})
		}
		s.Groups = append(s.Groups, rg)
	}
	return s, true
}

// restoreStream commits RESTORE's write of the stream s at key (k: its
// state, made not live), expiring at ttl (0: never): its entries in the
// nodes the payload had them in, the last one the tail node.
func (c *Ctx) restoreStream(key []byte, k *keyState, s *rdb.Stream, ttl int64) bool {
	m := storage.Metadata{Type: storage.TypeStream, Version: storage.NewHashID(), ExpireAt: ttl, Size: uint64(len(s.Entries))}
	m.Stream = storage.StreamMeta{LastID: storageID(s.LastID), FirstID: storageID(s.FirstID), MaxDeleted: storageID(s.MaxDeleted),
		EntriesAdded: s.EntriesAdded, Groups: uint64(len(s.Groups))}
	b := c.newBatch(storage.TypeStream, storage.CmdRestore)
	for _, e := range s.Entries {
		b.PutField(c.ns(), m.Version, storage.StreamEntryField(storageID(e.ID)), storage.EncodeStreamEntry(storageID(e.Node), e.Pairs))
	}
	for _, e := range s.Entries { // in ID order: the head node's first
		if e.Node != s.Entries[0].Node {
			break
		}
		m.Stream.HeadMaster = storageID(e.Node)
		m.Stream.HeadLive++
	}
	if t := s.Tail; len(s.Entries) > 0 && t.Live > 0 {
		m.Stream.TailMaster = storageID(t.Master)
		m.Stream.TailLive, m.Stream.TailDeleted = t.Live, t.Deleted
		m.Stream.TailBytes = t.Bytes - min(t.Bytes, lpIntSize(int64(t.Live))+lpIntSize(int64(t.Deleted)))
		b.PutField(c.ns(), m.Version, storage.StreamMasterField(), storage.EncodeStreamEntry(streamID{}, t.Fields))
	}
	for _, g := range s.Groups {
		b.PutField(c.ns(), m.Version, storage.StreamGroupField(g.Name), storage.StreamGroup{LastID: storageID(g.LastID), EntriesRead: g.EntriesRead}.Encode())
		for _, cn := range g.Consumers {
			b.PutField(c.ns(), m.Version, storage.StreamConsumerField(g.Name, cn.Name), storage.EncodeStreamConsumer(cn.SeenTime))
		}
		for _, p := range g.Pending {
			b.PutField(c.ns(), m.Version, storage.StreamPendingField(g.Name, storageID(p.ID)),
				storage.StreamPending{DeliveryTime: p.DeliveryTime, Deliveries: p.DeliveryCount, Consumer: p.Consumer}.Encode())
		}
	}
	c.put(b, key, k, m, notify.CodeRestore)
	return c.commit(b)
}
