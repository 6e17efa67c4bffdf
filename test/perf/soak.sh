#!/usr/bin/env bash
# test/perf/soak.sh: memory under steady writes (docs/PERFORMANCE.md 12d).
#
#   test/perf/soak.sh                            # 30 minutes (the benchmark)
#   DURATION=4m SOURCE=worktree test/perf/soak.sh   # the issue's short form
#
# It builds the binary from the last commit (git archive HEAD; SOURCE=worktree
# for the working tree) and serves the real publisher exports with
# `python3 -m http.server` as the publisher stand-in, as two real releases
# it switches between (a symlink to the directory served):
#   A  02.06.000-sv-se.json as .../latest/sv/json, 02.07.000-en-gb.json as
#      .../latest/en/json (235 resources, version 02.07.000);
#   B  02.05.000-sv-se.json and 02.04.000-en-gb.json (version 02.05.000);
# the workbooks 404. From A to B an ingest changes values and texts and
# withdraws what B lacks; from B to A it changes them back and revives them.
# The service starts with the boot ingest (release A), SERVICE_INGEST_INTERVAL=0,
# the default hash embedder, log level warn, a random admin token (never
# printed) and GODEBUG=gctrace=1 (GCTRACE=0 turns it off); the script waits
# for /readyz 200 and the 235 national resources, then runs one ingest of
# release A (unchanged; retried while the boot ingest still answers 409) so
# the boot ingest is over. Then, for $DURATION:
#   - wrk -t2 -c16 on GET /api/search cycling over 15 real queries (lua);
#   - one write every $WRITE_EVERY s (deadline paced), alternately
#       POST /admin/ingest/run?catalog=national, the release switched before
#       each (A -> B -> A ...), and
#       POST /admin/resources, a batch of 200 dkbr resources taken in turn
#       from the real BR18 Tabel 7 (the next 200 of its rows with a value,
#       wrapping), A1-A3 scaled by 1.01-1.09 and the Danish name suffixed by
#       one of four words, both by batch number, so every batch changes what
#       it sends and the dkbr catalog stays at the table's size;
#     (the issue's 68 + 68 writes in 4 minutes is one every 1.76 s);
#   - every $SAMPLE_EVERY s: VmRSS of the service (/proc/PID/status), split
#     into RssAnon (Go heap, stacks, runtime) and RssFile (mapped files:
#     the binary, badger's value log, memtable and tables), the live heap
#     after the last GC (gctrace) and the size of the data directory.
# It prints the time series (t, RSS, live heap, writes so far, RssAnon,
# RssFile, store size), then a summary: RSS at 1, 5, 10, 20, 30 minutes (those
# within the run), at the end, the maximum, the means over 60-115 s and over
# the last minute, the ratio end / 1 minute, resident memory by mapping at
# the end (/proc/PID/smaps), wrk's requests/s and errors (non-2xx
# and socket errors), ingests and batches done and failed (any answer but 200
# is a failure; 409 is counted among them and named), and the trend: the
# mean RSS over the first five minutes after the first (60-359 s) and over
# the last five, their ratio, and the least-squares slope after the first
# minute. Exit status 1 when any error or failure occurred or the last five
# minutes' mean RSS exceeds $MAX_RATIO (1.10) x the mean after the first
# minute. Means, not single samples: RSS swings by about 15 % with each GC
# cycle and each badger memtable, so a single sample says where in a cycle
# it fell (the end / 1-minute ratio of single samples is printed too). Runs
# shorter than 10 minutes compare the minute after the first with the last.
# Everything lives in a mktemp directory removed at exit (KEEP=1 keeps it);
# ports 18600 (publisher) and 18601 (service), loopback; only processes this
# script started are stopped, by pid.
# Settings: DURATION (30m; Ns, Nm or Nh), WRITE_EVERY (1.76), SAMPLE_EVERY (5),
# BATCH (200), MAX_RATIO (1.10), GCTRACE (1), SOURCE (head|worktree), KEEP.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
DURATION=${DURATION:-30m}
WRITE_EVERY=${WRITE_EVERY:-1.76}
SAMPLE_EVERY=${SAMPLE_EVERY:-5}
BATCH=${BATCH:-200}
MAX_RATIO=${MAX_RATIO:-1.10}
GCTRACE=${GCTRACE:-1}
SOURCE=${SOURCE:-head}
SHARED=$(cd "${CLIMATESEARCH_SHARED:-$REPO/../shared}" && pwd)
UP_PORT=18600 SVC_PORT=18601
WORK=$(mktemp -d /tmp/climatesearch-soak.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	[ "${KEEP:-0}" = 1 ] && echo "kept $WORK" >&2 || rm -rf "$WORK"
}
trap cleanup EXIT
log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }
command -v wrk >/dev/null || { log "installing wrk"; apt-get install -y wrk >/dev/null; }
command -v jq >/dev/null || { log "installing jq"; apt-get install -y jq >/dev/null; }
case $DURATION in
*h) SECS=$((${DURATION%h} * 3600)) ;; *m) SECS=$((${DURATION%m} * 60)) ;;
*s) SECS=${DURATION%s} ;; *) SECS=$DURATION ;;
esac
[ "$SECS" -ge 60 ] || { log "DURATION must be at least 1 minute (the reference sample)"; exit 2; }

