package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// A stream is Redis 7.0's RDB type 19 (RDB_TYPE_STREAM_LISTPACKS_2): its
// entries in listpacks (each the value of a radix-tree key, the 16-byte
// ID of its master entry), then its length, last, first and greatest
// deleted IDs, entries-added counter, and its consumer groups with their
// pending entries and consumers.

// typeStream2 is the RDB object type of a Redis 7.0 stream.
const typeStream2 = 19

// Stream entry flags in a listpack.
const (
	streamFlagDeleted    = 1
	streamFlagSameFields = 2
)

// StreamID is a stream entry ID.
type StreamID struct{ Ms, Seq uint64 }

// StreamEntry is a live entry of a stream: its ID, its field-value pairs
// (flat), and the ID of its node's master entry (Node), which names the
// listpack it is in.
type StreamEntry struct {
	ID, Node StreamID
	Pairs    [][]byte
}

// StreamNode is the state of a stream's last node, which new entries go
// to: its master ID, fields, live and deleted entry counts, and length.
type StreamNode struct {
	Master        StreamID
	Fields        [][]byte
	Live, Deleted uint64
	Bytes         uint64
}

// StreamPending is a pending entry of a consumer group.
type StreamPending struct {
	ID            StreamID
	DeliveryTime  int64
	DeliveryCount uint64
	Consumer      []byte
}

// StreamConsumer is a consumer of a group.
type StreamConsumer struct {
	Name     []byte
	SeenTime int64
}

// StreamGroup is a consumer group.
type StreamGroup struct {
	Name        []byte
	LastID      StreamID
	EntriesRead int64
	Pending     []StreamPending // in ID order
	Consumers   []StreamConsumer
}

// Stream is a stream's value.
type Stream struct {
	Entries                     []StreamEntry // in ID order
	Length                      uint64
	LastID, FirstID, MaxDeleted StreamID
	EntriesAdded                uint64
	Groups                      []StreamGroup
	// Tail is the last node as decoded (zero when there are none);
	// EncodeStream ignores it.
	Tail StreamNode
}

