#!/usr/bin/env bash
# test/perf/scale.sh: the scale baseline of docs/PERFORMANCE.md section 12.
#
#   test/perf/scale.sh                 # sizes 10000 100000 (~10 minutes here)
#   test/perf/scale.sh 1000 10000      # any list of sizes
#   test/perf/scale.sh 1000000         # the million, opt-in (not run by default)
#
# For each size N it builds synthetic national resources with
# test/perf/scalegen (seed 1, batches of 10,000, the real exports'
# vocabulary), starts the binary on a fresh data directory
# (SERVICE_BOOT_INGEST=false, SERVICE_INGEST_INTERVAL=0, the default
# SERVICE_EMBEDDER=hash so that vector=true is real hybrid search and every
# ingest also embeds), and prints:
#   - ingest: POST /admin/resources per batch (curl's time_total), resources/s
#     over the sum of the batch times;
#   - peak RSS: the maximum of VmRSS sampled every 0.2 s during the ingest,
#     VmHWM after the ingest and after the searches;
#   - full-text and hybrid (vector=true) search p50/p99: wrk with ONE
#     connection (-t1 -c1, a lone client: service time, no queueing) for
#     $LAT_DURATION, cycling over a fixed list of 12 queries (lua);
#   - how long after the ingest the background vectors caught up (hybrid
#     search stops noting a backlog); what follows is measured after that;
#   - one changed resource: the median of 5 POSTs of a one-resource batch
#     whose A1-A3 values changed; unchanged: the median of 5 POSTs of a
#     one-resource batch identical to the stored one;
#   - restart: SIGTERM, then the time from exec until GET /healthz answers
#     200 on the same store (the server listens) and until GET /readyz answers
#     200 (the index has loaded in the background; reads answer 503 before)
#     (capped at $RESTART_CAP s; a process that exits or does not answer in
#     time is reported as such, with its exit status).
#
# Source: the last commit (git archive HEAD), so other people's edits in
# progress do not change the figures; SOURCE=worktree builds the working tree.
# Everything lives in a mktemp directory removed at exit; ports 18500-18599
# (loopback); only processes this script started are stopped, by pid.
# Settings: PORT (18510), LAT_DURATION (10s), RESTART_CAP (120), SEED (1),
# KEEP=1 keeps the work directory, SOURCE (head|worktree), KEEP_ANSWERS
# (false: every search is computed, which is what this script measures;
# true serves repeated queries from kept answers, the service's default).
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
. test/perf/offline.sh
SIZES=${*:-"10000 100000"}
PORT=${PORT:-18510}
ADDR=127.0.0.1:$PORT
LAT_DURATION=${LAT_DURATION:-10s}
RESTART_CAP=${RESTART_CAP:-120}
SEED=${SEED:-1}
SOURCE=${SOURCE:-head}
export CLIMATESEARCH_SHARED=$(cd "${CLIMATESEARCH_SHARED:-$REPO/../shared}" && pwd)
WORK=$(mktemp -d /tmp/climatesearch-scale.XXXXXX)
PID=
SAMPLER=
cleanup() {
	[ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null || true
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
	[ "${KEEP:-0}" = 1 ] && echo "kept $WORK" >&2 || rm -rf "$WORK"
}
trap cleanup EXIT
log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }

command -v wrk >/dev/null || { log "installing wrk"; apt-get install -y wrk >/dev/null; }
if [ "$SOURCE" = worktree ]; then SRC=$REPO; else
	mkdir "$WORK/src" && git archive HEAD | tar -x -C "$WORK/src" && SRC=$WORK/src
fi
log "building ($SOURCE, $(git rev-parse --short HEAD))"
(cd "$SRC" && go build -o "$WORK/climatesearch" ./cmd/climatesearch && go build -o "$WORK/scalegen" ./test/perf/scalegen)
BIN=$WORK/climatesearch

cat >"$WORK/queries.lua" <<'LUA'
local qs = {"sp%C3%A5nskiva", "betong%20C30%2F37", "glasull", "gipsskiva", "plywood", "mineralull",
  "armeringsst%C3%A5l", "concrete", "insulation", "f%C3%B6nster", "tegel", "diesel"}
