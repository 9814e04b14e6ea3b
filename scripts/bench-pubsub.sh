#!/usr/bin/env bash
# Cairn's Pub/Sub benchmarks, measured side by side with redis-server in one
# run by bin/cairn-bench (cmd/cairn-bench), which redis-benchmark cannot
# replace because it drives no subscribers. Each server is pinned to one
# core and cairn-bench to the other (taskset); everything binds to
# 127.0.0.1; every load is bounded by its message count and by
# cairn-bench's -duration-limit (and this script's BENCH_TOOL_TIMEOUT).
#
# Each figure is the median of BENCH_RUNS runs (default 3) that alternate
# between Cairn and Redis, so that drift on a shared machine hits both.
# Prints a Markdown table with Cairn, Redis, the ratio and the targets:
#   fan-out delivered msgs/s        >= 0.8 x Redis
#   many-patterns PUBLISH/s         >= 1 x Redis
#   stall p99 with/without a stalled subscriber   <= 2 (Cairn's own ratio)
# A mode that fails against a server (say, Cairn without PUBLISH yet) shows
# "n/a (the error)" in that cell instead of stopping the script.
#
# Usage: scripts/bench-pubsub.sh
#        BENCH_RUNS=1 scripts/bench-pubsub.sh          (quicker, noisier)
#        scripts/bench-pubsub.sh --dry-run             (or BENCH_DRY_RUN=1: a
#            second redis-server stands in for Cairn, to try the script)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/benchlib.sh # RUNS, SERVER_CPU, CLIENT_CPU, $work, $pids, free_port, wait_up, stop

FANOUT_MSGS=${BENCH_FANOUT_MSGS:-20000}
PATTERNS_MSGS=${BENCH_PATTERNS_MSGS:-20000}
STALL_MSGS=${BENCH_STALL_MSGS:-10000}
STALL_RATE=${BENCH_STALL_RATE:-2000}
STALL_SIZE=${BENCH_STALL_SIZE:-4096}
TOOL_TIMEOUT=${BENCH_TOOL_TIMEOUT:-180}
DRY_RUN=${BENCH_DRY_RUN:-0}
for arg in "$@"; do
	case $arg in
	--dry-run) DRY_RUN=1 ;;
	*) echo "usage: $0 [--dry-run]" >&2; exit 2 ;;
	esac
done

log() { echo "bench-pubsub: $*" >&2; }

start_cairn() { # port
	taskset -c "$SERVER_CPU" bin/cairn --port "$1" --dir "$work/cairn-$1" --log-level warning >"$work/cairn-$1.log" 2>&1 &
	pids+=($!); wait_up "$1"
}

start_redis() { # port
	mkdir -p "$work/redis-$1"
	taskset -c "$SERVER_CPU" redis-server --port "$1" --bind 127.0.0.1 --save '' --appendonly no --dir "$work/redis-$1" >"$work/redis-$1.log" 2>&1 &
	pids+=($!); wait_up "$1"
}

log "building bin/cairn-bench$([ "$DRY_RUN" = 1 ] || echo ' and bin/cairn')"
go build -o bin/cairn-bench ./cmd/cairn-bench
[ "$DRY_RUN" = 1 ] || go build -o bin/cairn ./cmd/cairn

cp=$(free_port)
if [ "$DRY_RUN" = 1 ]; then start_redis "$cp"; else start_cairn "$cp"; fi
rp=$(free_port); start_redis "$rp"

# The arguments of each mode; the table's labels repeat them.
fanout_args=(fanout -subs 100 -pattern-subs 50 -msgs "$FANOUT_MSGS" -size 64 -window 64)
patterns_args=(patterns -patterns 1000 -msgs "$PATTERNS_MSGS" -size 64 -window 64)
stall_args=(stall -subs 10 -msgs "$STALL_MSGS" -rate "$STALL_RATE" -size "$STALL_SIZE" -stall-rcvbuf 4096)

mkdir -p "$work/res"
# bench mode-name server-name port run args... -> $work/res/mode-server-run.json
# (cairn-bench writes a JSON summary, or {"error": ...} if the mode failed;
# an empty file means it did not finish).
bench() {
	local mode=$1 server=$2 port=$3 run=$4; shift 4
	local out="$work/res/$mode-$server-$run.json"
	log "run $run/$RUNS: $mode on $server"
	timeout "$TOOL_TIMEOUT" taskset -c "$CLIENT_CPU" bin/cairn-bench "$@" -addr "127.0.0.1:$port" -json \
		>"$out" 2>"$work/res/$mode-$server-$run.log" || echo "$?" >"$out.status"
}

