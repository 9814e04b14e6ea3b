#!/usr/bin/env bash
# Consecutive invalidation runs against one Cairn primary+replica pair, so
# that later runs meet the data (and compactions) of earlier ones: the
# series docs/performance.md quotes. Both servers run bin/cairn on
# BENCH_SERVER_CPU (default 1) with notify-keyspace-events KEA and the
# environment in CAIRN_ENV (e.g. CAIRN_ENV=GOMAXPROCS=2); cairn-bench runs
# on BENCH_CLIENT_CPU (default 0) at 5,000 SET/s by 4 writers.
#
# Usage: scripts/inv-series.sh [RUNS (3)] [DURATION (20s)]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/benchlib.sh # SERVER_CPU, CLIENT_CPU, $work, $pids, free_port, wait_up, stop
runs=${1:-3} dur=${2:-20s}
go build -o bin/cairn ./cmd/cairn
go build -o bin/cairn-bench ./cmd/cairn-bench
start() { # port [primary-port]
	local args=()
	[ -z "${2:-}" ] || args=(--slaveof "127.0.0.1 $2")
	env ${CAIRN_ENV:-} taskset -c "$SERVER_CPU" bin/cairn --port "$1" --dir "$work/cairn-$1" --log-level warning \
		--notify-keyspace-events KEA "${args[@]}" >"$work/cairn-$1.log" 2>&1 &
	pids+=($!)
	wait_up "$1"
}
p=$(free_port); start "$p"
r=$(free_port); start "$r" "$p"
until redis-cli -p "$r" info replication | tr -d '\r' | grep -qx master_link_status:up; do sleep 0.05; done
for i in $(seq 1 "$runs"); do
	echo -n "run $i: "
	taskset -c "$CLIENT_CPU" bin/cairn-bench invalidation -primary "127.0.0.1:$p" -replica "127.0.0.1:$r" \
		-rate 5000 -writers 4 -duration "$dur" 2>/dev/null | grep 'event latency' | sed 's/^ *//'
done
stop "$r"; stop "$p"
