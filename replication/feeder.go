package replication

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnkv/cairn/sockio"
)

// heartbeatEvery is how often an idle stream carries a heartbeat, and how
// often replicas acknowledge.
const heartbeatEvery = time.Second

// feeder serves one replica on the primary: a full sync if needed, then
// the stream of batches from the log, pushed as they are appended.
type feeder struct {
	n        *Node
	nc       net.Conn
	sock     *sockio.Conn // nc's writes, with raw system calls
	addr     string
	port     int
	acked    atomic.Uint64
	lastAck  atomic.Int64 // unix nanos
	state    atomic.Value // string
	stopOnce sync.Once
	cancel   context.CancelFunc
}

func (f *feeder) close() {
	f.stopOnce.Do(func() {
		if f.cancel != nil {
			f.cancel()
		}
		f.nc.Close()
	})
}

func (f *feeder) stateInfo() ReplicaState {
	s, _ := f.state.Load().(string)
	return ReplicaState{Addr: f.addr, Port: f.port, State: s, Offset: f.acked.Load(), LastAck: time.Unix(0, f.lastAck.Load())}
}

// CommandReader reads the replica's commands (REPLCONF ACK) after PSYNC.
type CommandReader func() ([][]byte, error)

// ServePSYNC takes over a connection whose client sent PSYNC replid
// offset (the next offset it wants), after REPLCONF listening-port port
// and, when it announced one, REPLCONF ip-address ip ("" for none: the
// connection's peer address).
// It answers +CONTINUE and streams when the log covers the offset and the
// id is this node's current one (or the previous one, up to the offset
// where it ended); otherwise it answers +FULLRESYNC and ships a checkpoint
// first. It returns when the replica goes or the node stops feeding it.
func (n *Node) ServePSYNC(nc net.Conn, readCmd CommandReader, replID string, want uint64, ip string, port int) {
	host := ip
	if host == "" {
		host, _, _ = net.SplitHostPort(nc.RemoteAddr().String())
	}
	f := &feeder{n: n, nc: nc, sock: sockio.Wrap(nc), addr: host, port: port}
	f.state.Store("wait_bgsave")
	f.lastAck.Store(time.Now().UnixNano())
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	n.mu.Lock()
	id, id2, second := n.replID, n.replID2, n.secondOffset
	n.feeders[f] = struct{}{}
	n.mu.Unlock()
	defer func() {
		f.close()
		n.mu.Lock()
		delete(n.feeders, f)
		n.replicaGone = time.Now()
		n.acked()
		n.mu.Unlock()
		n.log.Info("replica disconnected", "replica", f.name())
	}()
	go f.readAcks(readCmd)

	log := n.opts.Log
	var reader *LogReader
	if replID == id || (replID == id2 && want <= second+1) {
		// Nil (a full sync) unless the log still holds want, or want is the
		// next offset to be written.
		reader, _ = log.NewReader(want)
	}
	if reader != nil {
		n.SyncPartialOK.Add(1)
		n.log.Info("partial resync accepted", "replica", f.name(), "from", want, "replid", replID)
		if _, err := fmt.Fprintf(nc, "+CONTINUE %s\r\n", id); err != nil {
			reader.Close()
			return
		}
	} else {
		if replID != "?" {
			n.SyncPartialErr.Add(1)
		}
		n.SyncFull.Add(1)
		n.log.Info("full resync", "replica", f.name(), "asked_replid", replID, "asked_from", want,
			"log_first", log.First(), "log_next", log.NextOffset())
		r, err := f.fullSync(id)
		if err != nil {
			n.log.Warn("full sync failed", "replica", f.name(), "error", err)
			return
		}
		reader = r
	}
	defer reader.Close()
	f.state.Store("online")
	f.stream(ctx, reader)
}

func (f *feeder) name() string { return net.JoinHostPort(f.addr, strconv.Itoa(f.port)) }

