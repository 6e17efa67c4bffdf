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
# and print req/s per round. Only the processes it started are stopped.
set -euo pipefail
OLD=${1:?usage: ab.sh OLD-BINARY NEW-BINARY}
NEW=${2:?usage: ab.sh OLD-BINARY NEW-BINARY}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-6s}
WORK=$(mktemp -d /tmp/climatesearch-ab.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
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
rate() { wrk -t2 -c16 -d"$DURATION" "$1" | awk '/Requests\/sec/ {print $2}'; }
for r in $(seq 1 "$ROUNDS"); do
	for p in 19781 19782; do
		name=old
		[ "$p" = 19782 ] && name=new
		echo "round $r $name search $(rate "http://127.0.0.1:$p$SEARCH") lookup $(rate "http://127.0.0.1:$p$LOOKUP")"
	done
done
