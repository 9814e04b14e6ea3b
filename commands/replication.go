package commands

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

func init() {
	register(
		&Spec{Name: "psync", Arity: -3, Flags: FlagAdmin | FlagNoScript | FlagNoAsyncLoading | FlagNoMulti, Group: "server", Since: "2.8.0",
			Summary: "An internal command used in replication.", Handler: cmdPSync},
		&Spec{Name: "replconf", Arity: -1, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale | FlagAllowBusy, Group: "server", Since: "3.0.0",
			Summary: "An internal command for configuring the replication stream.", Handler: cmdReplConf},
		&Spec{Name: "replicaof", Arity: 3, Flags: FlagAdmin | FlagNoScript | FlagStale | FlagNoAsyncLoading, Group: "server", Since: "5.0.0",
			Summary: "Configures a server as replica of another, or promotes it to a master.", Handler: cmdReplicaOf},
		&Spec{Name: "slaveof", Arity: 3, Flags: FlagAdmin | FlagNoScript | FlagStale | FlagNoAsyncLoading, Group: "server", Since: "1.0.0",
			Summary: "Sets a Redis server as a replica of another, or promotes it to being a master.", Handler: cmdReplicaOf},
		&Spec{Name: "role", Arity: 1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast, Group: "server", ACL: []string{"admin", "dangerous"}, Since: "2.8.12",
			Summary: "Returns the replication role.", Handler: cmdRole},
		&Spec{Name: "wait", Arity: 3, Flags: FlagNoScript, Tips: []string{"request_policy:all_shards", "response_policy:agg_min"}, Group: "generic", ACL: []string{"connection"}, Since: "3.0.0",
			Summary: "Blocks until the asynchronous replication of all preceding write commands sent by the connection is completed.", Handler: cmdWait},
	)
}

// errReadOnly is what a replica answers to a write command; errMasterDown
// what it answers to a read while its link is down and
// slave-serve-stale-data is no.
const (
	errReadOnly   = "READONLY You can't write against a read only replica."
	errMasterDown = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
)

// cmdPSync hands the connection to the replication feeder: PSYNC <replid>
// <next offset wanted> [FAILOVER]. With FAILOVER (sent by a primary that
// fails over to this replica) the node first becomes a primary.
func cmdPSync(c *Ctx) {
	want, err := strconv.ParseUint(string(c.Args[2]), 10, 64)
	if err != nil {
		// Redis's replicas send -1 for "no offset": a full sync.
		want = 0
	}
	if !c.Client.CanHandoff || c.Env.Repl == nil {
		c.W.Error("ERR PSYNC is not possible on this connection")
		return
	}
	if c.Env.failover.State() != failoverNone {
		// As in Redis: the node is about to become a replica.
		c.W.Error("NOMASTERLINK Can't SYNC while failing over")
		return
	}
	if len(c.Args) > 3 {
		if len(c.Args) != 4 || keyword(c.Args[3]) != "failover" {
			c.W.Error(errSyntax)
			return
		}
		if !failoverPSync(c, string(c.Args[1])) {
			return
		}
	}
	// The handoff runs after the command: it must not use c, which the
	// client reuses.
	repl, replID, ip, port := c.Env.Repl, string(c.Args[1]), c.Client.ReplicaIP, c.Client.ReplicaPort
	c.Client.Handoff = func(nc net.Conn, read func() ([][]byte, error)) {
		repl.ServePSYNC(nc, read, replID, want, ip, port)
	}
}

func cmdReplConf(c *Ctx) {
	if len(c.Args)%2 == 0 {
		c.W.Error(errSyntax)
		return
	}
	for j := 1; j < len(c.Args); j += 2 {
		switch lower(c.Args[j]) {
		case "listening-port":
			p, ok := parseInt(c.Args[j+1])
			if !ok || p < 0 || p > 65535 {
				c.errorf("ERR Invalid listening port: %s", c.Args[j+1])
				return
			}
			c.Client.ReplicaPort = int(p)
		case "ip-address":
			c.Client.ReplicaIP = string(c.Args[j+1])
		case "capa", "rdb-only", "getack", "ack":
		default:
			c.errorf("ERR Unrecognized REPLCONF option: %s", c.Args[j])
			return
		}
	}
	c.W.OK()
}

func cmdReplicaOf(c *Ctx) {
	if !c.requireAdmin() {
		return
	}
	if c.Env.failover.State() != failoverNone {
		c.W.Error("ERR REPLICAOF not allowed while failing over.")
		return
	}
	if lower(c.Args[1]) == "no" && lower(c.Args[2]) == "one" {
		c.Env.Repl.Promote()
		c.Env.recordRole("")
		c.Env.Log.Info("MASTER MODE enabled", "client", c.Client.Addr)
		c.W.OK()
		return
	}
	port, ok := parseInt(c.Args[2])
	if !ok || port < 0 || port > 65535 {
		c.W.Error("ERR Invalid master port")
		return
	}
	host := string(c.Args[1])
	if c.Env.Repl.ReplicaOf(host, int(port)) {
		c.W.SimpleString("OK Already connected to specified master")
		return
	}
	c.Env.recordRole(fmt.Sprintf("%s %d", host, port))
	c.W.OK()
}

// recordRole sets the slaveof option to the role the node took ("host
// port", or "" for a primary), so that CONFIG GET and CONFIG REWRITE
// show it; a failure is logged, the role change stands. Becoming a
// replica ends the waits of blocked list commands.
func (e *Env) recordRole(slaveof string) {
	if slaveof != "" {
		e.lists.unblockAll()
	}
	if err := e.Config.Override("slaveof", slaveof); err != nil {
		e.Log.Warn("could not record the role change", "error", err)
	}
}

