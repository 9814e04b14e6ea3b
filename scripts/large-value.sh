#!/usr/bin/env bash
# Times commands on one large string against Cairn builds and a
# redis-server in the same run: SET of SIZE_MB (default 100) MB from
# redis-cli -x, then EXPIRE, TTL, PERSIST, EXISTS, TYPE, STRLEN, GETRANGE of
# 10 bytes, APPEND of 10 bytes, SETRANGE of 3 bytes in the middle, SETBIT
# and GETBIT there, BITCOUNT, RENAME and GET, each one redis-cli call (its
# start-up, ~20 ms, is in every figure), and the server's RSS after them. Servers bind to
# 127.0.0.1 in temporary dirs and are stopped at the end.
#
# Usage: scripts/large-value.sh CAIRN_BIN [CAIRN_BIN...]
#   e.g. scripts/large-value.sh /tmp/cairn-before bin/cairn
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { sed -n 2,10p "$0" >&2; exit 2; }
. scripts/benchlib.sh # $work, $pids, free_port, wait_up, stop, each_server
size=${SIZE_MB:-100}
head -c $((size << 20)) /dev/zero | tr '\0' 'v' >"$work/value"
secs() { local s e; s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); python3 -c "print(f'{$e-$s:.2f}')"; }
run() { # name port pid
	local line="$1 set=$(secs bash -c "redis-cli -p $2 -x set big <'$work/value'")"
	local mid=$((size << 19))
	for c in "expire big 1000" "ttl big" "persist big" "exists big" "type big" "strlen big" "getrange big 0 9" \
		"append big 0123456789" "setrange big $mid abc" "setbit big $((mid * 8 + 30)) 1" "getbit big $((mid * 8 + 30))" \
		"bitcount big" "rename big big2"; do
		line="$line ${c%% *}=$(secs redis-cli -p "$2" $c)"
	done
	line="$line get=$(secs redis-cli -p "$2" get big2)"
	echo "$line rss_mb=$(($(awk '/VmRSS/ {print $2}' "/proc/$3/status") / 1024))"
}
each_server run "$@"
