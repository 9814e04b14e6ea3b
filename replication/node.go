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
	Notify  *notify.Emitter
	Logger  hclog.Logger
	// Port is this node's own port, announced to its primary.
	Port int
	// Announce returns the address a replica announces to its primary in
	// place of its own (replica-announce-ip and -port, for a node behind
	// NAT or in a container): ip "" keeps the address the primary sees,
	// port 0 keeps Port. Nil announces nothing else.
	Announce func() (ip string, port int)
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
	secondOffset uint64    // the last offset replID2 is valid for
	fresh        bool      // replID was made up (at start-up or promotion), not adopted from a primary
	idFile       [2]string // the id and state the replid file holds; idUnknown at first
	link         *link     // non-nil while a replica
	feeders      map[*feeder]struct{}
	replicaGone  time.Time     // when a replica last disconnected (LogsPublish)
	acks         chan struct{} // closed (and replaced) when a replica acknowledges or leaves

	// Counters for INFO stats.
	SyncFull, SyncPartialOK, SyncPartialErr atomic.Int64
}

// LogStats returns a snapshot of the node's replication log (INFO
// replication's backlog fields).
func (n *Node) LogStats() LogStats { return n.opts.Log.Stats() }

// ErrNotReplica is returned by operations that need the replica role.
var ErrNotReplica = errors.New("replication: this node is not a replica")

// replIDFile holds the replication id and what a crash would mean for
// it, as one line "<id> <state>" (a line with the id alone, as earlier
// versions wrote at shutdown, reads as idClean). It is replaced atomically
// whenever either changes; a node that could not keep its id after a
// crash has no file.
const replIDFile = "replid"

// The states of the replid file.
const (
	// idClean: written by Close. Nothing was lost: the id is kept.
	idClean = "clean"
	// idDurable: a primary that ships a batch only once it is durable
	// (sync yes). A crash loses no batch a replica holds: the id is kept.
	// A primary shipping batches that are not durable yet removes the
	// file: after a crash its replicas may hold batches it lost, so it
	// takes a new id and they full-sync.
	idDurable = "durable"
	// idReplica: the node follows a primary, and its data is a prefix of
	// the history the id names, whatever a crash loses. At start-up the
	// id becomes the previous one (replID2, up to the node's offset) and
	// the node takes a new id: as a replica it resumes under the old one
	// (see resumeID); as a primary it must not extend the old history,
	// which its former primary extends too.
	idReplica = "replica"
)

// NewNode prepares replication for a node whose storage and log are open.
// It aligns the log with what storage kept (after a crash the log can be
// ahead of, or behind, the database) and picks the replication id from
// the replid file (see its states): the saved one when it is safe to go
// on with it, else a new one, so replicas full-sync rather than diverge
// silently.
func NewNode(opts Options) (*Node, error) {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.SendTimeout <= 0 {
		opts.SendTimeout = 10 * time.Second
	}
	n := &Node{opts: opts, log: opts.Logger, feeders: map[*feeder]struct{}{}, idFile: idUnknown}
	n.acks = make(chan struct{})
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
	id, state := readReplID(filepath.Join(opts.DataDir, replIDFile))
	n.replID2 = noReplID
	switch {
	case id != "" && ((state == idClean && clean) || state == idDurable):
		n.replID = id
		n.log.Info("keeping the replication id", "replid", id, "offset", d, "last_state", state)
	case id != "" && state == idReplica:
		n.replID, n.replID2, n.secondOffset, n.fresh = newReplID(), id, d, true
		n.log.Info("new replication id; the last primary's is kept as the previous one",
			"replid", n.replID, "replid2", id, "offset", d)
	default:
		n.replID = newReplID()
		n.log.Info("new replication id", "replid", n.replID, "offset", d, "last_state", state)
	}
	n.mu.Lock()
	err := n.recordPrimaryLocked()
	n.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return n, nil
}

// idUnknown is Node.idFile before the node first writes the file.
var idUnknown = [2]string{"?", "?"}

// noReplID is the replID2 of a node without a previous id.
var noReplID = strings.Repeat("0", 40)

// readReplID reads the replid file: the id ("" if none) and its state.
func readReplID(path string) (id, state string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", ""
	}
	f := strings.Fields(string(b))
	if len(f) == 0 || !validReplID(f[0]) {
		return "", ""
	}
	if len(f) == 1 {
		return f[0], idClean
	}
	return f[0], f[1]
}

