package commands

import (
	"bytes"
	"math"
	"strconv"

	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/storage"
)

// Streams keep each entry in a field record of its own, named by its ID
// so that ranges of IDs are ranges of records, beside their consumer
// groups' records (storage/streams.go). The commands follow Redis 7.0's
// t_stream.c: argument order, errors, events and reply shapes.

func init() {
	x := oneKeyCommand("stream")
	xadd := x("xadd", -5, FlagWrite|FlagDenyOOM|FlagFast, KeyRW|KeyUpdate, "5.0.0", "Appends a new message to a stream. Creates the key if it doesn't exist.", cmdXAdd)
	xadd.KeySpecs[0] = xadd.KeySpecs[0].Note("UPDATE instead of INSERT because of the optional trimming feature")
	register(
		withTips(xadd, "nondeterministic_output"),
		x("xlen", 2, FlagReadOnly|FlagFast, KeyRO, "5.0.0", "Return the number of messages in a stream.", cmdXLen),
		x("xrange", -4, FlagReadOnly, KeyRO|KeyAccess, "5.0.0", "Returns the messages from a stream within a range of IDs.", func(c *Ctx) { xrange(c, false) }),
		x("xrevrange", -4, FlagReadOnly, KeyRO|KeyAccess, "5.0.0", "Returns the messages from a stream within a range of IDs in reverse order.", func(c *Ctx) { xrange(c, true) }),
		x("xdel", -3, FlagWrite|FlagFast, KeyRW|KeyDelete, "5.0.0", "Returns the number of messages after removing them from a stream.", cmdXDel),
		withTips(x("xtrim", -4, FlagWrite, KeyRW|KeyDelete, "5.0.0", "Deletes messages from the beginning of a stream.", cmdXTrim), "nondeterministic_output"),
		x("xsetid", -3, FlagWrite|FlagDenyOOM|FlagFast, KeyRW|KeyUpdate, "5.0.0", "An internal command for replicating stream values.", cmdXSetID),
		&Spec{Name: "xread", Arity: -4, Flags: FlagReadOnly | FlagBlocking, KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, Begin: AfterKeyword("STREAMS", 1), Find: Range(-1, 1, 2)}},
			Group: "stream", Since: "5.0.0", Summary: "Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a message is available otherwise.", Handler: cmdXRead},
	)
}

// streamID is a stream entry ID.
type streamID = storage.StreamID

// maxStreamID is the greatest ID, ">" internally and "+" in ranges.
var maxStreamID = streamID{Ms: math.MaxUint64, Seq: math.MaxUint64}

// Errors of the stream commands, with Redis's texts.
const (
	errInvalidStreamID = "ERR Invalid stream ID specified as stream command argument"
	errXAddTooSmall    = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
)

// compareIDs returns -1, 0 or 1 as a is before, equal to or after b.
func compareIDs(a, b streamID) int {
	switch {
	case a.Less(b):
		return -1
	case b.Less(a):
		return 1
	}
	return 0
}

// incrID returns the ID after id, and false when there is none.
func incrID(id streamID) (streamID, bool) {
	switch {
	case id.Seq < math.MaxUint64:
		id.Seq++
	case id.Ms < math.MaxUint64:
		id.Ms, id.Seq = id.Ms+1, 0
	default:
		return streamID{}, false
	}
	return id, true
}

// decrID returns the ID before id, and false when there is none.
func decrID(id streamID) (streamID, bool) {
	switch {
	case id.Seq > 0:
		id.Seq--
	case id.Ms > 0:
		id.Ms, id.Seq = id.Ms-1, math.MaxUint64
	default:
		return streamID{}, false
	}
	return id, true
}

// formatID formats id as Redis replies with it.
func formatID(id streamID) []byte {
	b := strconv.AppendUint(make([]byte, 0, 41), id.Ms, 10)
	b = append(b, '-')
	return strconv.AppendUint(b, id.Seq, 10)
}