if [ "$SOURCE" = worktree ]; then SRC=$REPO; else
	mkdir "$WORK/src" && git archive HEAD | tar -x -C "$WORK/src" && SRC=$WORK/src
fi
COMMIT=$(git rev-parse --short HEAD)
log "building ($SOURCE, $COMMIT)"
(cd "$SRC" && go build -o "$WORK/climatesearch" ./cmd/climatesearch)

# The publisher stand-in: $WORK/publisher is a symlink to rel-a or rel-b.
BV=$SHARED/data/boverket
for r in a b; do mkdir -p "$WORK/rel-$r/api/Klimat/v2/GetAllResources/latest/sv" "$WORK/rel-$r/api/Klimat/v2/GetAllResources/latest/en"; done
cp "$BV/02.06.000-sv-se.json" "$WORK/rel-a/api/Klimat/v2/GetAllResources/latest/sv/json"
cp "$BV/02.07.000-en-gb.json" "$WORK/rel-a/api/Klimat/v2/GetAllResources/latest/en/json"
cp "$BV/02.05.000-sv-se.json" "$WORK/rel-b/api/Klimat/v2/GetAllResources/latest/sv/json"
cp "$BV/02.04.000-en-gb.json" "$WORK/rel-b/api/Klimat/v2/GetAllResources/latest/en/json"
release() { ln -sfn "$WORK/rel-$1" "$WORK/publisher"; }
release a
python3 -m http.server --bind 127.0.0.1 $UP_PORT --directory "$WORK/publisher" >"$WORK/publisher.log" 2>&1 &
PIDS+=($!)
UP=http://127.0.0.1:$UP_PORT
for _ in $(seq 100); do curl -fs -o /dev/null "$UP/api/Klimat/v2/GetAllResources/latest/sv/json" && break; sleep 0.1; done

# dkbr batches: batch K is the next $BATCH rows of BR18 Tabel 7 that have an
# A1-A3 value, values scaled and names suffixed by K (see the header).
cat >"$WORK/batch.py" <<'PY'
import csv, json, sys
src, k, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows, seen = [], set()
with open(src, newline="", encoding="utf-8") as f:
    for r in csv.DictReader(f):
        rid = r["Sorterings ID"].strip()
        try:
            a = float(r["Global Opvarmning, modul A1-A3"])
        except ValueError:
            continue
        if not rid or rid in seen:
            continue
        seen.add(rid)
        rows.append((rid, r["Navn DK"].strip(), r["Navn DE/ENG"].strip(), a, r["Deklareret enhed (FU)"].strip().lower()))
