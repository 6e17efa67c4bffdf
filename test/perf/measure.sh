#!/usr/bin/env bash
# test/perf/measure.sh: measures the figures of docs/PERFORMANCE.md on this
# machine and prints a report (also written to $OUT/report.md).
#
#   test/perf/measure.sh                          # everything: ~10 minutes on an
#                                                 # idle 2-core machine, longer on
#                                                 # a busy one (see QUIET_* below)
#   SOURCE=b39766c test/perf/measure.sh           # another commit
#   RUNS=3 WRK_DURATION=5s test/perf/measure.sh   # quicker, noisier
#
# What it measures (the sections of docs/PERFORMANCE.md):
#   1. boot-to-ready: process start until GET /api/resources holds the data,
#      (a) publisher unreachable, empty data dir -> demo snapshot (>= 40),
#      (b) real exports served locally, empty data dir -> 235,
#      (c) restart on a full store, SERVICE_BOOT_INGEST=false -> /healthz 200
#          and 235 from the store. $RUNS runs each, min/median/max; also
#      (d) process start and package init (GODEBUG=inittrace=1 BIN -h).
#   2. POST /admin/ingest/run?catalog=national on an empty store (235 upserts)
#      and again (unchanged): IngestResult finished_at - started_at and the
#      client's wall time, $RUNS runs, a fresh store for each.
#   3. peak RSS (/usr/bin/time -v) of one process over a boot (with ingest), a
#      POST ingest and every load run of 4.
#   4. latency under load with wrk over loopback (wrk and the server share the
#      machine's cores), and the latency of a lone client (-t1 -c1).
#   5. go benchmarks: ./adapters/blugeindex/ and the in-process endpoint,
#      ingest and index-rebuild benchmarks of ./test/perf/, with CPU profiles
#      (pprof -top -cum) that say what dominates.
#
# Needs: Go, python3 (helper test/perf/perfhelper.py, and `python3 -m
# http.server` as the publisher), curl, /usr/bin/time, wrk; wrk and time are
# installed with apt-get when missing. The publisher's exports are read from
# $CLIMATESEARCH_SHARED/data/boverket (default: ../shared next to the repo):
# 02.06.000-sv-se.json as .../latest/sv/json and 02.07.000-en-gb.json as
# .../latest/en/json (235 resources merged); the workbook URLs point at a path
# that answers 404 so the Excel fallback fails fast.
#
# Idempotent: everything lives in a fresh mktemp directory under /tmp (binary,
# data dirs, the served exports) that is removed at exit, and every server
# gets a free port. Only processes this script started are stopped, by pid.
# Raw outputs (wrk, pprof, time -v, go test) are kept in $OUT (default
# /tmp/climatesearch-perf), which is emptied at the start of each run.
#
# Source: SOURCE=head (default) measures the last commit, SOURCE=<commit> any
# commit, exported with `git archive` into the work directory (read-only for
# the repository; this directory's *.go benchmark files are copied in), so
# other people's edits in progress neither break nor blur the figures;
# SOURCE=worktree builds and benchmarks a copy of the working tree as it is.
#
# Shared machine: before every timed run the script waits until other
# processes leave the machine nearly idle (at most QUIET_MAX % of all cores
# busy over half a second, giving up after QUIET_WAIT s, and after
# QUIET_BUDGET s of waiting in all no longer waits); the report says how often
# it gave up, and for every wrk run how much CPU other processes used (machine
# busy time minus the server's and wrk's own).
#
# Settings (environment): RUNS (10), WRK_THREADS (2), WRK_CONNS (16),
# WRK_DURATION (15s), WRK_WARMUP (3s), SOLO_DURATION (10s), QUIET_MAX (25),
# QUIET_WAIT (120), QUIET_BUDGET (1800), OUT, KEEP=1 keeps the work
# directory, SKIP_BENCH=1 skips section 5.
set -euo pipefail

