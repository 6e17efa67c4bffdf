#!/usr/bin/env bash
# test/perf/bulkab.sh OLD NEW [MORE...]: the bulk load of two (or more)
# builds of the service, interleaved on the same cores (docs/PERFORMANCE.md section 12u).
#
#   git worktree add /tmp/old 89e5da7 && (cd /tmp/old && go build -o /tmp/cs-old ./cmd/climatesearch)
#   go build -o /tmp/cs ./cmd/climatesearch
#   N=300000 ROUNDS=2 test/perf/bulkab.sh /tmp/cs-old /tmp/cs
#
# It generates N synthetic national resources with test/perf/scalegen (seed
# 1, batches of 10,000, as scale.sh does), then for each of $ROUNDS rounds
# starts OLD and then NEW on a fresh data directory (SERVICE_EMBEDDER=hash,
# SERVICE_MEMORY_LIMIT $MEMORY_LIMIT (1843MiB), offline), posts the batches
# one after the other to POST /admin/resources and prints the rate (N over
# the wall time from the first post to the last answer), the process's
# VmHWM and its CPU time (user and system, from its start to the last
# answer) per resource, which a busy machine's other work moves less than
# the rate. What runs between the batches (the vectors' catch-up) is part of
# the rate, as in scale.sh; since the fifteenth session the background
# vectors stay out while batches keep coming (embedding.Syncer.Writing) and
# catch up after the last. With CATCHUP=1 it then waits until hybrid search
# no longer notes a backlog and prints how long that took, the VmHWM then
# and the CPU per resource of load and vectors together. Loopback port
# 18520; only the processes it started are stopped; everything lives in a
# mktemp directory removed at exit.
set -euo pipefail
OLD=${1:?usage: bulkab.sh OLD-BINARY NEW-BINARY}
NEW=${2:?usage: bulkab.sh OLD-BINARY NEW-BINARY}
N=${N:-300000}
ROUNDS=${ROUNDS:-2}
MEMORY_LIMIT=${MEMORY_LIMIT:-1843MiB}
ADDR=127.0.0.1:18520
cd "$(dirname "$0")/../.."
. test/perf/offline.sh
WORK=$(mktemp -d /tmp/climatesearch-bulkab.XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

go build -o "$WORK/scalegen" ./test/perf/scalegen
"$WORK/scalegen" -n "$N" -seed 1 -batch 10000 -out "$WORK/batches"

load() { # $1 binary; prints "rate/s VmHWM MiB"
	rm -rf "$WORK/data"
	serve_offline "$1" "$WORK/data" "$WORK/server.log" SERVICE_KEEP_ANSWERS=false SERVICE_MEMORY_LIMIT="$MEMORY_LIMIT"
	until curl -fs -o /dev/null "http://$ADDR/readyz"; do
		kill -0 "$PID" 2>/dev/null || { echo "$1 did not start (see $WORK/server.log)" >&2; exit 1; }
		sleep 0.1
	done
	local t0 t1 code
	t0=$(date +%s.%N)
	for f in "$WORK/batches"/batch-*.json; do
		code=$(curl -s -o "$WORK/post.out" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary @"$f" "http://$ADDR/admin/resources")
		[ "$code" = 200 ] || { echo "$f: HTTP $code $(head -c 300 "$WORK/post.out")" >&2; exit 1; }
	done
	t1=$(date +%s.%N)
	local hwm ticks caught=
	hwm=$(awk '$1=="VmHWM:" {print $2}' "/proc/$PID/status")
	ticks=$(awk '{print $14 + $15}' "/proc/$PID/stat") # user + system, since the start
	if [ "${CATCHUP:-0}" = 1 ]; then
		until vectors_caught_up "http://$ADDR/api/search?q=betong&vector=true&limit=1"; do
			sleep 0.5
		done
		caught=$(awk -v a="$t1" -v b="$(date +%s.%N)" -v h="$(awk '$1=="VmHWM:" {print $2}' "/proc/$PID/status")" \
			-v c="$(awk '{print $14 + $15}' "/proc/$PID/stat")" -v hz="$(getconf CLK_TCK)" -v n="$N" \
			'BEGIN {printf "; vectors caught up %.1f s later, VmHWM %.0f MiB, CPU with them %.0f us per resource", b-a, h/1024, c/hz*1e6/n}')
	fi
	kill "$PID"; wait "$PID" 2>/dev/null || true; PID=
	awk -v n="$N" -v a="$t0" -v b="$t1" -v h="$hwm" -v c="$ticks" -v hz="$(getconf CLK_TCK)" -v more="$caught" \
		'BEGIN {printf "%.0f/s VmHWM %.0f MiB CPU %.0f us per resource%s\n", n/(b-a), h/1024, c/hz*1e6/n, more}'
}

echo "bulkab.sh $(date -u +%FT%TZ) N=$N, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
	echo "round $r old $(load "$OLD")"
	echo "round $r new $(load "$NEW")"
	for more in "${@:3}"; do # further builds, in the same turn
		echo "round $r $more $(load "$more")"
	done
done
