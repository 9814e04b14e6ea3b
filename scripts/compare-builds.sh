#!/usr/bin/env bash
# Compares two Cairn builds' CPU per request on a shared, noisy machine:
# both servers run at once, pinned to BENCH_SERVER_CPU (default 1), and
# PASSES passes (default 6) of scripts/cpu-per-request.sh alternate between
# them (TEST, default set: N requests, default 200000, -c 50 -r 100000,
# from BENCH_CLIENT_CPU, default 0), so that drift hits both. Each pass
# prints one line per build; the last two lines give each build's mean CPU
# per request (user+system, µs), requests per second, and read and write
# system calls per request. TEST notify runs one pass of
# scripts/notify-cpu.sh instead (the means are then the pass without
# notifications; each build also gets its on/off ratios, the CPU per SET
# that notifications add and the writes per SET with them on).
# BENCH_EXTRA adds redis-benchmark arguments (BENCH_EXTRA="-P 16").
# Everything binds to 127.0.0.1; each server gets a fresh temporary dir and
# 100,000 SETs first, so that every pass meets existing keys.
#
# Usage: scripts/compare-builds.sh BIN_A BIN_B [PASSES] [TEST] [N]
#   e.g. scripts/compare-builds.sh /tmp/cairn-before bin/cairn 6 get
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n 2,17p "$0" >&2; exit 2; }
bins=("$1" "$2") passes=${3:-6} test=${4:-set} n=${5:-200000}
. scripts/benchlib.sh # SERVER_CPU, CLIENT_CPU, $work, $pids, free_port, wait_up, stop
ports=()
for b in "${bins[@]}"; do
	p=$(free_port)
	taskset -c "$SERVER_CPU" "$b" --bind 127.0.0.1 --port "$p" --dir "$work/cairn-$p" --log-level warning >"$work/cairn-$p.log" 2>&1 &
	pids+=($!)
	disown
	wait_up "$p"
	ports+=("$p")
	taskset -c "$CLIENT_CPU" redis-benchmark -p "$p" -t set -c 50 -n 100000 -r 100000 -q >/dev/null 2>&1
done
out="$work/passes"
for _ in $(seq 1 "$passes"); do
	for i in 0 1; do
		if [ "$test" = notify ]; then
			line="${bins[$i]} $(scripts/notify-cpu.sh "${pids[$i]}" "${ports[$i]}" "$n" 1)"
		else
			line="${bins[$i]} $(scripts/cpu-per-request.sh "${pids[$i]}" "${ports[$i]}" "$test" "$n" -c 50 -r 100000 ${BENCH_EXTRA:-})"
		fi
		echo "$line" | tee -a "$out"
	done
done
python3 - "$out" <<'EOF'
import re, statistics, sys
acc = {}
for line in open(sys.argv[1]):
    b = line.split()[0]
    off, *on = [dict(re.findall(r'(\w+(?:/op)?)=([\d.]+)', part)) for part in line.split('|')[:2]]
    a = acc.setdefault(b, {k: [] for k in ('cpu', 'rps', 'reads', 'writes', 'ratio', 'extra', 'onwrites')})
    cpu = lambda side: float(side['user_us/op']) + float(side['sys_us/op'])
    a['cpu'].append(cpu(off)); a['rps'].append(float(off['rps']))
    a['reads'].append(float(off['reads/op'])); a['writes'].append(float(off['writes/op']))
    if on: # notify: off | on
        a['ratio'].append(float(on[0]['rps']) / float(off['rps']))
        a['extra'].append(cpu(on[0]) - cpu(off))
        a['onwrites'].append(float(on[0]['writes/op']))
mean = statistics.fmean
for b, a in acc.items():
    out = f"{b}: mean cpu_us/op={mean(a['cpu']):.2f} rps={mean(a['rps']):.0f} reads/op={mean(a['reads']):.2f} writes/op={mean(a['writes']):.3f} over {len(a['cpu'])} passes"
    if a['ratio']:
        out += f"; notifications on/off rps median={statistics.median(a['ratio']):.2f} (" + " ".join(f"{r:.2f}" for r in a['ratio']) + f"), extra cpu_us/op mean={mean(a['extra']):.2f}, writes/op on={mean(a['onwrites']):.3f}"
    print(out)
EOF