// appendLpInt appends a listpack integer entry.
func appendLpInt(lp []byte, v int64) []byte {
	start := len(lp)
	switch {
	case v >= 0 && v <= 127:
		lp = append(lp, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint16(v) & 0x1fff
		lp = append(lp, lpInt13|byte(u>>8), byte(u))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		lp = binary.LittleEndian.AppendUint16(append(lp, lpInt16), uint16(v))
	case v >= -(1<<23) && v < 1<<23:
		u := uint32(v)
		lp = append(lp, lpInt24, byte(u), byte(u>>8), byte(u>>16))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		lp = binary.LittleEndian.AppendUint32(append(lp, lpInt32), uint32(v))
	default:
		lp = binary.LittleEndian.AppendUint64(append(lp, lpInt64), uint64(v))
	}
	return append(lp, backlen(uint64(len(lp)-start))...)
}

// appendLpString appends a listpack entry for s: an integer when s is
// one in canonical form, as Redis's listpacks hold it.
func appendLpString(lp, s []byte) []byte {
	if len(s) > 0 && len(s) <= 20 {
		if v, err := strconv.ParseInt(string(s), 10, 64); err == nil && strconv.FormatInt(v, 10) == string(s) {
			return appendLpInt(lp, v)
		}
	}
	start := len(lp)
	n := len(s)
	switch {
	case n < 64:
		lp = append(lp, lpStr6|byte(n))
	case n < 4096:
		lp = append(lp, lpStr12|byte(n>>8), byte(n))
	default:
		lp = binary.LittleEndian.AppendUint32(append(lp, lpStr32), uint32(n))
	}
	lp = append(lp, s...)
	return append(lp, backlen(uint64(len(lp)-start))...)
}

// streamListpack encodes one node: a master entry with the first
// entry's fields, then the entries.
func streamListpack(master StreamID, es []StreamEntry) []byte {
	lp := make([]byte, lpHeader, 64)
	count := 0
	var fields [][]byte
	for i := 0; i < len(es[0].Pairs); i += 2 {
		fields = append(fields, es[0].Pairs[i])
	}
	lp = appendLpInt(lp, int64(len(es)))
	lp = appendLpInt(lp, 0)
	lp = appendLpInt(lp, int64(len(fields)))
	for _, f := range fields {
		lp = appendLpString(lp, f)
	}
	lp = appendLpInt(lp, 0)
	count += 4 + len(fields)
	for _, e := range es {
		same := len(e.Pairs) == 2*len(fields)
		for i := 0; same && i < len(fields); i++ {
			same = string(e.Pairs[2*i]) == string(fields[i])
		}
		flags := int64(0)
		if same {
			flags = streamFlagSameFields
		}
		lp = appendLpInt(lp, flags)
		lp = appendLpInt(lp, int64(e.ID.Ms-master.Ms))
		lp = appendLpInt(lp, int64(e.ID.Seq-master.Seq))
		n := len(e.Pairs) / 2
		if same {
			for i := 1; i < len(e.Pairs); i += 2 {
				lp = appendLpString(lp, e.Pairs[i])
			}
			lp = appendLpInt(lp, int64(n+3))
			count += 3 + n + 1
		} else {
			lp = appendLpInt(lp, int64(n))
			for _, p := range e.Pairs {
				lp = appendLpString(lp, p)
			}
			lp = appendLpInt(lp, int64(2*n+4))
			count += 4 + 2*n + 1
		}
	}
	lp = append(lp, lpEnd)
	binary.LittleEndian.PutUint32(lp, uint32(len(lp)))
	binary.LittleEndian.PutUint16(lp[4:], uint16(min(count, lpNoCount)))
	return lp
}

func appendRawID(out []byte, id StreamID) []byte {
	out = binary.BigEndian.AppendUint64(out, id.Ms)
	return binary.BigEndian.AppendUint64(out, id.Seq)
}

// EncodeStream returns the DUMP payload of a stream: each run of entries
// of one node (StreamEntry.Node) in a listpack of its own, as Redis 7.0
// writes it, but for deleted entries, which are left out.
func EncodeStream(s *Stream) []byte {
	out := []byte{typeStream2}
	var nodes [][]StreamEntry
	for i, e := range s.Entries {
		if i == 0 || e.Node != s.Entries[i-1].Node {
			nodes = append(nodes, nil)
		}
		nodes[len(nodes)-1] = append(nodes[len(nodes)-1], e)
	}
	out = appendLen(out, uint64(len(nodes)))
	for _, es := range nodes {
		master := es[0].Node
		if es[0].ID.Less(master) {
			master = es[0].ID
		}
		out = appendString(out, appendRawID(nil, master))
		out = appendString(out, streamListpack(master, es))
	}
	out = appendLen(out, s.Length)
	for _, id := range []StreamID{s.LastID, s.FirstID, s.MaxDeleted} {
		out = appendLen(appendLen(out, id.Ms), id.Seq)
	}
	out = appendLen(out, s.EntriesAdded)
	out = appendLen(out, uint64(len(s.Groups)))
	for _, g := range s.Groups {
		out = appendString(out, g.Name)
		out = appendLen(appendLen(out, g.LastID.Ms), g.LastID.Seq)
		out = appendLen(out, uint64(g.EntriesRead))
		out = appendLen(out, uint64(len(g.Pending)))
		for _, p := range g.Pending {
			out = appendRawID(out, p.ID)
			out = binary.LittleEndian.AppendUint64(out, uint64(p.DeliveryTime))
			out = appendLen(out, p.DeliveryCount)
		}
		out = appendLen(out, uint64(len(g.Consumers)))
		for _, cn := range g.Consumers {
			out = appendString(out, cn.Name)
			out = binary.LittleEndian.AppendUint64(out, uint64(cn.SeenTime))
			var own []StreamPending
			for _, p := range g.Pending {
				if string(p.Consumer) == string(cn.Name) {
					own = append(own, p)
				}
			}
			out = appendLen(out, uint64(len(own)))
			for _, p := range own {
				out = appendRawID(out, p.ID)
			}
		}
	}
	return appendFooter(out)
}

// Less reports whether id comes before o.
func (id StreamID) Less(o StreamID) bool {
	return id.Ms < o.Ms || id.Ms == o.Ms && id.Seq < o.Seq
}

func decodeRawID(b []byte) StreamID {
	return StreamID{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])}
}

