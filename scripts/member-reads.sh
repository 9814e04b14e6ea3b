#!/usr/bin/env bash
# Compares two Cairn builds with redis-server on member reads and writes of
# one hot collection each (redis-benchmark's myhash, myset and myzset):
# all three servers run at once, pinned to BENCH_SERVER_CPU (default 1),
# are loaded with N (default 200000) HSET, SADD and ZADD of random members
# (-r 100000), and then each command runs BENCH_RUNS times (default 3) on
# each server in turn, from BENCH_CLIENT_CPU (default 0), -c 50 -n N
# -r 100000 -P PIPELINE (default 16). Prints each command's median req/s
# per server and the builds' ratios to Redis. Everything binds to
# 127.0.0.1.
#
# Usage: scripts/member-reads.sh BIN_OLD BIN_NEW [PIPELINE] [N]
#   e.g. scripts/member-reads.sh /tmp/cairn-before bin/cairn 16
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n 2,13p "$0" >&2; exit 2; }
old=$1 new=$2 pipeline=${3:-16} n=${4:-200000}
. scripts/benchlib.sh # RUNS, SERVER_CPU, CLIENT_CPU, $work, $pids, free_port, wait_up
ports=()
for b in "$old" "$new" redis-server; do
	p=$(free_port)
	if [ "$b" = redis-server ]; then
		taskset -c "$SERVER_CPU" redis-server --bind 127.0.0.1 --port "$p" --save '' --appendonly no --dir "$work" >"$work/redis-$p.log" 2>&1 &
	else
		taskset -c "$SERVER_CPU" "$b" --bind 127.0.0.1 --port "$p" --dir "$work/cairn-$p" --log-level warning >"$work/cairn-$p.log" 2>&1 &
	fi
	pids+=($!)
	disown
	wait_up "$p"
	taskset -c "$CLIENT_CPU" redis-benchmark -p "$p" -t hset,sadd,zadd -c 50 -n "$n" -r 100000 -q >/dev/null 2>&1
	ports+=("$p")
done
rps() { # port args... -> req/s of the command args end with
	taskset -c "$CLIENT_CPU" redis-benchmark -p "$1" --csv -c 50 -n "$n" -r 100000 -P "$pipeline" "${@:2}" 2>/dev/null |
		awk -F, 'NR == 2 {gsub(/"/, "", $2); print $2}'
}
echo "| -P $pipeline | old req/s | new req/s | Redis req/s | old/Redis | new/Redis |"
echo "|---|---:|---:|---:|---:|---:|"
for cmd in "hget myhash element:__rand_int__" "sismember myset element:__rand_int__" "zscore myzset element:__rand_int__" \
	"hset myhash element:__rand_int__ x" "sadd myset element:__rand_int__" "zadd myzset 1 element:__rand_int__"; do
	runs=("" "" "")
	for _ in $(seq 1 "$RUNS"); do
		for i in 0 1 2; do
			# shellcheck disable=SC2086 # cmd is split into its words
			runs[i]+=" $(rps "${ports[i]}" $cmd)"
		done
	done
	python3 - "${cmd%% *}" "${runs[@]}" <<'PY'
import statistics, sys
name, runs = sys.argv[1], [statistics.median(float(v) for v in r.split()) for r in sys.argv[2:]]
o, n, r = runs
print(f"| {name.upper()} | {o:.0f} | {n:.0f} | {r:.0f} | {o / r:.2f} | {n / r:.2f} |")
PY
done
