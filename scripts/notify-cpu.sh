#!/usr/bin/env bash
# Keyspace notifications' cost in server CPU per SET: PASSES passes
# (default 3) of N SETs (default 300000, -c 50 -r 100000, or the
# redis-benchmark arguments in NOTIFY_LOAD: "-c 50" sets one key) with
# notify-keyspace-events off, then with KEA while `cairn-bench subscribe`
# reads every __keyevent@0__:* event, against a running server (Cairn or
# redis-server) on 127.0.0.1:PORT. Each line is one pass: the server's CPU
# and system calls per SET off and on (scripts/cpu-per-request.sh), and the
# subscriber's own CPU time per event, which it takes from the client CPU.
#
# Usage: scripts/notify-cpu.sh PID PORT [N] [PASSES]
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n 2,11p "$0" >&2; exit 2; }
pid=$1 port=$2 n=${3:-300000} passes=${4:-3}
[ -x bin/cairn-bench ] || go build -o bin/cairn-bench ./cmd/cairn-bench
read -ra load <<<"${NOTIFY_LOAD:--c 50 -r 100000}"
taskset -c "${BENCH_CLIENT_CPU:-0}" redis-benchmark -p "$port" -t set -n "$n" "${load[@]}" -q >/dev/null 2>&1 # keys exist in every pass
err=$(mktemp) subcpu=$(mktemp)
trap 'rm -f "$err" "$subcpu"' EXIT
for _ in $(seq 1 "$passes"); do
	redis-cli -p "$port" config set notify-keyspace-events "" >/dev/null
	off=$(scripts/cpu-per-request.sh "$pid" "$port" set "$n" "${load[@]}")
	redis-cli -p "$port" config set notify-keyspace-events KEA >/dev/null
	: >"$err"
	# The subshell reports the subscriber's own CPU time (bash's times).
	(
		taskset -c "${BENCH_CLIENT_CPU:-0}" bin/cairn-bench subscribe -addr "127.0.0.1:$port" -pattern '__keyevent@0__:*' \
			-expect "$n" -quiet -duration-limit 10m >/dev/null 2>"$err"
		st=$?
		times >"$subcpu" # its second line: the children, the subscriber
		exit $st
	) &
	sub=$!
	for _ in $(seq 1 200); do grep -qs subscribed "$err" && break; sleep 0.05; done
	on=$(scripts/cpu-per-request.sh "$pid" "$port" set "$n" "${load[@]}")
	wait "$sub" || { echo "notify-cpu: the subscriber did not get its $n events:" >&2; cat "$err" >&2; exit 1; }
	subus=$(python3 -c "import re,sys; t=[float(m)*60+float(s) for m,s in re.findall(r'(\d+)m([\d.]+)s', sys.argv[1].splitlines()[-1])]; print('%.2f' % (sum(t)*1e6/$n))" "$(cat "$subcpu")")
	echo "off: $off | on: $on | subscriber_us/event=$subus"
done
