#!/usr/bin/env bash
# Cairn's replication benchmarks, measured side by side with redis-server
# in one run:
#
#   invalidation  SETs of new keys on the primary at BENCH_INV_RATE/s (4
#                 writers, BENCH_INV_DURATION); a subscriber on the replica
#                 (PSUBSCRIBE __keyevent@0__:*) times each set event from
#                 the moment the SET's reply reached the writer
#                 (cairn-bench invalidation).
#   invmix        the same with a mix of writes, one kind per key in turn
#                 (BENCH_INV_MIX: SET INCR APPEND SETRANGE INCRBYFLOAT MSET
#                 GETSET SETEX), each timed to its own event (-mix).
#   invtrack      the SETs of invalidation, heard instead through CLIENT
#                 TRACKING: a RESP3 client on the replica in BCAST mode for
#                 the run's key prefix times each invalidate push (-via
#                 tracking).
#   catchup       BENCH_CATCHUP_REQUESTS pipelined SETs on 50 connections,
#                 as fast as the primary answers; then the time until the
#                 replica's slave_repl_offset reaches the primary's
#                 master_repl_offset (cairn-bench catchup).
#   full sync     BENCH_FULLSYNC_MB MB (default 200) of 1 KiB random values
#                 loaded into a fresh primary (redis-cli --pipe), then a
#                 fresh replica started, BENCH_FULLSYNC_RUNS times (default
#                 BENCH_RUNS): the time from its start until its INFO says
#                 master_link_status:up and master_sync_in_progress:0 and
#                 its DBSIZE is the primary's, and the MB/s that makes of
#                 what it received (Cairn: its live Pebble directory, the
#                 checkpoint; Redis: the RDB). Redis's full sync is an RDB
#                 transfer; its primaries run with repl-diskless-sync-delay
#                 0 so that they do not wait 5 s for more replicas.
#
# Every server is pinned to BENCH_SERVER_CPU (default 1) and the tools to
# BENCH_CLIENT_CPU (default 0) with taskset (BENCH_CAIRN_GOMAXPROCS, when
# set, is the GOMAXPROCS of the Cairn servers; Go's default on one CPU is
# 1); the invalidation runs last 30 s (BENCH_INV_DURATION) so that they
# include Pebble's flushes and compactions; everything binds to 127.0.0.1;
# data lives in a temporary directory removed on exit. Each figure is the
# median of BENCH_RUNS runs (default 3) alternating between Cairn and
# Redis, so that drift on a shared machine hits both. Prints a Markdown
# table with Cairn, Redis, the ratio and the targets:
#   invalidation p99 <= 2x Redis's p99, 0 events lost
#   catch-up time: reported beside Redis's
# A mode that fails against a server shows "n/a (the error)" in its cells.
#
# Usage: scripts/bench-replication.sh
#        BENCH_RUNS=1 BENCH_FULLSYNC_MB=50 scripts/bench-replication.sh (quicker)
#        BENCH_FULLSYNC_MB=0 ...  (no full-sync measurement)
#        BENCH_KEEP_RESULTS=DIR ...  (also copy each run's cairn-bench JSON into DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/benchlib.sh # RUNS, SERVER_CPU, CLIENT_CPU, $work, $pids, free_port, wait_up, stop

INV_RATE=${BENCH_INV_RATE:-5000}
INV_WRITERS=${BENCH_INV_WRITERS:-4}
INV_DURATION=${BENCH_INV_DURATION:-30s}
INV_MIX=${BENCH_INV_MIX:-set,incr,append,setrange,incrbyfloat,mset,getset,setex}
CATCHUP_REQUESTS=${BENCH_CATCHUP_REQUESTS:-200000}
CATCHUP_CONNS=${BENCH_CATCHUP_CONNS:-50}
CATCHUP_PIPELINE=${BENCH_CATCHUP_PIPELINE:-16}
FULLSYNC_MB=${BENCH_FULLSYNC_MB:-200}
FULLSYNC_RUNS=${BENCH_FULLSYNC_RUNS:-$RUNS}
FULLSYNC_VALUE=1024
TOOL_TIMEOUT=${BENCH_TOOL_TIMEOUT:-150}
SYNC_TIMEOUT=${BENCH_SYNC_TIMEOUT:-120}

