package config

import (
	"math"
	"slices"
	"strings"
)

// Kind says how an option's value is parsed and rendered.
type Kind int

const (
	// KindString is free text, stored as given (multi-token options store
	// their tokens joined by one space).
	KindString Kind = iota + 1
	// KindBool is yes or no (any case), rendered as yes or no.
	KindBool
	// KindInt is a decimal integer written as Redis's string2ll accepts it
	// (no sign other than '-', no leading zeros), within [Min, Max].
	KindInt
	// KindMemory is a size in bytes with an optional unit as Redis accepts
	// it (b, k=1000, kb=1024, m, mb, g, gb; any case), within [Min, Max].
	// It renders as a plain number of bytes, as CONFIG GET does in Redis 7.
	KindMemory
	// KindEnum is one of Enum (any case), rendered in lower case.
	KindEnum
)

// String returns the kind's name as --help shows it.
func (k Kind) String() string {
	switch k {
	case KindString:
		return "string"
	case KindBool:
		return "yes|no"
	case KindInt:
		return "integer"
	case KindMemory:
		return "bytes"
	case KindEnum:
		return "enum"
	}
	return "unknown"
}

// Option describes one configuration option. The table of options is fixed
// when the program starts; Options returns a copy of it.
type Option struct {
	// Name is the canonical lower-case name, as in kvrocks.conf.
	Name string
	// Aliases are other names accepted by Get, Set and the config file
	// (never as flags or environment variables).
	Aliases []string
	// Kind says how values are parsed and rendered.
	Kind Kind
	// Default is the canonical default value.
	Default string
	// Min and Max bound KindInt and KindMemory values.
	Min, Max int64
	// Enum lists the accepted values of a KindEnum option, in lower case.
	Enum []string
	// Mutable reports whether CONFIG SET may change the option at runtime.
	Mutable bool
	// MultiToken reports whether a config-file line may give the value as
	// several tokens; they are joined with one space.
	MultiToken bool
	// Doc is a one-line description.
	Doc string

	// check, when set, runs after the kind's parsing. It may reject the
	// value or rewrite it (canonical text and typed fields). prev is the
	// option's current value, for options whose new value is merged into
	// the old one (client-output-buffer-limit).
	check func(prev, v *value) error
}