words = ["", "standard", "generisk", "typisk"]
out = []
for i in range(n):
    rid, dk, en, a, unit = rows[(k * n + i) % len(rows)]
    item = {"id": rid, "name": (dk or en) + ((" " + words[k % 4]) if words[k % 4] else ""),
            "a1a3": round(a * (1 + (k % 9 + 1) / 100), 6)}
    if en:
        item["name_en"] = en
    if unit:
        item["unit"] = {"m2": "m²", "m3": "m³"}.get(unit, unit)
    out.append(item)
json.dump({"catalog": "dkbr", "version": "BR18", "resources": out}, sys.stdout, ensure_ascii=False)
PY
python3 "$WORK/batch.py" "$SHARED/data/dkbr/br18-tabel7-201222.csv" 0 "$BATCH" >"$WORK/batch-check.json"

cat >"$WORK/queries.lua" <<'LUA'
local qs = {"sp%C3%A5nskiva", "betong%20C30%2F37", "glasull", "gipsskiva", "plywood", "mineralull",
  "armeringsst%C3%A5l", "concrete", "insulation", "f%C3%B6nster", "tegel", "diesel",
  "konstruktionstr%C3%A6", "huld%C3%A6k", "mursten"}
local i = 0
request = function()
  i = i % #qs + 1
  return wrk.format("GET", "/api/search?q=" .. qs[i])
end
LUA

umask 077
printf 'X-Admin-Token: %s\n' "$(head -c 24 /dev/urandom | base64 | tr -d '/+=')" >"$WORK/admin.hdr"
umask 022
GODEBUG_VAL=${GODEBUG:-}
[ "$GCTRACE" = 1 ] && GODEBUG_VAL=${GODEBUG_VAL:+$GODEBUG_VAL,}gctrace=1
env SERVICE_ADDR=127.0.0.1:$SVC_PORT SERVICE_DATA_DIR="$WORK/data" SERVICE_UPSTREAM_URL=$UP \
	SERVICE_EXCEL_URL_SV=$UP/missing-sv.xlsx SERVICE_EXCEL_URL_EN=$UP/missing-en.xlsx \
	SERVICE_BOOT_INGEST=true SERVICE_INGEST_INTERVAL=0 SERVICE_EMBEDDER=hash \
	SERVICE_ADMIN_TOKEN="$(cut -d' ' -f2 "$WORK/admin.hdr")" GODEBUG="$GODEBUG_VAL" \
	SERVICE_LOG_LEVEL=warn SERVICE_LOG_FORMAT=json "$WORK/climatesearch" >"$WORK/service.log" 2>&1 &
SVC_PID=$!
PIDS+=($SVC_PID)
SVC=http://127.0.0.1:$SVC_PORT
servicelog() { grep -v '^gc ' "$WORK/service.log" | tail -5 | cut -c1-300 >&2 || true; }
for _ in $(seq 600); do curl -fs -o /dev/null "$SVC/readyz" && break; sleep 0.1; done
n=0
for _ in $(seq 600); do
	n=$(curl -fs "$SVC/api/resources?databases=national" 2>/dev/null | jq '.resources | length' 2>/dev/null || echo 0)
	[ "$n" -ge 235 ] && break
	sleep 0.1
done
[ "$n" -ge 235 ] || { log "service holds $n national resources, want 235"; servicelog; exit 1; }
[ "$(curl -s -o /dev/null -w '%{http_code}' "$SVC/readyz")" = 200 ] || { log "/readyz not 200"; servicelog; exit 1; }
# The boot ingest can still be finishing (409 busy) after the 235 are
# listed: one ingest of release A, unchanged, retried until 200, ends it.
for _ in $(seq 120); do
	code=$(curl -s -o "$WORK/w.out" -w '%{http_code}' -X POST -H @"$WORK/admin.hdr" "$SVC/admin/ingest/run?catalog=national" || true)
	[ "$code" = 409 ] || break
	sleep 0.5
done
[ "$code" = 200 ] || { log "ingest of release A before the soak: HTTP $code $(head -c 300 "$WORK/w.out")"; servicelog; exit 1; }
log "release A again before the soak: $(jq -c '{version, upserted, unchanged, withdrawn}' "$WORK/w.out")"

