package commands

import (
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/cairnkv/cairn/storage"
)

func init() {
	plain := func(summary string, h Handler) *Spec {
		return &Spec{Arity: 2, Since: "4.0.0", Summary: summary, Handler: h}
	}
	// Redis's tips for a command a cluster client sends to every shard:
	// a report (its reply is shard-specific) or an action.
	report := []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"}
	action := []string{"request_policy:all_shards", "response_policy:all_succeeded"}
	register(&Spec{Name: "memory", Arity: -2, Group: "server", Since: "4.0.0",
		Summary: "A container for memory diagnostics commands.",
		Subcommands: map[string]*Spec{
			"usage": {Arity: -3, Flags: FlagReadOnly, FirstKey: 2, LastKey: 2, Step: 1, KeySpecs: []KeySpec{Key(2, KeyRO)}, Since: "4.0.0",
				Summary: "Estimates the storage a key and its value take.", Handler: cmdMemoryUsage},
			"purge":        withTips(plain("Returns the memory the server has freed to the system.", cmdMemoryPurge), action...),
			"doctor":       withTips(plain("Outputs a memory problems report.", cmdMemoryDoctor), report...),
			"malloc-stats": withTips(plain("Returns the allocator's statistics.", cmdMemoryMallocStats), report...),
			"stats":        withTips(plain("Returns details about memory usage, in Redis's fields, from Go's heap.", cmdMemoryStats), report...),
			"help":         {Arity: 2, Flags: FlagLoading | FlagStale, Since: "4.0.0", Summary: "Returns helpful text about the different subcommands.", Handler: cmdMemoryHelp},
		}})
}

// cmdMemoryUsage replies with storage.StoredSize of the key, or a null
// when there is none. Cairn keeps data on disk, so this is what the key
// costs there, not in RAM as in Redis: enough to find the large keys
// (redis-cli --memkeys). A hash's or a set's member records are
// estimated, as Redis estimates a collection's, from SAMPLES of them
// (default 5, 0: all). Like Redis, the lookup counts no hit or miss and
// finds a key that has expired but is not yet deleted.
func cmdMemoryUsage(c *Ctx) {
	samples := int64(5)
	for j := 3; j < len(c.Args); j++ {
		if keyword(c.Args[j]) != "samples" || j+1 >= len(c.Args) {
			c.W.Error(errSyntax)
			return
		}
		n, ok := c.intArg(j + 1)
		if !ok {
			return
		}
		if n < 0 {
			c.W.Error(errSyntax)
			return
		}
		samples = n
		j++
	}
	key := c.Args[2]
	defer c.lock(key)()
	k, ok := c.read(key)
	if !ok {
		return
	}
	if !k.raw {
		c.W.NullBulk()
		return
	}
	n := storage.StoredSize(c.ns(), key, &k.m)
	if k.m.HasMembers() {
		var seen, bytes int64
		if !c.fields(&k.m, func(f, v []byte) bool {
			seen++
			if k.m.Type == storage.TypeZSet {
				bytes += storage.ZMemberSize(c.ns(), f)
			} else {
				bytes += storage.FieldSize(c.ns(), f, v)
			}
			return samples == 0 || seen < samples
		}) {
			return
		}
		if seen > 0 {
			n += bytes * int64(k.m.Size) / seen
		}
	}
	c.W.Int(n)
}

// cmdMemoryPurge returns to the system the memory the Go runtime holds
// freed (debug.FreeOSMemory), as Redis asks its allocator to.
func cmdMemoryPurge(c *Ctx) {
	debug.FreeOSMemory()
	c.W.OK()
}

// memoryDoctorReport is MEMORY DOCTOR's reply: Cairn has none of the
// conditions Redis's doctor looks for (allocator fragmentation, big
// client buffers in Redis's heap), so it says where to look instead.
var memoryDoctorReport = strings.Join([]string{
	"Cairn keeps its data on disk (Pebble); its memory is Go's heap, Pebble's block cache and memtables, and client buffers.",
	"INFO memory reports the heap (used_memory, used_memory_peak) and the process's RSS (used_memory_rss);",
	"MEMORY PURGE returns the memory the heap has freed to the system.",
}, "\n")