// lpInt reads a listpack entry as an integer.
func lpInt(entries [][]byte, i int) (int64, error) {
	if i >= len(entries) {
		return 0, errors.New("stream listpack cut short")
	}
	v, err := strconv.ParseInt(string(entries[i]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stream listpack entry %q is not an integer", entries[i])
	}
	return v, nil
}

// streamNode decodes the entries of one node, whose master ID is master.
func streamNode(master StreamID, lp []byte) ([]StreamEntry, StreamNode, error) {
	node := StreamNode{Master: master, Bytes: uint64(len(lp))}
	entries, err := listpackEntries(lp)
	if err != nil {
		return nil, node, err
	}
	count, err := lpInt(entries, 0)
	if err != nil {
		return nil, node, err
	}
	deleted, err := lpInt(entries, 1)
	if err != nil {
		return nil, node, err
	}
	nf, err := lpInt(entries, 2)
	if err != nil || nf < 0 || 3+int(nf) >= len(entries) {
		return nil, node, errors.New("stream listpack with a bad master entry")
	}
	node.Fields = entries[3 : 3+nf]
	node.Live, node.Deleted = uint64(count), uint64(deleted)
	p := 3 + int(nf) + 1 // after the master's terminating 0
	var out []StreamEntry
	for p < len(entries) {
		flags, err := lpInt(entries, p)
		if err != nil {
			return nil, node, err
		}
		msd, err := lpInt(entries, p+1)
		if err != nil {
			return nil, node, err
		}
		seqd, err := lpInt(entries, p+2)
		if err != nil {
			return nil, node, err
		}
		p += 3
		e := StreamEntry{ID: StreamID{master.Ms + uint64(msd), master.Seq + uint64(seqd)}, Node: master}
		if flags&streamFlagSameFields != 0 {
			if p+int(nf) > len(entries) {
				return nil, node, errors.New("stream listpack cut short")
			}
			for i, f := range node.Fields {
				e.Pairs = append(e.Pairs, f, entries[p+i])
			}
			p += int(nf)
		} else {
			n, err := lpInt(entries, p)
			if err != nil || n < 0 || p+1+2*int(n) > len(entries) {
				return nil, node, errors.New("stream listpack with a bad entry")
			}
			e.Pairs = append(e.Pairs, entries[p+1:p+1+2*int(n)]...)
			p += 1 + 2*int(n)
		}
		p++ // lp-count
		if p > len(entries) {
			return nil, node, errors.New("stream listpack cut short")
		}
		if flags&streamFlagDeleted == 0 {
			out = append(out, e)
		}
	}
	if uint64(len(out)) != node.Live {
		return nil, node, fmt.Errorf("stream listpack of %d live entries says %d", len(out), node.Live)
	}
	return out, node, nil
}

func (r *reader) rawID() (StreamID, error) {
	b, err := r.take(16)
	if err != nil {
		return StreamID{}, err
	}
	return decodeRawID(b), nil
}

func (r *reader) idPair() (StreamID, error) {
	ms, err := r.plainLength()
	if err != nil {
		return StreamID{}, err
	}
	seq, err := r.plainLength()
	return StreamID{ms, seq}, err
}

func (r *reader) millis() (int64, error) {
	b, err := r.take(8)
	if err != nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(b)), nil
}

