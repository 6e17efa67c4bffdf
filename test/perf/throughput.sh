#!/usr/bin/env bash
# test/perf/throughput.sh: the service's throughput next to a gin hello-world
# on the same cores in the same run (docs/PERFORMANCE.md section 12).
#
#   test/perf/throughput.sh                       # 3 rounds of 10 s each
#   ROUNDS=5 DURATION=15s test/perf/throughput.sh
#   KEEP_ANSWERS=false test/perf/throughput.sh  # every search computed (SERVICE_KEEP_ANSWERS=false)
#   LOG_LEVEL=warn test/perf/throughput.sh      # without the access log (the default is info, the service's default)
#   LOG_LEVELS="info warn" test/perf/throughput.sh # the service (and BASE_BIN) at each level, in the same rounds
#   BASE_BIN=/tmp/cs-old test/perf/throughput.sh # also an older build, in the same rounds
#
# It builds the binary and test/perf/helloworld (gin from go.mod, release
# mode, Recovery, no logger) from the last commit (git archive HEAD;
# SOURCE=worktree for the working tree), serves the real exports with
# `python3 -m http.server` as the publisher stand-in (02.06.000-sv-se.json
# as .../latest/sv/json, 02.07.000-en-gb.json as .../latest/en/json, the
# workbooks 404), starts the service with the boot ingest (235 resources,
# default settings otherwise: hash embedder, log level info, the access
# log written as JSON to a file) and waits for the 235, then runs
# interleaved rounds of `wrk -t2 -c16 -d$DURATION`
# (after a $WARMUP warm-up of each target) on
#   hello   GET /                                    (helloworld)
#   search  GET /api/search?q=spånskiva              (service)
#   lookup  GET /api/resources/national:6000000000   (service)
# in the order hello, search, lookup, hello, ... and prints req/s per round,
# the medians, and each endpoint's median ratio to hello-world's median;
# next to them the median CPU time its server spent per request (user +
# system from /proc, in µs), which other work on a shared machine moves
# much less than req/s.
# Both servers stay up for the whole run; wrk shares the 2 cores with the
# server it loads (the other server is idle).
# With BASE_BIN (a binary built from an older commit, e.g. by
# `git archive OLD | tar -x -C /tmp/old && (cd /tmp/old && go build -o
# /tmp/cs-old ./cmd/climatesearch)`) that build serves the same catalog
# beside it and its search and lookup join each round (base-search,
# base-lookup, right after the service's): before and after in the same
# run conditions. With several LOG_LEVELS each server runs once per level
# and the names say the level (search@info, base-lookup@warn, ...).
# Ports: 18530 (publisher), 18531 (service), 18532 (helloworld), 18633
# (BASE_BIN), loopback; 18541 and 18643 for a second level, and so on.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
SOURCE=${SOURCE:-head}
read -r -a LEVELS <<<"${LOG_LEVELS:-${LOG_LEVEL:-info}}"
SHARED=$(cd "${CLIMATESEARCH_SHARED:-$REPO/../shared}" && pwd)
UP_PORT=18530 SVC_PORT=18531 HW_PORT=18532
WORK=$(mktemp -d /tmp/climatesearch-throughput.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	[ "${KEEP:-0}" = 1 ] && echo "kept $WORK" >&2 || rm -rf "$WORK"
}
trap cleanup EXIT
log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }
command -v wrk >/dev/null || { log "installing wrk"; apt-get install -y wrk >/dev/null; }

REV=$(git rev-parse --short HEAD) # once: others may commit during the run
if [ "$SOURCE" = worktree ]; then SRC=$REPO; else
	mkdir "$WORK/src" && git archive "$REV" | tar -x -C "$WORK/src" && SRC=$WORK/src
fi
log "building ($SOURCE, $REV)"
(cd "$SRC" && go build -o "$WORK/climatesearch" ./cmd/climatesearch && go build -o "$WORK/helloworld" ./test/perf/helloworld)

UP_DIR=$WORK/publisher/api/Klimat/v2/GetAllResources/latest
mkdir -p "$UP_DIR/sv" "$UP_DIR/en"
cp "$SHARED/data/boverket/02.06.000-sv-se.json" "$UP_DIR/sv/json"
cp "$SHARED/data/boverket/02.07.000-en-gb.json" "$UP_DIR/en/json"
python3 -m http.server --bind 127.0.0.1 $UP_PORT --directory "$WORK/publisher" >"$WORK/publisher.log" 2>&1 &
PIDS+=($!)
UP=http://127.0.0.1:$UP_PORT
for _ in $(seq 100); do curl -fs -o /dev/null "$UP/api/Klimat/v2/GetAllResources/latest/sv/json" && break; sleep 0.1; done