cd "$(dirname "$0")/../.."
REPO=$(pwd)
HELPER="$REPO/test/perf/perfhelper.py"
SHARED=$(cd "${CLIMATESEARCH_SHARED:-$REPO/../shared}" && pwd)
export CLIMATESEARCH_SHARED="$SHARED"
SOURCE=${SOURCE:-head}
EXPORTS="$SHARED/data/boverket"
RUNS=${RUNS:-10}
WRK_THREADS=${WRK_THREADS:-2}
WRK_CONNS=${WRK_CONNS:-16}
WRK_DURATION=${WRK_DURATION:-15s}
WRK_WARMUP=${WRK_WARMUP:-3s}
SOLO_DURATION=${SOLO_DURATION:-10s}
OUT=${OUT:-/tmp/climatesearch-perf}
QUIET_MAX=${QUIET_MAX:-25}
QUIET_WAIT=${QUIET_WAIT:-120}
QUIET_BUDGET=${QUIET_BUDGET:-1800}

log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }
die() { log "measure.sh: $*"; exit 1; }

# --- tools -------------------------------------------------------------------
apt_install() {
  local sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get install -y -qq "$@" >/dev/null 2>&1 ||
    { "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq "$@" >/dev/null; }
}
command -v wrk >/dev/null || { log "installing wrk"; apt_install wrk; }
[ -x /usr/bin/time ] || { log "installing time"; apt_install time; }
for t in go python3 curl wrk; do command -v "$t" >/dev/null || die "$t is required"; done
for f in 02.06.000-sv-se.json 02.07.000-en-gb.json; do
  [ -r "$EXPORTS/$f" ] || die "export $EXPORTS/$f not found (set CLIMATESEARCH_SHARED)"
done

# --- work directory, process tracking, cleanup --------------------------------
WORK=$(mktemp -d /tmp/climatesearch-perf-work.XXXXXX)
mkdir -p "$WORK/pids"
rm -rf "$OUT" && mkdir -p "$OUT"

track() { : >"$WORK/pids/$1"; }
untrack() { rm -f "$WORK/pids/$1"; }
# gone PID: the process has exited (or is a zombie waiting for its parent).
gone() { [ ! -e "/proc/$1" ] || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
# stop_pid PID: SIGTERM a process this script started; SIGKILL it if it still
# runs 30 s later (a shutdown that hangs is reported, not waited for).
stop_pid() {
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || { untrack "$pid"; return 0; }
  for ((i = 0; i < 600; i++)); do
    gone "$pid" && { untrack "$pid"; return 0; }
    sleep 0.05
  done
  log "warning: pid $pid still running 30 s after SIGTERM; sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  untrack "$pid"
}
cleanup() {
  local f
  for f in "$WORK"/pids/*; do
    [ -e "$f" ] && stop_pid "${f##*/}"
  done
  wait 2>/dev/null || true
  if [ "${KEEP:-}" = 1 ]; then log "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# stop_bg PID: stop a background job of this shell and collect its status.
stop_bg() {
  stop_pid "$1"
  wait "$1" 2>/dev/null || true
}

REPORT="$OUT/report.md"
say() { printf '%s\n' "$*" | tee -a "$REPORT"; }

# settle [WINDOW_S]: wait until other processes leave the machine nearly idle,
# at most QUIET_WAIT s per call and QUIET_BUDGET s over the whole script.
# Gave-ups are counted in $WORK/unsettled (reset per section by unsettled).
QUIET_LEFT=$QUIET_BUDGET
settle() {
  local r t0=$SECONDS wait=$QUIET_WAIT
  ((QUIET_LEFT < wait)) && wait=$QUIET_LEFT
  r=$(python3 "$HELPER" quiet --max "$QUIET_MAX" --window "${1:-0.5}" --wait "$wait")
  QUIET_LEFT=$((QUIET_LEFT - (SECONDS - t0)))
  ((QUIET_LEFT > 0)) || QUIET_LEFT=0
  case "$r" in
  *gave*) echo "$r" >>"$WORK/unsettled"; log "warning: machine still ${r%% *}% busy (waited ${wait}s); measuring anyway" ;;
  esac
}
# unsettled: prints how many settle calls gave up since the last call, and resets.
unsettled() {
  local n=0
  [ -e "$WORK/unsettled" ] && n=$(wc -l <"$WORK/unsettled")
  rm -f "$WORK/unsettled"
  echo "$n"
}

# --- source and build -------------------------------------------------------------
# SOURCE=head or a commit: exported read-only with git archive (plus this
# directory's benchmark files); SOURCE=worktree: a copy of the tree as it is.
case "$SOURCE" in
worktree)
  # a snapshot, so edits made while the script runs do not reach section 5
  SRC="$WORK/src"
  mkdir -p "$SRC"
  tar -C "$REPO" --exclude=./.git --exclude=./bin --exclude=./data -cf - . | tar -x -C "$SRC"
  COMMIT="working tree at $(date -u +%H:%M) UTC on top of $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$REPO" status --porcelain 2>/dev/null | grep -qv ' test/perf/' && echo ', with uncommitted changes')"
  ;;
