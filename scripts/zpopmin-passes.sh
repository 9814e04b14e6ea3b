#!/usr/bin/env bash
# Pops one hot sorted set in passes, to show whether a pop's cost grows
# with the pops before it (the tombstones they leave at the set's low end):
# fills `myzset` with redis-benchmark's ZADD (200,000 random members of
# 100,000, about 86,000 distinct), then runs PASSES passes of
# `redis-benchmark -t zpopmin -c 50 -n 20000 -P 16`, each bounded by
# PASS_TIMEOUT seconds, printing each pass's requests per second. The
# server (BIN, default bin/cairn) is pinned to BENCH_SERVER_CPU, the load
# to BENCH_CLIENT_CPU; everything binds to 127.0.0.1.
#
# Usage: scripts/zpopmin-passes.sh [BIN] [PASSES]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/benchlib.sh
bin=${1:-bin/cairn}
passes=${2:-3}
PASS_TIMEOUT=${PASS_TIMEOUT:-120}
port=$(free_port)
taskset -c "$SERVER_CPU" "$bin" --port "$port" --dir "$work/data" --log-level warning >"$work/server.log" 2>&1 &
pids+=($!)
wait_up "$port"
taskset -c "$CLIENT_CPU" redis-benchmark -p "$port" -t zadd -c 50 -n 200000 -r 100000 -P 16 -q >/dev/null
echo "members: $(redis-cli -p "$port" zcard myzset)"
for i in $(seq 1 "$passes"); do
	rps=$(timeout "$PASS_TIMEOUT" taskset -c "$CLIENT_CPU" redis-benchmark -p "$port" -t zpopmin -c 50 -n 20000 -P 16 --csv |
		awk -F, 'NR == 2 {gsub(/"/, "", $2); print $2}') || rps="timed out after ${PASS_TIMEOUT}s"
	echo "pass $i: ZPOPMIN $rps req/s, members left: $(redis-cli -p "$port" zcard myzset)"
done