// options is the table of every option Cairn supports, in the order the
// example file and --help list them. To add an option, add an entry here:
// Load, Set, Get, Rewrite, --help and the example file pick it up.
var options = []Option{
	{
		Name: "bind", Kind: KindString, Default: "127.0.0.1", MultiToken: true,
		Doc:   "Addresses to listen on, separated by spaces; as in Redis, * is every IPv4 address, ::* every IPv6 one, and a leading - skips an address the host does not have.",
		check: checkBind,
	},
	{
		Name: "port", Kind: KindInt, Default: "6666", Min: 1, Max: 65535,
		Doc: "TCP port to listen on (Redis's 0, no TCP port, would leave Cairn unreachable).",
	},
	{
		Name: "timeout", Kind: KindInt, Default: "0", Min: 0, Max: math.MaxInt32, Mutable: true,
		Doc: "Close a client connection after it has been idle this many seconds (0 = never).",
	},
	{
		Name: "maxclients", Kind: KindInt, Default: "10000", Min: 1, Max: math.MaxUint32, Mutable: true,
		Doc: "Maximum number of connected clients.",
	},
	{
		Name: "daemonize", Kind: KindBool, Default: "no",
		Doc:   "Only no is supported: Cairn runs in the foreground; use a supervisor.",
		check: checkDaemonize,
	},
	{
		Name: "pidfile", Kind: KindString, Default: "",
		Doc: "File to write the process id to (empty = none).",
	},
	{
		Name: "dir", Kind: KindString, Default: "./cairn-data",
		Doc: "Directory holding the database.",
	},
	{
		Name: "log-dir", Kind: KindString, Default: "stderr",
		Doc: "Where logs go: stdout, stderr or a directory.",
	},
	{
		Name: "log-level", Aliases: []string{"loglevel"}, Kind: KindEnum, Default: "info", Mutable: true,
		Enum: []string{"debug", "info", "notice", "verbose", "warning", "error", "fatal"},
		Doc:  "Log verbosity: debug, info, notice, verbose, warning, error or fatal (Kvrocks's; as error).",
	},
	{
		Name: "requirepass", Kind: KindString, Default: "", Mutable: true,
		Doc: "Password clients must AUTH with; it also grants the admin role when namespaces exist (empty = none).",
	},
	{
		Name: "masterauth", Kind: KindString, Default: "", Mutable: true,
		Doc: "Password a replica uses to authenticate to its primary.",
	},
	{
		Name: "slaveof", Aliases: []string{"replicaof"}, Kind: KindString, Default: "", MultiToken: true,
		Doc:   "Primary to replicate from, as \"<host> <port>\" (empty = this node is a primary).",
		check: checkSlaveof,
	},
	{
		Name: "slave-read-only", Aliases: []string{"replica-read-only"}, Kind: KindBool, Default: "yes", Mutable: true,
		Doc:   "Only yes is supported: replicas refuse write commands from clients.",
		check: checkReadOnlyReplicas,
	},
	{
		Name: "replica-announce-ip", Aliases: []string{"slave-announce-ip"}, Kind: KindString, Default: "", Mutable: true,
		Doc: "Address a replica gives its primary as its own (INFO replication, ROLE, FAILOVER TO and Redis Sentinel use it), for a replica behind NAT or in a container; empty = the address the primary sees.",
	},
	{
		Name: "replica-announce-port", Aliases: []string{"slave-announce-port"}, Kind: KindInt, Default: "0", Min: 0, Max: 65535, Mutable: true,
		Doc: "Port a replica gives its primary as its own, with replica-announce-ip; 0 = its port.",
	},
	{
		Name: "replica-announced", Aliases: []string{"slave-announced"}, Kind: KindBool, Default: "yes", Mutable: true,
		Doc: "Whether Redis Sentinel lists this replica to its clients (SENTINEL REPLICAS); it still promotes it by slave-priority (INFO replication replica_announced).",
	},
	{
		Name: "slave-priority", Aliases: []string{"replica-priority"}, Kind: KindInt, Default: "100", Min: 0, Max: math.MaxInt32, Mutable: true,
		Doc: "Redis Sentinel's preference among replicas when it promotes one: the lowest first; 0 = never promote this one (INFO replication slave_priority).",
	},
	{
		Name: "slave-serve-stale-data", Aliases: []string{"replica-serve-stale-data"}, Kind: KindBool, Default: "yes", Mutable: true,
		Doc: "Whether a replica whose link to its primary is down (or syncing) still answers reads (no: -MASTERDOWN).",
	},
	{
		Name: "hz", Kind: KindInt, Default: "10", Min: 0, Max: math.MaxInt32, Mutable: true,
		Doc:   "Active expiry cycles per second; values outside 1..500 are clamped, as Redis does.",
		check: checkHz,
	},
	{
		Name: "scheduler-slice-us", Kind: KindInt, Default: "100", Min: 0, Max: 100000,
		Doc: "CPU time slice, in microseconds, Cairn asks Linux 6.12 or later to give each of its threads: " +
			"a short slice lets a thread woken by the network preempt a busy one sooner, which cuts " +
			"latency tails when the server shares a CPU (0 = the kernel's default; otherwise 100..100000).",
		check: checkSchedulerSlice,
	},
	{
		Name: "proto-max-bulk-len", Kind: KindMemory, Default: "536870912", Min: 1 << 20, Max: math.MaxInt64, Mutable: true,
		Doc: "Largest bulk string a client may send (at least 1mb).",
	},
	{
		Name: "client-output-buffer-limit", Kind: KindString, MultiToken: true, Mutable: true,
		Default: "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
		Doc:     "Output buffer limits per client class: <class> <hard> <soft> <soft-seconds> ...",
		check:   checkBufferLimits,
	},
	{
		Name: "notify-keyspace-events", Kind: KindString, Default: "", Mutable: true,
		Doc: "Keyspace event classes to publish, as Redis's flags (empty = none).",
	},
	{
		Name: "latency-tracking", Kind: KindBool, Default: "yes", Mutable: true,
		Doc: "Keep a latency histogram per command, for INFO latencystats and LATENCY HISTOGRAM.",
	},
	{
		Name: "latency-tracking-info-percentiles", Kind: KindString, Default: "50 99 99.9", Mutable: true, MultiToken: true,
		Doc:   "Percentiles INFO latencystats reports, separated by spaces (each 0..100; empty = none).",
		check: checkPercentiles,
	},
	{
		Name: "slowlog-log-slower-than", Kind: KindInt, Default: "10000", Min: -1, Max: math.MaxInt64, Mutable: true,
		Doc: "Commands running at least this many microseconds go to the slow log (SLOWLOG GET); -1 = none, 0 = all.",
	},
	{
		Name: "shutdown-timeout", Kind: KindInt, Default: "10", Min: 0, Max: math.MaxInt32, Mutable: true,
		Doc: "Seconds SHUTDOWN and SIGTERM wait, writes held back, for lagging replicas to catch up (0 = no wait).",
	},
	{
		Name: "shutdown-on-sigterm", Kind: KindString, Default: "default", Mutable: true,
		check: checkShutdownFlags,
		Doc:   "SHUTDOWN flags SIGTERM implies: default, or any of save nosave now force (only now matters to Cairn: no wait for replicas).",
	},
	{
		Name: "shutdown-on-sigint", Kind: KindString, Default: "default", Mutable: true,
		check: checkShutdownFlags,
		Doc:   "SHUTDOWN flags SIGINT implies, as shutdown-on-sigterm.",
	},
	{
		Name: "busy-reply-threshold", Aliases: []string{"lua-time-limit"}, Kind: KindInt, Default: "5000", Min: 0, Max: math.MaxInt64, Mutable: true,
		Doc: "Milliseconds a Lua script may run before other clients' commands get BUSY (SCRIPT KILL stops a script that has not written).",
	},
	{
		Name: "hash-max-listpack-entries", Aliases: []string{"hash-max-ziplist-entries"}, Kind: KindInt, Default: "512", Min: 0, Max: math.MaxInt64, Mutable: true,
		Doc: "Fields up to which OBJECT ENCODING reports a hash as listpack (and HSCAN returns it whole), as redis-server holds it; past it, hashtable for good.",
	},
	{
		Name: "hash-max-listpack-value", Aliases: []string{"hash-max-ziplist-value"}, Kind: KindMemory, Default: "64", Min: 0, Max: math.MaxInt64, Mutable: true,
		Doc: "Longest field or value of a hash OBJECT ENCODING reports as listpack; a longer one makes it hashtable for good.",
	},
	{
		Name: "list-max-listpack-size", Aliases: []string{"list-max-ziplist-size"}, Kind: KindInt, Default: "-2", Min: math.MinInt32, Max: math.MaxInt32, Mutable: true,
		Doc: "Accepted as redis-server accepts it; Cairn keeps every list the same way, and Redis 7.0's OBJECT ENCODING reports quicklist whatever it is.",
	},
	{
		Name: "list-compress-depth", Kind: KindInt, Default: "0", Min: 0, Max: math.MaxInt32, Mutable: true,
		Doc: "Accepted as redis-server accepts it; Cairn leaves compression to Pebble, whatever it is.",
	},
	{
		Name: "set-max-intset-entries", Kind: KindInt, Default: "512", Min: 0, Max: math.MaxInt64, Mutable: true,
		Doc: "Members up to which OBJECT ENCODING reports a set of integers as intset (and SSCAN returns it whole); past it, hashtable for good.",
	},
	{
		Name: "zset-max-listpack-entries", Aliases: []string{"zset-max-ziplist-entries"}, Kind: KindInt, Default: "128", Min: 0, Max: math.MaxInt64, Mutable: true,
		Doc: "Members up to which OBJECT ENCODING reports a sorted set as listpack (and ZSCAN returns it whole), as redis-server holds it; past it, skiplist for good.",
	},
	{
		Name: "zset-max-listpack-value", Aliases: []string{"zset-max-ziplist-value"}, Kind: KindMemory, Default: "64", Min: 0, Max: math.MaxInt64, Mutable: true,
		Doc: "Longest member of a sorted set OBJECT ENCODING reports as listpack; a longer one makes it skiplist for good.",
	},
	{
		Name: "stream-node-max-bytes", Kind: KindMemory, Default: "4096", Min: 0, Max: math.MaxInt64, Mutable: true,
		Doc: "Bytes of a stream node (a listpack in redis-server) past which new entries start a new node; XADD and XTRIM with ~ trim whole nodes only, as redis-server does. 0: no limit.",
	},
	{
		Name: "stream-node-max-entries", Kind: KindInt, Default: "100", Min: 0, Max: math.MaxInt64, Mutable: true,
		Doc: "Entries of a stream node past which new entries start a new node (see stream-node-max-bytes). 0: no limit.",
	},
	{
		Name: "hll-sparse-max-bytes", Kind: KindMemory, Default: "3000", Min: 0, Max: math.MaxInt64, Mutable: true,
		Doc: "Longest a HyperLogLog may grow in its sparse encoding (header included); a PFADD or PFMERGE that would make it longer converts it to the dense one, as redis-server does.",
	},
	{
		Name: "acllog-max-len", Kind: KindInt, Default: "128", Min: 0, Max: math.MaxInt64, Mutable: true,
		Doc: "Entries ACL LOG keeps (failed authentications); older ones are dropped.",
	},
	{
		Name: "slowlog-max-len", Kind: KindInt, Default: "128", Min: 0, Max: math.MaxInt64, Mutable: true,
		Doc: "Entries the slow log keeps; older ones are dropped.",
	},
	{
		Name: "tracking-table-max-keys", Kind: KindInt, Default: "1000000", Min: 0, Max: math.MaxInt64, Mutable: true,
		Doc: "Keys CLIENT TRACKING remembers for its clients; beyond it, keys picked at random are forgotten and their readers told to drop them (0 = no limit).",
	},
	{
		Name: "string-value-inline-max", Kind: KindMemory, Default: "65536", Min: 1, Max: 512 << 20,
		Doc: "Longest string value a whole write (SET) keeps inside its key's metadata record; a longer one, " +
			"or one over 4 KB that APPEND, SETRANGE, SETBIT or BITFIELD edited, is kept in 4 KB chunks, " +
			"so that TTL reads and changes never touch it and edits, GETRANGE and GETBIT touch only the chunks they need.",
	},
	{
		Name: "rocksdb.block_cache_size", Kind: KindInt, Default: "64", Min: 0, Max: math.MaxInt32,
		Doc: "Block cache size in MB.",
	},
	{
		Name: "repl-log-max-bytes", Kind: KindMemory, Default: "1073741824", Min: 1 << 20, Max: math.MaxInt64,
		Doc: "Replication log: the most bytes of batches kept on disk for replicas to resume from.",
	},
	{
		Name: "repl-log-max-age", Kind: KindInt, Default: "0", Min: 0, Max: math.MaxInt32,
		Doc: "Replication log: drop batches older than this many seconds (0 = keep by size only).",
	},
	{
		Name: "repl-timeout", Kind: KindInt, Default: "60", Min: 1, Max: math.MaxInt32, Mutable: true,
		Doc: "Seconds a primary waits for a replica to accept streamed bytes before dropping it.",
	},
	{
		Name: "rocksdb.row_cache_size", Kind: KindInt, Default: "32", Min: 0, Max: math.MaxInt32,
		Doc: "Size in MB of each of the two caches kept above Pebble: recently used key metadata (string values included), and collection members read by HGET, SISMEMBER, ZSCORE... (0 = off).",
	},
	{
		Name: "rocksdb.write_options.sync", Kind: KindBool, Default: "no", Mutable: true,
		Doc: "Whether every write waits for its WAL record to be synced to disk (with no, the WAL is written out and synced once a second).",
	},
	// Redis options that tools read (redis-benchmark asks for save and
	// appendonly, job queues for maxmemory-policy), with the one value
	// that describes Cairn.
	{
		Name: "save", Kind: KindString, Default: "", Mutable: true, MultiToken: true,
		Doc:   "Redis's RDB snapshot schedule, for tools that read it: Cairn takes no snapshots, so only \"\" is accepted.",
		check: onlyValue("", "Cairn takes no RDB snapshots (its data is on disk as it is written)"),
	},
	{
		Name: "appendonly", Kind: KindBool, Default: "no", Mutable: true,
		Doc:   "Redis's append-only file, for tools that read it: only no is accepted (Cairn's WAL is always on).",
		check: onlyValue("no", "Cairn has no append-only file (its WAL is always on)"),
	},
	{
		Name: "databases", Kind: KindInt, Default: "1", Min: 1, Max: 1,
		Doc: "Number of databases, for tools that read it: Cairn has database 0 only (use namespaces).",
	},
	{
		Name: "maxmemory", Kind: KindMemory, Default: "0", Min: 0, Max: 0, Mutable: true,
		Doc: "Redis's memory limit, for tools that read it: only 0 is accepted (Cairn keeps its data on disk).",
	},
	{
		Name: "maxmemory-policy", Kind: KindEnum, Default: "noeviction", Mutable: true, Enum: []string{"noeviction"},
		Doc: "Redis's eviction policy, for tools that read it: Cairn never evicts keys.",
	},
}

