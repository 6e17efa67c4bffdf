#!/usr/bin/env bash
# test/perf/files.sh: time and peak memory of previewing and applying the
# BR25 workbook and a generated 100,000-row CSV (semicolon, decimal comma)
# through the running binary. Prints one line per step.
#   test/perf/files.sh          # PORT=18820 by default
#   ROWS=1000000 test/perf/files.sh  # a million-row CSV (SERVICE_MAX_ROWS and
#                                    # SERVICE_MAX_UPLOAD raised to take it)
# Then it waits until the background vectors have caught up with the file
# (hybrid search stops noting a backlog; VECTORS_CAP seconds at most, 3600
# by default; VECTORS_CAP=0 skips the wait) and prints the peak RSS and
# the resident split (anonymous, file-backed) at that point. Each step's
# line gives its own peak: the kernel's high-water mark is reset before it
# (clear_refs 5), so an apply's peak no longer hides behind its dry run's.
set -euo pipefail
cd "$(dirname "$0")/../.."
shared=${CLIMATESEARCH_SHARED:-../shared}
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/climatesearch" ./cmd/climatesearch
rows=${ROWS:-100000}
python3 test/perf/gencsv.py "$work/gen.csv" "$rows"
port=${PORT:-18820} # loopback, in the range kept for this benchmark (18800-18899)
SERVICE_ADDR=127.0.0.1:$port SERVICE_DATA_DIR=$work/data SERVICE_BOOT_INGEST=false SERVICE_INGEST_INTERVAL=0 \
  SERVICE_LOG_LEVEL=warn SERVICE_MAX_UPLOAD=$(( rows > 500000 ? 128 : 64 ))MiB SERVICE_MAX_ROWS=$(( rows > 200000 ? rows + 1 : 200000 )) \
  "$work/climatesearch" 2>"$work/log" &
pid=$!
until curl -sf "http://127.0.0.1:$port/readyz" >/dev/null; do sleep 0.05; done
base="http://127.0.0.1:$port"
hwm() { awk '/VmHWM/{print $2/1024 " MiB"}' /proc/$pid/status; }
step() { # name, curl args...
  local name=$1; shift
  echo 5 >/proc/$pid/clear_refs # reset VmHWM: this step's own peak
  local t0=$(date +%s.%N)
  curl -sf -o "$work/out.json" "$@" || { echo "$name failed: $(cat "$work/out.json" 2>/dev/null | head -c 300)"; exit 1; }
  local t1=$(date +%s.%N)
  printf '%-28s %7.0f ms   peak RSS %s\n' "$name" "$(echo "($t1-$t0)*1000" | bc)" "$(hwm)"
}
echo "idle                                   peak RSS so far $(hwm)"
step "preview BR25 xlsx" -F "file=@$shared/data/dkbr/br25-tabel7-2025.xlsx" "$base/admin/ingest/preview"
map25=(-F "map.id=Sorterings ID" -F "map.name=Navn DK" -F "map.name_en=Navn DE/ENG" -F "map.a1a3=Global Opvarmning, modul A1-A3" -F "map.unit=Deklareret enhed (FU)" -F "map.conversion_value=Masse faktor" -F "map.conversion_unit=Masse enhed" -F version=BR25)
step "apply BR25 xlsx (504)" "${map25[@]}" -F "file=@$shared/data/dkbr/br25-tabel7-2025.xlsx" "$base/admin/ingest/file?catalog=dkbr"
step "preview $rows-row CSV" -F "file=@$work/gen.csv" "$base/admin/ingest/preview"
map100=(-F "map.id=Sorterings ID" -F "map.name=Navn DK" -F "map.name_en=Navn DE/ENG" -F "map.a1a3=Global Opvarmning, modul A1-A3" -F "map.unit=Deklareret enhed (FU)" -F "map.conversion_value=Masse faktor" -F version=GEN)
step "dry run $rows-row CSV" "${map100[@]}" -F "file=@$work/gen.csv" "$base/admin/ingest/file?catalog=dkbr&dry_run=true"
step "apply $rows-row CSV" "${map100[@]}" -F "file=@$work/gen.csv" "$base/admin/ingest/file?catalog=dkbr"
step "search after $rows" "$base/api/search?q=beton&databases=dkbr"
step "catalogs after $rows" "$base/api/catalogs"
step "metrics after $rows" "$base/metrics"
cap=${VECTORS_CAP:-3600}
if [ "$cap" -gt 0 ]; then
  t0=$(date +%s)
  . test/perf/offline.sh # vectors_caught_up
  until vectors_caught_up "$base/api/search?q=beton&databases=dkbr&vector=true&limit=1"; do
    [ $(( $(date +%s) - t0 )) -ge "$cap" ] && { echo "vectors not caught up within $cap s"; break; }
    sleep 1
  done
  printf '%-28s %7d s    peak RSS since the search %s; now RssAnon %s, RssFile %s\n' "vectors caught up after" "$(( $(date +%s) - t0 ))" "$(hwm)" \
    "$(awk '/RssAnon/{print int($2/1024) " MiB"}' /proc/$pid/status)" "$(awk '/RssFile/{print int($2/1024) " MiB"}' /proc/$pid/status)"
  # The coverage scan once more, then its answer kept until the next
  # write (core/status).
  step "catalogs, caught up" "$base/api/catalogs"
  step "catalogs again" "$base/api/catalogs"
fi
