#!/usr/bin/env bash
# Consecutive invalidation runs against one primary+replica pair, so that
# later runs meet the data (and compactions) of earlier ones: the series
# docs/performance.md quotes. The pair is bin/cairn (INV_SERVER=cairn, the
# default) or redis-server (INV_SERVER=redis), both with
# notify-keyspace-events KEA; the primary runs on BENCH_SERVER_CPU
# (default 1), the replica on BENCH_REPLICA_CPU (default: the primary's),
# Cairn's servers with the environment in CAIRN_ENV (e.g.
# CAIRN_ENV=GOMAXPROCS=2; with GODEBUG=gctrace=1 each run also prints the
# collections so far, the last mark phase and the live heap). cairn-bench runs on BENCH_CLIENT_CPU (default 0)
# at 5,000 SET/s by 4 writers. Each run prints the event latency line and
# the CPU time each server used per write (user+system, from /proc), and
# for Cairn Pebble's flushes and compactions so far (INFO persistence). With
# INV_PERF=1, perf watches the replica from 3 s into each run: its context
# switches and futex/nanosleep calls over 4 s (perf stat), and over 5 s
# the share of its samples in the kernel and under Go's monitor thread,
# runtime.sysmon (perf record). INV_MIX passes cairn-bench's -mix (e.g.
# set,incr,append). INV_CATCHUP=N loads N pipelined SETs (cairn-bench
# catchup: 50 connections, pipeline 16) before every run but the first,
# as make bench's replication suite does between its runs. CAIRN_BIN runs that binary instead of a
# fresh build of bin/cairn (to compare two builds).
#
# Usage: scripts/inv-series.sh [RUNS (3)] [DURATION (20s)]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/benchlib.sh # SERVER_CPU, CLIENT_CPU, $work, $pids, free_port, wait_up, stop
runs=${1:-3} dur=${2:-20s}
server=${INV_SERVER:-cairn}
replica_cpu=${BENCH_REPLICA_CPU:-$SERVER_CPU}
cairn_bin=${CAIRN_BIN:-bin/cairn}
[ -n "${CAIRN_BIN:-}" ] || go build -o bin/cairn ./cmd/cairn
go build -o bin/cairn-bench ./cmd/cairn-bench
start() { # cpu port [primary-port]
	local args=()
	case $server in
	cairn)
		[ -z "${3:-}" ] || args=(--slaveof "127.0.0.1 $3")
		env ${CAIRN_ENV:-} taskset -c "$1" "$cairn_bin" --port "$2" --dir "$work/cairn-$2" --log-level warning \
			--notify-keyspace-events KEA "${args[@]}" >"$work/cairn-$2.log" 2>&1 &
		;;
	redis)
		[ -z "${3:-}" ] || args=(--replicaof 127.0.0.1 "$3")
		taskset -c "$1" redis-server --port "$2" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
			--dbfilename "dump-$2.rdb" --notify-keyspace-events KEA "${args[@]}" >"$work/redis-$2.log" 2>&1 &
		;;
	*) echo "inv-series: INV_SERVER must be cairn or redis, not $server" >&2; exit 2 ;;
	esac
	pids+=($!)
	wait_up "$2"
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
p=$(free_port); start "$SERVER_CPU" "$p"; ppid=${pids[-1]}
r=$(free_port); start "$replica_cpu" "$r" "$p"; rpid=${pids[-1]}
until redis-cli -p "$r" info replication | tr -d '\r' | grep -qx master_link_status:up; do sleep 0.05; done
ticks=$(getconf CLK_TCK)
for i in $(seq 1 "$runs"); do
	if [ -n "${INV_CATCHUP:-}" ] && [ "$i" -gt 1 ]; then
		taskset -c "$CLIENT_CPU" bin/cairn-bench catchup -primary "127.0.0.1:$p" -replica "127.0.0.1:$r" \
			-conns 50 -pipeline 16 -requests "$INV_CATCHUP" -catchup-timeout 60s >/dev/null
	fi
	p0=$(cpu_ticks "$ppid") r0=$(cpu_ticks "$rpid")
	if [ -n "${INV_PERF:-}" ]; then
		(sleep 3; perf stat -x, -e context-switches,syscalls:sys_enter_futex,syscalls:sys_enter_nanosleep \
			-p "$rpid" -o "$work/stat-$i" -- sleep 4) &
		perfs=($!)
		(sleep 3; perf record -q -F 4999 -g -p "$rpid" -o "$work/perf-$i" -- sleep 5 >/dev/null 2>&1) &
		perfs+=($!)
	fi
	out=$(taskset -c "$CLIENT_CPU" bin/cairn-bench invalidation -primary "127.0.0.1:$p" -replica "127.0.0.1:$r" \
		-rate 5000 -writers 4 -duration "$dur" ${INV_MIX:+-mix "$INV_MIX"} 2>/dev/null)
	p1=$(cpu_ticks "$ppid") r1=$(cpu_ticks "$rpid")
	writes=$(echo "$out" | awk '/^ *writes / {gsub(",", "", $2); print $2}')
	echo "run $i: $(echo "$out" | grep 'event latency' | sed 's/^ *//')"
	python3 -c "print('  cpu per write: primary %.1f µs, replica %.1f µs' % (($p1-$p0)*1e6/$ticks/$writes, ($r1-$r0)*1e6/$ticks/$writes))"
	if [ "$server" = cairn ]; then
		lsm() { redis-cli -p "$1" info persistence | tr -d '\r' | awk -F: '$1 == "pebble_compactions" {n = $2}
			$1 == "pebble_compaction_bytes" {b = $2} $1 == "pebble_flushes" {f = $2}
			END {printf "%d flushes, %d compactions writing %.1f MB", f, n, b / 1e6}'; }
		echo "  pebble so far: primary $(lsm "$p"), replica $(lsm "$r")"
		# With GODEBUG=gctrace=1 in CAIRN_ENV each server logs a line per
		# collection: "... A+B+C ms clock ... X->Y->Z MB ...", B being the
		# concurrent mark phase and Z the live heap it left.
		gcs() { awk '/^gc [0-9]+ @/ {n++; split($5, t, "+"); mark = t[2]; for (i = 1; i <= NF; i++) if ($i == "MB,") live = $(i-1)}
			END {if (n) {sub(/.*->/, "", live); printf "%d collections, last mark %s ms, live heap %s MB", n, mark, live}}' "$work/cairn-$1.log"; }
		if grep -qs '^gc [0-9]' "$work/cairn-$p.log"; then
			echo "  GC so far: primary $(gcs "$p"); replica $(gcs "$r")"
		fi
	fi
	if [ -n "${INV_PERF:-}" ]; then
		wait "${perfs[@]}"
		echo "  replica, 4 s: $(awk -F, '$1 ~ /^[0-9]+$/ {printf "%s%s %s", sep, $1, $3; sep = ", "}' "$work/stat-$i")"
		kernel=$(perf report -i "$work/perf-$i" --no-children --sort dso 2>/dev/null | awk '/kernel.kallsyms/ && !k {print $1; k = 1}')
		sysmon=$(perf report -i "$work/perf-$i" --children --sort sym -g none 2>/dev/null | awk '/runtime.sysmon$/ && !s {print $1; s = 1}')
		echo "  replica samples: kernel ${kernel:-?}, under runtime.sysmon ${sysmon:-?}"
	fi
done
stop "$r"; stop "$p"
