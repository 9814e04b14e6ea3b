#!/usr/bin/env bash
# Measures the memory a whole large value costs, for Cairn builds and a
# redis-server in the same run: each server fresh, a SET of SIZE_MB
# (default 100) MB from redis-cli -x, then a GET of it. Prints, in MB, the
# server's RSS at start, its peak during the SET and during the GET
# (VmHWM, reset in between through /proc/PID/clear_refs), its RSS right
# after the GET and 3 s later, its peak during an MGET of the value and a
# missing key and then during a GETDEL of the value, and the seconds each
# call took (redis-cli's start-up included).
# For each Cairn build it then starts a primary and a replica and prints
# both peaks while the SET replicates, and both RSS once the replica has
# the value and 3 s more have passed. Servers bind to 127.0.0.1 in
# temporary dirs and are stopped at the end.
#
# Usage: scripts/large-memory.sh CAIRN_BIN [CAIRN_BIN...]
#   e.g. scripts/large-memory.sh /tmp/cairn-before bin/cairn
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { sed -n 2,15p "$0" >&2; exit 2; }
. scripts/benchlib.sh # $work, $pids, free_port, wait_up, stop, each_server
size=${SIZE_MB:-100}
head -c $((size << 20)) /dev/zero | tr '\0' 'v' >"$work/value"
mb() { awk -v f="$2" '$1 == f":" {print int($2 / 1024)}' "/proc/$1/status"; } # pid field
reset_peak() { echo 5 >"/proc/$1/clear_refs"; }
secs() { local s e; s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); python3 -c "print(f'{$e-$s:.2f}')"; }

one() { # name port pid
	local start set get
	start=$(mb "$3" VmRSS)
	reset_peak "$3"
	set=$(secs bash -c "redis-cli -p $2 -x set big <'$work/value'")
	local set_peak; set_peak=$(mb "$3" VmHWM)
	reset_peak "$3"
	get=$(secs bash -c "redis-cli -p $2 get big | wc -c")
	local get_peak after; get_peak=$(mb "$3" VmHWM) after=$(mb "$3" VmRSS)
	sleep 3
	local after3 mget mget_peak getdel; after3=$(mb "$3" VmRSS)
	reset_peak "$3"
	mget=$(secs bash -c "redis-cli -p $2 mget big nokey | wc -c")
	mget_peak=$(mb "$3" VmHWM)
	reset_peak "$3"
	getdel=$(secs bash -c "redis-cli -p $2 getdel big | wc -c")
	echo "$1 start=$start set_s=$set set_peak=$set_peak get_s=$get get_peak=$get_peak after=$after after_3s=$after3 mget_s=$mget mget_peak=$mget_peak getdel_s=$getdel getdel_peak=$(mb "$3" VmHWM)"
}

replicated() { # name bin
	local p r pp rp
	p=$(free_port)
	"$2" --bind 127.0.0.1 --port "$p" --dir "$work/p-$p" --log-level warning >"$work/cairn-$p.log" 2>&1 &
	pids+=($!) pp=$!
	wait_up "$p"
	r=$(free_port)
	"$2" --bind 127.0.0.1 --port "$r" --dir "$work/r-$r" --log-level warning --replicaof "127.0.0.1 $p" >"$work/cairn-$r.log" 2>&1 &
	pids+=($!) rp=$!
	wait_up "$r"
	until redis-cli -p "$r" info replication | grep -q master_link_status:up; do sleep 0.1; done
	reset_peak "$pp"
	reset_peak "$rp"
	redis-cli -p "$p" -x set big <"$work/value" >/dev/null
	until [ "$(redis-cli -p "$r" strlen big)" = $((size << 20)) ]; do sleep 0.1; done
	local pk rk; pk=$(mb "$pp" VmHWM) rk=$(mb "$rp" VmHWM)
	sleep 3
	echo "$1 replicated: primary_peak=$pk replica_peak=$rk primary_after_3s=$(mb "$pp" VmRSS) replica_after_3s=$(mb "$rp" VmRSS)"
	stop "$r"
	stop "$p"
}

each_server one "$@"
for b in "$@"; do
	replicated "$b" "$b"
done
