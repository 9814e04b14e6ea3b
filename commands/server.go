package commands

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cairnkv/cairn/config"
	"github.com/cairnkv/cairn/glob"
	"github.com/cairnkv/cairn/notify"
)

func init() {
	register(
		&Spec{Name: "config", Arity: -2, Group: "server", Since: "2.0.0", Summary: "A container for server configuration commands.",
			Subcommands: map[string]*Spec{
				"get":       {Arity: -3, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Since: "2.0.0", Summary: "Returns the effective values of configuration parameters.", Handler: cmdConfigGet},
				"set":       {Arity: -4, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}, Since: "2.0.0", Summary: "Sets configuration parameters in-flight.", Handler: cmdConfigSet},
				"resetstat": {Arity: 2, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Since: "2.0.0", Summary: "Resets the server's statistics.", Handler: cmdConfigResetStat},
				"rewrite":   {Arity: 2, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Since: "2.8.0", Summary: "Persists the effective configuration to file.", Handler: cmdConfigRewrite},
				"help":      {Arity: 2, Flags: FlagLoading | FlagStale, Since: "5.0.0", Summary: "Returns helpful text about the different subcommands.", Handler: cmdConfigHelp},
			}},
		&Spec{Name: "info", Arity: -1, Flags: FlagLoading | FlagStale, Tips: []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"}, Group: "server", ACL: []string{"dangerous"}, Since: "1.0.0", Summary: "Returns information and statistics about the server.", Handler: cmdInfo},
		&Spec{Name: "time", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, Tips: []string{"nondeterministic_output"}, Group: "server", Since: "2.6.0", Summary: "Returns the server time.", Handler: cmdTime},
		&Spec{Name: "shutdown", Arity: -1, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale | FlagNoMulti | FlagAllowBusy, Group: "server", Since: "1.0.0", Summary: "Synchronously saves the database(s) to disk and shuts down the Redis server.", Handler: cmdShutdown},
	)
}

// requireAdmin replies with an error and returns false for a namespace
// client running an admin command.
func (c *Ctx) requireAdmin() bool {
	if !c.Client.Admin {
		c.W.Error(errNotAdminCmd)
		return false
	}
	return true
}

