#!/usr/bin/env bash
# test/mcp/perf/measure.sh: latency of an MCP tools/call of
# search_climate_data over streamable HTTP, next to REST for the same
# question, on this machine. Prints the section of docs/PERFORMANCE.md.
#
#   test/mcp/perf/measure.sh                 # 3 runs of each, 15 s each
#   RUNS=1 WRK_DURATION=5s test/mcp/perf/measure.sh
#
# The binary is built from the working tree and loads the publisher's real
# exports (02.06 sv + 02.07 en = 235 national resources) from a local
# python3 http.server standing in for the publisher. Defaults: hash
# embedder, no reranker, SERVICE_LOG_LEVEL=warn.
#
# What is compared, for QUERY (default spånskiva):
#   MCP    POST /mcp  tools/call search_climate_data {"query": QUERY}
#          (MCP always asks for vectors; 10 hits)
#   REST   GET /api/search?q=QUERY&vector=true  (the same question)
#   REST   GET /api/search?q=QUERY              (REST's default, full text only)
# each under load (wrk -t2 -c16, wrk and the server share the cores) and
# from one client (wrk -t1 -c1). The MCP session is opened once beforehand
# (initialize, notifications/initialized), as a client does.
#
# Before every run the script waits (at most QUIET_WAIT s) until other
# processes use at most QUIET_MAX % of the machine, and reports how busy it
# was. Everything lives in a mktemp directory removed at exit; only
# processes this script started are stopped, by pid.
#
# Needs: go, python3, curl, wrk.
set -euo pipefail
cd "$(dirname "$0")/../../.."
REPO=$(pwd)
SHARED=$(cd "${CLIMATESEARCH_SHARED:-$REPO/../shared}" && pwd)
EXPORTS="$SHARED/data/boverket"
RUNS=${RUNS:-3}
WRK_THREADS=${WRK_THREADS:-2}
WRK_CONNS=${WRK_CONNS:-16}
WRK_DURATION=${WRK_DURATION:-15s}
SOLO_DURATION=${SOLO_DURATION:-10s}
WRK_WARMUP=${WRK_WARMUP:-3s}
QUIET_MAX=${QUIET_MAX:-25}
QUIET_WAIT=${QUIET_WAIT:-120}
QUERY=${QUERY:-spånskiva}

for t in go python3 curl wrk; do command -v "$t" >/dev/null || { echo "measure.sh: $t is required" >&2; exit 1; }; done
for f in 02.06.000-sv-se.json 02.07.000-en-gb.json; do
  [ -r "$EXPORTS/$f" ] || { echo "measure.sh: $EXPORTS/$f not found (set CLIMATESEARCH_SHARED)" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/climatesearch-mcp-perf.XXXXXX)
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }

# quiet: wait until the machine is nearly idle; prints the busy % it saw.
quiet() {
  python3 - "$QUIET_MAX" "$QUIET_WAIT" <<'PY'
import sys, time
limit, wait = float(sys.argv[1]), float(sys.argv[2])
def snap():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v), v[3] + v[4]
end = time.time() + wait
while True:
    t0, i0 = snap(); time.sleep(0.5); t1, i1 = snap()
    busy = 100.0 * (1 - (i1 - i0) / max(1, t1 - t0))
    if busy <= limit or time.time() > end:
        print(f"{busy:.0f}")
        break
PY
}

# parse a wrk --latency output and the server's CPU ticks spent during it:
# "p50 p99 rps non2xx cpu_us_per_request"
parse() {
  python3 - "$1" "$2" <<'PY'
import os, re, sys
t = open(sys.argv[1]).read()
ticks = float(sys.argv[2])
def ms(s):
    v, u = re.match(r"([\d.]+)(us|ms|s)", s).groups()
    return float(v) * {"us": 0.001, "ms": 1, "s": 1000}[u]
p = dict(re.findall(r"^\s+(50|99)%\s+(\S+)", t, re.M))
rps = re.search(r"Requests/sec:\s+([\d.]+)", t).group(1)
n = int(re.search(r"(\d+) requests in", t).group(1))
m = re.search(r"Non-2xx or 3xx responses: (\d+)", t)
cpu = ticks / os.sysconf("SC_CLK_TCK") * 1e6 / max(1, n)
print(f"{ms(p['50']):.2f} {ms(p['99']):.2f} {float(rps):.0f} {m.group(1) if m else 0} {cpu:.0f}")
PY
}

