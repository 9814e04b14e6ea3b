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
for pipeline in 1 16; do
	for t in set get; do
		read -r c r < <(pair "$cp" "$rp" "$t" -c 50 -n "$N" -r 100000 -P "$pipeline")
		target="≥ 0.8"; [ "$pipeline" = 16 ] && target="≥ 0.5"
		echo "| ${t^^} -c 50 -n $N -r 100000 -P $pipeline | $c | $r | $(ratio "$c" "$r") | $target |"
	done
done
# Hashes: redis-benchmark's HSET writes random fields of one hash, a hot
# key whose writes (and their commits) take turns; HGET reads them.
for pipeline in 1 16; do
	read -r c r < <(pair "$cp" "$rp" hset -c 50 -n "$N" -r 100000 -P "$pipeline")
	echo "| HSET -c 50 -n $N -r 100000 -P $pipeline | $c | $r | $(ratio "$c" "$r") | — |"
	read -r c r < <(pair_of rps_cmd "$cp" "$rp" -c 50 -n "$N" -r 100000 -P "$pipeline" hget myhash element:__rand_int__)
	echo "| HGET myhash element:__rand_int__ -c 50 -n $N -r 100000 -P $pipeline | $c | $r | $(ratio "$c" "$r") | — |"
done
# Sets: redis-benchmark's SADD adds random members to one set (once most
# are in, an SADD writes nothing); SISMEMBER reads them.
for pipeline in 1 16; do
	read -r c r < <(pair "$cp" "$rp" sadd -c 50 -n "$N" -r 100000 -P "$pipeline")
	echo "| SADD -c 50 -n $N -r 100000 -P $pipeline | $c | $r | $(ratio "$c" "$r") | — |"
	read -r c r < <(pair_of rps_cmd "$cp" "$rp" -c 50 -n "$N" -r 100000 -P "$pipeline" sismember myset element:__rand_int__)
	echo "| SISMEMBER myset element:__rand_int__ -c 50 -n $N -r 100000 -P $pipeline | $c | $r | $(ratio "$c" "$r") | — |"
done
# Lists: redis-benchmark's LPUSH and LPOP push to and pop from one list, a
# hot key; LRANGE_100 reads its first 100 elements.
for pipeline in 1 16; do
	for t in lpush lpop lrange_100; do
		read -r c r < <(pair "$cp" "$rp" "$t" -c 50 -n "$N" -P "$pipeline")
		echo "| ${t^^} -c 50 -n $N -P $pipeline | $c | $r | $(ratio "$c" "$r") | — |"
	done
done
# Sorted sets: redis-benchmark's ZADD adds random members with random
# scores to one sorted set, a hot key (about 86,000 members after the
# first run); ZSCORE reads members' scores; ZPOPMIN pops the lowest, N/10
# a run so that every run pops members rather than an emptied set.
for pipeline in 1 16; do
	read -r c r < <(pair "$cp" "$rp" zadd -c 50 -n "$N" -r 100000 -P "$pipeline")
	echo "| ZADD -c 50 -n $N -r 100000 -P $pipeline | $c | $r | $(ratio "$c" "$r") | — |"
	read -r c r < <(pair_of rps_cmd "$cp" "$rp" -c 50 -n "$N" -r 100000 -P "$pipeline" zscore myzset element:__rand_int__)
	echo "| ZSCORE myzset element:__rand_int__ -c 50 -n $N -r 100000 -P $pipeline | $c | $r | $(ratio "$c" "$r") | — |"
	read -r c r < <(pair "$cp" "$rp" zpopmin -c 50 -n "$((N / 10))" -P "$pipeline")
	echo "| ZPOPMIN -c 50 -n $((N / 10)) -P $pipeline | $c | $r | $(ratio "$c" "$r") | — |"
done
# HyperLogLogs: PFADD adds random elements to one key (sparse at first,
# dense past hll-sparse-max-bytes), N/4 a run, as each rewrites the
# value; PFCOUNT counts it.
for pipeline in 1 16; do
	read -r c r < <(pair_of rps_cmd "$cp" "$rp" -c 50 -n "$((N / 4))" -r 100000 -P "$pipeline" pfadd myhll element:__rand_int__)
	echo "| PFADD myhll element:__rand_int__ -c 50 -n $((N / 4)) -r 100000 -P $pipeline | $c | $r | $(ratio "$c" "$r") | — |"
	read -r c r < <(pair_of rps_cmd "$cp" "$rp" -c 50 -n "$((N / 4))" -P "$pipeline" pfcount myhll)
	echo "| PFCOUNT myhll -c 50 -n $((N / 4)) -P $pipeline | $c | $r | $(ratio "$c" "$r") | — |"