// readAcks consumes REPLCONF ACK <offset> commands from the replica.
func (f *feeder) readAcks(readCmd CommandReader) {
	defer f.close()
	for {
		args, err := readCmd()
		if err != nil {
			return
		}
		if len(args) == 3 && strings.EqualFold(string(args[0]), "replconf") && strings.EqualFold(string(args[1]), "ack") {
			if off, err := strconv.ParseUint(string(args[2]), 10, 64); err == nil {
				f.acked.Store(off)
				f.lastAck.Store(time.Now().UnixNano())
				f.n.mu.Lock()
				f.n.acked()
				f.n.mu.Unlock()
			}
		}
	}
}

// Write sends bytes under the send timeout: a replica that does not take
// them in time is dropped, and the primary never waits longer.
func (f *feeder) Write(b []byte) (int, error) {
	f.nc.SetWriteDeadline(time.Now().Add(f.n.opts.SendTimeout))
	return f.sock.Write(b)
}

// stream pushes log entries as they are appended, with heartbeats when
// idle. With sync on, a batch goes out only once it is durable (see
// shipDurable).
//
// One heartbeat deadline serves every wait until it passes (a context per
// batch cost several allocations per write): a wait that reaches it sends
// a heartbeat and starts the next. So an idle stream carries a heartbeat
// every heartbeatEvery, and a busy one at most that often.
func (f *feeder) stream(ctx context.Context, r *LogReader) {
	var buf []byte
	var durable uint64
	var off8 [8]byte
	var hb heartbeatTimer
	hb.restart(ctx)
	defer hb.stop()
	for {
		off, batch, err := r.Next(hb.ctx)
		var tail []byte // sent after buf
		switch {
		case err == nil:
			if durable, err = f.shipDurable(off, durable); err != nil {
				f.n.log.Warn("dropping replica: cannot make the stream durable", "replica", f.name(), "error", err)
				return
			}
			binary.BigEndian.PutUint64(off8[:], off)
			if len(batch) <= maxCopiedFrame {
				buf = appendFrame(buf[:0], frameBatch, off8[:], batch)
				break
			}
			// A large batch goes out after its header, not copied into
			// buf, which would keep its size for as long as the stream.
			buf = append(appendFrameHeader(buf[:0], frameBatch, off8[:], batch), off8[:]...)
			tail = batch
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			hb.restart(ctx)
			binary.BigEndian.PutUint64(off8[:], f.n.opts.Store.Offset())
			buf = appendFrame(buf[:0], frameHeartbeat, off8[:])
		default:
			if ctx.Err() == nil {
				f.n.log.Warn("replica stream ended", "replica", f.name(), "error", err)
			}
			return
		}
		if _, err := f.Write(buf); err != nil {
			f.n.log.Warn("dropping replica: send failed", "replica", f.name(), "error", err)
			return
		}
		if len(tail) > 0 {
			if _, err := f.Write(tail); err != nil {
				f.n.log.Warn("dropping replica: send failed", "replica", f.name(), "error", err)
				return
			}
		}
	}
}

// maxCopiedFrame is the largest batch the stream copies into its frame
// buffer, sending header and batch in one write.
const maxCopiedFrame = 64 << 10

// heartbeatTimer is the context a feeder's waits share until the next
// heartbeat is due.
type heartbeatTimer struct {
	ctx  context.Context
	stop context.CancelFunc
}

// restart stops the current deadline and starts the next, heartbeatEvery
// from now, under parent.
func (t *heartbeatTimer) restart(parent context.Context) {
	if t.stop != nil {
		t.stop()
	}
	t.ctx, t.stop = context.WithTimeout(parent, heartbeatEvery)
}

// shipDurable is called before shipping the batch at off, with the
// offset up to which batches are known durable, and returns the new one.
// With sync on it makes the batches up to off durable first (one WAL
// fsync for all those committed by then), so that a primary that
// crashes keeps every batch a replica holds and may keep its replication
// id; with sync off it tells the node that its id must not survive a
// crash.
func (f *feeder) shipDurable(off, durable uint64) (uint64, error) {
	if off <= durable {
		return durable, nil
	}
	if !f.n.opts.Store.SyncEnabled() {
		f.n.shippingVolatile()
		return durable, nil
	}
	return f.n.opts.Store.SyncCommitted()
}