status() { awk -v f="$2" '$1==f":" {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
now() { date +%s.%N; }
# live heap (MB) after the last GC of the gctrace lines, "-" without gctrace
liveheap() { tail -n 400 "$WORK/service.log" | grep -o '[0-9]*->[0-9]*->[0-9]* MB' | tail -1 | sed 's/.*->\([0-9]*\) MB/\1/' | grep . || echo -; }
WRITES=$WORK/writes.log # t kind release-or-batch code seconds detail
SERIES=$WORK/series.log # t rss_kib heap_mb writes anon_kib file_kib store_kib
sample() { echo "$(status "$SVC_PID" VmRSS) $(liveheap) $(wc -l <"$WRITES") $(status "$SVC_PID" RssAnon) $(status "$SVC_PID" RssFile) $(du -sk "$WORK/data" 2>/dev/null | cut -f1)"; }
: >"$WRITES"
STOP=$WORK/stop
T0=$(now)

writer() {
	local i=0 next code t detail kind arg b=0 g=0 rel=a
	while [ ! -e "$STOP" ]; do
		next=$(awk -v t0="$T0" -v i="$i" -v p="$WRITE_EVERY" 'BEGIN{printf "%.3f", t0 + i*p}')
		d=$(awk -v n="$next" -v now="$(now)" 'BEGIN{d=n-now; printf "%.3f", (d>0)?d:0}')
		sleep "$d"
		[ -e "$STOP" ] && break
		if [ $((i % 2)) = 0 ]; then
			if [ "$rel" = a ]; then rel=b; else rel=a; fi
			release "$rel"; g=$((g + 1)); kind=ingest; arg=$rel
			read -r code t < <(curl -s -o "$WORK/w.out" -w '%{http_code} %{time_total}\n' -X POST -H @"$WORK/admin.hdr" "$SVC/admin/ingest/run?catalog=national" || echo "000 0")
			detail=$(jq -c '{version, upserted, unchanged, withdrawn}' "$WORK/w.out" 2>/dev/null || head -c 200 "$WORK/w.out" | tr '\n' ' ')
		else
			python3 "$WORK/batch.py" "$SHARED/data/dkbr/br18-tabel7-201222.csv" "$b" "$BATCH" >"$WORK/batch.json"
			kind=batch; arg=$b; b=$((b + 1))
			read -r code t < <(curl -s -o "$WORK/w.out" -w '%{http_code} %{time_total}\n' -H @"$WORK/admin.hdr" -H 'Content-Type: application/json' --data-binary @"$WORK/batch.json" "$SVC/admin/resources" || echo "000 0")
			detail=$(jq -c '{upserted, unchanged}' "$WORK/w.out" 2>/dev/null || head -c 200 "$WORK/w.out" | tr '\n' ' ')
		fi
		echo "$(awk -v a="$T0" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}') $kind $arg $code $t $detail" >>"$WRITES"
		i=$((i + 1))
	done
}
sampler() {
	local i=0 next d
	while [ ! -e "$STOP" ]; do
		next=$(awk -v t0="$T0" -v i="$i" -v p="$SAMPLE_EVERY" 'BEGIN{printf "%.3f", t0 + i*p}')
		d=$(awk -v n="$next" -v now="$(now)" 'BEGIN{d=n-now; printf "%.3f", (d>0)?d:0}')
		sleep "$d"
		[ -e "$STOP" ] && break
		echo "$((i * SAMPLE_EVERY)) $(sample)" >>"$SERIES"
		i=$((i + 1))
	done
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
START_RSS=$(status "$SVC_PID" VmRSS)
log "soak: $DURATION, one write every $WRITE_EVERY s, wrk -t2 -c16 on /api/search (RSS at start $((START_RSS / 1024)) MiB)"
writer &
WRITER=$!
PIDS+=($WRITER)
sampler &
SAMPLER=$!
PIDS+=($SAMPLER)
wrk -t2 -c16 -d"${SECS}s" -s "$WORK/queries.lua" "$SVC" >"$WORK/wrk.out" 2>&1 || true
touch "$STOP"
wait "$WRITER" 2>/dev/null || true
wait "$SAMPLER" 2>/dev/null || true
END_T=$(awk -v a="$T0" -v b="$(now)" 'BEGIN{printf "%.0f", b-a}')
END_RSS=$(status "$SVC_PID" VmRSS)
END_HEAP=$(liveheap)
echo "$END_T $(sample)" >>"$SERIES"
# resident memory by mapping at the end: anonymous (Go heap, stacks) and each
# kind of mapped file (badger's value log, memtables, tables)
python3 - "$SVC_PID" >"$WORK/smaps.txt" 2>/dev/null <<'PY' || true
import collections, re, sys
rss, name = collections.Counter(), "?"
for line in open(f"/proc/{sys.argv[1]}/smaps"):
    f = line.split()
    if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
        path = f[5] if len(f) > 5 else "[anon]"
        name = re.sub(r"\d{6}\.", "N.", path.rsplit("/", 1)[-1]) if path.startswith("/") else path
    elif f[0] == "Rss:":
        rss[name] += int(f[1])
print("; ".join(f"{k} {v / 1024:.1f} MiB" for k, v in rss.most_common(8) if v >= 1024))
PY
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
alive=yes; kill -0 "$SVC_PID" 2>/dev/null || alive=no

mib() { awk -v k="$1" 'BEGIN{printf "%.1f", k/1024}'; }
at() { awk -v t="$1" '$1>=t {print; exit}' "$SERIES"; } # first sample at or after t s
REPORT=$WORK/report.txt
{
	echo "soak.sh $(date -u +%FT%TZ) commit $COMMIT source $SOURCE, $(nproc) cores, $DURATION, one write every $WRITE_EVERY s, wrk -t2 -c16, load before $LOAD_BEFORE, after $LOAD_AFTER"
	echo
	echo "time series (every $SAMPLE_EVERY s):"
	echo "     t    RSS MiB  live heap MiB  writes   RssAnon  RssFile  store MiB"
	awk '{printf "%6d  %9.1f  %13s  %6d  %8.1f %8.1f  %9.1f\n", $1, $2/1024, $3, $4, $5/1024, $6/1024, $7/1024}' "$SERIES"
	echo
	echo "== summary"
	ONE=$(at 60 | cut -d' ' -f2)
	for m in 1 5 10 20 30; do
		[ $((m * 60)) -le "$SECS" ] || continue
		read -r t r h w _ <<<"$(at $((m * 60)))"
		printf 'RSS at %2d min   %7s MiB (live heap %s MiB, %s writes)\n' "$m" "$(mib "$r")" "$h" "$w"
	done
	printf 'RSS at end      %7s MiB (t=%s s, live heap %s MiB)\n' "$(mib "$END_RSS")" "$END_T" "$END_HEAP"
	printf 'RSS max         %7s MiB; at start of the soak %s MiB\n' "$(awk 'BEGIN{m=0} $2>m {m=$2} END{printf "%.1f", m/1024}' "$SERIES")" "$(mib "$START_RSS")"
	printf 'RSS mean        %7s MiB over 60-115 s, %s MiB over the last 60 s\n' \
		"$(awk '$1>=60 && $1<120 {s+=$2; n++} END {printf "%.1f", n ? s/n/1024 : 0}' "$SERIES")" \
		"$(awk -v e="$END_T" '$1>e-60 {s+=$2; n++} END {printf "%.1f", n ? s/n/1024 : 0}' "$SERIES")"
	POINT=$(awk -v a="$END_RSS" -v b="$ONE" 'BEGIN{printf "%.3f", a/b}')
	echo "end / 1 min     $POINT (single samples)"
	W=300
	[ "$SECS" -ge 600 ] || W=60
	FIRST=$(awk -v w="$W" '$1>=60 && $1<60+w {s+=$2; n++} END {printf "%.1f", n ? s/n/1024 : 0}' "$SERIES")
	LAST=$(awk -v e="$END_T" -v w="$W" '$1>e-w {s+=$2; n++} END {printf "%.1f", n ? s/n/1024 : 0}' "$SERIES")
	RATIO=$(awk -v a="$LAST" -v b="$FIRST" 'BEGIN{printf "%.3f", b ? a/b : 99}')
	SLOPE=$(awk '$1>=60 {x=$1/60; y=$2/1024; n++; sx+=x; sy+=y; sxx+=x*x; sxy+=x*y} END {printf "%.2f", (n > 1 ? (n*sxy-sx*sy)/(n*sxx-sx*sx) : 0)}' "$SERIES")
	echo "trend           mean $FIRST MiB over the $((W / 60)) min after the first, $LAST MiB over the last $((W / 60)): $RATIO (limit $MAX_RATIO); slope $SLOPE MiB/min"
	rps=$(awk '/Requests\/sec/ {print $2}' "$WORK/wrk.out")
	reqs=$(awk '/requests in/ {print $1}' "$WORK/wrk.out")
	non2xx=$(awk '/Non-2xx/ {print $NF}' "$WORK/wrk.out"); non2xx=${non2xx:-0}
	sock=$(awk '/Socket errors/ {gsub(",", ""); print $4+$6+$8+$10}' "$WORK/wrk.out"); sock=${sock:-0}
	lat=$(awk '/Latency/ && !/Distribution/ {print "avg " $2 ", stdev " $3 ", max " $4}' "$WORK/wrk.out")
	echo "wrk             $reqs requests, $rps req/s; latency $lat; non-2xx $non2xx, socket errors $sock$(grep 'Socket errors' "$WORK/wrk.out" | sed 's/^ */ (/;s/$/)/' || true)"
	ERRS=$((non2xx + sock))
	for k in ingest batch; do
		awk -v k="$k" '$2==k {n++; if ($4!="200") {f++; c[$4]++}; s+=$5; if ($5>m) m=$5}
			END {printf "%-15s %d done, %d failed", k (k=="batch" ? "es" : "s"), n, f; for (x in c) printf " (HTTP %s: %d)", x, c[x];
			if (n) printf "; answer time mean %.2f s, max %.2f s", s/n, m; print ""}' "$WRITES"
	done
	FAILED=$(awk '$4!="200" {f++} END {print f+0}' "$WRITES")
	echo "first ingests   $(awk '$2=="ingest"' "$WRITES" | head -2 | cut -d' ' -f3,6- | tr '\n' ';')"
	echo "first batches   $(awk '$2=="batch"' "$WRITES" | head -2 | cut -d' ' -f3,6- | tr '\n' ';')"
	echo "resident by map $(cat "$WORK/smaps.txt")"
	echo "service         still running: $alive; national $(curl -fs "$SVC/api/resources?databases=national" | jq '.resources | length' 2>/dev/null || echo ?), dkbr $(curl -fs "$SVC/api/resources?databases=dkbr" | jq '.resources | length' 2>/dev/null || echo ?) resources; VmHWM $(mib "$(status "$SVC_PID" VmHWM)") MiB"
	echo "$ERRS $FAILED $RATIO" >"$WORK/verdict"
} | tee "$REPORT"
read -r ERRS FAILED RATIO <"$WORK/verdict"
grep -v '^gc ' "$WORK/service.log" | grep -q . && { log "service log (not gctrace), last lines:"; servicelog; }
if [ "$ERRS" -gt 0 ] || [ "$FAILED" -gt 0 ] || [ "$alive" = no ] || awk -v r="$RATIO" -v m="$MAX_RATIO" 'BEGIN{exit !(r>m)}'; then
	echo "FAIL: wrk errors $ERRS, failed writes $FAILED, service running $alive, last/first mean RSS $RATIO (limit $MAX_RATIO)"
	exit 1
fi
echo "PASS: no errors, last/first mean RSS $RATIO <= $MAX_RATIO"