// parseULL parses an unsigned number as Redis's string2ull does: a
// strict integer that is not negative, or else what strtoull accepts in
// full (leading spaces, a sign, leading zeros; a minus negates).
func parseULL(b []byte) (uint64, bool) {
	if n, ok := parseInt(b); ok {
		return uint64(n), n >= 0
	}
	s := b
	for len(s) > 0 && (s[0] == ' ' || s[0] >= '\t' && s[0] <= '\r') {
		s = s[1:]
	}
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 {
		return 0, false
	}
	var n uint64
	for _, ch := range s {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		d := uint64(ch - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false // ERANGE
		}
		n = n*10 + d
	}
	if neg {
		n = -n
	}
	return n, true
}

// parseStreamID parses an ID argument as Redis's
// streamGenericParseIDOrReply does: "-" and "+" (unless strict), "ms"
// (seq missingSeq) or "ms-seq"; with seqGiven non-nil, also "ms-*", for
// which it sets *seqGiven to false.
func parseStreamID(arg []byte, missingSeq uint64, strict bool, seqGiven *bool) (streamID, bool) {
	if len(arg) > 127 {
		return streamID{}, false
	}
	arg = cString(arg) // Redis parses a C string
	if strict && len(arg) == 1 && (arg[0] == '-' || arg[0] == '+') {
		return streamID{}, false
	}
	if seqGiven != nil {
		*seqGiven = true
	}
	if len(arg) == 1 && arg[0] == '-' {
		return streamID{}, true
	}
	if len(arg) == 1 && arg[0] == '+' {
		return maxStreamID, true
	}
	msPart, seqPart, dash := bytes.Cut(arg, []byte("-"))
	ms, ok := parseULL(msPart)
	if !ok {
		return streamID{}, false
	}
	seq := missingSeq
	if dash {
		if seqGiven != nil && len(seqPart) == 1 && seqPart[0] == '*' {
			seq, *seqGiven = 0, false
		} else if seq, ok = parseULL(seqPart); !ok {
			return streamID{}, false
		}
	}
	return streamID{Ms: ms, Seq: seq}, true
}