# cputicks: utime+stime of the service so far
cputicks() { awk '{print $14 + $15}' "/proc/$SVC/stat"; }

log "building the binary from the working tree"
go build -o "$WORK/climatesearch" ./cmd/climatesearch

# The publisher stand-in: the real exports at the JSON API's paths.
mkdir -p "$WORK/pub/api/Klimat/v2/GetAllResources/latest/sv" "$WORK/pub/api/Klimat/v2/GetAllResources/latest/en"
cp "$EXPORTS/02.06.000-sv-se.json" "$WORK/pub/api/Klimat/v2/GetAllResources/latest/sv/json"
cp "$EXPORTS/02.07.000-en-gb.json" "$WORK/pub/api/Klimat/v2/GetAllResources/latest/en/json"
PUB_PORT=$(free_port)
(cd "$WORK/pub" && exec python3 -m http.server "$PUB_PORT" --bind 127.0.0.1 >/dev/null 2>&1) &
PIDS+=($!)

PORT=$(free_port)
BASE="http://127.0.0.1:$PORT"
SERVICE_ADDR="127.0.0.1:$PORT" SERVICE_DATA_DIR="$WORK/data" SERVICE_LOG_LEVEL=warn SERVICE_LOG_FORMAT=json \
  SERVICE_UPSTREAM_URL="http://127.0.0.1:$PUB_PORT" SERVICE_EXCEL_URL_SV="http://127.0.0.1:$PUB_PORT/none-sv.xlsx" \
  SERVICE_EXCEL_URL_EN="http://127.0.0.1:$PUB_PORT/none-en.xlsx" SERVICE_BOOT_INGEST=false SERVICE_INGEST_INTERVAL=0 \
  "$WORK/climatesearch" 2>"$WORK/service.log" &
SVC=$!
PIDS+=($SVC)
for _ in $(seq 1 600); do curl -fs "$BASE/readyz" >/dev/null 2>&1 && break; sleep 0.05; done
curl -fs "$BASE/readyz" >/dev/null || { cat "$WORK/service.log" >&2; exit 1; }
n=$(curl -fs -X POST "$BASE/admin/ingest/run?catalog=national" | python3 -c 'import json,sys; print(json.load(sys.stdin)["seen"])')
log "ingested $n resources"

# One MCP session, opened as a client opens it.
H=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
SESSION=$(curl -fsi "${H[@]}" "$BASE/mcp" \
  -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"measure.sh","version":"1"}}}' |
  tr -d '\r' | awk 'tolower($1) == "mcp-session-id:" {print $2}')
[ -n "$SESSION" ] || { echo "measure.sh: no MCP session" >&2; exit 1; }
curl -fs "${H[@]}" -H "Mcp-Session-Id: $SESSION" -H 'Mcp-Protocol-Version: 2025-11-25' "$BASE/mcp" \
  -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' >/dev/null
export MCP_SESSION=$SESSION QUERY

# check: the MCP answer is a successful tool result equal to REST's.
check() {
  local mcp rest
  mcp=$(curl -fs "${H[@]}" -H "Mcp-Session-Id: $SESSION" -H 'Mcp-Protocol-Version: 2025-11-25' "$BASE/mcp" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search_climate_data\",\"arguments\":{\"query\":\"$QUERY\"}}}")
  rest=$(curl -fs "$BASE/api/search?q=$(python3 -c 'import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1]))' "$QUERY")&vector=true")
  python3 - "$mcp" "$rest" <<'PY'
import json, sys
m = json.loads(sys.argv[1])["result"]
assert not m.get("isError") and m["structuredContent"] == json.loads(sys.argv[2]), "MCP answer differs from REST"
PY
}
sleep 3 # the full-text index settles in the background after an ingest
check

