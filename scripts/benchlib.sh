# The prelude that scripts/bench.sh, bench-pubsub.sh and
# bench-replication.sh share; each sources it from the repository root
# (after its own cd). It reads BENCH_RUNS, BENCH_SERVER_CPU and
# BENCH_CLIENT_CPU, makes $work (a temporary directory removed on exit,
# with the servers in $pids killed) and defines free_port, wait_up, stop
# and each_server.

RUNS=${BENCH_RUNS:-3}
SERVER_CPU=${BENCH_SERVER_CPU:-1}
CLIENT_CPU=${BENCH_CLIENT_CPU:-0}

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_up() { # port -> waits up to 10 s for PING, else prints the server's log and exits
	for _ in $(seq 1 200); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.05; done
	echo "server on $1 did not start; its log:" >&2; cat "$work"/*-"$1".log >&2 || true; exit 1
}

stop() { redis-cli -p "$1" shutdown nosave >/dev/null 2>&1 || true; sleep 0.3; }

# each_server FN BIN... starts each Cairn build BIN and then a
# redis-server, one at a time, fresh, on a free port of 127.0.0.1 with its
# files in $work; calls FN NAME PORT PID for it, then stops it.
each_server() {
	local fn=$1 b p
	shift
	for b in "$@" redis-server; do
		p=$(free_port)
		if [ "$b" = redis-server ]; then
			redis-server --bind 127.0.0.1 --port "$p" --save '' --appendonly no --dir "$work" >"$work/redis-$p.log" 2>&1 &
		else
			"$b" --bind 127.0.0.1 --port "$p" --dir "$work/cairn-$p" --log-level warning >"$work/cairn-$p.log" 2>&1 &
		fi
		pids+=($!)
		wait_up "$p"
		"$fn" "$b" "$p" "${pids[-1]}"
		stop "$p"
	done
}