// streamIDArgs parses Args[from:] as strict IDs (XDEL, XACK), replying
// Redis's error at the first that is not one.
func (c *Ctx) streamIDArgs(from int) ([]streamID, bool) {
	ids := make([]streamID, 0, len(c.Args)-from)
	for i := from; i < len(c.Args); i++ {
		id, ok := c.streamIDArg(i, 0)
		if !ok {
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

// streamIDArg parses Args[i] as a strict ID, replying Redis's error.
func (c *Ctx) streamIDArg(i int, missingSeq uint64) (streamID, bool) {
	id, ok := parseStreamID(c.Args[i], missingSeq, true, nil)
	if !ok {
		c.W.Error(errInvalidStreamID)
	}
	return id, ok
}

// intervalIDArg parses a range bound of XRANGE, XPENDING or XAUTOCLAIM:
// an ID, "-", "+", or "(" and a strict ID for an exclusive bound.
func (c *Ctx) intervalIDArg(arg []byte, missingSeq uint64) (id streamID, exclusive, ok bool) {
	if len(arg) > 1 && arg[0] == '(' {
		id, ok = parseStreamID(arg[1:], missingSeq, true, nil)
		exclusive = true
	} else {
		id, ok = parseStreamID(arg, missingSeq, false, nil)
	}
	if !ok {
		c.W.Error(errInvalidStreamID)
	}
	return id, exclusive, ok
}

// streamEntry is an entry read from storage.
type streamEntry struct {
	id    streamID
	node  streamID // its node's master ID
	pairs [][]byte
}

// scanEntries calls fn with the entries of the stream m from start to
// end (inclusive), in order or reversed, until fn returns false; on a
// storage error it replies and returns false.
func (c *Ctx) scanEntries(m *storage.Metadata, start, end streamID, rev bool, fn func(e *streamEntry) bool) bool {
	if m.Size > 0 && start.Less(m.Stream.FirstID) {
		// No entry comes before the first: the scan starts there, not
		// among the deletions of trimmed entries before it, which Pebble
		// steps over one by one until a compaction drops them (an XRANGE
		// - + COUNT 10 took 100 ms after 50,000 trimmed entries).
		start = m.Stream.FirstID
	}
	if end.Less(start) {
		return true
	}
	from := storage.StreamEntryField(start)
	var to []byte
	if next, ok := incrID(end); ok {
		to = storage.StreamEntryField(next)
	} else {
		to = storage.PrefixEnd(storage.StreamEntryPrefix())
	}
	return c.scanStream(m, from, to, rev, func(f, v []byte) (bool, error) {
		node, pairs, err := storage.DecodeStreamEntry(v)
		if err != nil {
			return false, err
		}
		return fn(&streamEntry{id: storage.StreamFieldID(f), node: node, pairs: pairs}), nil
	})
}

// scanStream calls fn with the records of the stream m in [from, to), in
// order or reversed, until fn returns false or an error (a record it
// cannot decode); on that error or a storage error it replies and
// returns false.
func (c *Ctx) scanStream(m *storage.Metadata, from, to []byte, rev bool, fn func(f, v []byte) (bool, error)) bool {
	var ferr error
	err := c.Env.Store.ScanFieldRange(c.batch(), c.ns(), m, from, to, rev, func(f, v []byte) bool {
		more, err := fn(f, v)
		ferr = err
		return more && err == nil
	})
	if err == nil {
		err = ferr
	}
	if err != nil {
		c.storageError(err)
		return false
	}
	return true
}

// entriesIn returns up to count entries (0: all) of m from start to end.
func (c *Ctx) entriesIn(m *storage.Metadata, start, end streamID, count int64, rev bool) ([]*streamEntry, bool) {
	var out []*streamEntry
	ok := c.scanEntries(m, start, end, rev, func(e *streamEntry) bool {
		out = append(out, e)
		return count == 0 || int64(len(out)) < count
	})
	return out, ok
}

// edgeEntry returns the first (or, with last, the last) entry of m.
func (c *Ctx) edgeEntry(m *storage.Metadata, last bool) (*streamEntry, bool) {
	es, ok := c.entriesIn(m, streamID{}, maxStreamID, 1, last)
	if !ok || len(es) == 0 {
		return nil, ok
	}
	return es[0], true
}

// writeEntry writes an entry: its ID and its field-value pairs.
func (c *Ctx) writeEntry(e *streamEntry) {
	c.W.Array(2)
	c.W.Bulk(formatID(e.id))
	c.W.Array(len(e.pairs))
	for _, p := range e.pairs {
		c.W.Bulk(p)
	}
}

// writeEntries writes an array of entries.
func (c *Ctx) writeEntries(es []*streamEntry) {
	c.W.Array(len(es))
	for _, e := range es {
		c.writeEntry(e)
	}
}

// lpIntSize returns the bytes a listpack takes for integer v, its
// back-length included.
func lpIntSize(v int64) uint64 {
	switch {
	case v >= 0 && v <= 127:
		return 2
	case v >= -4096 && v <= 4095:
		return 3
	case v >= -32768 && v <= 32767:
		return 4
	case v >= -8388608 && v <= 8388607:
		return 5
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return 6
	}
	return 10
}

// lpStringSize returns the bytes a listpack takes for string s (an
// integer if it reads as one), its back-length included.
func lpStringSize(s []byte) uint64 {
	if len(s) <= 20 {
		if v, ok := parseInt(s); ok {
			return lpIntSize(v)
		}
	}
	n := uint64(len(s))
	switch {
	case n < 64:
		n++
	case n < 4096:
		n += 2
	default:
		n += 5
	}
	switch {
	case n <= 127:
		return n + 1
	case n < 16383:
		return n + 2
	case n < 2097151:
		return n + 3
	case n < 268435455:
		return n + 4
	}
	return n + 5
}

// appendEntry adds entry id with pairs to the stream m (its metadata,
// updated), placing it in the tail node as Redis would: a new node when
// the tail one is full (stream-node-max-entries, stream-node-max-bytes).
// It reports false after replying a storage error.
func (c *Ctx) appendEntry(b *storage.Batch, m *storage.Metadata, id streamID, pairs [][]byte) bool {
	s := &m.Stream
	var total uint64
	for _, p := range pairs {
		total += uint64(len(p))
	}
	maxBytes := uint64(c.Env.settings().streamNodeMaxBytes.Int())
	if maxBytes == 0 || maxBytes > 1<<30 {
		maxBytes = 1 << 30
	}
	maxEntries := uint64(c.Env.settings().streamNodeMaxEntries.Int())
	var master [][]byte
	hasTail := s.TailBytes != 0
	if hasTail {
		lpBytes := s.TailBytes + lpIntSize(int64(s.TailLive)) + lpIntSize(int64(s.TailDeleted))
		if lpBytes+total >= maxBytes || maxEntries != 0 && s.TailLive+s.TailDeleted >= maxEntries {
			hasTail = false
		} else {
			v, found, ok := c.field(m, storage.StreamMasterField())
			if !ok {
				return false
			}
			if found {
				_, master, _ = storage.DecodeStreamEntry(v)
			}
		}
	}
	if !hasTail {
		// A new node, its master entry the first entry's fields.
		master = make([][]byte, 0, len(pairs)/2)
		for i := 0; i < len(pairs); i += 2 {
			master = append(master, pairs[i])
		}
		s.TailMaster, s.TailLive, s.TailDeleted = id, 0, 0
		s.TailBytes = 6 + 1 + lpIntSize(int64(len(master))) + lpIntSize(0)
		for _, f := range master {
			s.TailBytes += lpStringSize(f)
		}
		b.PutField(c.ns(), m.Version, storage.StreamMasterField(), storage.EncodeStreamEntry(streamID{}, master))
	}
	same := len(master) == len(pairs)/2
	for i := 0; same && i < len(master); i++ {
		same = bytes.Equal(master[i], pairs[2*i])
	}
	n := uint64(2) + lpIntSize(int64(id.Ms-s.TailMaster.Ms)) + lpIntSize(int64(id.Seq-s.TailMaster.Seq))
	count := int64(len(pairs)/2) + 3
	for i := 0; i < len(pairs); i += 2 {
		if !same {
			n += lpStringSize(pairs[i])
		}
		n += lpStringSize(pairs[i+1])
	}
	if !same {
		n += lpIntSize(int64(len(pairs) / 2))
		count += int64(len(pairs)/2) + 1
	}
	n += lpIntSize(count)
	s.TailBytes += n
	s.TailLive++
	b.PutField(c.ns(), m.Version, storage.StreamEntryField(id), storage.EncodeStreamEntry(s.TailMaster, pairs))
	m.Size++
	s.EntriesAdded++
	s.LastID = id
	switch {
	case m.Size == 1:
		s.FirstID = id
		s.HeadMaster, s.HeadLive = s.TailMaster, 1
	case s.HeadLive != 0 && s.HeadMaster == s.TailMaster:
		s.HeadLive++
	}
	return true
}

// deleteEntries removes the entries es (in ID order) from the stream m
// (its metadata, updated): their records, and the tail node's counts.
func (c *Ctx) deleteEntries(b *storage.Batch, m *storage.Metadata, es []*streamEntry) {
	s := &m.Stream
	for _, e := range es {
		b.PutField(c.ns(), m.Version, storage.StreamEntryField(e.id), nil)
		m.Size--
		if e.node == s.HeadMaster && s.HeadLive != 0 {
			s.HeadLive-- // 0, unknown, once the head node is gone
		}
		if e.node == s.TailMaster && s.TailBytes != 0 {
			s.TailLive--
			s.TailDeleted++
		}
	}
	if s.TailBytes != 0 && s.TailLive == 0 {
		// The tail node is freed with its last entry: the next entry
		// starts a new one.
		s.TailLive, s.TailDeleted, s.TailBytes = 0, 0, 0
		s.TailMaster = streamID{}
		b.PutField(c.ns(), m.Version, storage.StreamMasterField(), nil)
	}
}

// fixFirstID sets the stream's first ID after the deletion of gone (in
// ID order), which the storage still holds; added (nil: none) is an
// entry after all others that it does not hold yet.
func (c *Ctx) fixFirstID(m *storage.Metadata, gone []*streamEntry, added *streamEntry) bool {
	if m.Size <= uint64(len(gone)) {
		m.Stream.FirstID = streamID{}
		return true
	}
	deleted := make(map[streamID]bool, len(gone))
	for _, e := range gone {
		deleted[e.id] = true
	}
	held := *m // the stream as the storage holds it, its first ID still right
	if added != nil && !deleted[added.id] {
		m.Stream.FirstID = added.id // unless the scan finds an earlier one
	}
	return c.scanEntries(&held, streamID{}, maxStreamID, false, func(e *streamEntry) bool {
		if deleted[e.id] {
			return true
		}
		m.Stream.FirstID = e.id
		return false
	})
}

// trimArgs are the trimming options of XADD and XTRIM.
type trimArgs struct {
	strategy byte // 0: none, 'M': MAXLEN, 'I': MINID
	approx   bool
	maxLen   int64
	minID    streamID
	limit    int64
}

// parseTrimArgs parses the options of XADD (xadd: up to its ID, at which
// it stops; idAt is its index) and XTRIM from Args[i], as Redis's
// streamParseAddOrTrimArgsOrReply does, replying its errors.
func (c *Ctx) parseTrimArgs(i int, xadd bool) (t trimArgs, idAt int, id streamID, idGiven, seqGiven, noMkStream, ok bool) {
	limitGiven := false
	seqGiven = true
	args := c.Args
	for ; i < len(args); i++ {
		more := len(args) - 1 - i
		opt := keyword(args[i])
		switch {
		case xadd && string(cString(args[i])) == "*":
			idAt = i
			return c.finishTrimArgs(t, limitGiven, xadd, idAt, id, false, false, noMkStream)
		case (opt == "maxlen" || opt == "minid") && more > 0:
			if t.strategy != 0 {
				c.W.Error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
				return
			}
			t.approx = false
			next := args[i+1]
			if more >= 2 && len(next) == 1 && (next[0] == '~' || next[0] == '=') {
				t.approx = next[0] == '~'
				i++
			}
			if opt == "maxlen" {
				n, isInt := parseInt(args[i+1])
				if !isInt {
					c.W.Error(errNotInt)
					return
				}
				if n < 0 {
					c.W.Error("ERR The MAXLEN argument must be >= 0.")
					return
				}
				t.maxLen, t.strategy = n, 'M'
			} else {
				if t.minID, ok = c.streamIDArg(i+1, 0); !ok {
					return
				}
				ok = false
				t.strategy = 'I'
			}
			i++
		case opt == "limit" && more > 0:
			n, isInt := parseInt(args[i+1])
			if !isInt {
				c.W.Error(errNotInt)
				return
			}
			if n < 0 {
				c.W.Error("ERR The LIMIT argument must be >= 0.")
				return
			}
			t.limit, limitGiven = n, true
			i++
		case xadd && opt == "nomkstream":
			noMkStream = true
		case xadd:
			var given bool
			parsed, good := parseStreamID(args[i], 0, true, &given)
			if !good {
				c.W.Error(errInvalidStreamID)
				return
			}
			return c.finishTrimArgs(t, limitGiven, xadd, i, parsed, true, given, noMkStream)
		default:
			c.W.Error(errSyntax)
			return
		}
	}
	return c.finishTrimArgs(t, limitGiven, xadd, i, id, false, false, noMkStream)
}

// finishTrimArgs checks the trimming options parseTrimArgs read.
func (c *Ctx) finishTrimArgs(t trimArgs, limitGiven, xadd bool, idAt int, id streamID, idGiven, seqGiven, noMkStream bool) (trimArgs, int, streamID, bool, bool, bool, bool) {
	fail := func(msg string) (trimArgs, int, streamID, bool, bool, bool, bool) {
		c.W.Error(msg)
		return t, 0, id, false, false, false, false
	}
	if t.limit != 0 && t.strategy == 0 {
		return fail("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
	}
	if !xadd && t.strategy == 0 {
		return fail("ERR syntax error, XTRIM must be called with a trimming strategy")
	}
	switch {
	case limitGiven:
		if !t.approx {
			return fail("ERR syntax error, LIMIT cannot be used without the special ~ option")
		}
	case t.approx:
		t.limit = 100 * c.Env.settings().streamNodeMaxEntries.Int()
		if t.limit <= 0 || t.limit > 10000 {
			t.limit = 10000
		}
	default:
		t.limit = 0
	}
	return t, idAt, id, idGiven, seqGiven, noMkStream, true
}

// trim trims the stream m (metadata updated) as Redis's streamTrim does:
// whole nodes while they fall entirely outside what is kept, then, unless
// approx, single entries; LIMIT bounds the entries a trim with approx
// deletes. added is the entry XADD just wrote to b (nil for XTRIM),
// which the storage does not hold yet. It returns how many entries it
// deleted.
//
// When the stream's metadata knows the head node's live entries
// (StreamMeta.HeadLive), a MAXLEN trim that keeps the head node decides
// so without reading it, as Redis reads the node's count: XADD with
// MAXLEN ~ then reads no entry until a whole node may go.
func (c *Ctx) trim(b *storage.Batch, m *storage.Metadata, t *trimArgs, added *streamEntry) (int64, bool) {
	s := &m.Stream
	if t.strategy == 'M' && int64(m.Size) <= t.maxLen {
		return 0, true
	}
	if t.strategy == 'I' && !s.FirstID.Less(t.minID) && m.Size > 0 {
		return 0, true
	}
	length := int64(m.Size)
	if head := int64(s.HeadLive); t.strategy == 'M' && head != 0 && (length-head < t.maxLen || t.limit != 0 && head > t.limit) {
		if t.approx {
			return 0, true
		}
		// Fewer than the head node's entries go: the first ones.
		return c.trimFirst(b, m, length-t.maxLen, added)
	}
	var gone []*streamEntry
	deleted := int64(0)
	// The first node the walk keeps, when it read all of it: the head
	// node once the trim is done.
	var headMaster streamID
	var headLive int64
	// visit decides on a whole node, from the first one on, and reports
	// whether the next one may go too: the walk reads no further.
	visit := func(node []*streamEntry) bool {
		kept := int64(len(node))
		defer func() { headMaster, headLive = node[0].node, kept }()
		if t.strategy == 'M' && length <= t.maxLen {
			return false
		}
		entries := int64(len(node))
		if t.limit != 0 && deleted+entries > t.limit {
			return false
		}
		var remove bool
		if t.strategy == 'M' {
			remove = length-entries >= t.maxLen
		} else {
			remove = node[len(node)-1].id.Less(t.minID)
		}
		if remove {
			gone = append(gone, node...)
			length -= entries
			deleted += entries
			kept = 0
			return true
		}
		if t.approx {
			return false
		}
		for _, e := range node {
			if t.strategy == 'M' && length <= t.maxLen || t.strategy == 'I' && !e.id.Less(t.minID) {
				break
			}
			gone = append(gone, e)
			length--
			deleted++
			kept--
		}
		return false
	}
	var cur []*streamEntry // the node being read
	walking := true
	next := func(e *streamEntry) bool {
		newNode := len(cur) > 0 && cur[0].node != e.node
		if newNode {
			if walking = visit(cur); !walking {
				return false
			}
			cur = nil
		}
		if t.strategy == 'I' && !e.id.Less(t.minID) {
			// Nothing from here on goes. The node of e stays, unread
			// beyond e; exact trimming deletes its entries before e.
			if !t.approx && len(cur) > 0 {
				visit(cur)
			}
			headLive, walking = 0, false
			return false
		}
		cur = append(cur, e)
		return true
	}
	if !c.scanEntries(m, streamID{}, maxStreamID, false, next) {
		return 0, false
	}
	// A transaction's batch, which the scan reads, may hold added.
	if walking && added != nil && (len(cur) == 0 || cur[len(cur)-1].id != added.id) {
		next(added)
	}
	if walking && len(cur) > 0 {
		visit(cur)
	}
	if len(gone) > 0 {
		if !c.fixFirstID(m, gone, added) {
			return 0, false
		}
		c.deleteEntries(b, m, gone)
	}
	if headLive > 0 {
		s.HeadMaster, s.HeadLive = headMaster, uint64(headLive)
	}
	return deleted, true
}

// trimFirst deletes the first n entries of the stream m (metadata
// updated), all of them in its head node, which keeps more than n: the
// end of an exact MAXLEN trim. added is as for trim. The entry after
// them, read by the same scan, is the new first (added when the storage
// does not hold it yet).
func (c *Ctx) trimFirst(b *storage.Batch, m *storage.Metadata, n int64, added *streamEntry) (int64, bool) {
	gone := make([]*streamEntry, 0, n)
	first := added
	if !c.scanEntries(m, streamID{}, maxStreamID, false, func(e *streamEntry) bool {
		if int64(len(gone)) == n {
			first = e
			return false
		}
		gone = append(gone, e)
		return true
	}) {
		return 0, false
	}
	if first != nil { // else the head count was wrong: DEBUG CHECK-VALUES says so
		m.Stream.FirstID = first.id
	}
	c.deleteEntries(b, m, gone)
	return int64(len(gone)), true
}

// nextAutoID returns the ID XADD "*" gives after last at now (ms).
func nextAutoID(last streamID, now int64) (streamID, bool) {
	if uint64(now) > last.Ms {
		return streamID{Ms: uint64(now)}, true
	}
	return incrID(last)
}

func cmdXAdd(c *Ctx) {
	t, idAt, id, idGiven, seqGiven, noMk, ok := c.parseTrimArgs(2, true)
	if !ok {
		return
	}
	fieldsAt := idAt + 1
	if n := len(c.Args) - fieldsAt; n < 2 || n%2 == 1 {
		c.wrongArity()
		return
	}
	if idGiven && seqGiven && id.IsZero() {
		c.W.Error("ERR The ID specified in XADD must be greater than 0-0")
		return
	}
	key := c.Args[1]
	k, m, unlock, ok := c.lockedOf(key, storage.TypeStream)
	defer unlock()
	if !ok {
		return
	}
	if !k.live && noMk {
		c.W.NullBulk()
		return
	}
	last := m.Stream.LastID
	if last == maxStreamID {
		c.W.Error("ERR The stream has exhausted the last possible ID, unable to add more items")
		return
	}
	switch {
	case !idGiven:
		id, _ = nextAutoID(last, c.nowMs())
	case !seqGiven:
		if id.Ms == last.Ms {
			if last.Seq == math.MaxUint64 {
				// Redis fails here without setting errno, and replies
				// with this error.
				c.W.Error("ERR Elements are too large to be stored")
				return
			}
			id.Seq = last.Seq + 1
		}
	}
	b := c.newBatch(storage.TypeStream, storage.CmdXAdd)
	if !last.Less(id) {
		if k.live {
			c.discard(b)
			c.W.Error(errXAddTooSmall)
			return
		}
		// Redis created the stream before it failed to append: the empty
		// stream stays.
		c.put(b, key, &k, m)
		if c.commit(b) {
			c.W.Error(errXAddTooSmall)
		}
		return
	}
	if !c.appendEntry(b, &m, id, c.Args[fieldsAt:]) {
		c.discard(b)
		return
	}
	added := &streamEntry{id: id, node: m.Stream.TailMaster}
	codes := []notify.Code{notify.CodeXAdd}
	if t.strategy != 0 {
		n, ok := c.trim(b, &m, &t, added)
		if !ok {
			c.discard(b)
			return
		}
		if n > 0 {
			codes = append(codes, notify.CodeXTrim)
		}
	}
	c.put(b, key, &k, m, codes...)
	c.keyWritten(storage.TypeStream, key)
	if c.commit(b) {
		c.W.Bulk(formatID(id))
	}
}

func cmdXLen(c *Ctx) { cardinality(c, storage.TypeStream) }

// xrange is XRANGE and XREVRANGE (rev).
func xrange(c *Ctx, rev bool) {
	startArg, endArg := c.Args[2], c.Args[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, ex, ok := c.intervalIDArg(startArg, 0)
	if !ok {
		return
	}
	if ex {
		if start, ok = incrID(start); !ok {
			c.W.Error("ERR invalid start ID for the interval")
			return
		}
	}
	end, ex, ok := c.intervalIDArg(endArg, math.MaxUint64)
	if !ok {
		return
	}
	if ex {
		if end, ok = decrID(end); !ok {
			c.W.Error("ERR invalid end ID for the interval")
			return
		}
	}
	count := int64(-1)
	for j := 4; j < len(c.Args); j++ {
		if keyword(c.Args[j]) == "count" && j+1 < len(c.Args) {
			n, ok := c.intArg(j + 1)
			if !ok {
				return
			}
			count = max(n, 0)
			j++
		} else {
			c.W.Error(errSyntax)
			return
		}
	}
	k, unlock, ok := c.lookupOf(c.Args[1], storage.TypeStream, true)
	defer unlock()
	switch {
	case !ok:
		return
	case !k.live:
		c.W.Array(0)
		return
	case count == 0:
		c.W.NullArray()
		return
	}
	es, ok := c.entriesIn(&k.m, start, end, max(count, 0), rev)
	if ok {
		c.writeEntries(es)
	}
}

func cmdXDel(c *Ctx) {
	key := c.Args[1]
	defer c.lock(key)()
	k, ok := c.readOf(key, storage.TypeStream)
	if !ok {
		return
	}
	if !k.live {
		c.W.Int(0)
		return
	}
	ids, ok := c.streamIDArgs(2)
	if !ok {
		return
	}
	m := k.m
	var gone []*streamEntry
	seen := map[streamID]bool{}
	firstGone := false
	for _, id := range ids {
		if seen[id] {
			continue
		}
		es, ok := c.entriesIn(&m, id, id, 1, false)
		if !ok {
			return
		}
		if len(es) == 0 {
			continue
		}
		seen[id] = true
		gone = append(gone, es[0])
		if id == m.Stream.FirstID {
			firstGone = true
		}
		if m.Stream.MaxDeleted.Less(id) {
			m.Stream.MaxDeleted = id
		}
	}
	if len(gone) == 0 {
		c.W.Int(0)
		return
	}
	if uint64(len(gone)) == m.Size || firstGone {
		if !c.fixFirstID(&m, gone, nil) {
			return
		}
	}
	b := c.newBatch(storage.TypeStream, storage.CmdXDel)
	c.deleteEntries(b, &m, gone)
	c.put(b, key, &k, m, notify.CodeXDel)
	if c.commit(b) {
		c.W.Int(int64(len(gone)))
	}
}

func cmdXTrim(c *Ctx) {
	t, _, _, _, _, _, ok := c.parseTrimArgs(2, false)
	if !ok {
		return
	}
	key := c.Args[1]
	defer c.lock(key)()
	k, ok := c.readOf(key, storage.TypeStream)
	if !ok {
		return
	}
	if !k.live {
		c.W.Int(0)
		return
	}
	m := k.m
	b := c.newBatch(storage.TypeStream, storage.CmdXTrim)
	n, ok := c.trim(b, &m, &t, nil)
	if !ok || n == 0 {
		c.discard(b)
		if ok {
			c.W.Int(0)
		}
		return
	}
	c.put(b, key, &k, m, notify.CodeXTrim)
	if c.commit(b) {
		c.W.Int(n)
	}
}

func cmdXSetID(c *Ctx) {
	id, ok := c.streamIDArg(2, 0)
	if !ok {
		return
	}
	entriesAdded := int64(-1)
	var maxDel streamID
	for i := 3; i < len(c.Args); i += 2 {
		opt := keyword(c.Args[i])
		more := i+1 < len(c.Args)
		switch {
		case opt == "entriesadded" && more:
			n, ok := c.intArg(i + 1)
			if !ok {
				return
			}
			if n < 0 {
				c.W.Error("ERR entries_added must be positive")
				return
			}
			entriesAdded = n
		case opt == "maxdeletedid" && more:
			if maxDel, ok = c.streamIDArg(i+1, 0); !ok {
				return
			}
			if id.Less(maxDel) {
				c.W.Error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
		default:
			c.W.Error(errSyntax)
			return
		}
	}
	key := c.Args[1]
	defer c.lock(key)()
	k, ok := c.readOf(key, storage.TypeStream)
	if !ok {
		return
	}
	if !k.live {
		c.W.Error(errNoSuchKey)
		return
	}
	m := k.m
	if m.Size > 0 {
		e, ok := c.edgeEntry(&m, true)
		if !ok {
			return
		}
		if e != nil && id.Less(e.id) {
			c.W.Error("ERR The ID specified in XSETID is smaller than the target stream top item")
			return
		}
		if entriesAdded != -1 && m.Size > uint64(entriesAdded) {
			c.W.Error("ERR The entries_added specified in XSETID is smaller than the target stream length")
			return
		}
	}
	m.Stream.LastID = id
	if entriesAdded != -1 {
		m.Stream.EntriesAdded = uint64(entriesAdded)
	}
	if !maxDel.IsZero() {
		m.Stream.MaxDeleted = maxDel
	}
	b := c.newBatch(storage.TypeStream, storage.CmdXSetID)
	c.put(b, key, &k, m, notify.CodeXSetID)
	if c.commit(b) {
		c.W.OK()
	}
}