// stream reads a type 19 stream.
func (r *reader) stream(maxLen int64) (*Stream, error) {
	s := &Stream{}
	nodes, err := r.plainLength()
	if err != nil {
		return nil, err
	}
	for range nodes {
		key, err := r.boundedStr(maxLen)
		if err != nil {
			return nil, err
		}
		if len(key) != 16 {
			return nil, fmt.Errorf("stream node key of %d bytes", len(key))
		}
		lp, err := r.boundedStr(maxLen)
		if err != nil {
			return nil, err
		}
		es, node, err := streamNode(decodeRawID(key), lp)
		if err != nil {
			return nil, err
		}
		if len(es) == 0 {
			return nil, errors.New("empty stream listpack")
		}
		for _, e := range es {
			if len(s.Entries) > 0 && !s.Entries[len(s.Entries)-1].ID.Less(e.ID) {
				return nil, errors.New("stream entries out of order")
			}
			s.Entries = append(s.Entries, e)
		}
		s.Tail = node
	}
	if s.Length, err = r.plainLength(); err != nil {
		return nil, err
	}
	if s.Length != uint64(len(s.Entries)) {
		return nil, fmt.Errorf("stream of %d entries says %d", len(s.Entries), s.Length)
	}
	for _, id := range []*StreamID{&s.LastID, &s.FirstID, &s.MaxDeleted} {
		if *id, err = r.idPair(); err != nil {
			return nil, err
		}
	}
	if s.EntriesAdded, err = r.plainLength(); err != nil {
		return nil, err
	}
	groups, err := r.plainLength()
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for range groups {
		var g StreamGroup
		if g.Name, err = r.boundedStr(maxLen); err != nil {
			return nil, err
		}
		if names[string(g.Name)] {
			return nil, fmt.Errorf("group %q twice", g.Name)
		}
		names[string(g.Name)] = true
		if g.LastID, err = r.idPair(); err != nil {
			return nil, err
		}
		read, err := r.plainLength()
		if err != nil {
			return nil, err
		}
		g.EntriesRead = int64(read)
		npel, err := r.plainLength()
		if err != nil {
			return nil, err
		}
		owner := map[StreamID]int{}
		for range npel {
			var p StreamPending
			if p.ID, err = r.rawID(); err != nil {
				return nil, err
			}
			if p.DeliveryTime, err = r.millis(); err != nil {
				return nil, err
			}
			if p.DeliveryCount, err = r.plainLength(); err != nil {
				return nil, err
			}
			if _, dup := owner[p.ID]; dup {
				return nil, errors.New("a pending entry twice in a group")
			}
			owner[p.ID] = len(g.Pending)
			g.Pending = append(g.Pending, p)
		}
		ncons, err := r.plainLength()
		if err != nil {
			return nil, err
		}
		consumers := map[string]bool{}
		owned := make([]bool, len(g.Pending))
		for range ncons {
			var cn StreamConsumer
			if cn.Name, err = r.boundedStr(maxLen); err != nil {
				return nil, err
			}
			if consumers[string(cn.Name)] {
				return nil, fmt.Errorf("consumer %q twice", cn.Name)
			}
			consumers[string(cn.Name)] = true
			if cn.SeenTime, err = r.millis(); err != nil {
				return nil, err
			}
			n, err := r.plainLength()
			if err != nil {
				return nil, err
			}
			for range n {
				id, err := r.rawID()
				if err != nil {
					return nil, err
				}
				i, ok := owner[id]
				if !ok || owned[i] {
					return nil, errors.New("a consumer's pending entry is not its group's, or another's too")
				}
				owned[i] = true
				g.Pending[i].Consumer = append([]byte{}, cn.Name...)
			}
			g.Consumers = append(g.Consumers, cn)
		}
		for _, o := range owned {
			if !o {
				return nil, errors.New("a group's pending entry has no consumer")
			}
		}
		s.Groups = append(s.Groups, g)
	}
	return s, nil
}