*)
  rev=$SOURCE
  [ "$rev" = head ] && rev=HEAD
  git -C "$REPO" rev-parse --verify -q "$rev^{commit}" >/dev/null || die "SOURCE=$SOURCE is not head, worktree or a commit"
  SRC="$WORK/src"
  mkdir -p "$SRC"
  git -C "$REPO" archive --format=tar "$rev" | tar -x -C "$SRC"
  mkdir -p "$SRC/test/perf"
  cp "$REPO"/test/perf/*.go "$SRC/test/perf/"
  COMMIT="$(git -C "$REPO" rev-parse --short "$rev") $(git -C "$REPO" log -1 --format='%s' "$rev" | cut -c1-80) (git archive $rev)"
  ;;
esac
cd "$SRC"
BIN="$WORK/climatesearch"
log "building $BIN"
go build -o "$BIN" ./cmd/climatesearch || die "build failed at $COMMIT; try SOURCE=<an older commit> or SOURCE=worktree"

# --- the publisher, served locally --------------------------------------------
UP_DIR="$WORK/publisher"
mkdir -p "$UP_DIR/api/Klimat/v2/GetAllResources/latest/sv" "$UP_DIR/api/Klimat/v2/GetAllResources/latest/en"
cp "$EXPORTS/02.06.000-sv-se.json" "$UP_DIR/api/Klimat/v2/GetAllResources/latest/sv/json"
cp "$EXPORTS/02.07.000-en-gb.json" "$UP_DIR/api/Klimat/v2/GetAllResources/latest/en/json"
UP_PORT=$(free_port)
UP="http://127.0.0.1:$UP_PORT"
python3 -m http.server --bind 127.0.0.1 "$UP_PORT" --directory "$UP_DIR" >"$WORK/publisher.log" 2>&1 &
UP_PID=$!
track "$UP_PID"
for _ in $(seq 100); do
  curl -fs -o /dev/null "$UP/api/Klimat/v2/GetAllResources/latest/sv/json" && break
  sleep 0.05
done
curl -fs -o /dev/null "$UP/api/Klimat/v2/GetAllResources/latest/en/json" || die "local publisher did not start"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$UP/missing-sv.xlsx")" = 404 ] || die "workbook path should 404"
CLOSED="http://127.0.0.1:$(free_port)" # nothing listens there

# server_env PORT DATA_DIR UPSTREAM EXCEL_BASE [extra VAR=value...]
server_env() {
  local port=$1 dir=$2 up=$3 xl=$4
  shift 4
  SENV=(SERVICE_ADDR="127.0.0.1:$port" SERVICE_DATA_DIR="$dir" SERVICE_UPSTREAM_URL="$up"
    SERVICE_EXCEL_URL_SV="$xl/missing-sv.xlsx" SERVICE_EXCEL_URL_EN="$xl/missing-en.xlsx"
    SERVICE_LOG_LEVEL=warn SERVICE_LOG_FORMAT=json "$@")
}

# --- machine ------------------------------------------------------------------
: >"$REPORT"
say "# climatesearch performance run"
say ""
say "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
say "- machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(awk '/MemTotal/ {printf "%.1f GiB RAM", $2/1048576}' /proc/meminfo), $(uname -sr)"
say "- $(go version)"
say "- $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2)"
say "- source: $COMMIT"
say "- binary: go build -o $BIN ./cmd/climatesearch"
say "- publisher: python3 -m http.server --bind 127.0.0.1 $UP_PORT --directory $UP_DIR"
say "- runs: $RUNS; load average at start: $(cut -d" " -f1-3 /proc/loadavg)"
say ""

# --- 1. boot to ready -----------------------------------------------------------
boot_runs() { # NAME MIN_RESOURCES SETUP_FN (SETUP_FN RUN fills SENV)
  local name=$1 min=$2 setup=$3 i res
  : >"$WORK/$name.healthz"
  : >"$WORK/$name.ready"
  : >"$WORK/$name.stop"
  for i in $(seq "$RUNS"); do
    "$setup" "$i"
    settle
    res=$(env "${SENV[@]}" python3 "$HELPER" boot --pid-dir "$WORK/pids" --log "$WORK/$name.log" \
      --health "http://${SENV[0]#SERVICE_ADDR=}/healthz" --list "http://${SENV[0]#SERVICE_ADDR=}/api/resources" --min "$min" \
      -- "$BIN")
    echo "$res" >>"$OUT/boot-$name.jsonl"
    python3 -c 'import json,sys; r=json.loads(sys.argv[1]); [print(r[k], file=open(sys.argv[2] + "." + k.split("_")[0], "a")) for k in ("healthz_ms", "ready_ms", "stop_ms")]' \
      "$res" "$WORK/$name"
    [ "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["exit"])' "$res")" = 0 ] ||
      log "warning: $name run $i: server exit status not 0: $res"
  done
}

setup_demo() {
  local dir="$WORK/data-demo-$1"
  rm -rf "$dir"
  server_env "$(free_port)" "$dir" "$CLOSED" "$CLOSED"
}
setup_real() {
  local dir="$WORK/data-real-$1"
  rm -rf "$dir"
  server_env "$(free_port)" "$dir" "$UP" "$UP"
}
FULL="$WORK/data-full"
setup_restart() {
  server_env "$(free_port)" "$FULL" "$UP" "$UP" SERVICE_BOOT_INGEST=false
}

log "1. boot to ready"
unsettled >/dev/null
boot_runs demo 40 setup_demo
boot_runs real 235 setup_real
# fill the store once, then restart on it RUNS times
server_env "$(free_port)" "$FULL" "$UP" "$UP"
env "${SENV[@]}" python3 "$HELPER" boot --pid-dir "$WORK/pids" --log "$WORK/fill.log" \
  --health "http://${SENV[0]#SERVICE_ADDR=}/healthz" --list "http://${SENV[0]#SERVICE_ADDR=}/api/resources" --min 235 -- "$BIN" >/dev/null
boot_runs restart 235 setup_restart
# the same restarts at info level, only to read how long the index rebuild took
: >"$WORK/rebuild.log"
for i in $(seq "$RUNS"); do
  setup_restart "$i"
  env "${SENV[@]}" SERVICE_LOG_LEVEL=info python3 "$HELPER" boot --pid-dir "$WORK/pids" --log "$WORK/rebuild.log" \
    --health "http://${SENV[0]#SERVICE_ADDR=}/readyz" -- "$BIN" >/dev/null
done
python3 "$HELPER" logms "$WORK/rebuild.log" "search index rebuilt from the store" took >"$WORK/rebuild.ms"
settle
INITTRACE=$(python3 "$HELPER" inittrace "$BIN" "$RUNS")
say "## 1. Boot to ready (ms from process start; polled every 2 ms)"
say ""
say "quiet check gave up before $(unsettled) of the runs of this section"
say "helper: python3 test/perf/perfhelper.py boot --health http://\$ADDR/healthz --list http://\$ADDR/api/resources --min N -- $BIN"
say ""
say "(a) publisher unreachable, empty data dir, demo snapshot (>= 40 resources):"
say "    env SERVICE_ADDR=127.0.0.1:\$PORT SERVICE_DATA_DIR=\$EMPTY_DIR SERVICE_UPSTREAM_URL=$CLOSED SERVICE_EXCEL_URL_SV=$CLOSED/missing-sv.xlsx SERVICE_EXCEL_URL_EN=$CLOSED/missing-en.xlsx SERVICE_LOG_LEVEL=warn SERVICE_LOG_FORMAT=json $BIN"
say "    /healthz 200: $(python3 "$HELPER" stats "$WORK/demo.healthz")"
say "    ready:        $(python3 "$HELPER" stats "$WORK/demo.ready")"
say "    shutdown (SIGTERM to exit, after the ready check): $(python3 "$HELPER" stats "$WORK/demo.stop")"
say "(b) real exports served locally, empty data dir (235 resources):"
say "    env SERVICE_ADDR=127.0.0.1:\$PORT SERVICE_DATA_DIR=\$EMPTY_DIR SERVICE_UPSTREAM_URL=$UP SERVICE_EXCEL_URL_SV=$UP/missing-sv.xlsx SERVICE_EXCEL_URL_EN=$UP/missing-en.xlsx SERVICE_LOG_LEVEL=warn SERVICE_LOG_FORMAT=json $BIN"
say "    /healthz 200: $(python3 "$HELPER" stats "$WORK/real.healthz")"
say "    ready:        $(python3 "$HELPER" stats "$WORK/real.ready")"
say "    shutdown (SIGTERM to exit, after the ready check): $(python3 "$HELPER" stats "$WORK/real.stop")"
say "(c) restart on a full store, boot ingest off (/healthz 200, then 235 from the store):"
say "    env ... SERVICE_DATA_DIR=$FULL SERVICE_BOOT_INGEST=false $BIN"
say "    /healthz 200: $(python3 "$HELPER" stats "$WORK/restart.healthz")"
say "    ready:        $(python3 "$HELPER" stats "$WORK/restart.ready")"
say "    shutdown (SIGTERM to exit, after the ready check): $(python3 "$HELPER" stats "$WORK/restart.stop")"
say "    of which the search-index rebuild before listening (log field took, same restarts at SERVICE_LOG_LEVEL=info): $(python3 "$HELPER" stats "$WORK/rebuild.ms")"
say "(d) process start and package init, no store: GODEBUG=inittrace=1 $BIN -h"
say "    $INITTRACE"
say ""

# --- 2. ingest ----------------------------------------------------------------------
log "2. ingest"
: >"$WORK/first.server"; : >"$WORK/first.wall"; : >"$WORK/again.server"; : >"$WORK/again.wall"
for i in $(seq "$RUNS"); do
  port=$(free_port)
  server_env "$port" "$WORK/data-ingest-$i" "$UP" "$UP" SERVICE_BOOT_INGEST=false
  env "${SENV[@]}" "$BIN" >>"$WORK/ingest.log" 2>&1 &
  pid=$!
  track "$pid"
  python3 "$HELPER" wait --health "http://127.0.0.1:$port/readyz" >/dev/null
  for which in first again; do
    settle
    wall=$(curl -fsS -X POST -o "$WORK/ingest-$which.json" -w '%{time_total}' "http://127.0.0.1:$port/admin/ingest/run?catalog=national")
    python3 -c "print(round($wall*1000, 1))" >>"$WORK/$which.wall"
    line=$(python3 "$HELPER" ingest "$WORK/ingest-$which.json")
    echo "$line wall_ms=$(tail -1 "$WORK/$which.wall")" >>"$OUT/ingest-$which.txt"
    echo "${line%% *}" >>"$WORK/$which.server"
  done
  stop_bg "$pid"
done
grep -q 'upserted=235 ' "$OUT/ingest-first.txt" || die "first ingest did not upsert 235: $(head -1 "$OUT/ingest-first.txt")"
grep -q 'unchanged=235 ' "$OUT/ingest-again.txt" || die "second ingest not unchanged: $(head -1 "$OUT/ingest-again.txt")"
say "## 2. Ingest (POST /admin/ingest/run?catalog=national, ms; a fresh empty store per run)"
say ""
say "quiet check gave up before $(unsettled) of the $((2 * RUNS)) ingests"
say "    env SERVICE_ADDR=127.0.0.1:\$PORT SERVICE_DATA_DIR=\$EMPTY_DIR SERVICE_UPSTREAM_URL=$UP SERVICE_EXCEL_URL_SV=$UP/missing-sv.xlsx SERVICE_EXCEL_URL_EN=$UP/missing-en.xlsx SERVICE_LOG_LEVEL=warn SERVICE_LOG_FORMAT=json SERVICE_BOOT_INGEST=false $BIN &"
say "    curl -fsS -X POST -w '%{time_total}' 'http://127.0.0.1:\$PORT/admin/ingest/run?catalog=national'   # twice"
say "first (235 upserted):    finished_at-started_at $(python3 "$HELPER" stats "$WORK/first.server")"
say "                         client wall time       $(python3 "$HELPER" stats "$WORK/first.wall")"
say "again (235 unchanged):   finished_at-started_at $(python3 "$HELPER" stats "$WORK/again.server")"
say "                         client wall time       $(python3 "$HELPER" stats "$WORK/again.wall")"
say ""

# --- 3 + 4. one process under /usr/bin/time: boot, ingest, load ------------------
log "3+4. load (this takes a few minutes)"
unsettled >/dev/null
port=$(free_port)
BASE="http://127.0.0.1:$port"
server_env "$port" "$WORK/data-load" "$UP" "$UP"
env "${SENV[@]}" /usr/bin/time -v -o "$OUT/time-v.txt" "$BIN" >"$WORK/load.log" 2>&1 &
TPID=$!
track "$TPID"
SPID=
for _ in $(seq 200); do
  SPID=$(awk '{print $1}' "/proc/$TPID/task/$TPID/children" 2>/dev/null) || true
  [ -n "$SPID" ] && break
  sleep 0.01
done
[ -n "$SPID" ] || die "server under /usr/bin/time did not start"
track "$SPID"
python3 "$HELPER" wait --health "$BASE/healthz" --list "$BASE/api/resources" --min 235 >/dev/null
HWM_BOOT=$(python3 "$HELPER" hwm "$SPID")
curl -fsS -X POST -o "$WORK/load-ingest.json" "$BASE/admin/ingest/run?catalog=national"
HWM_INGEST=$(python3 "$HELPER" hwm "$SPID")

ENDPOINTS=(
  "/api/resources/6000000000"
  "/api/resources/national:6000000000"
  "/api/search?q=sp%C3%A5nskiva"
  "/api/search?q=betong%20C30%2F37"
  "/api/resources"
)
declare -A LOADED SOLO SIZE CPU HWM
# wrk_run OUTFILE ARGS...: runs wrk under /usr/bin/time; sets SRV_MS to the
# server's CPU time during the run and OTHERS_PCT to the share of the machine
# taken by other work meanwhile: machine busy time (steal included) minus the
# server's and wrk's CPU, over the wall time between the two snapshots.
wrk_run() {
  local out=$1 s0 s1
  shift
  settle
  s0=$(python3 "$HELPER" snap "$SPID")
  /usr/bin/time -f '%e %U %S' -o "$WORK/wrk.time" wrk "$@" >"$out"
  s1=$(python3 "$HELPER" snap "$SPID")
  read -r SRV_MS OTHERS_PCT < <(python3 -c 'import os, sys
t0, b0, c0 = map(float, sys.argv[1].split())
t1, b1, c1 = map(float, sys.argv[2].split())
e, u, s = map(float, open(sys.argv[3]).read().split()[-3:])
other = (b1 - b0) - (c1 - c0) - (u + s) * 1000
print(round(c1 - c0), max(0, round(other / ((t1 - t0) * os.cpu_count()) * 100)))' "$s0" "$s1" "$WORK/wrk.time")
}
n=0
for ep in "${ENDPOINTS[@]}"; do
  n=$((n + 1))
  read -r code size < <(curl -s -o /dev/null -w '%{http_code} %{size_download}\n' "$BASE$ep")
  [ "$code" = 200 ] || die "GET $ep answered $code"
  SIZE[$ep]=$size
  wrk -t"$WRK_THREADS" -c"$WRK_CONNS" -d"$WRK_WARMUP" "$BASE$ep" >/dev/null
  wrk_run "$OUT/wrk-$n-loaded.txt" -t"$WRK_THREADS" -c"$WRK_CONNS" -d"$WRK_DURATION" --latency "$BASE$ep"
  reqs=$(grep -oE '^ *[0-9]+ requests in' "$OUT/wrk-$n-loaded.txt" | grep -oE '[0-9]+')
  CPU[$ep]=$((SRV_MS * 1000 / reqs))
  LOADED[$ep]="$(python3 "$HELPER" wrk "$OUT/wrk-$n-loaded.txt"), other processes ${OTHERS_PCT}%"
  wrk_run "$OUT/wrk-$n-solo.txt" -t1 -c1 -d"$SOLO_DURATION" --latency "$BASE$ep"
  SOLO[$ep]="$(python3 "$HELPER" wrk "$OUT/wrk-$n-solo.txt"), other processes ${OTHERS_PCT}%"
  HWM[$ep]=$(python3 "$HELPER" hwm "$SPID")
done
stop_pid "$SPID"
wait "$TPID" || true
untrack "$TPID"
PEAK=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$OUT/time-v.txt")

say "## 3. Peak RSS (one process: boot with ingest, a POST ingest, every load run below)"
say ""
say "    env SERVICE_ADDR=127.0.0.1:$port SERVICE_DATA_DIR=\$EMPTY_DIR SERVICE_UPSTREAM_URL=$UP SERVICE_EXCEL_URL_SV=$UP/missing-sv.xlsx SERVICE_EXCEL_URL_EN=$UP/missing-en.xlsx SERVICE_LOG_LEVEL=warn SERVICE_LOG_FORMAT=json /usr/bin/time -v $BIN"
say "Maximum resident set size: $PEAK KiB ($(python3 -c "print(round($PEAK/1024, 1))") MiB)"
say "VmHWM (/proc/PID/status) after boot+ingest: $HWM_BOOT KiB; after the POST ingest: $HWM_INGEST KiB; after the load runs of each endpoint: $(for ep in "${ENDPOINTS[@]}"; do printf '%s ' "${HWM[$ep]}"; done)KiB"
say ""
say "## 4. Latency over loopback (wrk and the server share the $(nproc) cores; SERVICE_LOG_LEVEL=warn)"
say ""
say "each endpoint: a ${WRK_WARMUP} warm-up, then"
say "    wrk -t$WRK_THREADS -c$WRK_CONNS -d$WRK_DURATION --latency '$BASE\$ENDPOINT'   # loaded"
say "    wrk -t1 -c1 -d$SOLO_DURATION --latency '$BASE\$ENDPOINT'       # one client, one request at a time"
say "server CPU per request = (utime+stime of the server during the loaded run) / requests;"
say "other processes = machine busy time during the run (hypervisor steal included) minus the server's and wrk's CPU, as % of all cores"
say "quiet check gave up before $(unsettled) of the $((2 * ${#ENDPOINTS[@]})) runs"
say ""
for ep in "${ENDPOINTS[@]}"; do
  say "GET $ep  (${SIZE[$ep]} bytes, server CPU ${CPU[$ep]} us/request)"
  say "    loaded: ${LOADED[$ep]}"
  say "    solo:   ${SOLO[$ep]}"
done
say ""

# --- 5. go benchmarks and profiles -------------------------------------------------
if [ "${SKIP_BENCH:-}" != 1 ]; then
  log "5. go benchmarks"
  say "## 5. Go benchmarks"
  say ""
  unsettled >/dev/null
  settle 2
  say "    go test -run '^\$' -bench . -benchmem ./adapters/blugeindex/"
  go test -run '^$' -bench . -benchmem ./adapters/blugeindex/ 2>&1 | tee "$OUT/bench-blugeindex.txt" | grep -E '^Benchmark' | sed 's/^/    /' | tee -a "$REPORT"
  say ""
  settle 2
  say "    go test -run '^\$' -bench . -benchmem ./test/perf/"
  go test -run '^$' -bench . -benchmem ./test/perf/ 2>&1 | tee "$OUT/bench-perf.txt" | grep -E '^Benchmark' | sed 's/^/    /' | tee -a "$REPORT"
  say ""
  say "CPU profiles (share of all samples, pprof -top -cum; test binaries in $WORK):"
  prof() { # name pkg bench-regex benchtime cum-spec...
    local name=$1 pkg=$2 re=$3 bt=$4
    shift 4
    settle 2
    go test -run '^$' -bench "$re" -benchtime "$bt" -cpuprofile "$OUT/$name.cpu" -o "$WORK/$name.test" "$pkg" >"$OUT/$name.bench.txt" 2>&1
    go tool pprof -top -cum -nodecount=400 "$WORK/$name.test" "$OUT/$name.cpu" >"$OUT/$name.top.txt" 2>/dev/null
    say "    go test -run '^\$' -bench '$re' -benchtime $bt -cpuprofile $OUT/$name.cpu -o $WORK/$name.test $pkg"
    say "    go tool pprof -top -cum $WORK/$name.test $OUT/$name.cpu"
    say "      -> $(python3 "$HELPER" cum "$OUT/$name.top.txt" "$@")"
  }
  prof index-sv-word ./adapters/blugeindex/ 'Search/sv-word$' 3s \
    'analyze query=blugeindex.analyzeQuery' 'build query=blugeindex.buildQuery' 'bluge Reader.Search=bluge.\(\*Reader\).Search$' \
    'collect=TopNCollector\).Collect$' 'load stored _id=VisitStoredFields' 'GC=gcBgMarkWorker'
  for b in get-key search-spanskiva search-betong list; do
    prof "http-$b" ./test/perf/ "Endpoints/$b\$" 3s \
      'bluge index=blugeindex.\(\*Index\).Search$' 'store read=badgerstore.\(\*Store\).(Get|GetMany|Scan)$' \
      'of which JSON decode=badgerstore.decode$' 'JSON encode of the answer=render.WriteJSON$' 'GC=gcBgMarkWorker'
  done
  prof rebuild ./test/perf/ 'Rebuild$' 10x \
    'index upsert=blugeindex.\(\*Index\).Upsert$' 'bluge analysis=bluge.Document.Analyze$' 'segment build=ice.New$' \
    'store scan=badgerstore.\(\*Store\).Scan$' 'of which JSON decode=badgerstore.decode$' 'GC=gcBgMarkWorker'
  for b in first unchanged; do
    prof "ingest-$b" ./test/perf/ "Ingest/$b\$" 10x \
      'export fetch+decode=JSONSource\).fetchExport$' 'apply=ingest.\(\*Service\).applyLocked$' \
      'index upsert=blugeindex.\(\*Index\).Upsert$' 'bluge analysis=bluge.Document.Analyze$' \
      'store write=badgerstore.\(\*Store\).Apply$' 'store scan=badgerstore.\(\*Store\).Scan$' 'app boot (untimed)=perf.boot$' 'GC=gcBgMarkWorker'
  done
  say ""
fi
log "report: $REPORT (raw outputs in $OUT)"