local i = 0
local suffix = os.getenv("QSUFFIX") or ""
request = function()
  i = i % #qs + 1
  return wrk.format("GET", "/api/search?q=" .. qs[i] .. suffix)
end
LUA

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.4f\n", (a[NR/2]+a[NR/2+1])/2}'; }
kib() { awk -v k="$1" 'BEGIN {printf "%.0f MiB", k/1024}'; }
status() { awk -v f="$2" '$1==f":" {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

start() { # $1 data dir; sets PID
	serve_offline "$BIN" "$1" "$WORK/server.log" SERVICE_KEEP_ANSWERS="${KEEP_ANSWERS:-false}" SERVICE_LOG_FORMAT=json
}
wait_ok() { # $1 path (/healthz, /readyz), $2 cap in s; sets HEALTH to "S s", "never: exit N after S s" or "did not start within N s"; fails unless 200
	local t0 now rc
	t0=${T0:-$(date +%s.%N)}
	while :; do
		now=$(date +%s.%N)
		if curl -fs -o /dev/null "http://$ADDR$1"; then HEALTH=$(awk -v a="$t0" -v b="$now" 'BEGIN{printf "%.2f s", b-a}'); return 0; fi
		if ! kill -0 "$PID" 2>/dev/null; then
			rc=0; wait "$PID" || rc=$?; PID=
			HEALTH=$(awk -v a="$t0" -v b="$now" -v rc="$rc" 'BEGIN{printf "never: exit %d after %.1f s", rc, b-a}'); return 1
		fi
		if awk -v a="$t0" -v b="$now" -v c="$2" 'BEGIN{exit !(b-a>c)}'; then HEALTH="did not start within $2 s"; return 1; fi
		sleep 0.05
	done
}
stop() { if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=; fi; }
post() { curl -s -o "$WORK/post.out" -w '%{http_code} %{time_total}\n' -H 'Content-Type: application/json' --data-binary @"$1" "http://$ADDR/admin/resources"; }
wrk_lat() { # $1 query suffix; prints "p50 / p99 ms (req/s)"
	QSUFFIX=$1 wrk -t1 -c1 -d"$LAT_DURATION" --latency -s "$WORK/queries.lua" "http://$ADDR" >"$WORK/wrk.out" 2>&1
	awk '/^ +50%/ {p50=$2} /^ +99%/ {p99=$2} /Requests\/sec/ {rps=$2} /Non-2xx/ {bad=$NF}
		function ms(x) { if (x ~ /us$/) return x/1000; if (x ~ /ms$/) return x+0; if (x ~ /s$/) return x*1000; return x }
		END {printf "%.2f / %.2f ms (%s req/s lone client%s)\n", ms(p50), ms(p99), rps, bad ? ", NON-2XX " bad : ""}' "$WORK/wrk.out"
}

REPORT=$WORK/report.txt
echo "scale.sh $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) source $SOURCE, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$REPORT"
for N in $SIZES; do
	log "N=$N: generating"
	rm -rf "$WORK/batches" "$WORK/one" "$WORK/data" && mkdir -p "$WORK/one"
	"$WORK/scalegen" -n "$N" -seed "$SEED" -batch 10000 -out "$WORK/batches"
	K=$((N / 2))
	"$WORK/scalegen" -n 1 -from $K -seed "$SEED" >"$WORK/one/unchanged.json"
	for v in 1 2 3 4 5; do "$WORK/scalegen" -n 1 -from $K -seed "$SEED" -variant $v >"$WORK/one/changed-$v.json"; done

	start "$WORK/data"
	wait_ok /readyz 30 || { echo "N=$N: empty store did not start: $HEALTH" | tee -a "$REPORT"; stop; continue; }
	MAXRSS=$WORK/maxrss; echo 0 >"$MAXRSS"
	( m=0; while :; do r=$(status "$PID" VmRSS); [ "${r:-0}" -gt "$m" ] && { m=$r; echo "$m" >"$MAXRSS"; }; sleep 0.2; done ) &
	SAMPLER=$!
	log "N=$N: ingesting $(ls "$WORK/batches" | wc -l) batches"
	times=()
	for f in "$WORK/batches"/batch-*.json; do
		read -r code t < <(post "$f")
		[ "$code" = 200 ] || { log "batch $f: HTTP $code $(head -c 300 "$WORK/post.out")"; exit 1; }
		times+=("$t")
	done
	kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null || true; SAMPLER=
	total=$(printf '%s\n' "${times[@]}" | awk '{s+=$1} END {print s}')
	hwm_ingest=$(status "$PID" VmHWM); rss_ingest=$(status "$PID" VmRSS)
	check=$(curl -fs "http://$ADDR/api/search?q=sp%C3%A5nskiva&vector=true&limit=5" | python3 -c 'import json,sys; d=json.load(sys.stdin); r=d["results"]; print(len(r), "hits, match_source", sorted({h["match_source"] for h in r}), "first", r[0]["id"] if r else "-", r[0].get("name","") if r else "", "notes", d.get("notes"))' 2>&1 || echo "?")
	# The vectors of the load are built in the background on both cores;
	# latency and one-resource batches are measured once they have caught
	# up (hybrid search stops noting a backlog), capped at $RESTART_CAP s.
	log "N=$N: waiting for the vectors"
	V0=$(date +%s.%N); caught="not within ${RESTART_CAP} s"
	while awk -v a="$V0" -v b="$(date +%s.%N)" -v c="$RESTART_CAP" 'BEGIN{exit !(b-a < c)}'; do
		if vectors_caught_up "http://$ADDR/api/search?q=betong&vector=true&limit=1"; then
			caught=$(awk -v a="$V0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f s", b-a}'); break
		fi
		sleep 0.5
	done
	log "N=$N: latency"
	ft=$(wrk_lat "")
	hy=$(wrk_lat "&vector=true")
	hwm_search=$(status "$PID" VmHWM)
	log "N=$N: one-resource batches"
	un=(); ch=()
	for i in 1 2 3 4 5; do read -r code t < <(post "$WORK/one/unchanged.json"); un+=("$t"); done
	for v in 1 2 3 4 5; do read -r code t < <(post "$WORK/one/changed-$v.json"); ch+=("$t"); done
	tail -c 400 "$WORK/post.out" >"$WORK/last-change.json"
	log "N=$N: restart"
	stop
	du=$(du -sh "$WORK/data" | cut -f1)
	T0=$(date +%s.%N)
	start "$WORK/data"
	restart_ready="not listening"
	if wait_ok /healthz "$RESTART_CAP"; then
		restart=$HEALTH
		wait_ok /readyz "$RESTART_CAP" || true
		restart_ready=$HEALTH
	else
		restart=$HEALTH
	fi
	T0=
	rss_restart=$( [ -n "$PID" ] && status "$PID" VmHWM || echo 0)
	stop
	{
		echo
		echo "== N=$N (national, synthetic, seed $SEED; store on disk $du)"
		printf 'ingest            %d resources in %.1f s = %.0f resources/s (batches of 10,000)\n' "$N" "$total" "$(awk -v n="$N" -v t="$total" 'BEGIN{print n/t}')"
		echo "  per batch (s)   $(printf '%s ' "${times[@]}")"
		echo "peak RSS          during ingest (VmRSS max, 0.2 s samples) $(kib "$(cat "$MAXRSS")"); VmHWM after ingest $(kib "$hwm_ingest") (VmRSS $(kib "$rss_ingest")); VmHWM after searches $(kib "$hwm_search")"
		echo "vectors           caught up $caught after the last batch answered"
		echo "full-text p50/p99 $ft"
		echo "hybrid p50/p99    $hy"
		echo "one changed       $(printf '%s\n' "${ch[@]}" | median | awk '{printf "%.1f ms", $1*1000}') median of 5 ($(printf '%s ' "${ch[@]}")s)"
		echo "unchanged         $(printf '%s\n' "${un[@]}" | median | awk '{printf "%.1f ms", $1*1000}') median of 5 ($(printf '%s ' "${un[@]}")s)"
		echo "restart           /healthz $restart, /readyz $restart_ready (VmHWM after restart $(kib "${rss_restart:-0}"))"
		echo "check             spånskiva&vector=true: $check"
	} | tee -a "$REPORT"
done
tail -5 "$WORK/server.log" | cut -c1-300 >&2 || true