declare -A PID # server process of each name
# service BINARY PORT NAME LEVEL: the service on the stand-in's catalog.
service() {
	env SERVICE_ADDR=127.0.0.1:$2 SERVICE_DATA_DIR="$WORK/data-$3" SERVICE_UPSTREAM_URL=$UP \
		SERVICE_EXCEL_URL_SV=$UP/missing-sv.xlsx SERVICE_EXCEL_URL_EN=$UP/missing-en.xlsx SERVICE_INGEST_INTERVAL=0 \
		SERVICE_KEEP_ANSWERS=${KEEP_ANSWERS:-true} SERVICE_LOG_LEVEL=$4 SERVICE_LOG_FORMAT=json "$1" >"$WORK/$3.log" 2>&1 &
	PIDS+=($!)
	PID[$3]=$!
}
# loaded URL NAME: wait until the service at URL holds the 235 resources.
loaded() {
	local n=0
	for _ in $(seq 600); do
		n=$(curl -fs "$1/api/resources" 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["resources"]))' 2>/dev/null || echo 0)
		[ "$n" -ge 235 ] && return 0
		sleep 0.1
	done
	log "$2 holds $n resources, want 235"
	tail -5 "$WORK/$2.log" >&2
	exit 1
}
"$WORK/helloworld" -addr 127.0.0.1:$HW_PORT >"$WORK/helloworld.log" 2>&1 &
PIDS+=($!)
PID[hello]=$!
SEARCH="/api/search?q=sp%C3%A5nskiva" LOOKUP=/api/resources/national:6000000000
declare -A URL=([hello]="http://127.0.0.1:$HW_PORT/") SERVER=([hello]=hello)
NAMES=(hello)
i=0
for lvl in "${LEVELS[@]}"; do
	at=""
	if [ ${#LEVELS[@]} -gt 1 ]; then at="@$lvl"; fi
	svc=service$at && service "$WORK/climatesearch" $((SVC_PORT + 10 * i)) "$svc" "$lvl"
	URL[search$at]="http://127.0.0.1:$((SVC_PORT + 10 * i))$SEARCH" URL[lookup$at]="http://127.0.0.1:$((SVC_PORT + 10 * i))$LOOKUP"
	SERVER[search$at]=$svc SERVER[lookup$at]=$svc
	if [ -n "${BASE_BIN:-}" ]; then
		base=base$at && service "$BASE_BIN" $((18633 + 10 * i)) "$base" "$lvl"
		URL[base-search$at]="http://127.0.0.1:$((18633 + 10 * i))$SEARCH" URL[base-lookup$at]="http://127.0.0.1:$((18633 + 10 * i))$LOOKUP"
		SERVER[base-search$at]=$base SERVER[base-lookup$at]=$base
		NAMES+=("search$at" "base-search$at" "lookup$at" "base-lookup$at")
	else
		NAMES+=("search$at" "lookup$at")
	fi
	i=$((i + 1))
done
for k in "${NAMES[@]}"; do
	case $k in search* | base-search*) loaded "${URL[$k]%%/api/*}" "${SERVER[$k]}" ;; esac
done
curl -fs -o /dev/null "http://127.0.0.1:$HW_PORT/" || { log "helloworld not up"; exit 1; }
for k in "${NAMES[@]}"; do
	[ "$(curl -s -o /dev/null -w '%{http_code}' "${URL[$k]}")" = 200 ] || { log "$k: not 200"; exit 1; }
	wrk -t2 -c16 -d"$WARMUP" "${URL[$k]}" >/dev/null
done
declare -A RPS CPU
TICK=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; } # user + system, in clock ticks
echo "throughput.sh $(date -u +%FT%TZ) commit $REV source $SOURCE${BASE_BIN:+ base $BASE_BIN}, log level ${LEVELS[*]}, $(nproc) cores, wrk -t2 -c16 -d$DURATION, $ROUNDS interleaved rounds, load before $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
	line="round $r:"
	for k in "${NAMES[@]}"; do
		pid=${PID[${SERVER[$k]}]}
		c0=$(cpu "$pid")
		out=$(wrk -t2 -c16 -d"$DURATION" "${URL[$k]}")
		c1=$(cpu "$pid")
		if grep -q 'Non-2xx' <<<"$out"; then log "$k: non-2xx answers: $(grep Non-2xx <<<"$out")"; fi
		rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
		RPS[$k]+="$rps "
		CPU[$k]+="$(awk -v c="$((c1 - c0))" -v t="$TICK" '/requests in/ {printf "%.1f", c/t*1e6/$1}' <<<"$out") "
		line+=" $k $rps"
	done
	echo "$line"
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
HM=$(median <<<"${RPS[hello]}")
for k in "${NAMES[@]}"; do
	m=$(median <<<"${RPS[$k]}")
	printf '%-16s median %9.0f req/s  ratio to hello-world %.2f  server CPU %5.1f µs/request   (rounds: %s)\n' "$k" "$m" \
		"$(awk -v a="$m" -v b="$HM" 'BEGIN{print a/b}')" "$(median <<<"${CPU[$k]}")" "${RPS[$k]}"
done
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)"
