package replication

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/pubsub"
	"github.com/cairnkv/cairn/storage"
)

// Options wires a Node to the rest of the server.
type Options struct {
	// DataDir is the server's data dir: checkpoints for full syncs are
	// staged in it, and the replication id is kept there across clean
	// restarts.
	DataDir string
	Store   *storage.Engine
	Log     *Log
	Hub     *pubsub.Hub
	Notify  *notify.Emitter
	Logger  hclog.Logger
	// Port is this node's own port, announced to its primary.
	Port int
	// MasterAuth returns the password to AUTH with at the primary.
	MasterAuth func() string
	// SendTimeout drops a replica that accepts no bytes for this long.
	SendTimeout time.Duration
	// OnFullSync runs after a replica installed a full sync: the server
	// disconnects the keyspace-notification subscribers, since no event
	// describes what changed.
	OnFullSync func()
}

// Node is this server's replication state: its role, its replication ids
// and offsets, the replicas it feeds (as a primary) and the link to its
// primary (as a replica). It is safe for concurrent use.
type Node struct {
	opts Options
	log  hclog.Logger

	mu           sync.Mutex
	replID       string
	replID2      string
	secondOffset uint64 // the last offset replID2 is valid for
	link         *link  // non-nil while a replica
	feeders      map[*feeder]struct{}
	ackCond      *sync.Cond // broadcast when a replica acknowledges

	// Counters for INFO stats.
	SyncFull, SyncPartialOK, SyncPartialErr atomic.Int64
}

// ErrNotReplica is returned by operations that need the replica role.
var ErrNotReplica = errors.New("replication: this node is not a replica")

// replIDFile holds the replication id across a clean shutdown; it is
// removed at start-up, so after a crash the node takes a new id.
const replIDFile = "replid"

// NewNode prepares replication for a node whose storage and log are open.
// It aligns the log with what storage kept (after a crash the log can be
// ahead of, or behind, the database) and picks the replication id: the one
// saved at the last clean shutdown if the log still matches, else a new
// one, so replicas full-sync rather than diverge silently.
func NewNode(opts Options) (*Node, error) {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.SendTimeout <= 0 {
		opts.SendTimeout = 10 * time.Second
	}
	n := &Node{opts: opts, log: opts.Logger, feeders: map[*feeder]struct{}{}}
	n.ackCond = sync.NewCond(&n.mu)
	d := opts.Store.Offset()
	clean := true
	if last := opts.Log.Last(); last > d {
		n.log.Warn("replication log is ahead of the database (unclean shutdown); trimming it", "log_last", last, "db_offset", d)
		if err := opts.Log.TruncateAfter(d); err != nil {
			return nil, fmt.Errorf("replication: trim log to %d: %w", d, err)
		}
		clean = false
	}
	if opts.Log.NextOffset() != d+1 {
		n.log.Info("replication log restarts at the database's offset", "next", d+1, "log_next", opts.Log.NextOffset())
		if err := opts.Log.Reset(d + 1); err != nil {
			return nil, fmt.Errorf("replication: reset log to %d: %w", d+1, err)
		}
	}
	path := filepath.Join(opts.DataDir, replIDFile)
	saved, err := os.ReadFile(path)
	id := strings.TrimSpace(string(saved))
	if err == nil && clean && len(id) == 40 {
		n.replID = id
		n.log.Info("keeping the replication id of the last clean shutdown", "replid", id, "offset", d)
	} else {
		n.replID = newReplID()
		n.log.Info("new replication id", "replid", n.replID, "offset", d)
	}
	n.replID2 = strings.Repeat("0", 40)
	os.Remove(path)
	return n, nil
}

func newReplID() string {
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("replication: no randomness for a replication id: %v", err))
	}
	return hex.EncodeToString(b[:])
}

// Close stops the link to the primary and every feeder, syncs the log and
// records the replication id for the next clean start.
func (n *Node) Close() error {
	n.mu.Lock()
	l := n.link
	n.link = nil
	feeders := make([]*feeder, 0, len(n.feeders))
	for f := range n.feeders {
		feeders = append(feeders, f)
	}
	id := n.replID
	n.mu.Unlock()
	if l != nil {
		l.stop()
	}
	for _, f := range feeders {
		f.close()
	}
	if err := n.opts.Log.Sync(); err != nil {
		return fmt.Errorf("replication: sync log at shutdown: %w", err)
	}
	return os.WriteFile(filepath.Join(n.opts.DataDir, replIDFile), []byte(id+"\n"), 0o644)
}