done
# Streams: XADD appends entries to one stream, kept to about 100,000 by
# MAXLEN ~ (N/4 a run); XRANGE reads its first ten entries.
for pipeline in 1 16; do
	read -r c r < <(pair_of rps_cmd "$cp" "$rp" -c 50 -n "$((N / 4))" -r 100000 -P "$pipeline" xadd mystream maxlen '~' 100000 '*' field __rand_int__)
	echo "| XADD mystream MAXLEN ~ 100000 * field __rand_int__ -c 50 -n $((N / 4)) -r 100000 -P $pipeline | $c | $r | $(ratio "$c" "$r") | — |"
	read -r c r < <(pair_of rps_cmd "$cp" "$rp" -c 50 -n "$N" -P "$pipeline" xrange mystream - + count 10)
	echo "| XRANGE mystream - + COUNT 10 -c 50 -n $N -P $pipeline | $c | $r | $(ratio "$c" "$r") | — |"
done
stop "$cp"; stop "$rp"

# Keyspace notifications: SET throughput with notify-keyspace-events KEA
# and one subscriber on __keyevent@0__:* reading everything, against the
# same server with notifications off (issue 4: Cairn on/off >= 0.9). The
# subscriber is `cairn-bench subscribe`, on the client CPU like
# redis-benchmark: it counts the events without printing them (redis-cli
# would format and write each one, taking that CPU from redis-benchmark),
# and stops after the N events of the pass's N SETs (one
# __keyevent@0__:set each). A pass whose subscriber does not get exactly N
# within 30 s of redis-benchmark's end is reported on stderr and marked
# MISMATCH in the row. Each pass measures off then on; the ratio reported
# is the median of the passes' own on/off ratios, which drift on a shared
# machine disturbs less than a ratio of medians.
SUB_WAIT=30 # seconds after redis-benchmark's end
NOTIFY_RUNS=${BENCH_NOTIFY_RUNS:-5}
median_ratio() { python3 -c 'import statistics, sys; print(f"{statistics.median(float(x) for x in sys.argv[1:]):.2f}")' "$@"; }
# notify_check report-base status -> "ok", or in a few words what is wrong
# with the subscriber's report (its JSON) and exit status; its stderr
# tells more.
notify_check() {
	python3 - "$1.json" "$N" "$2" <<'PY'
import json, sys
path, n, status = sys.argv[1], int(sys.argv[2]), sys.argv[3]
try:
    with open(path) as f:
        got = json.load(f).get("received")
except (OSError, ValueError):
    print(f"no report from the subscriber (exit status {status})")
    sys.exit()
if got is None:
    print(f"the subscriber failed (exit status {status})")
elif got != n:
    print(f"{got} of {n} events received")
elif status != "0":
    print(f"{got} of {n} events received, but exit status {status}")
else:
    print("ok")
PY
}
notify_ratio() { # port redis-benchmark-args... -> "off on ratio [mismatches]"
	local port=$1 offs=() ons=() ratios=() notes=() run
	shift
	local load=("$@")
	# One untimed pass first, so that every measured pass overwrites the
	# same existing keys (creating them costs more than updating them).
	rps "$port" set -n "$N" "${load[@]}" >/dev/null
	for run in $(seq 1 "$NOTIFY_RUNS"); do
		redis-cli -p "$port" config set notify-keyspace-events "" >/dev/null
		offs+=("$(rps "$port" set -n "$N" "${load[@]}")")
		redis-cli -p "$port" config set notify-keyspace-events KEA >/dev/null
		local base="$work/subscriber-$port-$run" sub ticks=0 status=0 verdict
		# -duration-limit only bounds a subscriber this shell fails to stop.
		taskset -c "$CLIENT_CPU" bin/cairn-bench subscribe -addr "127.0.0.1:$port" -pattern '__keyevent@0__:*' \
			-expect "$N" -json -quiet -duration-limit 1h >"$base.json" 2>"$base.log" &
		sub=$!
		until grep -qsx subscribed "$base.log"; do # up to 10 s
			if ! kill -0 "$sub" 2>/dev/null; then
				echo "bench: the subscriber on port $port exited before subscribing; its stderr:" >&2
				cat "$base.log" >&2
				return 1
			elif [ $((ticks += 1)) -gt 200 ]; then
				echo "bench: the subscriber on port $port did not subscribe within 10 s; its stderr:" >&2
				cat "$base.log" >&2
				kill "$sub" 2>/dev/null || true
				return 1
			fi
			sleep 0.05
		done
		ons+=("$(rps "$port" set -n "$N" "${load[@]}")")
		ticks=0
		while kill -0 "$sub" 2>/dev/null && [ "$ticks" -lt $((SUB_WAIT * 20)) ]; do
			sleep 0.05; ticks=$((ticks + 1))
		done
		kill -TERM "$sub" 2>/dev/null || true # still reading: it reports what it has
		wait "$sub" || status=$?
		verdict=$(notify_check "$base" "$status")
		if [ "$verdict" != ok ]; then
			echo "bench: notifications on port $port, pass $run: MISMATCH: $verdict; the subscriber's stderr:" >&2
			cat "$base.log" >&2
			notes+=("pass $run: ${verdict//|/\\|}")
		fi
	done
	local joined="" note
	for note in "${notes[@]}"; do joined+="${joined:+; }$note"; done
	for run in "${!ons[@]}"; do ratios+=("$(ratio "${ons[$run]}" "${offs[$run]}")"); done
	echo "$(median "${offs[@]}") $(median "${ons[@]}") $(median_ratio "${ratios[@]}") $joined"
}
# notify_row label target server on off ratio mismatches -> the table row
notify_row() {
	local cell=$6 target=$2
	[ "$3" = Cairn ] || target="(reference)"
	[ -z "$7" ] || cell="$cell (MISMATCH: $7)"
	echo "| $1 with KEA + 1 subscriber / without: $3 | $4 | $5 (off) | $cell | $target |"
}
cp=$(free_port); start_cairn "$cp"
rp=$(free_port); start_redis "$rp"
# Issue 4's command (no -r: every SET writes the one key
# key:__rand_int__), then the same over 100,000 keys.
for load in "-c 50" "-c 50 -r 100000"; do
	label="SET $load -n $N" target="—"
	[ "$load" = "-c 50" ] && label+=" (one key)" target="≥ 0.9"
	read -r coff con cratio cnote < <(notify_ratio "$cp" $load) || { echo "bench: the notification benchmark failed on Cairn" >&2; exit 1; }
	read -r roff ron rratio rnote < <(notify_ratio "$rp" $load) || { echo "bench: the notification benchmark failed on Redis" >&2; exit 1; }
	notify_row "$label" "$target" Cairn "$con" "$coff" "$cratio" "$cnote"
	notify_row "$label" "$target" Redis "$ron" "$roff" "$rratio" "$rnote"
