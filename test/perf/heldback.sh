#!/usr/bin/env bash
# test/perf/heldback.sh: how long searches wait while a large file is
# applied (docs/PERFORMANCE.md section 12y). It builds the binary (or takes
# BIN), generates a ROWS-row CSV (gencsv.py, as files.sh), applies it through
# POST /admin/ingest/file, and meanwhile searches every 50 ms: a new query
# each time (never a kept answer) or, with KEPT=1, one query over and over
# (its kept answer). Prints the apply's time and the searches' latencies.
#   test/perf/heldback.sh                 # ROWS=100000, PORT=18860
#   KEPT=1 BIN=/tmp/cs-old test/perf/heldback.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT
bin=${BIN:-}
if [ -z "$bin" ]; then go build -o "$work/climatesearch" ./cmd/climatesearch && bin=$work/climatesearch; fi
rows=${ROWS:-100000}
python3 test/perf/gencsv.py "$work/gen.csv" "$rows"
port=${PORT:-18860} # loopback
SERVICE_ADDR=127.0.0.1:$port SERVICE_DATA_DIR=$work/data SERVICE_BOOT_INGEST=false SERVICE_INGEST_INTERVAL=0 \
  SERVICE_LOG_LEVEL=warn SERVICE_MAX_UPLOAD=128MiB SERVICE_MAX_ROWS=$(( rows > 200000 ? rows + 1 : 200000 )) "$bin" 2>"$work/log" &
pid=$!
base=http://127.0.0.1:$port
until curl -sf "$base/readyz" >/dev/null; do sleep 0.05; done
curl -sf -o /dev/null -F "map.id=Sorterings ID" -F "map.name=Navn DK" -F "map.name_en=Navn DE/ENG" \
  -F "map.a1a3=Global Opvarmning, modul A1-A3" -F "map.unit=Deklareret enhed (FU)" -F "map.conversion_value=Masse faktor" \
  -F version=GEN -F "file=@$work/gen.csv" "$base/admin/ingest/file?catalog=dkbr" &
apply=$!
t0=$(date +%s.%N)
i=0
while kill -0 $apply 2>/dev/null; do
  i=$((i + 1)); q="beton+$i"; [ "${KEPT:-0}" = 1 ] && q=beton
  curl -s -o /dev/null -w '%{time_total}\n' "$base/api/search?q=$q&databases=dkbr" >>"$work/lat"
  sleep 0.05
done
wait $apply
t1=$(date +%s.%N)
python3 - "$work/lat" "$(echo "$t1 - $t0" | bc)" "$rows" "${KEPT:-0}" <<'PY'
import sys
l = sorted(float(x) for x in open(sys.argv[1]))
kind = "one query (kept)" if sys.argv[4] == "1" else "a new query each"
print(f"apply of {sys.argv[3]} rows {float(sys.argv[2]):.1f} s; {len(l)} searches meanwhile, {kind}: "
      f"median {l[len(l)//2]*1000:.0f} ms, longest {l[-1]:.2f} s, {sum(x > 1 for x in l)} over 1 s")
PY