func cmdRole(c *Ctx) {
	r := c.Env.Repl
	if ls, ok := r.Link(); ok {
		state := "connect"
		switch {
		case ls.SyncInProgress:
			state = "sync"
		case ls.Up:
			state = "connected"
		case ls.LastError != "":
			state = "connecting"
		}
		c.W.Array(5)
		c.W.BulkString("slave")
		c.W.BulkString(ls.Host)
		c.W.Int(int64(ls.Port))
		c.W.BulkString(state)
		c.W.Int(int64(c.Env.Store.Offset()))
		return
	}
	reps := r.Replicas()
	c.W.Array(3)
	c.W.BulkString("master")
	c.W.Int(int64(c.Env.Store.Offset()))
	c.W.Array(len(reps))
	for _, rp := range reps {
		c.W.Array(3)
		c.W.BulkString(rp.Addr)
		c.W.BulkString(strconv.Itoa(rp.Port))
		c.W.BulkString(strconv.FormatUint(rp.Offset, 10))
	}
}

func cmdWait(c *Ctx) {
	// Redis's order: the role, then the count, then the timeout.
	if c.Env.Repl.IsReplica() {
		c.W.Error("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
		return
	}
	want, ok := c.intArg(1)
	if !ok {
		return
	}
	timeout, ok := c.timeoutArg(2)
	if !ok {
		return
	}
	off := c.Env.Store.Offset()
	if c.inExec() {
		// As in Redis, WAIT does not block inside a transaction: it
		// counts the replicas that have the writes now.
		c.W.Int(int64(c.Env.Repl.WaitAcks(0, off, 0, nil)))
		return
	}
	got := 0
	if c.block(func(stop <-chan struct{}) {
		got = c.Env.Repl.WaitAcks(int(want), off, time.Duration(timeout)*time.Millisecond, stop)
	}) {
		c.W.Error(errUnblocked)
		return
	}
	c.W.Int(int64(got))
}

// replicationInfo renders INFO replication with Redis's field names.
func (c *Ctx) replicationInfo(b *strings.Builder) {
	field := func(k string, v any) { fmt.Fprintf(b, "%s:%v\r\n", k, v) }
	r := c.Env.Repl
	off := c.Env.Store.Offset()
	id, id2, second := r.IDs()
	if ls, ok := r.Link(); ok {
		field("role", "slave")
		field("master_host", ls.Host)
		field("master_port", ls.Port)
		status := "down"
		if ls.Up {
			status = "up"
		}
		field("master_link_status", status)
		last := -1
		if !ls.LastIO.IsZero() {
			last = int(time.Since(ls.LastIO).Seconds())
		}
		field("master_last_io_seconds_ago", last)
		sync := 0
		if ls.SyncInProgress {
			sync = 1
		}
		field("master_sync_in_progress", sync)
		// A replica applies what it reads at once: what it read is what
		// it applied.
		field("slave_read_repl_offset", off)
		field("slave_repl_offset", off)
		if ls.SyncInProgress {
			// Redis's fields of a transfer whose size is not known
			// beforehand (a diskless sync's): -1 for the total and what
			// is left.
			field("master_sync_total_bytes", -1)
			field("master_sync_read_bytes", ls.SyncReadBytes)
			field("master_sync_left_bytes", -1)
			field("master_sync_perc", "0.00")
			field("master_sync_last_io_seconds_ago", last)
		}
		if !ls.Up {
			// Sentinel skips a replica whose data is too old to promote.
			field("master_link_down_since_seconds", last)
		}
		if ls.LastError != "" {
			field("master_link_last_error", strings.ReplaceAll(ls.LastError, "\r\n", " "))
		}
		field("slave_priority", c.Env.Config.Int("slave-priority"))
		field("slave_read_only", 1)
		announced := 0
		if c.Env.Config.Bool("replica-announced") {
			announced = 1
		}
		field("replica_announced", announced)
	} else {
		field("role", "master")
	}
	reps := r.Replicas()
	field("connected_slaves", len(reps))
	for i, rp := range reps {
		fmt.Fprintf(b, "slave%d:ip=%s,port=%d,state=%s,offset=%d,lag=%d\r\n", i, rp.Addr, rp.Port, rp.State, rp.Offset,
			int(time.Since(rp.LastAck).Seconds()))
	}
	field("master_failover_state", c.Env.failover.State())
	field("master_replid", id)
	field("master_replid2", id2)
	field("master_repl_offset", off)
	if second == 0 {
		field("second_repl_offset", -1)
	} else {
		field("second_repl_offset", second+1)
	}
	// The replication log is the backlog; offsets count batches.
	ls := r.LogStats()
	field("repl_backlog_active", 1)
	field("repl_backlog_size", c.Env.Config.Bytes("repl-log-max-bytes"))
	histlen := uint64(0)
	if ls.First > 0 {
		histlen = ls.Last - ls.First + 1
	}
	field("repl_backlog_first_byte_offset", ls.First)
	field("repl_backlog_histlen", histlen)
}

// servesNoStaleData reports whether this node is a replica whose link to
// its primary is down or in a full sync while replica-serve-stale-data is
// no: commands without the stale flag then get MASTERDOWN.
func (e *Env) servesNoStaleData() bool {
	if !e.isReplica() || e.Config.Bool("slave-serve-stale-data") {
		return false
	}
	ls, ok := e.Repl.Link()
	return ok && (!ls.Up || ls.SyncInProgress)
}
