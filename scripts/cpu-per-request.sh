#!/usr/bin/env bash
# The server's own CPU time per request under one redis-benchmark run,
# read from /proc/PID/stat before and after: steadier on a shared machine
# than req/s, which the load generator's CPU also decides. The load runs
# on BENCH_CLIENT_CPU (default 0); the server must bind 127.0.0.1.
#
# Usage: scripts/cpu-per-request.sh PID PORT TEST N [redis-benchmark args...]
#   e.g. scripts/cpu-per-request.sh "$(pgrep -f 'port 7720')" 7720 set 300000 -c 50 -r 100000
# Prints: <test> rps=<req/s> user_us/op=<µs> sys_us/op=<µs> reads/op=<n> writes/op=<n>
# (the server's read and write system calls per request, from /proc/PID/io)
set -euo pipefail
[ $# -ge 4 ] || { sed -n 2,9p "$0" >&2; exit 2; }
pid=$1 port=$2 test=$3 n=$4; shift 4
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14, $15}' "/proc/$pid/stat"; }
calls() { awk '/^syscr/ {r = $2} /^syscw/ {w = $2} END {print r, w}' "/proc/$pid/io"; }
read -r u0 s0 < <(cpu)
read -r r0 w0 < <(calls)
rps=$(taskset -c "${BENCH_CLIENT_CPU:-0}" redis-benchmark -p "$port" -t "$test" -n "$n" -q "$@" 2>/dev/null |
	tr '\r' '\n' | awk '/per second/ {print $2}' | tail -1)
read -r u1 s1 < <(cpu)
read -r r1 w1 < <(calls)
python3 -c "print('$test rps=$rps user_us/op=%.2f sys_us/op=%.2f reads/op=%.3f writes/op=%.3f' % (($u1-$u0)*1e6/$ticks/$n, ($s1-$s0)*1e6/$ticks/$n, ($r1-$r0)/$n, ($w1-$w0)/$n))"