// Options returns a copy of the table of every option Cairn supports, in
// table order.
func Options() []Option {
	out := make([]Option, len(options))
	for i, o := range options {
		o.Aliases = slices.Clone(o.Aliases)
		o.Enum = slices.Clone(o.Enum)
		out[i] = o
	}
	return out
}

// byName maps canonical names and aliases to their table entry.
var byName = func() map[string]*Option {
	m := make(map[string]*Option, len(options))
	for i := range options {
		o := &options[i]
		m[o.Name] = o
		for _, a := range o.Aliases {
			m[a] = o
		}
	}
	return m
}()

// lookupOption finds an option by name or alias, in any case.
func lookupOption(name string) *Option {
	return byName[strings.ToLower(name)]
}

// kvrocksOnly lists the option names that Apache Kvrocks understands and
// Cairn does not implement (besides every "rocksdb." name, see
// IsKvrocksOnly). A kvrocks.conf line or flag with one of them is accepted
// and ignored with a warning, so a Kvrocks configuration file still loads.
var kvrocksOnly = map[string]bool{
	"workers": true, "repl-workers": true, "socket-fd": true, "tcp-backlog": true,
	"unixsocket": true, "unixsocketperm": true, "supervised": true,
	"cluster-enabled": true, "persist-cluster-nodes-enabled": true, "codis-enabled": true,
	"repl-namespace-enabled": true, "db-name": true, "backup-dir": true,
	"log-retention-days": true, "max-backup-to-keep": true, "max-backup-keep-hours": true,
	"master-use-repl-port": true, "use-rsid-psync": true, "slave-empty-db-before-fullsync": true,
	"replication-connect-timeout-ms": true, "replication-recv-timeout-ms": true,
	"replication-group-sync": true, "replication-no-slowdown": true,
	"replication-delay-bytes": true, "replication-delay-updates": true,
	"purge-backup-on-fullsync": true, "fullsync-recv-file-delay": true,
	"max-replication-mb": true, "max-io-mb": true, "max-db-size": true,
	"max-bitmap-to-string-mb": true, "enable-blob-cache": true,
	"redis-cursor-compatible": true, "redis-databases": true, "resp3-enabled": true,
	"json-max-nesting-depth": true, "json-storage-format": true,
	"txn-context-enabled": true, "skip-block-cache-deallocation-on-close": true,
	"histogram-bucket-boundaries": true, "lua-strict-key-accessing": true,
	"slowlog-dump-logfile-level": true,
	"profiling-sample-ratio":     true, "profiling-sample-commands": true,
	"profiling-sample-record-max-len": true, "profiling-sample-record-threshold-ms": true,
	"compact-cron": true, "bgsave-cron": true, "dbsize-scan-cron": true,
	"compaction-checker-range": true, "compaction-checker-cron": true,
	"force-compact-file-age": true, "force-compact-file-min-deleted-percentage": true,
	"auto-resize-block-and-sst": true, "migrate-type": true, "migrate-speed": true, "migrate-pipeline-size": true,
	"migrate-sequence-gap": true, "migrate-batch-size-kb": true, "migrate-batch-rate-limit-mb": true,
	"cloud-storage-type": true, "cloud-storage-bucket": true, "cloud-storage-access-key": true,
	"cloud-storage-secret-key": true, "cloud-storage-endpoint": true,
	"tls-port": true, "tls-cert-file": true, "tls-key-file": true, "tls-key-file-pass": true,
	"tls-ca-cert-file": true, "tls-ca-cert-dir": true, "tls-protocols": true,
	"tls-auth-clients": true, "tls-ciphers": true, "tls-ciphersuites": true,
	"tls-prefer-server-ciphers": true, "tls-session-caching": true,
	"tls-session-cache-size": true, "tls-session-cache-timeout": true, "tls-replication": true,
}

// IsKvrocksOnly reports whether name (any case) is an Apache Kvrocks option
// that Cairn does not implement: accepted and ignored with a warning rather
// than rejected. Every "rocksdb." name is one, except the few in the
// options table.
func IsKvrocksOnly(name string) bool {
	name = strings.ToLower(name)
	if byName[name] != nil {
		return false
	}
	return kvrocksOnly[name] || strings.HasPrefix(name, "rocksdb.")
}

// namespacePrefix starts a namespace line: "namespace.<ns> <token>".
const namespacePrefix = "namespace."