for cmd in redis-server redis-cli taskset python3 go; do
	command -v "$cmd" >/dev/null || { echo "bench-replication: $cmd is missing (make deps installs redis-server and redis-tools)" >&2; exit 1; }
done

log() { echo "bench-replication: $*" >&2; }

now_ns() { date +%s%N; }

# synced port -> success when the replica on port has its link up, no sync
# in progress, and (if given) DBSIZE $2.
synced() {
	local info
	info=$(redis-cli -p "$1" info replication 2>/dev/null | tr -d '\r') || return 1
	grep -qx 'master_link_status:up' <<<"$info" || return 1
	grep -qx 'master_sync_in_progress:0' <<<"$info" || return 1
	[ -z "${2:-}" ] || [ "$(redis-cli -p "$1" dbsize 2>/dev/null)" = "$2" ]
}

# wait_synced port [dbsize] -> waits up to SYNC_TIMEOUT seconds.
wait_synced() {
	local end=$((SECONDS + SYNC_TIMEOUT))
	until synced "$@"; do
		if [ "$SECONDS" -ge "$end" ]; then
			echo "replica on $1 did not sync within ${SYNC_TIMEOUT}s; its log:" >&2
			tail -20 "$work"/*-"$1".log >&2 || true
			return 1
		fi
		sleep 0.02
	done
}

start_cairn() { # port [primary-port]
	local port=$1 args=()
	[ -z "${2:-}" ] || args=(--slaveof "127.0.0.1 $2")
	${BENCH_CAIRN_GOMAXPROCS:+env GOMAXPROCS=$BENCH_CAIRN_GOMAXPROCS} \
		taskset -c "$SERVER_CPU" bin/cairn --port "$port" --dir "$work/cairn-$port" --log-level warning \
		--notify-keyspace-events KEA "${args[@]}" >"$work/cairn-$port.log" 2>&1 &
	pids+=($!)
	wait_up "$port"
}

start_redis() { # port [primary-port]
	local port=$1 args=()
	[ -z "${2:-}" ] || args=(--replicaof 127.0.0.1 "$2")
	mkdir -p "$work/redis-$port"
	taskset -c "$SERVER_CPU" redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$work/redis-$port" --notify-keyspace-events KEA --repl-diskless-sync-delay 0 \
		"${args[@]}" >"$work/redis-$port.log" 2>&1 &
	pids+=($!)
	wait_up "$port"
}

log "building bin/cairn and bin/cairn-bench"
go build -o bin/cairn ./cmd/cairn
go build -o bin/cairn-bench ./cmd/cairn-bench

mkdir -p "$work/res"
# bench name mode server run args... -> $work/res/name-server-run.json (a
# JSON summary of cairn-bench mode, {"error": ...} if it failed, empty if
# it did not finish).
bench() {
	local name=$1 mode=$2 server=$3 run=$4; shift 4
	local out="$work/res/$name-$server-$run.json"
	log "run $run/$RUNS: $name on $server"
	timeout "$TOOL_TIMEOUT" taskset -c "$CLIENT_CPU" bin/cairn-bench "$mode" "$@" -json \
		>"$out" 2>"$work/res/$name-$server-$run.log" || echo "$?" >"$out.status"
}

cp=$(free_port); start_cairn "$cp"
cr=$(free_port); start_cairn "$cr" "$cp"
rp=$(free_port); start_redis "$rp"
rr=$(free_port); start_redis "$rr" "$rp"
wait_synced "$cr"
wait_synced "$rr"

inv_args=(-rate "$INV_RATE" -writers "$INV_WRITERS" -duration "$INV_DURATION")
catchup_args=(-conns "$CATCHUP_CONNS" -requests "$CATCHUP_REQUESTS" -pipeline "$CATCHUP_PIPELINE" -catchup-timeout 60s)
for run in $(seq 1 "$RUNS"); do
	for name in invalidation invmix invtrack catchup; do
		case $name in
		invalidation) mode=invalidation args=("${inv_args[@]}") ;;
		invmix) mode=invalidation args=("${inv_args[@]}" -mix "$INV_MIX") ;;
		invtrack) mode=invalidation args=("${inv_args[@]}" -via tracking) ;;
		catchup) mode=catchup args=("${catchup_args[@]}") ;;
		esac
		bench "$name" "$mode" cairn "$run" -primary "127.0.0.1:$cp" -replica "127.0.0.1:$cr" "${args[@]}"
		bench "$name" "$mode" redis "$run" -primary "127.0.0.1:$rp" -replica "127.0.0.1:$rr" "${args[@]}"
	done
done
stop "$cr"; stop "$cp"; stop "$rr"; stop "$rp"

# fs_primary server -> starts a fresh primary, loads $work/load.resp into
# it and sets fs_port[server] and fs_keys[server]; on failure it writes the
# error into $work/res/fullsync-server-1.json instead.
declare -A fs_port fs_keys
fs_primary() {
	local server=$1 p pipe
	p=$(free_port); "start_$server" "$p"
	log "full sync: loading ${FULLSYNC_MB} MB into a $server primary"
	if ! pipe=$(taskset -c "$CLIENT_CPU" redis-cli -p "$p" --pipe <"$work/load.resp" 2>&1) ||
		! grep -q 'errors: 0,' <<<"$pipe"; then
		echo "{\"error\": \"loading with redis-cli --pipe failed: $(tail -1 <<<"$pipe" | tr -d '"\\')\"}" >"$work/res/fullsync-$server-1.json"
		stop "$p"
		return
	fi
	fs_port[$server]=$p
	fs_keys[$server]=$(redis-cli -p "$p" dbsize)
}

# fs_replica server run -> $work/res/fullsync-server-run.json: a fresh
# replica of the loaded primary, timed from its start until it is in sync.
fs_replica() {
	local server=$1 run=$2 out="$work/res/fullsync-$1-$2.json" p=${fs_port[$1]:-} keys=${fs_keys[$1]:-} r bytes t0 t1
	[ -n "$p" ] || return 0
	r=$(free_port)
	log "full sync run $run/$FULLSYNC_RUNS: a fresh $server replica of $keys keys"
	# Write back what earlier steps left dirty in the page cache, so that
	# the replica's own writes (and Redis's fsyncs of the RDB it receives)
	# do not pay for them.
	sync
	t0=$(now_ns)
	"start_$server" "$r" "$p"
	if ! wait_synced "$r" "$keys"; then
		echo "{\"error\": \"the replica did not sync within ${SYNC_TIMEOUT}s\"}" >"$out"
		stop "$r"
		return
	fi
	t1=$(now_ns)
	if [ "$server" = cairn ]; then
		# The replica's live Pebble directory, as its 'current' file names
		# it: the checkpoint files it received.
		bytes=$(du -sb "$work/cairn-$r/$(cat "$work/cairn-$r/current")" | cut -f1)
	else
		# The RDB the replica received (and kept, rdb-del-sync-files no).
		bytes=$(stat -c %s "$work/redis-$r/dump.rdb" 2>/dev/null || echo 0)
	fi
	echo "{\"keys\": $keys, \"bytes\": $bytes, \"seconds\": $(python3 -c "print(($t1 - $t0) / 1e9)")}" >"$out"
	stop "$r"
	rm -rf "$work/cairn-$r" "$work/redis-$r"
}

if [ "$FULLSYNC_MB" -gt 0 ] && [ "$FULLSYNC_RUNS" -gt 0 ]; then
	log "full sync: generating ${FULLSYNC_MB} MB of SET commands"
	python3 - "$((FULLSYNC_MB * 1024 * 1024 / FULLSYNC_VALUE))" "$FULLSYNC_VALUE" >"$work/load.resp" <<'EOF'
import base64, os, sys
n, size = int(sys.argv[1]), int(sys.argv[2])
out, buf = sys.stdout.buffer, []
for i in range(n):
    k = b"fullsync:%09d" % i
    # Random text, so that neither Pebble's blocks nor the RDB compress it.
    v = base64.b64encode(os.urandom(size))[:size]
    buf.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v))
    if len(buf) == 1000:
        out.write(b"".join(buf))
        buf = []
out.write(b"".join(buf))
EOF
	fs_primary cairn
	fs_primary redis
	rm -f "$work/load.resp"
	for run in $(seq 1 "$FULLSYNC_RUNS"); do
		fs_replica cairn "$run"
		fs_replica redis "$run"
	done
	for server in cairn redis; do
		[ -z "${fs_port[$server]:-}" ] || stop "${fs_port[$server]}"
	done
fi

if [ -n "${BENCH_KEEP_RESULTS:-}" ]; then
	mkdir -p "$BENCH_KEEP_RESULTS" && cp "$work"/res/*.json "$BENCH_KEEP_RESULTS"/
fi
# The table's helpers are in scripts/benchtable.py.
PYTHONPATH=scripts PYTHONDONTWRITEBYTECODE=1 python3 - "$work/res" "$RUNS" "$CLIENT_CPU" "$SERVER_CPU" "$INV_RATE" "$INV_WRITERS" "$INV_DURATION" \
	"$CATCHUP_REQUESTS" "$CATCHUP_CONNS" "$CATCHUP_PIPELINE" "$FULLSYNC_MB" "$FULLSYNC_VALUE" "$FULLSYNC_RUNS" "$INV_MIX" <<'EOF'
import os, sys
from benchtable import SERVERS, Table, read, ints, one, two, of_runs, count_true

resdir, runs, client_cpu, server_cpu = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
inv_rate, inv_writers, inv_duration = sys.argv[5:8]
cu_requests, cu_conns, cu_pipeline = sys.argv[8:11]
fs_mb, fs_value, fs_runs = int(sys.argv[11]), int(sys.argv[12]), int(sys.argv[13])
inv_mix = sys.argv[14]


def expected(mode):
    return fs_runs if mode == "fullsync" else runs


def load(mode, server):
    """The successful results of a mode's runs against a server and the
    first error of the others."""
    results, err = [], None
    for run in range(1, expected(mode) + 1):
        base = os.path.join(resdir, f"{mode}-{server}-{run}")
        if mode == "fullsync" and not os.path.exists(base + ".json") and run > 1:
            continue  # the primary failed: only run 1 has its error
        doc = read(base)
        if "error" in doc:
            err = err or doc["error"]
        else:
            results.append(doc)
    return results, err


data = {m: {s: load(m, s) for s in SERVERS} for m in ("invalidation", "invmix", "invtrack", "catchup", "fullsync")}
table = Table(data, expected)
row = table.row


inv = f"{inv_rate} SET/s by {inv_writers} writers for {inv_duration}"
row(f"invalidation: event latency p50 µs (SET reply on the primary → set event on the replica; {inv})",
    "invalidation", lambda d: d["p50_us"], ints)
row("invalidation: event latency p99 µs", "invalidation", lambda d: d["p99_us"], ints,
    target="≤ 2× Redis", check=lambda c, r: None if c is None or r is None else c <= 2 * r)
row("invalidation: event latency max µs (worst run)", "invalidation", lambda d: d["max_us"], ints, agg=max)
row("invalidation: events lost (worst run)", "invalidation", lambda d: d["events_lost"], ints, agg=max,
    ratio=False, target="0", check=lambda c, r: None if c is None else c == 0)
row("invalidation: events expected / received (sum of runs)", "invalidation",
    lambda d: (d["events_expected"], d["events_received"]),
    lambda v, n: f"{v[0]} / {v[1]}", agg=lambda xs: (sum(x[0] for x in xs), sum(x[1] for x in xs)), ratio=False)
row("invalidation: duplicate events (worst run)", "invalidation", lambda d: d["duplicates"], ints, agg=max, ratio=False)
row("invalidation: events that came before their SET's reply (%)", "invalidation",
    lambda d: 100 * d["events_before_reply"] / max(d["events_received"], 1), one, ratio=False)
row("invalidation: SET round trip p99 µs on the primary", "invalidation", lambda d: d["set_p99_us"], ints)
row("invalidation: SET/s achieved", "invalidation", lambda d: d["writes_per_sec"], ints)
row(f"invalidation, mixed writes ({inv_mix.replace(',', ' ')}; each timed to its own event): p50 µs",
    "invmix", lambda d: d["p50_us"], ints)
row("invalidation, mixed writes: p99 µs", "invmix", lambda d: d["p99_us"], ints,
    target="≤ 2× Redis", check=lambda c, r: None if c is None or r is None else c <= 2 * r)
row("invalidation, mixed writes: events lost (worst run)", "invmix", lambda d: d["events_lost"], ints, agg=max,
    ratio=False, target="0", check=lambda c, r: None if c is None else c == 0)
row(f"invalidation via CLIENT TRACKING (BCAST on the replica; {inv}): invalidate push latency p50 µs",
    "invtrack", lambda d: d["p50_us"], ints)
row("invalidation via CLIENT TRACKING: p99 µs", "invtrack", lambda d: d["p99_us"], ints,
    target="≤ 2× Redis", check=lambda c, r: None if c is None or r is None else c <= 2 * r)
row("invalidation via CLIENT TRACKING: invalidations lost (worst run)", "invtrack", lambda d: d["events_lost"], ints,
    agg=max, ratio=False, target="0", check=lambda c, r: None if c is None else c == 0)
row(f"catchup: SET/s ({cu_requests} SET, {cu_conns} connections, pipeline {cu_pipeline})",
    "catchup", lambda d: d["sets_per_sec"], ints)
row("catchup: ms from the last SET reply until the replica's offset equals the primary's",
    "catchup", lambda d: d["catchup_ms"], one, target="beside Redis")
row("catchup: replica lag at load end (offset units: Cairn batches, Redis bytes)",
    "catchup", lambda d: d["lag_at_load_end"], ints, ratio=False)
row("catchup: largest replica lag seen during the load (sampled every 100 ms; offset units)",
    "catchup", lambda d: d["max_lag_during_load"], ints, agg=max, ratio=False)
row("catchup: runs in which the replica caught up", "catchup", lambda d: d["caught_up"], of_runs,
    agg=count_true, ratio=False)
row("catchup: runs already caught up at the first reading (the time is then 2 INFO round trips)", "catchup",
    lambda d: d["caught_up"] and d["polls"] == 1, of_runs, agg=count_true, ratio=False)
if fs_mb > 0 and fs_runs > 0:
    row(f"full sync: seconds, fresh replica start → in sync ({fs_mb} MB of {fs_value} B values)",
        "fullsync", lambda d: d["seconds"], two)
    row("full sync: MB/s of values", "fullsync", lambda d: d["keys"] * fs_value / 1e6 / d["seconds"], ints)
    row("full sync: MB/s of data received (Cairn: Pebble checkpoint; Redis: RDB)", "fullsync",
        lambda d: d["bytes"] / 1e6 / d["seconds"], ints)
    row("full sync: MB received", "fullsync", lambda d: d["bytes"] / 1e6, ints)

table.print()
print()
print(f"Medians of {runs} alternating runs ({fs_runs} for the full sync, each a fresh replica of the same loaded primary) "
      "unless the row says otherwise; "
      f"cairn-bench and redis-cli on CPU {client_cpu}, all servers on CPU {server_cpu}.")
EOF