func cmdConfigGet(c *Ctx) {
	if !c.requireAdmin() {
		return
	}
	// As in Redis, an alias (replica-read-only) is a name of its own: a
	// pattern matching it returns it, with its option's value; a name
	// without wildcards comes back as typed (TIMEOUT), once.
	var names []string
	for _, o := range config.Options() {
		names = append(names, o.Name)
		names = append(names, o.Aliases...)
	}
	matched := map[string]bool{}
	var out []string
	for _, p := range c.Args[2:] {
		if !strings.ContainsAny(string(p), "*?[") { // as Redis: a backslash alone is no pattern
			if n := strings.ToLower(string(p)); slices.Contains(names, n) && !matched[n] {
				matched[n] = true
				out = append(out, string(p))
			}
			continue
		}
		for _, n := range names {
			if !matched[n] && matchNoCase(string(p), n) {
				matched[n] = true
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	c.W.Map(len(out))
	for _, n := range out {
		v, _ := c.Env.Config.Get(n)
		if strings.EqualFold(n, "notify-keyspace-events") {
			v = notify.Display(v) // stored losslessly, shown as Redis shows it
		}
		c.W.BulkString(n)
		c.W.BulkString(v)
	}
}

func cmdConfigSet(c *Ctx) {
	if !c.requireAdmin() {
		return
	}
	if len(c.Args)%2 != 0 { // a name without its value: Redis's syntax error, not an arity error
		c.W.Error(errSyntax)
		return
	}
	pairs := make([]config.Pair, 0, (len(c.Args)-2)/2)
	for j := 2; j < len(c.Args); j += 2 {
		pairs = append(pairs, config.Pair{Name: string(c.Args[j]), Value: string(c.Args[j+1])})
	}
	if err := c.Env.Config.Set(pairs); err != nil {
		c.W.Error(err.Error())
		return
	}
	c.W.OK()
}

func cmdConfigResetStat(c *Ctx) {
	if !c.requireAdmin() {
		return
	}
	c.Env.Stats.Reset()
	c.W.OK()
}

func cmdConfigRewrite(c *Ctx) {
	if !c.requireAdmin() {
		return
	}
	path := c.Env.Config.Path()
	if path == "" {
		c.W.Error("ERR The server is running without a config file")
		return
	}
	if err := c.Env.syncNamespacesToConfig(); err != nil {
		c.errorf("ERR Rewriting config file: %v", err)
		return
	}
	if err := config.Rewrite(path, c.Env.Config); err != nil {
		c.Env.Log.Warn("CONFIG REWRITE failed", "error", err)
		c.errorf("ERR Rewriting config file: %v", err)
		return
	}
	c.Env.Log.Info("CONFIG REWRITE executed with success")
	c.W.OK()
}

func cmdConfigHelp(c *Ctx) {
	help(c, "CONFIG", []string{
		"GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>", "    Set the configuration <directive> to <value>.",
		"RESETSTAT", "    Reset statistics reported by the INFO command.",
		"REWRITE", "    Rewrite the configuration file.",
	})
}

func cmdTime(c *Ctx) {
	us := c.Now.UnixMicro()
	c.W.Array(2)
	c.W.BulkString(strconv.FormatInt(us/1e6, 10))
	c.W.BulkString(strconv.FormatInt(us%1e6, 10))
}

// infoSections lists the INFO sections in output order, and whether INFO
// without arguments (or with "default") includes each, as in Redis:
// "all" and "everything" include every one.
var infoSections = []struct {
	name       string
	notDefault bool
}{
	{name: "server"}, {name: "clients"}, {name: "memory"}, {name: "persistence"}, {name: "stats"},
	{name: "replication"}, {name: "cpu"}, {name: "modules"}, {name: "commandstats", notDefault: true},
	{name: "errorstats"}, {name: "latencystats", notDefault: true}, {name: "cluster"}, {name: "keyspace"},
}

func cmdInfo(c *Ctx) {
	want := map[string]bool{}
	if len(c.Args) == 1 {
		want["default"] = true
	}
	for _, a := range c.Args[1:] {
		want[lower(a)] = true
	}
	all := want["all"] || want["everything"]
	var parts []string
	for _, s := range infoSections {
		if all || want[s.name] || want["default"] && !s.notDefault {
			parts = append(parts, c.infoSection(s.name))
		}
	}
	c.W.Verbatim(strings.Join(parts, "\r\n"))
}

// infoSection renders one INFO section with Redis's field names.
func (c *Ctx) infoSection(name string) string {
	var b strings.Builder
	field := func(k string, v any) { fmt.Fprintf(&b, "%s:%v\r\n", k, v) }
	e := c.Env
	switch name {
	case "server":
		b.WriteString("# Server\r\n")
		up := c.Now.Sub(e.Started)
		field("redis_version", RedisVersion)
		field("cairn_version", e.Version)
		field("redis_mode", "standalone")
		field("os", runtime.GOOS+" "+runtime.GOARCH)
		field("arch_bits", strconv.IntSize)
		field("multiplexing_api", "epoll") // Go's network poller on Linux
		field("go_version", runtime.Version())
		field("process_id", os.Getpid())
		field("process_supervised", "no")
		field("run_id", e.runID())
		field("tcp_port", e.Config.Int("port"))
		field("server_time_usec", c.Now.UnixMicro())
		field("uptime_in_seconds", int64(up.Seconds()))
		field("uptime_in_days", int64(up.Hours()/24))
		hz := e.Config.Int("hz")
		field("hz", min(max(hz, 1), 500))
		field("configured_hz", hz)
		exe, _ := os.Executable()
		field("executable", exe)
		field("config_file", e.Config.Path())
		field("io_threads_active", 0)
	case "clients":
		b.WriteString("# Clients\r\n")
		field("connected_clients", e.Clients.Len())
		field("pubsub_clients", e.PubSub.Stats().Clients)
		field("cluster_connections", 0)
		field("maxclients", e.Config.Int("maxclients"))
		field("blocked_clients", e.pause.waiting.Load()+e.blocked.Load())
		field("tracking_clients", e.Clients.tracking.nclients.Load())
		field("clients_in_timeout_table", 0)
	case "memory":
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.WriteString("# Memory\r\n")
		field("used_memory", ms.HeapAlloc)
		field("used_memory_human", humanBytes(int64(ms.HeapAlloc)))
		rss := residentBytes()
		field("used_memory_rss", rss)
		field("used_memory_rss_human", humanBytes(rss))
		e.Stats.peak.note(ms.HeapAlloc)
		peak := e.Stats.peak.bytes.Load()
		field("used_memory_peak", peak)
		field("used_memory_peak_human", humanBytes(int64(peak)))
		field("used_memory_peak_perc", fmt.Sprintf("%.2f%%", float64(ms.HeapAlloc)*100/float64(peak)))
		total := systemMemory()
		field("total_system_memory", total)
		field("total_system_memory_human", humanBytes(total))
		scripts, scriptBytes := e.scripts.cache.Stats()
		field("used_memory_scripts_eval", scriptBytes)
		field("number_of_cached_scripts", scripts)
		libs, funcs, codeBytes := e.functions.stats()
		field("number_of_functions", funcs)
		field("number_of_libraries", libs)
		field("used_memory_functions", codeBytes)
		field("used_memory_scripts", scriptBytes+codeBytes)
		field("used_memory_scripts_human", humanBytes(scriptBytes+codeBytes))
		field("maxmemory", 0)
		field("maxmemory_human", "0B")
		field("maxmemory_policy", e.Config.String("maxmemory-policy"))
		ratio := 0.0
		if ms.HeapAlloc > 0 {
			ratio = float64(rss) / float64(ms.HeapAlloc)
		}
		field("mem_fragmentation_ratio", fmt.Sprintf("%.2f", ratio))
		field("mem_fragmentation_bytes", rss-int64(ms.HeapAlloc))
		field("mem_allocator", "go")
	case "persistence":
		b.WriteString("# Persistence\r\n")
		field("loading", 0)
		field("async_loading", 0)
		e.persistenceFields(field)
		field("aof_enabled", 0)
		l := e.Store.LSMStats()
		field("pebble_flushes", l.Flushes)
		field("pebble_flush_bytes", l.FlushBytes)
		field("pebble_compactions", l.Compactions)
		field("pebble_compaction_bytes", l.CompactionBytes)
		field("pebble_l0_files", l.L0Files)
		field("pebble_sstables", l.Tables)
		field("pebble_disk_bytes", l.DiskBytes)
		field("row_cache_hits", l.RowCacheHits)
		field("row_cache_misses", l.RowCacheMisses)
		field("member_cache_hits", l.MemberHits)
		field("member_cache_misses", l.MemberMisses)
		field("wal_synced_offset", e.Store.SyncedOffset())
	case "stats":
		s := e.Stats
		b.WriteString("# Stats\r\n")
		ops, inKBps, outKBps := s.Instantaneous()
		field("total_connections_received", s.Connections.Load())
		field("total_commands_processed", s.Commands.Load())
		field("instantaneous_ops_per_sec", ops)
		field("total_net_input_bytes", s.NetInput.Load())
		field("total_net_output_bytes", s.NetOutput.Load())
		field("instantaneous_input_kbps", fmt.Sprintf("%.2f", inKBps))
		field("instantaneous_output_kbps", fmt.Sprintf("%.2f", outKBps))
		field("rejected_connections", s.Rejected.Load())
		field("expired_keys", s.ExpiredKeys.Load())
		field("keyspace_hits", s.KeyspaceHits.Load())
		field("keyspace_misses", s.KeyspaceMisses.Load())
		field("total_error_replies", s.ErrorReplies.Load())
		ps := e.PubSub.Stats()
		field("pubsub_channels", ps.Channels)
		field("pubsub_patterns", ps.Patterns)
		field("pubsubshard_channels", ps.ShardChannels)
		field("client_output_buffer_limit_disconnections", s.OutputLimitDisconnections.Load())
		// Cairn never evicts, forks, tracks keys for clients or caches
		// MIGRATE sockets.
		field("evicted_keys", 0)
		field("evicted_clients", 0)
		field("total_forks", 0)
		field("latest_fork_usec", 0)
		field("migrate_cached_sockets", 0)
		keys, items, prefixes := e.Clients.tracking.stats()
		field("tracking_total_keys", keys)
		field("tracking_total_items", items)
		field("tracking_total_prefixes", prefixes)
		field("sync_full", e.Repl.SyncFull.Load())
		field("sync_partial_ok", e.Repl.SyncPartialOK.Load())
		field("sync_partial_err", e.Repl.SyncPartialErr.Load())
		field("script_reruns", s.ScriptReruns.Load())
	case "replication":
		b.WriteString("# Replication\r\n")
		c.replicationInfo(&b)
	case "cpu":
		b.WriteString("# CPU\r\n")
		user, sys := cpuSeconds()
		field("used_cpu_sys", fmt.Sprintf("%.6f", sys))
		field("used_cpu_user", fmt.Sprintf("%.6f", user))
		field("used_cpu_sys_children", "0.000000") // Cairn starts no processes
		field("used_cpu_user_children", "0.000000")
	case "commandstats":
		b.WriteString("# Commandstats\r\n")
		for _, spec := range allSpecs() {
			st := &spec.stats
			calls, usec, rejected, failed := st.calls.Load(), st.usec.Load(), st.rejected.Load(), st.failed.Load()
			if calls == 0 && rejected == 0 && failed == 0 {
				continue
			}
			perCall := 0.0
			if calls > 0 {
				perCall = float64(usec) / float64(calls)
			}
			fmt.Fprintf(&b, "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d\r\n",
				spec.FullName(), calls, usec, perCall, rejected, failed)
		}
	case "errorstats":
		b.WriteString("# Errorstats\r\n")
		counts := e.Stats.ErrorCounts()
		for _, code := range slices.Sorted(maps.Keys(counts)) {
			fmt.Fprintf(&b, "errorstat_%s:count=%d\r\n", code, counts[code])
		}
	case "latencystats":
		b.WriteString("# Latencystats\r\n")
		if e.Config.Bool("latency-tracking") {
			percentiles := e.Config.Floats("latency-tracking-info-percentiles")
			for _, spec := range allSpecs() {
				b.WriteString(latencyStatsLine(spec.FullName(), &spec.stats.latency, percentiles))
			}
		}
	case "modules":
		b.WriteString("# Modules\r\n") // Cairn loads none
	case "cluster":
		// Tools read cluster_enabled to tell a cluster node; Cairn is none.
		b.WriteString("# Cluster\r\ncluster_enabled:0\r\n")
	case "keyspace":
		b.WriteString("# Keyspace\r\n")
		n := e.Store.KeyCounts()[c.ns()]
		if n.Keys > 0 {
			fmt.Fprintf(&b, "db0:keys=%d,expires=%d,avg_ttl=%d\r\n", n.Keys, n.Expires, n.AvgTTL(c.nowMs()))
		}
	}
	return b.String()
}

// humanBytes renders n as Redis's bytesToHuman does.
func humanBytes(n int64) string {
	f := float64(n)
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1<<20:
		return fmt.Sprintf("%.2fK", f/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.2fM", f/(1<<20))
	case n < 1<<40:
		return fmt.Sprintf("%.2fG", f/(1<<30))
	}
	return fmt.Sprintf("%.2fT", f/(1<<40))
}

// residentBytes reads the process's resident set size from /proc.
// runID returns the process's INFO run_id: 40 random hex digits drawn at
// the first call, as Redis draws one per process start.
func (e *Env) runID() string {
	e.runIDOnce.Do(func() {
		var b [20]byte
		rand.Read(b[:])
		e.runIDHex = hex.EncodeToString(b[:])
	})
	return e.runIDHex
}

// systemMemory returns the machine's memory (MemTotal of /proc/meminfo),
// or 0 when it cannot be read.
func systemMemory() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

func residentBytes() int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// matchNoCase matches s against a glob pattern ignoring case.
func matchNoCase(pattern, s string) bool { return glob.Match([]byte(pattern), []byte(s), true) }
