#!/bin/bash
# bench/idle.sh [BIN_DIR] [DATA_DIR] [PORT] [DURATION_S] [STEP_S]
#
# The idle cost of the platform: starts BIN_DIR/gateway on a fresh data folder
# as `make run` does (embedded PostgreSQL, the development world seeded) and
# prints, every STEP_S seconds after /healthz answers, the CPU (user+system,
# ms per wall second, from /proc/<pid>/stat) of all the cluster's postgres
# processes (the live ones and the postmaster's reaped children), of the
# gateway, and of its plugins. No requests are made. At the end it lists the
# tables autovacuum visited since the start. Linux only; run from the
# repository after `make build`. See docs/design/performance.md "Idle cost".
BIN=${1:-bin}; DATA=${2:-/tmp/svc-idle/var}; PORT=${3:-18089}; DUR=${4:-300}; STEP=${5:-10}
rm -rf "$DATA"; mkdir -p "$(dirname "$DATA")"
HZ=$(getconf CLK_TCK)
"$BIN/gateway" --addr 127.0.0.1:$PORT --data-dir "$DATA" --plugins-dir "$BIN/plugins" >"$DATA.log" 2>&1 &
GW=$!
trap 'kill $GW 2>/dev/null; wait $GW 2>/dev/null' EXIT
until curl -sf http://127.0.0.1:$PORT/healthz >/dev/null; do
	sleep 0.2
	kill -0 $GW 2>/dev/null || { echo "the gateway exited:"; tail "$DATA.log"; exit 1; }
done
T0=$(date +%s.%N)
PIDFILE=$(find "$DATA" -name postmaster.pid | head -1)
PM=$(head -1 "$PIDFILE")
# ticks PID [1]: utime+stime, with 1 also the reaped children's.
ticks() {
	awk -v c="$2" '{ s=$0; sub(/.*\) /,"",s); split(s,f," "); t=f[12]+f[13]; if (c) t+=f[14]+f[15]; print t }' \
		/proc/$1/stat 2>/dev/null || echo 0
}
sample() { # "postgres gateway plugins", in clock ticks
	local pg pl=0 x
	pg=$(ticks $PM 1)
	for x in $(ps -o pid= --ppid $PM); do pg=$((pg + $(ticks $x))); done
	for x in $(ps -o pid= --ppid $GW); do [ "$x" = "$PM" ] || pl=$((pl + $(ticks $x 1))); done
	echo "$pg $(ticks $GW) $pl"
}
printf "%8s %12s %12s %12s\n" "t(s)" "pg ms/s" "gw ms/s" "plugins ms/s"
read -r a b c <<<"$(sample)"; tp=$(date +%s.%N)
while (( $(echo "$(date +%s.%N) < $T0 + $DUR" | bc) )); do
	sleep "$STEP"
	read -r A B C <<<"$(sample)"; tn=$(date +%s.%N)
	awk -v t="$(echo "$tn - $T0" | bc)" -v dt="$(echo "$tn - $tp" | bc)" -v hz="$HZ" -v a=$((A-a)) -v b=$((B-b)) -v c=$((C-c)) \
		'BEGIN { printf "%8.0f %12.1f %12.1f %12.1f\n", t, a*1000/hz/dt, b*1000/hz/dt, c*1000/hz/dt }'
	a=$A b=$B c=$C tp=$tn
done
psql -h "$(awk 'NR==5' "$PIDFILE")" -U postgres -d svc -XAtc "SELECT 'autovacuum since the start: ' ||
	coalesce(string_agg(relname || ' at ' || to_char(greatest(last_autovacuum, last_autoanalyze) - pg_postmaster_start_time(), 'MI:SS'), ', '), 'none')
	FROM pg_stat_user_tables WHERE last_autovacuum IS NOT NULL OR last_autoanalyze IS NOT NULL"
