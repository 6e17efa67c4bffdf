#!/usr/bin/env bash
# test/perf/heldback.sh: how long searches wait while a large change is
# applied (docs/PERFORMANCE.md sections 12y and 12z). It builds the binary
# (or takes BIN), loads a catalog and changes it while searching every
# 50 ms: a new query each time (never a kept answer) or, with KEPT=1, one
# query over and over (its kept answer). Prints the changes' times and the
# searches' latencies.
#
# File mode (default): generates a ROWS-row CSV (gencsv.py, as files.sh)
# and applies it through POST /admin/ingest/file into dkbr.
# Batch mode (BATCH=n): loads ROWS synthetic national resources
# (test/perf/scalegen, batches of 10,000, unmeasured), then posts ROUNDS
# batches of BATCH changed resources to POST /admin/resources (each a
# different variant of the first BATCH resources) one after the other,
# searching meanwhile; SERVICE_EMBEDDER=none, so no vectors' catch-up
# shares the cores.
#   test/perf/heldback.sh                 # ROWS=100000, PORT=18860
#   KEPT=1 BIN=/tmp/cs-old test/perf/heldback.sh
#   ROWS=100000 BATCH=5000 ROUNDS=5 test/perf/heldback.sh
#   AGAIN=10 test/perf/heldback.sh        # the file applied once (unmeasured),
#                                         # then again with its first 10 rows changed
#   AGAIN=0 VERSION=GEN2 test/perf/heldback.sh  # ... unchanged but for its version
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT
bin=${BIN:-}
if [ -z "$bin" ]; then go build -o "$work/climatesearch" ./cmd/climatesearch && bin=$work/climatesearch; fi
rows=${ROWS:-100000}
batch=${BATCH:-}
port=${PORT:-18860} # loopback
base=http://127.0.0.1:$port
embedder=hash
if [ -n "$batch" ]; then
  embedder=none
  go run ./test/perf/scalegen -n "$rows" -seed 1 -batch 10000 -out "$work/load"
  for r in $(seq "${ROUNDS:-5}"); do
    go run ./test/perf/scalegen -n "$batch" -seed 1 -batch "$batch" -variant "$r" -out "$work/change-$r"
  done
  db=national
else
  python3 test/perf/gencsv.py "$work/gen.csv" "$rows"
  db=dkbr
  if [ -n "${AGAIN:-}" ]; then # the second upload: the first AGAIN rows' values changed
    mv "$work/gen.csv" "$work/first.csv"
    awk -F';' -v OFS=';' -v n="$AGAIN" 'NR > 1 && NR <= n + 1 { $4 = $4 "1" } { print }' "$work/first.csv" >"$work/gen.csv"
  fi
fi
SERVICE_ADDR=127.0.0.1:$port SERVICE_DATA_DIR=$work/data SERVICE_BOOT_INGEST=false SERVICE_INGEST_INTERVAL=0 \
  SERVICE_EMBEDDER=$embedder SERVICE_LOG_LEVEL=warn SERVICE_MAX_UPLOAD=128MiB \
  SERVICE_MAX_ROWS=$(( rows > 200000 ? rows + 1 : 200000 )) "$bin" 2>"$work/log" &
pid=$!
until curl -sf "$base/readyz" >/dev/null; do sleep 0.05; done
post() { # post FILE: a batch to POST /admin/resources; fails unless 200
  [ "$(curl -s -o "$work/post.out" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary @"$1" "$base/admin/resources")" = 200 ] ||
    { echo "POST /admin/resources: $(head -c 300 "$work/post.out")" >&2; exit 1; }
}
upload() { # upload FILE: the CSV to POST /admin/ingest/file into dkbr
  curl -sf -o /dev/null -F "map.id=Sorterings ID" -F "map.name=Navn DK" -F "map.name_en=Navn DE/ENG" \
    -F "map.a1a3=Global Opvarmning, modul A1-A3" -F "map.unit=Deklareret enhed (FU)" -F "map.conversion_value=Masse faktor" \
    -F "version=${2:-GEN}" -F "file=@$1" "$base/admin/ingest/file?catalog=dkbr"
}
change() { # the measured change, in the background
  if [ -n "$batch" ]; then
    for r in $(seq "${ROUNDS:-5}"); do post "$work/change-$r/batch-0001.json"; done
  else
    upload "$work/gen.csv" "${VERSION:-GEN}"
  fi
}
if [ -n "$batch" ]; then
  for f in "$work"/load/batch-*.json; do post "$f"; done
fi
if [ -n "${AGAIN:-}" ]; then upload "$work/first.csv"; fi
change &
apply=$!
t0=$(date +%s.%N)
i=0
while kill -0 $apply 2>/dev/null; do
  i=$((i + 1)); q="beton+$i"; [ "${KEPT:-0}" = 1 ] && q=beton
  curl -s -o /dev/null -w '%{time_total}\n' "$base/api/search?q=$q&databases=$db" >>"$work/lat"
  sleep 0.05
done
wait $apply
t1=$(date +%s.%N)
what="apply of $rows rows"
[ -n "${AGAIN:-}" ] && what="second apply of $rows rows, $AGAIN changed"
[ -n "${VERSION:-}" ] && what="$what, under version $VERSION"
[ -n "$batch" ] && what="${ROUNDS:-5} batches of $batch changed resources in a catalog of $rows"
python3 - "$work/lat" "$(echo "$t1 - $t0" | bc)" "$what" "${KEPT:-0}" <<'PY'
import sys
l = sorted(float(x) for x in open(sys.argv[1]))
kind = "one query (kept)" if sys.argv[4] == "1" else "a new query each"
print(f"{sys.argv[3]}: {float(sys.argv[2]):.1f} s; {len(l)} searches meanwhile, {kind}: "
      f"median {l[len(l)//2]*1000:.0f} ms, p90 {l[int(len(l)*0.9)]*1000:.0f} ms, longest {l[-1]*1000:.0f} ms, {sum(x > 1 for x in l)} over 1 s")
PY
