package replication

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/sockio"
)

// Reconnection backoff bounds (at most a second between attempts, as
// Redis's replicas retry), and how long a link waits for a frame
// (heartbeats come every second) before it gives up on the primary.
const (
	minBackoff  = 100 * time.Millisecond
	maxBackoff  = time.Second
	readTimeout = 10 * time.Second
)

// link is a replica's connection to its primary: handshake, full sync,
// then applying the stream, reconnecting with backoff.
type link struct {
	n      *Node
	host   string
	port   int
	ctx    context.Context
	cancel context.CancelFunc
	// handshake, set on a link made by ReplicaOfForFailover, receives the
	// outcome of its first PSYNC, which carries FAILOVER; later sessions
	// (reconnections) send a plain PSYNC.
	handshake chan error
	done      chan struct{}

	mu      sync.Mutex
	nc      net.Conn
	up      bool
	syncing bool
	// syncRead is what the full sync in progress received so far.
	syncRead int64
	lastIO   time.Time
	lastErr  string
	master   uint64

	// events is where publish gathers a batch's keyspace events; only the
	// goroutine that applies the stream uses it.
	events []notify.Event
}

func newLink(n *Node, host string, port int) *link {
	ctx, cancel := context.WithCancel(context.Background())
	return &link{n: n, host: host, port: port, ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

func (l *link) state() LinkState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return LinkState{Host: l.host, Port: l.port, Up: l.up, LastIO: l.lastIO, SyncInProgress: l.syncing,
		SyncReadBytes: l.syncRead, LastError: l.lastErr, MasterOffset: l.master}
}

// stop ends the link and waits for its goroutine.
func (l *link) stop() {
	l.cancel()
	l.mu.Lock()
	if l.nc != nil {
		l.nc.Close()
	}
	l.mu.Unlock()
	<-l.done
}

func (l *link) setErr(err error) {
	l.mu.Lock()
	l.lastErr = err.Error()
	l.up = false
	l.syncing = false
	l.mu.Unlock()
}

// run connects, syncs and streams until stopped.
func (l *link) run() {
	defer close(l.done)
	defer func() {
		if l.handshake != nil { // stopped before its first handshake ended
			l.handshake <- context.Canceled
		}
	}()
	backoff := minBackoff
	for l.ctx.Err() == nil {
		started, from := time.Now(), l.n.opts.Store.Offset()
		err := l.session()
		if l.handshake != nil {
			// session returned before reporting: the first handshake
			// failed (a session that got through it reported nil).
			l.handshake <- err
			l.handshake = nil
		}
		if l.ctx.Err() != nil {
			return
		}
		// A session that applied batches, or lasted a while, was a link
		// lost, not refused: reconnect soon. One that failed at once
		// (a primary down, or failing at the same batch) backs off.
		if l.n.opts.Store.Offset() != from || time.Since(started) > 10*time.Second {
			backoff = minBackoff
		}
		l.setErr(err)
		l.n.log.Warn("replication link down; reconnecting", "primary", l.addr(), "error", err, "in", backoff)
		select {
		case <-l.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

func (l *link) addr() string { return net.JoinHostPort(l.host, strconv.Itoa(l.port)) }

// session is one connection: handshake, optional full sync, stream.
func (l *link) session() error {
	d := net.Dialer{Timeout: 5 * time.Second}
	nc, err := d.DialContext(l.ctx, "tcp", l.addr())
	if err != nil {
		return fmt.Errorf("connect to primary: %w", err)
	}
	l.mu.Lock()
	l.nc = nc
	l.mu.Unlock()
	defer nc.Close()
	if l.ctx.Err() != nil {
		// stop ran before l.nc was set: it could not close nc.
		return l.ctx.Err()
	}
	rd := bufio.NewReaderSize(sockio.Wrap(nc), 1<<20)
	cmd := func(args ...string) (string, error) {
		nc.SetDeadline(time.Now().Add(readTimeout))
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		if _, err := io.WriteString(nc, b.String()); err != nil {
			return "", err
		}
		line, err := rd.ReadString('\n')
		if err != nil {
			return "", err
		}
		return strings.TrimRight(line, "\r\n"), nil
	}
	if pass := l.n.opts.MasterAuth(); pass != "" {
		reply, err := cmd("AUTH", pass)
		if err != nil {
			return fmt.Errorf("AUTH at primary: %w", err)
		}
		if reply != "+OK" {
			return fmt.Errorf("primary refused masterauth: %s", strings.TrimPrefix(reply, "-"))
		}
	}
	port, ip := l.n.opts.Port, ""
	if l.n.opts.Announce != nil {
		var p int
		if ip, p = l.n.opts.Announce(); p != 0 {
			port = p
		}
	}
	if reply, err := cmd("REPLCONF", "listening-port", strconv.Itoa(port)); err != nil || reply != "+OK" {
		return fmt.Errorf("REPLCONF listening-port refused: %q %v", reply, err)
	}
	if ip != "" {
		if reply, err := cmd("REPLCONF", "ip-address", ip); err != nil || reply != "+OK" {
			return fmt.Errorf("REPLCONF ip-address refused: %q %v", reply, err)
		}
	}
	id := l.n.resumeID()
	want := l.n.opts.Store.Offset() + 1
	psync := []string{"PSYNC", id, strconv.FormatUint(want, 10)}
	if l.handshake != nil {
		// A failover: the target checks the id against the one it
		// follows, this node's current id (not a previous one, even if
		// nothing was written since it was made up).
		psync[1] = l.n.currentID()
		psync = append(psync, "FAILOVER")
	}
	reply, err := cmd(psync...)
	if err != nil {
		return fmt.Errorf("PSYNC: %w", err)
	}
	// The handshake's lines carry no checksum, unlike the frames after
	// them: an id that is not one is a corrupt reply, not an id to adopt
	// (it would fail every later partial resync).
	f := strings.Fields(reply)
	if len(f) >= 2 && (f[0] == "+FULLRESYNC" || f[0] == "+CONTINUE") && !validReplID(f[1]) {
		return fmt.Errorf("bad PSYNC reply %q: %w", reply, ErrCorruptStream)
	}
	switch {
	case len(f) == 3 && f[0] == "+FULLRESYNC":
		off, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			return fmt.Errorf("bad FULLRESYNC reply %q", reply)
		}
		l.n.log.Info("full resync from primary", "primary", l.addr(), "replid", f[1], "offset", off)
		if err := l.receiveFullSync(nc, rd, off); err != nil {
			return err
		}
		l.n.adoptID(f[1], true, id, off)
	case len(f) == 2 && f[0] == "+CONTINUE":
		l.n.log.Info("partial resync", "primary", l.addr(), "replid", f[1], "from", want)
		l.n.adoptID(f[1], false, id, want-1)
	default:
		return fmt.Errorf("primary refused PSYNC: %s", strings.TrimPrefix(reply, "-"))
	}
	l.mu.Lock()
	l.up, l.syncing, l.lastErr, l.lastIO = true, false, "", time.Now()
	l.mu.Unlock()
	if l.handshake != nil {
		l.handshake <- nil
		l.handshake = nil
	}
	return l.stream(nc, rd)
}

// receiveFullSync receives the checkpoint files into a staging directory,
// verifying every frame, and installs them atomically. Any failure leaves
// the old data serving.
func (l *link) receiveFullSync(nc net.Conn, rd *bufio.Reader, offset uint64) error {
	l.mu.Lock()
	l.syncing, l.syncRead, l.lastIO = true, 0, time.Now()
	l.mu.Unlock()
	stage, err := os.MkdirTemp(l.n.opts.DataDir, "sync-in-")
	if err != nil {
		return fmt.Errorf("stage full sync: %w", err)
	}
	defer os.RemoveAll(stage)
	dest := filepath.Join(stage, "checkpoint")
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	var out *os.File // the file being received
	defer func() {
		if out != nil {
			out.Close()
		}
	}()
	var remaining, received int64
	files := 0
	lastLog := time.Now()
	for {
		nc.SetReadDeadline(time.Now().Add(readTimeout))
		typ, p, err := readFrame(rd)
		if err != nil {
			return fmt.Errorf("full sync: %w", err)
		}
		switch typ {
		case frameFile:
			if out != nil {
				return fmt.Errorf("%w: unexpected file frame", ErrCorruptStream)
			}
			var clean string
			if clean, remaining, err = parseFileFrame(p); err != nil {
				return err
			}
			target := filepath.Join(dest, filepath.FromSlash(clean))
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			out, err = os.Create(target)
			if err != nil {
				return fmt.Errorf("full sync: create %s: %w", clean, err)
			}
			files++
			if remaining == 0 {
				out.Close()
				out = nil
			}
		case frameChunk:
			if out == nil || int64(len(p)) > remaining {
				return fmt.Errorf("%w: chunk outside a file", ErrCorruptStream)
			}
			if _, err := out.Write(p); err != nil {
				return fmt.Errorf("full sync: write: %w", err)
			}
			remaining -= int64(len(p))
			received += int64(len(p))
			l.mu.Lock()
			l.syncRead, l.lastIO = received, time.Now()
			l.mu.Unlock()
			if remaining == 0 {
				if err := out.Sync(); err != nil {
					return err
				}
				out.Close()
				out = nil
			}
			if time.Since(lastLog) > 2*time.Second {
				lastLog = time.Now()
				l.n.log.Info("full sync progress", "files", files, "bytes_received", received)
			}
		case frameDone:
			if out != nil || len(p) != 12 {
				return fmt.Errorf("%w: unexpected end of full sync", ErrCorruptStream)
			}
			gotFiles, gotOffset := binary.BigEndian.Uint32(p), binary.BigEndian.Uint64(p[4:])
			if int(gotFiles) != files || gotOffset != offset {
				return fmt.Errorf("%w: full sync done frame says %d files, offset %d; expected %d files (received), offset %d (from FULLRESYNC)",
					ErrCorruptStream, gotFiles, gotOffset, files, offset)
			}
			l.n.log.Info("full sync received; installing", "files", files, "bytes", received, "offset", offset)
			got, err := l.n.opts.Store.InstallCheckpoint(dest)
			if err != nil {
				return fmt.Errorf("full sync: install: %w", err)
			}
			if got != offset {
				return fmt.Errorf("full sync: installed data has offset %d, primary said %d", got, offset)
			}
			if err := l.n.opts.Log.Reset(offset + 1); err != nil {
				return fmt.Errorf("full sync: reset log: %w", err)
			}
			if l.n.opts.OnFullSync != nil {
				l.n.opts.OnFullSync()
			}
			return nil
		default:
			return fmt.Errorf("%w: %q frame during full sync", ErrCorruptStream, typ)
		}
	}
}

// parseFileFrame returns the name and size a full sync's file frame
// announces. The name must stay inside the checkpoint directory.
func parseFileFrame(p []byte) (name string, size int64, err error) {
	if len(p) < 10 {
		return "", 0, fmt.Errorf("%w: unexpected file frame", ErrCorruptStream)
	}
	nl := int(binary.BigEndian.Uint16(p))
	if len(p) != 2+nl+8 {
		return "", 0, fmt.Errorf("%w: bad file frame", ErrCorruptStream)
	}
	name = string(p[2 : 2+nl])
	clean := path.Clean(name)
	if clean != name || strings.HasPrefix(clean, "../") || strings.HasPrefix(clean, "/") || clean == ".." {
		return "", 0, fmt.Errorf("%w: unsafe file name %q", ErrCorruptStream, name)
	}
	return clean, int64(binary.BigEndian.Uint64(p[2+nl:])), nil
}

// ackCoalesce is the shortest interval between two acknowledgements sent
// for applied batches: under load one ACK covers many batches, and WAIT
// still learns of a batch within this time.
const ackCoalesce = 20 * time.Millisecond

// stream applies batches as they arrive and acknowledges the applied
// offset every heartbeat, and at most every ackCoalesce after batches.
func (l *link) stream(nc net.Conn, rd *bufio.Reader) error {
	store := l.n.opts.Store
	acks := make(chan struct{}, 1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		var last time.Time
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			case <-acks:
				if wait := ackCoalesce - time.Since(last); wait > 0 {
					select {
					case <-stop:
						return
					case <-time.After(wait):
					}
				}
			}
			last = time.Now()
			off := strconv.FormatUint(store.Offset(), 10)
			msg := fmt.Sprintf("*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$%d\r\n%s\r\n", len(off), off)
			nc.SetWriteDeadline(time.Now().Add(readTimeout))
			if _, err := io.WriteString(nc, msg); err != nil {
				nc.Close()
				return
			}
		}
	}()
	for {
		nc.SetReadDeadline(time.Now().Add(readTimeout))
		typ, p, err := readFrame(rd)
		if err != nil {
			return fmt.Errorf("stream: %w", err)
		}
		l.mu.Lock()
		l.lastIO = time.Now()
		l.mu.Unlock()
		switch typ {
		case frameHeartbeat:
			if len(p) == 8 {
				l.mu.Lock()
				l.master = binary.BigEndian.Uint64(p)
				l.mu.Unlock()
			}
		case frameBatch:
			off, err := l.applyFrame(p)
			if err != nil {
				return err
			}
			l.mu.Lock()
			l.master = max(l.master, off)
			l.mu.Unlock()
			if rd.Buffered() == 0 {
				select {
				case acks <- struct{}{}:
				default:
				}
			}
		default:
			return fmt.Errorf("%w: %q frame while streaming", ErrCorruptStream, typ)
		}
	}
}

// applyFrame applies the payload of a batch frame (the offset, then the
// batch) and publishes what the batch carries, and returns the offset.
func (l *link) applyFrame(p []byte) (uint64, error) {
	if len(p) < 8 {
		return 0, fmt.Errorf("%w: short batch frame", ErrCorruptStream)
	}
	off, batch := binary.BigEndian.Uint64(p), p[8:]
	if err := l.n.opts.Store.ApplyReplicated(off, batch, func() { l.publish(batch) }); err != nil {
		return 0, fmt.Errorf("apply offset %d: %w", off, err)
	}
	return off, nil
}

// maxKeptEvents bounds the events a link keeps room for between
// batches, so one huge batch does not pin its buffer.
const maxKeptEvents = 1024

// publish re-publishes what an applied batch carries: a replicated
// PUBLISH, or the keyspace events reconstructed from its LogData, through
// this node's own emitter and flags. The events refer to batch, which they
// do not outlive: the hub copies what it delivers.
func (l *link) publish(batch []byte) {
	n := l.n
	events, err := notify.AppendEvents(l.events[:0], batch)
	if err != nil {
		n.log.Warn("skipping undecodable notification context", "error", err)
	}
	for _, ev := range events {
		n.opts.Notify.Emit(ev)
	}
	l.events = notify.Recycle(events, maxKeptEvents)
}
