package commands

import (
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
			"stats":        withTips(plain("Returns details about memory usage; not supported by Cairn (see INFO memory).", cmdMemoryStats), report...),
			"help":         {Arity: 2, Flags: FlagLoading | FlagStale, Since: "4.0.0", Summary: "Returns helpful text about the different subcommands.", Handler: cmdMemoryHelp},
		}})
}

// cmdMemoryUsage replies with storage.StoredSize of the key, or a null
// when there is none. Cairn keeps data on disk, so this is what the key
// costs there, not in RAM as in Redis: enough to find the large keys
// (redis-cli --memkeys). SAMPLES is parsed as Redis parses it and, with
// strings only, changes nothing. Like Redis, the lookup counts no hit or
// miss and finds a key that has expired but is not yet deleted.
func cmdMemoryUsage(c *Ctx) {
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
		j++
	}
	k, ok := c.read(c.Args[2])
	if !ok {
		return
	}
	if !k.raw {
		c.W.NullBulk()
		return
	}
	c.W.Int(storage.StoredSize(c.ns(), c.Args[2], &k.m))
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

func cmdMemoryStats(c *Ctx) {
	c.W.Error("ERR MEMORY STATS is not supported by Cairn: INFO memory has its memory figures")
}

func cmdMemoryHelp(c *Ctx) {
	help(c, "MEMORY", []string{
		"DOCTOR", "    Return a report on the server's memory.",
		"MALLOC-STATS", "    Return the allocator's statistics (none with Go's allocator).",
		"PURGE", "    Return the memory the server has freed to the system.",
		"STATS", "    Not supported: INFO memory has the server's memory figures.",
		"USAGE <key> [SAMPLES <count>]", "    Return the bytes <key> and its value take in storage (Cairn keeps data on",
		"    disk); SAMPLES changes nothing for strings.",
	})
}