done
stop "$cp"; stop "$rp"

# Group commit: with sync yes, 50 concurrent writers must share fsyncs.
cp=$(free_port); start_cairn "$cp" --rocksdb.write_options.sync yes
one=$(rps "$cp" set -c 1 -n 2000 -r 100000)
fifty=$(rps "$cp" set -c 50 -n 20000 -r 100000)
echo "| SET sync yes: -c 50 / -c 1 (Cairn only) | $fifty | $one (c=1) | $(ratio "$fifty" "$one") | ≥ 10 |"
stop "$cp"

# Memory: RSS after loading $KEYS keys of 100-byte values.
rss_mb() { ps -o rss= -p "$1" | awk '{printf "%.0f", $1/1024}'; }
cp=$(free_port); start_cairn "$cp"; cpid=${pids[-1]}
rp=$(free_port); start_redis "$rp"; rpid=${pids[-1]}
val=$(head -c 100 /dev/zero | tr '\0' 'x')
gen() { awk -v n="$KEYS" -v v="$val" 'BEGIN { for (i = 0; i < n; i++) { k = sprintf("key:%010d", i); printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$100\r\n%s\r\n", length(k), k, v } }'; }
gen | redis-cli -p "$cp" --pipe >/dev/null
gen | redis-cli -p "$rp" --pipe >/dev/null
ck=$(redis-cli -p "$cp" dbsize); rk=$(redis-cli -p "$rp" dbsize)
echo "| RSS MB after $ck / $rk keys of 100 B | $(rss_mb "$cpid") | $(rss_mb "$rpid") | $(ratio "$(rss_mb "$cpid")" "$(rss_mb "$rpid")") | Cairn ≤ 300 MB |"
stop "$cp"; stop "$rp"