Q=$(python3 -c 'import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1]))' "$QUERY")
declare -A ARGS=(
  [mcp]="-s test/mcp/perf/tools-call.lua $BASE/mcp"
  [rest-vector]="$BASE/api/search?q=$Q&vector=true"
  [rest]="$BASE/api/search?q=$Q"
)
ORDER=(mcp rest-vector rest)

run() { # run NAME MODE OUTFILE; prints "busy% ticks"
  local name=$1 mode=$2 out=$3 busy t0
  # shellcheck disable=SC2086
  wrk -t"$WRK_THREADS" -c"$WRK_CONNS" -d"$WRK_WARMUP" ${ARGS[$name]} >/dev/null
  busy=$(quiet)
  t0=$(cputicks)
  if [ "$mode" = loaded ]; then
    # shellcheck disable=SC2086
    wrk -t"$WRK_THREADS" -c"$WRK_CONNS" -d"$WRK_DURATION" --latency ${ARGS[$name]} >"$out"
  else
    # shellcheck disable=SC2086
    wrk -t1 -c1 -d"$SOLO_DURATION" --latency ${ARGS[$name]} >"$out"
  fi
  echo "$busy $(($(cputicks) - t0))"
}

declare -A RES
for mode in loaded solo; do
  for ((r = 1; r <= RUNS; r++)); do
    for name in "${ORDER[@]}"; do # interleaved, so drift hits all three alike
      read -r busy ticks <<<"$(run "$name" "$mode" "$WORK/$name-$mode-$r.txt")"
      read -r p50 p99 rps bad cpu <<<"$(parse "$WORK/$name-$mode-$r.txt" "$ticks")"
      [ "$bad" = 0 ] || { echo "measure.sh: $bad non-2xx answers in $name $mode run $r" >&2; exit 1; }
      RES[$name-$mode]+="$p50 $p99 $rps $cpu $busy"$'\n'
      log "$mode $name run $r: p50 ${p50} ms, p99 ${p99} ms, ${rps} req/s, ${cpu} µs CPU/req (machine ${busy}% busy before)"
    done
  done
done
check

# median over runs of each column
med() { printf '%s' "${RES[$1]}" | python3 -c '
import sys, statistics
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
c = list(zip(*rows))
print(f"{statistics.median(c[0]):.2f} {statistics.median(c[1]):.2f} {statistics.median(c[2]):.0f} {statistics.median(c[3]):.0f} {max(c[4]):.0f}")'; }

echo "## MCP \`tools/call\` latency (streamable HTTP) next to REST"
echo
echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2),"
echo "binary built from the working tree, $n national resources, hash embedder, no reranker, \`SERVICE_LOG_LEVEL=warn\`."
echo "Query \`$QUERY\`, 10 hits. Median of $RUNS runs of each; runs interleaved. wrk and the server share the machine."
echo
echo "| Request | load | p50 | p99 | req/s | server CPU/req |"
echo "|---|---|---|---|---|---|"
for mode in loaded solo; do
  for name in "${ORDER[@]}"; do
    read -r p50 p99 rps cpu busy <<<"$(med "$name-$mode")"
    case $name in
      mcp) label="MCP \`tools/call search_climate_data {\"query\":\"$QUERY\"}\` (POST /mcp)" ;;
      rest-vector) label="REST \`GET /api/search?q=$QUERY&vector=true\` (the same question)" ;;
      rest) label="REST \`GET /api/search?q=$QUERY\` (REST default: full text only)" ;;
    esac
    if [ "$mode" = loaded ]; then m="wrk -t$WRK_THREADS -c$WRK_CONNS, $WRK_DURATION"; else m="one client (-t1 -c1), $SOLO_DURATION"; fi
    echo "| $label | $m | $p50 ms | $p99 ms | $rps | $cpu µs |"
  done
done
echo
echo "Command: \`test/mcp/perf/measure.sh\` (RUNS=$RUNS). The MCP answer was checked equal to REST's before and after the runs."