func cmdMemoryDoctor(c *Ctx) { c.W.Verbatim(memoryDoctorReport) }

// cmdMemoryMallocStats replies as Redis does when built without jemalloc.
func cmdMemoryMallocStats(c *Ctx) { c.W.Verbatim("Stats not supported for the current allocator") }

// cmdMemoryStats replies Redis's MEMORY STATS map from Go's heap: the
// allocator's figures are the heap's (allocated, in use, obtained from
// the system), the overheads Cairn can tell are the script cache's, and
// the dataset is the rest of the heap. The data itself lives on disk, so
// keys.bytes-per-key is heap per key, not what a key takes (MEMORY
// USAGE). Redis lists db.0 only when it holds keys.
func cmdMemoryStats(c *Ctx) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	c.Env.Stats.peak.note(ms.HeapAlloc)
	allocated := int64(ms.HeapAlloc)
	active := int64(ms.HeapInuse)
	resident := int64(ms.HeapSys - ms.HeapReleased)
	rss := residentBytes()
	_, scripts := c.Env.scripts.cache.Stats()
	keys := c.Env.Store.DBSize(c.ns())
	overhead := scripts
	dataset := max(allocated-overhead, 0)
	ratio := func(a, b int64) float64 {
		if b == 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	fields := 27
	if keys > 0 {
		fields++
	}
	c.W.Map(fields)
	num := func(name string, v int64) { c.W.BulkString(name); c.W.Int(v) }
	dbl := func(name string, v float64) { c.W.BulkString(name); c.W.Double(v) }
	num("peak.allocated", int64(c.Env.Stats.peak.bytes.Load()))
	num("total.allocated", allocated)
	num("startup.allocated", 0)
	num("replication.backlog", 0)
	num("clients.slaves", 0)
	num("clients.normal", 0)
	num("cluster.links", 0)
	num("aof.buffer", 0)
	num("lua.caches", scripts)
	num("functions.caches", 0)
	if keys > 0 {
		c.W.BulkString("db.0")
		c.W.Map(3)
		num("overhead.hashtable.main", 0)
		num("overhead.hashtable.expires", 0)
		num("overhead.hashtable.slot-to-keys", 0)
	}
	num("overhead.total", overhead)
	num("keys.count", keys)
	perKey := int64(0)
	if keys > 0 {
		perKey = allocated / keys
	}
	num("keys.bytes-per-key", perKey)
	num("dataset.bytes", dataset)
	dbl("dataset.percentage", 100*ratio(dataset, allocated))
	dbl("peak.percentage", 100*ratio(allocated, int64(c.Env.Stats.peak.bytes.Load())))
	num("allocator.allocated", allocated)
	num("allocator.active", active)
	num("allocator.resident", resident)
	dbl("allocator-fragmentation.ratio", ratio(active, allocated))
	num("allocator-fragmentation.bytes", active-allocated)
	dbl("allocator-rss.ratio", ratio(resident, active))
	num("allocator-rss.bytes", resident-active)
	dbl("rss-overhead.ratio", ratio(rss, resident))
	num("rss-overhead.bytes", rss-resident)
	dbl("fragmentation", ratio(rss, allocated))
	num("fragmentation.bytes", rss-allocated)
}

func cmdMemoryHelp(c *Ctx) {
	help(c, "MEMORY", []string{
		"DOCTOR", "    Return a report on the server's memory.",
		"MALLOC-STATS", "    Return the allocator's statistics (none with Go's allocator).",
		"PURGE", "    Return the memory the server has freed to the system.",
		"STATS", "    Return Redis's memory usage details, from the server's heap (its data is on disk).",
		"USAGE <key> [SAMPLES <count>]", "    Return the bytes <key> and its value take in storage (Cairn keeps data on",
		"    disk); SAMPLES changes nothing for strings.",
	})
}