// IDs returns the replication id, the previous one and the last offset
// the previous one is valid for.
func (n *Node) IDs() (id, id2 string, secondOffset uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.replID, n.replID2, n.secondOffset
}

// IsReplica reports whether the node replicates a primary.
func (n *Node) IsReplica() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.link != nil
}

// ReplicaOf makes the node a replica of host:port. Pointing it at the
// primary it already follows is a no-op (reported by the bool).
func (n *Node) ReplicaOf(host string, port int) (already bool) {
	n.mu.Lock()
	if n.link != nil && n.link.host == host && n.link.port == port {
		n.mu.Unlock()
		return true
	}
	old := n.link
	n.link = newLink(n, host, port)
	l := n.link
	n.mu.Unlock()
	if old != nil {
		old.stop()
	}
	n.log.Info("becoming a replica", "primary", fmt.Sprintf("%s:%d", host, port))
	go l.run()
	return false
}

// Promote makes the node a primary (REPLICAOF NO ONE): it stops following
// its primary, keeps the old replication id as the previous one (so its
// former siblings can continue partially from it) and takes a new id.
func (n *Node) Promote() {
	n.mu.Lock()
	l := n.link
	if l == nil {
		n.mu.Unlock()
		return
	}
	n.link = nil
	n.mu.Unlock()
	l.stop()
	n.mu.Lock()
	n.replID2, n.secondOffset = n.replID, n.opts.Store.Offset()
	n.replID = newReplID()
	n.mu.Unlock()
	n.log.Info("promoted to primary", "replid", n.replID, "replid2", n.replID2, "offset", n.secondOffset)
}

// SetFullSyncHook sets Options.OnFullSync after construction (the server
// that provides it is built later).
func (n *Node) SetFullSyncHook(fn func()) {
	n.mu.Lock()
	n.opts.OnFullSync = fn
	n.mu.Unlock()
}

// adoptID is called by the link when the primary names its id.
func (n *Node) adoptID(id string) {
	n.mu.Lock()
	n.replID = id
	n.mu.Unlock()
}

// LinkState describes the link to the primary for INFO replication.
type LinkState struct {
	Host           string
	Port           int
	Up             bool
	LastIO         time.Time
	SyncInProgress bool
	LastError      string
	MasterOffset   uint64
}

// Link returns the link state, ok false on a primary.
func (n *Node) Link() (LinkState, bool) {
	n.mu.Lock()
	l := n.link
	n.mu.Unlock()
	if l == nil {
		return LinkState{}, false
	}
	return l.state(), true
}

// ReplicaState describes one connected replica for INFO replication.
type ReplicaState struct {
	Addr    string
	Port    int
	State   string // "wait_bgsave", "send_bulk", "online"
	Offset  uint64 // acknowledged
	LastAck time.Time
}

// Replicas returns the connected replicas.
func (n *Node) Replicas() []ReplicaState {
	n.mu.Lock()
	fs := make([]*feeder, 0, len(n.feeders))
	for f := range n.feeders {
		fs = append(fs, f)
	}
	n.mu.Unlock()
	out := make([]ReplicaState, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.stateInfo())
	}
	return out
}

// HasReplicas reports whether any replica is connected (PUBLISH is
// logged for replicas only then).
func (n *Node) HasReplicas() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.feeders) > 0
}

// WaitAcks blocks until at least want replicas acknowledged offset, or
// until timeout (0: no limit) passes, and returns how many did.
func (n *Node) WaitAcks(want int, offset uint64, timeout time.Duration) int {
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
		t := time.AfterFunc(timeout, func() {
			n.mu.Lock()
			n.ackCond.Broadcast()
			n.mu.Unlock()
		})
		defer t.Stop()
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for {
		got := 0
		for f := range n.feeders {
			if f.acked.Load() >= offset {
				got++
			}
		}
		if got >= want || (!deadline.IsZero() && !time.Now().Before(deadline)) {
			return got
		}
		n.ackCond.Wait()
	}
}