for run in $(seq 1 "$RUNS"); do
	for mode in fanout patterns stall; do
		case $mode in
		fanout) args=("${fanout_args[@]}") ;;
		patterns) args=("${patterns_args[@]}") ;;
		stall) args=("${stall_args[@]}") ;;
		esac
		bench "$mode" cairn "$cp" "$run" "${args[@]}"
		bench "$mode" redis "$rp" "$run" "${args[@]}"
	done
done
stop "$cp"; stop "$rp"

# The table's helpers are in scripts/benchtable.py.
PYTHONPATH=scripts PYTHONDONTWRITEBYTECODE=1 python3 - "$work/res" "$RUNS" "$DRY_RUN" "$CLIENT_CPU" "$SERVER_CPU" \
	"$FANOUT_MSGS" "$PATTERNS_MSGS" "$STALL_MSGS" "$STALL_RATE" "$STALL_SIZE" <<'EOF'
import os, sys
from benchtable import SERVERS, Table, read, ints, two, of_runs, count_true

resdir, runs, dry, client_cpu, server_cpu = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4], sys.argv[5]
fanout_msgs, patterns_msgs, stall_msgs, stall_rate, stall_size = sys.argv[6:11]


def load(mode, server):
    """Returns the successful results of a mode's runs against a server and
    the first error of the others."""
    results, err = [], None
    for run in range(1, runs + 1):
        doc = read(os.path.join(resdir, f"{mode}-{server}-{run}"))
        if "error" in doc:
            err = err or doc["error"]
        else:
            results.append(doc)
    return results, err


data = {m: {s: load(m, s) for s in SERVERS} for m in ("fanout", "patterns", "stall")}
table = Table(data, lambda mode: runs, na_cut=", with args beginning with")
row = table.row


def at_least(k): return lambda c, r: None if c is None or r is None else c >= k * r


row(f"fan-out: delivered msgs/s (1 publisher, 100 subscribers of which 50 by pattern, {fanout_msgs} × 64 B, window 64)",
    "fanout", lambda d: d["delivered_per_sec"], ints, target="≥ 0.8× Redis", check=at_least(0.8))
row("fan-out: published msgs/s", "fanout", lambda d: d["published_per_sec"], ints)
row("fan-out: lost deliveries (worst run)", "fanout", lambda d: d["lost"], ints, agg=max, ratio=False)
row("fan-out: runs with the right PUBLISH reply sum", "fanout", lambda d: d["publish_reply_sum_ok"], of_runs,
    agg=count_true, ratio=False)
row(f"many patterns: PUBLISH/s (1 subscriber with 1000 non-matching patterns + 1 matching, {patterns_msgs} × 64 B, window 64)",
    "patterns", lambda d: d["published_per_sec"], ints, target="≥ 1× Redis", check=at_least(1.0))
row(f"stall: PUBLISH p99 µs, 10 healthy subscribers ({stall_msgs} PUBLISH of {stall_size} B at {stall_rate}/s, each alone)",
    "stall", lambda d: d["healthy"]["p99_us"], ints)
row("stall: PUBLISH p99 µs, plus 1 subscriber that never reads (SO_RCVBUF 4096)",
    "stall", lambda d: d["stalled"]["p99_us"], ints)
row("stall: p99 with / without the stalled subscriber", "stall", lambda d: d["p99_ratio"], two,
    target="Cairn ≤ 2", check=lambda c, r: None if c is None else c <= 2, ratio=False)
row("stall: the same ratio from scheduled send times (counts queued commands)", "stall",
    lambda d: d["p99_from_schedule_ratio"], two, ratio=False)
row("stall: runs where the server dropped the stalled subscriber", "stall", lambda d: d["stalled_disconnected"],
    of_runs, agg=count_true, target="either", ratio=False)

table.print("Cairn (redis-server stand-in)" if dry else "Cairn")
print()
print(f"Medians of {runs} alternating runs unless the row says otherwise; "
      f"cairn-bench on CPU {client_cpu}, both servers on CPU {server_cpu}.")
if dry:
    print("Dry run: a second redis-server stood in for Cairn.")
EOF
