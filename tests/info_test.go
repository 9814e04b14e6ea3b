package tests

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestInstantaneousRates: INFO's instantaneous_ops_per_sec and
// instantaneous_input_kbps / _output_kbps rise while a client sends
// commands, and fall back once it stops (they average the last 16 samples
// of 100 ms, as Redis's do).
func TestInstantaneousRates(t *testing.T) {
	n := StartCairn(t)
	admin := n.Client()
	stats := func() (ops int64, in, out float64) {
		m := infoMap(t, admin, "stats")
		ops, _ = strconv.ParseInt(m["instantaneous_ops_per_sec"], 10, 64)
		in, _ = strconv.ParseFloat(m["instantaneous_input_kbps"], 64)
		out, _ = strconv.ParseFloat(m["instantaneous_output_kbps"], 64)
		return ops, in, out
	}
	if ops, in, out := stats(); ops > 10 || in > 1 || out > 1 {
		t.Fatalf("idle server: %d ops/s, %.2f KB/s in, %.2f KB/s out", ops, in, out)
	}

	load := n.Client()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		cx := ctx(t)
		for range 2_000_000 {
			select {
			case <-stop:
				return
			default:
			}
			if load.Ping(cx).Err() != nil {
				return
			}
		}
	}()
	waitFor(t, 20*time.Second, "the rates of a client sending PINGs", func() bool {
		ops, in, out := stats()
		return ops > 100 && in > 0 && out > 0
	})
	close(stop)
	<-done
	// INFO is itself a command: polled every 200 ms, it keeps the rate at
	// a few a second.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		ops, _, _ := stats()
		if ops <= 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("20 s after the client stopped: %d ops/s", ops)
		}
	}
}

// TestKeyspaceAvgTTL: INFO keyspace's avg_ttl is the mean remaining TTL in
// milliseconds of the keys with one, on the primary and on its replica,
// and follows EXPIRE, PERSIST, DEL and a restart. (Redis estimates it
// from the keys its expire cycle samples; Cairn's is exact.)
func TestKeyspaceAvgTTL(t *testing.T) {
	p := StartCairn(t)
	r := startReplica(t, p)
	pc, rc := p.Client(), r.Client()
	cx := ctx(t)
	// db0 returns keys, expires and avg_ttl from INFO keyspace.
	db0 := func(c *redis.Client) (keys, expires, avg int64) {
		t.Helper()
		f := infoOf(c, "keyspace")["db0"]
		if _, err := fmt.Sscanf(f, "keys=%d,expires=%d,avg_ttl=%d", &keys, &expires, &avg); err != nil {
			t.Fatalf("INFO keyspace db0 = %q: %v", f, err)
		}
		return keys, expires, avg
	}
	// expect checks both nodes: avg_ttl must lie in (want-slack, want],
	// slack covering the time the test takes between steps.
	const slack = 10_000
	expect := func(step string, keys, expires, want int64) {
		t.Helper()
		waitCaughtUp(t, pc, rc)
		for _, n := range []struct {
			name string
			c    *redis.Client
		}{{"primary", pc}, {"replica", rc}} {
			k, e, avg := db0(n.c)
			if k != keys || e != expires || avg > want || avg <= want-slack {
				t.Fatalf("%s, %s: keys=%d expires=%d avg_ttl=%d; want keys=%d expires=%d avg_ttl in (%d, %d]",
					step, n.name, k, e, avg, keys, expires, want-slack, want)
			}
		}
	}
	must(t, pc.Set(cx, "a", "1", 100*time.Second).Err())
	must(t, pc.Set(cx, "b", "2", 200*time.Second).Err())
	must(t, pc.Set(cx, "c", "3", 0).Err())
	expect("two keys with TTLs of 100 and 200 s", 3, 2, 150_000)
	must(t, pc.Expire(cx, "a", 400*time.Second).Err())
	expect("EXPIRE a 400", 3, 2, 300_000)
	must(t, pc.Persist(cx, "b").Err())
	expect("PERSIST b", 3, 1, 400_000)
	must(t, pc.Do(cx, "SET", "c", "4", "PXAT", time.Now().Add(1000*time.Second).UnixMilli()).Err())
	expect("SET c PXAT in 1000 s", 3, 2, 700_000)
	p.Stop()
	p.Restart()
	pc = p.Client()
	expect("a restart of the primary", 3, 2, 700_000)
	must(t, pc.Del(cx, "a", "c").Err())
	expect("DEL a c", 1, 0, 0)
}

