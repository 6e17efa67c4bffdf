#!/usr/bin/env bash
# test/perf/restartab.sh OLD NEW: restart to ready of two builds of the
# service on the same data directory, in turn (docs/PERFORMANCE.md section
# 12zc). The data directory must hold a store whose index and vector graph
# a clean stop kept, for example one left by
#
#   KEEP=1 test/perf/scale.sh 1000000     # /tmp/climatesearch-scale.*/data
#   DATA=/tmp/climatesearch-scale.XXXX/data ROUNDS=4 test/perf/restartab.sh /tmp/cs-old /tmp/cs-new
#
# Each of $ROUNDS rounds starts OLD and then NEW on $DATA (hash embedder, no
# boot ingest, offline: test/perf/offline.sh's serve_offline;
# SERVICE_MEMORY_LIMIT $MEMORY_LIMIT (1600MiB)), prints the
# time from exec to /healthz and to /readyz (polled every 20 ms), the CPU
# the process used until ready and its VmHWM, and stops it with SIGTERM,
# which keeps the index and the graph again for the next start. Both builds
# must read the same snapshot formats. Loopback port ${PORT:-18591}; only
# the processes it started are stopped.
set -euo pipefail
OLD=${1:?usage: restartab.sh OLD-BINARY NEW-BINARY}
NEW=${2:?usage: restartab.sh OLD-BINARY NEW-BINARY}
: "${DATA:?set DATA to a climatesearch data directory}"
ROUNDS=${ROUNDS:-3}
MEMORY_LIMIT=${MEMORY_LIMIT:-1600MiB}
ADDR=127.0.0.1:${PORT:-18591}
DATA=$(realpath "$DATA") OLD=$(realpath "$OLD") NEW=$(realpath "$NEW")
cd "$(dirname "$0")/../.."
. test/perf/offline.sh
LOG=$(mktemp /tmp/climatesearch-restartab.XXXXXX)
PID=
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -f "$LOG"' EXIT
ts() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(ts)" 'BEGIN {printf "%.2f", b-a}'; }

start() { # $1 binary; prints "/healthz s, /readyz s, CPU s, VmHWM MiB"
	local t0 health ready cpu
	t0=$(ts)
	serve_offline "$1" "$DATA" "$LOG" SERVICE_KEEP_ANSWERS=false SERVICE_MEMORY_LIMIT="$MEMORY_LIMIT"
	until curl -fs -o /dev/null "http://$ADDR/healthz"; do
		kill -0 "$PID" 2>/dev/null || { echo "$1 exited (see $LOG)" >&2; exit 1; }
		sleep 0.02
	done
	health=$(since "$t0")
	until curl -fs -o /dev/null "http://$ADDR/readyz"; do sleep 0.02; done
	ready=$(since "$t0")
	cpu=$(awk -v t="$(getconf CLK_TCK)" '{printf "%.2f", ($14+$15)/t}' "/proc/$PID/stat")
	echo "/healthz $health s, /readyz $ready s, CPU $cpu s, VmHWM $(awk '$1=="VmHWM:" {print int($2/1024)}' "/proc/$PID/status") MiB"
	kill -TERM "$PID"
	wait "$PID" || { echo "$1: the stop failed (see $LOG)" >&2; exit 1; }
	PID=
}

echo "restartab.sh $(date -u +%FT%TZ) DATA=$DATA, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
	echo "round $r old $(start "$OLD")"
	echo "round $r new $(start "$NEW")"
done
