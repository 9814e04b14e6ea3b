#!/usr/bin/env bash
# Cairn's throughput benchmarks, measured side by side with redis-server in
# one run, each server pinned to the same core and redis-benchmark to the
# other. Prints a Markdown table of ratios (Cairn / Redis) for
# docs/BENCHMARKS.md. Everything binds to 127.0.0.1; every load is bounded
# by its request count.
#
# Each throughput figure is the median of BENCH_RUNS runs (default 3),
# alternating Cairn and Redis so that drift on a shared machine hits both.
#
# Usage: scripts/bench.sh            (make bench)
#        BENCH_N=50000 BENCH_RUNS=1 scripts/bench.sh   (a quicker, noisier run)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/benchlib.sh # RUNS, SERVER_CPU, CLIENT_CPU, $work, $pids, free_port, wait_up, stop

N=${BENCH_N:-200000}
KEYS=${BENCH_KEYS:-1000000}

# The subscriber of the notification rows (cairn-bench subscribe).
go build -o bin/cairn-bench ./cmd/cairn-bench

start_cairn() { # port, extra args...
	local port=$1; shift
	taskset -c "$SERVER_CPU" bin/cairn --port "$port" --dir "$work/cairn-$port" --log-level warning "$@" >"$work/cairn-$port.log" 2>&1 &
	pids+=($!); wait_up "$port"
}

start_redis() { # port
	taskset -c "$SERVER_CPU" redis-server --port "$1" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >"$work/redis-$1.log" 2>&1 &
	pids+=($!); wait_up "$1"
}

# rps port test args... -> requests per second of one redis-benchmark test
# (its CSV row names it, with a note in parentheses for some: LRANGE_100)
rps() {
	local port=$1 test=$2; shift 2
	taskset -c "$CLIENT_CPU" redis-benchmark -p "$port" -t "$test" --csv "$@" 2>/dev/null |
		awk -F, -v t="${test^^}" '{n = $1; gsub(/"/, "", n); sub(/ \(.*/, "", n)} n == t {gsub(/"/,"",$2); print $2}'
}

ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }

median() { python3 -c 'import statistics, sys; print(round(statistics.median(float(x) for x in sys.argv[1:])))' "$@"; }

# rps_cmd port args... -> requests per second of redis-benchmark running
# the command its arguments end with (its CSV row names the command)
rps_cmd() {
	local port=$1; shift
	taskset -c "$CLIENT_CPU" redis-benchmark -p "$port" --csv "$@" 2>/dev/null |
		awk -F, 'NR == 2 {gsub(/"/,"",$2); print $2}'
}

# pair cairn-port redis-port test args... -> "cairn-median redis-median"
pair() { pair_of rps "$@"; }

# pair_of measure cairn-port redis-port args... -> pair with measure
# (rps or rps_cmd) taking the port and args
pair_of() {
	local measure=$1 cport=$2 rport=$3; shift 3
	local cs=() rs=()
	for _ in $(seq 1 "$RUNS"); do
		cs+=("$("$measure" "$cport" "$@")")
		rs+=("$("$measure" "$rport" "$@")")
	done
	echo "$(median "${cs[@]}") $(median "${rs[@]}")"
}

echo "| benchmark | Cairn req/s | Redis req/s | Cairn/Redis | target |"
echo "|---|---:|---:|---:|---:|"

cp=$(free_port); start_cairn "$cp"
rp=$(free_port); start_redis "$rp"
# Sorted sets: redis-benchmark's ZADD adds random members with random
# scores to one sorted set, a hot key; ZPOPMIN pops its lowest members;
# ZSCORE reads a member's score.
for pipeline in 1 16; do
	for t in zadd zpopmin; do
		read -r c r < <(pair "$cp" "$rp" "$t" -c 50 -n "$N" -r 100000 -P "$pipeline")
		echo "| ${t^^} -c 50 -n $N -r 100000 -P $pipeline | $c | $r | $(ratio "$c" "$r") | — |"
	done
	read -r c r < <(pair_of rps_cmd "$cp" "$rp" -c 50 -n "$N" -r 100000 -P "$pipeline" zscore myzset element:__rand_int__)
	echo "| ZSCORE myzset element:__rand_int__ -c 50 -n $N -r 100000 -P $pipeline | $c | $r | $(ratio "$c" "$r") | — |"
done
stop "$cp"; stop "$rp"