// recordLocked replaces the replid file with "id state", or removes it
// when state is "", durably: a stale file could keep an id after a crash
// that must not.
func (n *Node) recordLocked(id, state string) error {
	if state == "" {
		id = ""
	}
	if n.idFile == [2]string{id, state} {
		return nil
	}
	dir := n.opts.DataDir
	path := filepath.Join(dir, replIDFile)
	if state == "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("replication: remove %s: %w", path, err)
		}
	} else {
		tmp := path + ".tmp"
		f, err := os.Create(tmp)
		if err == nil {
			_, err = fmt.Fprintf(f, "%s %s\n", id, state)
			if err == nil {
				err = f.Sync()
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err == nil {
			err = os.Rename(tmp, path)
		}
		if err != nil {
			return fmt.Errorf("replication: write %s: %w", path, err)
		}
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	n.idFile = [2]string{id, state}
	return nil
}

// recordPrimaryLocked records the state of a primary: durable when its
// commits sync, else no file.
func (n *Node) recordPrimaryLocked() error {
	if n.opts.Store.SyncEnabled() {
		return n.recordLocked(n.replID, idDurable)
	}
	return n.recordLocked(n.replID, "")
}

// shippingVolatile is called by a feeder about to ship a batch that may
// not be durable (sync no): the id must not survive a crash any more.
func (n *Node) shippingVolatile() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.idFile[1] != idDurable {
		return
	}
	if err := n.recordLocked(n.replID, ""); err != nil {
		n.log.Error("cannot remove the replid file; a crash may keep an id it must not", "error", err)
	}
}

// resumeID returns the id a replica asks to continue with: the previous
// id when the current one was made up (at start-up or promotion) and
// nothing was committed since (the node's data is then the previous
// history's prefix: the case of a replica restarted, or promoted and
// pointed elsewhere at once), else the current one.
func (n *Node) resumeID() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.resumeIDLocked()
}

func (n *Node) resumeIDLocked() string {
	if n.fresh && n.replID2 != noReplID && n.opts.Store.Offset() == n.secondOffset {
		return n.replID2
	}
	return n.replID
}

// validReplID reports whether id has the form of a replication id: 40
// lowercase hex digits, as newReplID makes them (and Redis).
func validReplID(id string) bool {
	if len(id) != 40 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
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
	n.mu.Lock()
	defer n.mu.Unlock()
	if l != nil {
		// A replica's id is its primary's: on a restart as a primary it
		// must not extend that history (see idReplica).
		return n.recordLocked(n.resumeIDLocked(), idReplica)
	}
	return n.recordLocked(n.replID, idClean)
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
	return n.follow(host, port, nil)
}

// ReplicaOfForFailover makes a primary a replica of host:port, its own
// replica, as the last step of a coordinated failover (FAILOVER): the
// link's first PSYNC carries FAILOVER, which asks the target to promote
// itself first. The returned channel receives the outcome of that first
// handshake: nil once the target accepted the PSYNC, or the error that
// ended the attempt (the link keeps retrying with plain PSYNCs until the
// caller changes the role again).
func (n *Node) ReplicaOfForFailover(host string, port int) <-chan error {
	result := make(chan error, 1)
	n.follow(host, port, result)
	return result
}

// follow starts a link to host:port, replacing any other; a link with a
// handshake channel is a failover's (link.handshake).
func (n *Node) follow(host string, port int, handshake chan error) (already bool) {
	n.mu.Lock()
	if handshake == nil && n.link != nil && n.link.host == host && n.link.port == port {
		n.mu.Unlock()
		return true
	}
	old := n.link
	n.link = newLink(n, host, port)
	l := n.link
	l.handshake = handshake
	if err := n.recordLocked(n.resumeIDLocked(), idReplica); err != nil {
		n.log.Error("cannot record the replication id", "error", err)
	}
	n.mu.Unlock()
	if old != nil {
		old.stop()
	}
	n.log.Info("becoming a replica", "primary", fmt.Sprintf("%s:%d", host, port), "failover", handshake != nil)
	go l.run()
	return false
}

// currentID returns the node's replication id.
func (n *Node) currentID() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.replID
}

// Sentinel errors of PromoteForFailover.
var (
	// ErrFailoverToPrimary means that PSYNC FAILOVER reached a primary.
	ErrFailoverToPrimary = errors.New("replication: PSYNC FAILOVER sent to a primary")
	// ErrFailoverIDMismatch means that PSYNC FAILOVER named a replication
	// id other than the one the replica follows.
	ErrFailoverIDMismatch = errors.New("replication: PSYNC FAILOVER names another replication id")
)

// PromoteForFailover promotes a replica asked to by its primary's PSYNC
// FAILOVER, which names the primary's replication id: it must be the id
// this node follows (ErrFailoverIDMismatch), and the node must be a
// replica (ErrFailoverToPrimary). The primary then continues from this
// node's history partially, as it asks.
func (n *Node) PromoteForFailover(replID string) error {
	n.mu.Lock()
	replica, id := n.link != nil, n.replID
	n.mu.Unlock()
	switch {
	case !replica:
		return ErrFailoverToPrimary
	case replID != id:
		return ErrFailoverIDMismatch
	}
	n.Promote()
	return nil
}

