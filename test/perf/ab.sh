#!/usr/bin/env bash
# test/perf/ab.sh OLD NEW: two builds of the service side by side on the
# same cores, interleaved (docs/PERFORMANCE.md section 17).
#
#   git worktree add /tmp/old 33a8872 && (cd /tmp/old && go build -o /tmp/cs-old ./cmd/climatesearch)
#   go build -o /tmp/cs ./cmd/climatesearch
#   test/perf/ab.sh /tmp/cs-old /tmp/cs
#
# Both start offline on the embedded demo snapshot (the publisher points at
# a closed port), log level $LOGLEVEL (warn), on loopback ports 19781 and
# 19782 with temporary data directories; after a warm-up, $ROUNDS (3) rounds
# of `wrk -t2 -c16 -d$DURATION` (6s) alternate old and new on
#   search  GET /api/search?q=spånskiva
#   lookup  GET /api/resources/national:6000000000
# and print per round req/s and the server's CPU time per request (user +
# system of its process over the run, from /proc, in µs): on a shared
# machine req/s follows whatever else runs, the CPU a request costs much
# less. Only the processes it started are stopped.
set -euo pipefail
OLD=${1:?usage: ab.sh OLD-BINARY NEW-BINARY}
NEW=${2:?usage: ab.sh OLD-BINARY NEW-BINARY}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-6s}
WORK=$(mktemp -d /tmp/climatesearch-ab.XXXXXX)
PIDS=()
cleanup() { # stop, and wait: a stopping service still writes its index under $WORK
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$WORK"
}
trap cleanup EXIT
start() { # binary port name
	SERVICE_DATA_DIR=$WORK/$3 SERVICE_ADDR=127.0.0.1:$2 SERVICE_UPSTREAM_URL=http://127.0.0.1:1/ \
		SERVICE_EXCEL_URL_SV=http://127.0.0.1:1/sv SERVICE_EXCEL_URL_EN=http://127.0.0.1:1/en \
		SERVICE_LOG_LEVEL=${LOGLEVEL:-warn} SERVICE_INGEST_INTERVAL=0 "$1" >"$WORK/$3.log" 2>&1 &
	PIDS+=($!)
}
start "$OLD" 19781 old
start "$NEW" 19782 new
SEARCH="/api/search?q=sp%C3%A5nskiva"
LOOKUP=/api/resources/national:6000000000
for p in 19781 19782; do
	for _ in $(seq 1 150); do
		[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p$LOOKUP")" = 200 ] && break
		sleep 0.2
	done
	wrk -t2 -c16 -d3s "http://127.0.0.1:$p$SEARCH" >/dev/null
	wrk -t2 -c16 -d3s "http://127.0.0.1:$p$LOOKUP" >/dev/null
done
TICK=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; } # user + system, in clock ticks
# rate PID URL: "req/s µs-of-CPU-per-request"
rate() {
	local c0 out c1
	c0=$(cpu "$1")
	out=$(wrk -t2 -c16 -d"$DURATION" "$2")
	c1=$(cpu "$1")
	awk -v c="$((c1 - c0))" -v t="$TICK" '/requests in/ {n=$1} /Requests\/sec/ {r=$2} END {printf "%s %.1f", r, c/t*1e6/n}' <<<"$out"
}
echo "ab.sh $(date -u +%FT%TZ) wrk -t2 -c16 -d$DURATION, $ROUNDS rounds, load before $(cut -d' ' -f1-3 /proc/loadavg); columns: req/s, server CPU µs per request"
for r in $(seq 1 "$ROUNDS"); do
	for i in 0 1; do
		p=$((19781 + i))
		name=old
		[ "$i" = 1 ] && name=new
		echo "round $r $name search $(rate "${PIDS[$i]}" "http://127.0.0.1:$p$SEARCH") lookup $(rate "${PIDS[$i]}" "http://127.0.0.1:$p$LOOKUP")"
	done
done
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)"