// TestInfoFieldsMonitoringReads: the INFO fields that monitoring tools
// (redis_exporter, dashboards) read are there on Cairn as on Redis, with
// values that mean what Redis's mean: a run_id of 40 hex digits that lasts
// as long as the process, and a backlog (the replication log) holding
// every batch of a fresh server.
func TestInfoFieldsMonitoringReads(t *testing.T) {
	fields := []string{"redis_version", "run_id", "process_id", "uptime_in_seconds", "hz", "configured_hz",
		"connected_clients", "blocked_clients", "maxclients", "tracking_clients",
		"used_memory", "used_memory_rss", "used_memory_peak", "total_system_memory", "maxmemory", "maxmemory_policy", "mem_fragmentation_ratio",
		"rdb_changes_since_last_save", "rdb_last_save_time", "rdb_bgsave_in_progress", "rdb_last_bgsave_status",
		"total_connections_received", "total_commands_processed", "instantaneous_ops_per_sec", "total_net_input_bytes",
		"rejected_connections", "expired_keys", "evicted_keys", "keyspace_hits", "keyspace_misses", "total_forks",
		"role", "connected_slaves", "master_repl_offset", "repl_backlog_active", "repl_backlog_size",
		"repl_backlog_first_byte_offset", "repl_backlog_histlen", "used_cpu_sys", "used_cpu_user", "used_cpu_sys_children"}
	forEachTarget(t, func(t *testing.T, n *Node) {
		c := n.Client()
		for i := range 5 {
			must(t, c.Set(ctx(t), "k"+strconv.Itoa(i), "v", 0).Err())
		}
		info := infoOf(c, "everything")
		for _, f := range fields {
			if _, ok := info[f]; !ok {
				t.Errorf("INFO has no %s", f)
			}
		}
		if n.Name != "cairn" {
			return
		}
		if id := info["run_id"]; !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(id) {
			t.Fatalf("run_id %q", id)
		}
		if again := infoOf(c, "server")["run_id"]; again != info["run_id"] {
			t.Fatalf("run_id changed from %s to %s", info["run_id"], again)
		}
		if info["repl_backlog_first_byte_offset"] != "1" || info["repl_backlog_histlen"] != info["master_repl_offset"] {
			t.Fatalf("backlog first %s histlen %s, master_repl_offset %s", info["repl_backlog_first_byte_offset"],
				info["repl_backlog_histlen"], info["master_repl_offset"])
		}
		if !regexp.MustCompile(`^\d+\.\d\d%$`).MatchString(info["used_memory_peak_perc"]) ||
			!regexp.MustCompile(`^[\d.]+[BKMG]$`).MatchString(info["used_memory_peak_human"]) {
			t.Fatalf("used_memory_peak_perc %q, used_memory_peak_human %q", info["used_memory_peak_perc"], info["used_memory_peak_human"])
		}
	})
}

// TestInfoSectionsMatchRedis: INFO without arguments, INFO everything and
// INFO default list the same sections as redis-server, in its order.
func TestInfoSectionsMatchRedis(t *testing.T) {
	headers := func(n *Node, args ...any) []string {
		t.Helper()
		rdb := n.Client()
		defer rdb.Close()
		text, err := rdb.Do(ctx(t), append([]any{"INFO"}, args...)...).Text()
		if err != nil {
			t.Fatal(err)
		}
		return regexp.MustCompile(`(?m)^# \w+`).FindAllString(text, -1)
	}
	cairn, rds := StartCairn(t), StartRedis(t)
	for _, args := range [][]any{nil, {"everything"}, {"default"}, {"all"}} {
		got, want := headers(cairn, args...), headers(rds, args...)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("INFO %v sections:\n got %v\nwant %v", args, got, want)
		}
	}
}

// TestMemoryPeak: used_memory_peak keeps the highest used_memory once the
// memory is freed, and CONFIG RESETSTAT starts it again from the current
// use. The spike is a 32 MB reply held for a client that does not read.
func TestMemoryPeak(t *testing.T) {
	n := StartCairn(t)
	c := n.Client()
	cx := ctx(t)
	mem := func() (used, peak int64) {
		info := infoOf(c, "memory")
		used, _ = strconv.ParseInt(info["used_memory"], 10, 64)
		peak, _ = strconv.ParseInt(info["used_memory_peak"], 10, 64)
		return used, peak
	}
	const size = 32 << 20
	must(t, c.Set(cx, "big", strings.Repeat("x", size), 0).Err())
	must(t, c.Do(cx, "MEMORY", "PURGE").Err())
	base, _ := mem()

	slow := n.Raw()
	slow.Send("*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n") // and never read
	waitFor(t, 10*time.Second, "the held reply in used_memory", func() bool { used, _ := mem(); return used >= base+size })
	slow.c.Close()
	var used, peak int64
	waitFor(t, 10*time.Second, "the reply freed", func() bool {
		must(t, c.Do(cx, "MEMORY", "PURGE").Err())
		used, peak = mem()
		return used < base+size/2
	})
	if peak < base+size {
		t.Fatalf("used_memory_peak %d after the reply was freed (used_memory %d), want at least %d", peak, used, base+size)
	}
	must(t, c.ConfigResetStat(cx).Err())
	if _, reset := mem(); reset >= base+size/2 {
		t.Fatalf("used_memory_peak %d after CONFIG RESETSTAT, was %d; used_memory %d", reset, peak, used)
	}
}
