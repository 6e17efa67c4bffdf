#!/usr/bin/env bash
# test/perf/restart.sh: restart to ready on an existing data directory, as
# PERFORMANCE.md section 12l measured it at 1,000,000 resources:
#
#   KEEP=1 test/perf/scale.sh 1000000            # leaves a store in /tmp/climatesearch-scale.*
#   DATA=/tmp/climatesearch-scale.XXXX/data test/perf/restart.sh
#
# It builds the binary from the working tree (or takes BIN), then:
#   1. starts it on $DATA (hash embedder, no boot ingest) and prints the
#      time from exec to /healthz and to /readyz (polled every 50 ms) and
#      VmHWM; waits until hybrid search stops noting vectors being loaded
#      or computed (a store written by a build that kept no graph rebuilds
#      it here) and prints how long that took;
#   2. stops it (SIGTERM: the text index and the vector graph are kept in
#      $DATA/index) and prints the stop's time and the kept files;
#   3. starts it again, prints /healthz, /readyz and the notes of a hybrid
#      search right after ready (none about vectors when the graph was
#      taken up), times three hybrid searches, stops it;
#   4. starts and stops it once more.
# Port: 127.0.0.1:${PORT:-18591} (loopback). The data directory is changed
# only as the service changes it (its kept index).
set -u
: "${DATA:?set DATA to a climatesearch data directory}"
ADDR=127.0.0.1:${PORT:-18591}
work=$(mktemp -d)
trap 'kill $PID 2>/dev/null || true; rm -rf "$work"' EXIT
BIN=${BIN:-}
if [ -z "$BIN" ]; then
	BIN=$work/climatesearch
	(cd "$(dirname "$0")/../.." && go build -o "$BIN" ./cmd/climatesearch) || exit 1
fi
ts() { date +%s.%N; }
el() { awk -v a="$1" -v b="$(ts)" 'BEGIN{printf "%.2f", b-a}'; }
hwm() { awk '/VmHWM/{print int($2/1024) " MiB"}' /proc/$PID/status; }
start() {
	env SERVICE_ADDR=$ADDR SERVICE_DATA_DIR="$DATA" SERVICE_BOOT_INGEST=false SERVICE_INGEST_INTERVAL=0 SERVICE_KEEP_ANSWERS=false \
		SERVICE_EMBEDDER=hash SERVICE_UPSTREAM_URL=http://127.0.0.1:9 SERVICE_LOG_LEVEL=warn SERVICE_LOG_FORMAT=json \
		"$BIN" >>"$work/server.log" 2>&1 &
	PID=$!
	T0=$(ts)
	until curl -fs -o /dev/null "http://$ADDR/healthz"; do
		kill -0 $PID 2>/dev/null || { echo "start $1: exited"; tail -5 "$work/server.log"; exit 1; }
		sleep 0.05
	done
	echo "$(date -u +%T) start $1: /healthz $(el "$T0") s"
	until curl -fs -o /dev/null "http://$ADDR/readyz"; do sleep 0.05; done
	echo "$(date -u +%T) start $1: /readyz $(el "$T0") s, VmHWM $(hwm)"
}
notes() { curl -fs "http://$ADDR/api/search?q=betong&vector=true&limit=1" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("notes"))'; }
stop() {
	local t=$(ts)
	kill -TERM $PID
	wait $PID
	echo "$(date -u +%T) stop: exit $? after $(el "$t") s; kept: $(cd "$DATA/index" && ls -l | awk 'NR>1{printf "%s %d MB; ", $9, $5/1e6}')"
}
start 1
echo "notes: $(notes)"
V0=$(ts)
while notes | grep -q "being loaded\|still being computed\|unavailable"; do sleep 5; done
echo "$(date -u +%T) vectors in place $(el "$V0") s after ready; VmHWM $(hwm)"
stop
start 2
echo "notes right after ready: $(notes)"
for i in 1 2 3; do
	t=$(ts)
	curl -fs -o /dev/null "http://$ADDR/api/search?q=betong+bj%C3%A4lklag&vector=true&limit=20"
	echo "hybrid search $i: $(el "$t") s"
done
echo "VmHWM $(hwm)"
stop
start 3
stop