// WaitReplicaAck blocks until a connected replica that match accepts has
// acknowledged offset, and returns it (ok true), or until stop is closed
// or receives (ok false).
func (n *Node) WaitReplicaAck(offset uint64, match func(ReplicaState) bool, stop <-chan struct{}) (ReplicaState, bool) {
	for {
		n.mu.Lock()
		changed := n.acks
		fs := make([]*feeder, 0, len(n.feeders))
		for f := range n.feeders {
			fs = append(fs, f)
		}
		n.mu.Unlock()
		for _, f := range fs {
			if st := f.stateInfo(); st.State == "online" && st.Offset >= offset && match(st) {
				return st, true
			}
		}
		select {
		case <-changed:
		case <-stop:
			return ReplicaState{}, false
		}
	}
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
	// What the node shipped to its own replicas so far need not be
	// durable: sync it before recording a durable primary.
	if n.opts.Store.SyncEnabled() {
		if _, err := n.opts.Store.SyncCommitted(); err != nil {
			n.log.Error("cannot sync at promotion", "error", err)
		}
	}
	n.mu.Lock()
	n.replID2, n.secondOffset = n.resumeIDLocked(), n.opts.Store.Offset()
	n.replID, n.fresh = newReplID(), true
	if err := n.recordPrimaryLocked(); err != nil {
		n.log.Error("cannot record the replication id", "error", err)
	}
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

// adoptID is called by the link when the primary names its id: after a
// full sync (full: the data no longer continues any earlier history, so
// the previous id is dropped), or on a partial resync that asked to
// continue asked up to offset: if the primary's id differs (it was
// promoted), asked stays valid as the previous id up to there.
func (n *Node) adoptID(id string, full bool, asked string, offset uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case full, id == n.replID2:
		// A full sync, or the primary confirmed the previous id we
		// resumed with (after a restart): no other history to keep.
		n.replID2, n.secondOffset = noReplID, 0
	case id != asked:
		n.replID2, n.secondOffset = asked, offset
	}
	n.replID, n.fresh = id, false
	if err := n.recordLocked(id, idReplica); err != nil {
		n.log.Error("cannot record the replication id", "error", err)
	}
}

// LinkState describes the link to the primary for INFO replication.
type LinkState struct {
	Host           string
	Port           int
	Up             bool
	LastIO         time.Time
	SyncInProgress bool
	// SyncReadBytes counts the checkpoint bytes a full sync in progress
	// has received (its total is not known before the end).
	SyncReadBytes int64
	LastError     string
	MasterOffset  uint64
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

// publishLogTTL is how long after its last replica went a primary still
// writes PUBLISH records to its replication log, so that a replica that
// comes back with a partial resync gets the messages published meanwhile,
// as Redis's do from its backlog, which it keeps for repl-backlog-ttl (an
// hour by default).
const publishLogTTL = time.Hour

// LogsPublish reports whether a PUBLISH must go to the replication log: a
// replica is connected, or one was within publishLogTTL and may resume.
func (n *Node) LogsPublish() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.feeders) > 0 || !n.replicaGone.IsZero() && time.Since(n.replicaGone) < publishLogTTL
}

// WaitAcks blocks until at least want replicas acknowledged offset, until
// timeout (0: no limit) passes, or until stop is closed or receives, and
// returns how many did. With want 0 it only counts them.
func (n *Node) WaitAcks(want int, offset uint64, timeout time.Duration, stop <-chan struct{}) int {
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	for {
		n.mu.Lock()
		got := 0
		for f := range n.feeders {
			if f.acked.Load() >= offset {
				got++
			}
		}
		changed := n.acks
		n.mu.Unlock()
		if got >= want {
			return got
		}
		select {
		case <-changed:
		case <-expired:
			want = 0 // count once more
		case <-stop:
			want = 0
		}
	}
}

// WaitAllAcked blocks until every connected replica, whatever its state,
// has acknowledged offset, or until stop is closed, and returns the
// replicas that had not (none when all had: ok is then true). A replica
// that disconnects no longer counts. A shutdown waits here for lagging
// replicas, as Redis 7's does.
func (n *Node) WaitAllAcked(offset uint64, stop <-chan struct{}) (lagging []ReplicaState, ok bool) {
	for {
		n.mu.Lock()
		lagging = lagging[:0]
		for f := range n.feeders {
			if st := f.stateInfo(); st.Offset < offset {
				lagging = append(lagging, st)
			}
		}
		changed := n.acks
		n.mu.Unlock()
		if len(lagging) == 0 {
			return nil, true
		}
		select {
		case <-changed:
		case <-stop:
			return lagging, false
		}
	}
}

// acked wakes WaitAcks callers to count again; the caller holds n.mu.
func (n *Node) acked() {
	close(n.acks)
	n.acks = make(chan struct{})
}