// fullSync ships a checkpoint and returns a log reader positioned right
// after it. The log is pinned from before the checkpoint's offset until
// the reader exists, so retention cannot force another full sync.
func (f *feeder) fullSync(id string) (*LogReader, error) {
	n := f.n
	dir, err := os.MkdirTemp(n.opts.DataDir, "sync-out-")
	if err != nil {
		return nil, fmt.Errorf("replication: stage checkpoint: %w", err)
	}
	defer os.RemoveAll(dir)
	cp := filepath.Join(dir, "checkpoint")
	// Pin before the checkpoint: its offset is at least the log's next
	// offset now, so retention cannot drop what the stream resumes from
	// while the checkpoint is taken.
	unpin := n.opts.Log.Pin(n.opts.Log.NextOffset())
	defer unpin()
	offset, err := n.opts.Store.Checkpoint(cp)
	if err != nil {
		return nil, err
	}
	if _, err := f.shipDurable(offset, 0); err != nil {
		return nil, err
	}
	f.state.Store("send_bulk")
	if _, err := fmt.Fprintf(f.nc, "+FULLRESYNC %s %d\r\n", id, offset); err != nil {
		return nil, err
	}
	files, err := listFiles(cp)
	if err != nil {
		return nil, err
	}
	var total, sent int64
	for _, fi := range files {
		total += fi.size
	}
	n.log.Info("full sync: sending checkpoint", "replica", f.name(), "offset", offset, "files", len(files), "bytes", total)
	start, lastLog := time.Now(), time.Now()
	w := bufio.NewWriterSize(f, 1<<20)
	var buf []byte
	chunk := make([]byte, chunkSize)
	for i, fi := range files {
		hdr := binary.BigEndian.AppendUint16(nil, uint16(len(fi.rel)))
		hdr = append(hdr, fi.rel...)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(fi.size))
		if _, err := w.Write(appendFrame(buf[:0], frameFile, hdr)); err != nil {
			return nil, err
		}
		src, err := os.Open(filepath.Join(cp, fi.rel))
		if err != nil {
			return nil, fmt.Errorf("replication: open checkpoint file: %w", err)
		}
		for {
			k, rerr := io.ReadFull(src, chunk)
			if k > 0 {
				buf = appendFrame(buf[:0], frameChunk, chunk[:k])
				if _, err := w.Write(buf); err != nil {
					src.Close()
					return nil, err
				}
				sent += int64(k)
			}
			if rerr != nil {
				break
			}
			if time.Since(lastLog) > 2*time.Second {
				lastLog = time.Now()
				n.log.Info("full sync progress", "replica", f.name(), "files_done", i, "files", len(files), "bytes_sent", sent, "bytes", total)
			}
		}
		src.Close()
	}
	done := binary.BigEndian.AppendUint32(nil, uint32(len(files)))
	done = binary.BigEndian.AppendUint64(done, offset)
	if _, err := w.Write(appendFrame(buf[:0], frameDone, done)); err != nil {
		return nil, err
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	secs := time.Since(start).Seconds()
	n.log.Info("full sync: checkpoint sent", "replica", f.name(), "files", len(files), "bytes", sent,
		"seconds", fmt.Sprintf("%.2f", secs), "MBps", fmt.Sprintf("%.1f", float64(sent)/1e6/max(secs, 1e-6)))
	return n.opts.Log.NewReader(offset + 1)
}

type fileInfo struct {
	rel  string
	size int64
}

// listFiles returns the regular files under dir with their sizes, sorted.
func listFiles(dir string) ([]fileInfo, error) {
	var out []fileInfo
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, fileInfo{rel: filepath.ToSlash(rel), size: info.Size()})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("replication: list checkpoint: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	return out, nil
}
