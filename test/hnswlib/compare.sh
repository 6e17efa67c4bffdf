#!/usr/bin/env bash
# Our HNSW (adapters/hnsw) next to hnswlib-node on exactly the same vectors.
#
#   test/hnswlib/compare.sh                    # 10k and 100k, 3 interleaved rounds
#   SIZES=10k ROUNDS=5 test/hnswlib/compare.sh
#   BASE=63da409 test/hnswlib/compare.sh       # also an older commit's package (Add only)
#
# Benchmark only, not part of the suite. It
#   1. exports the skewed 10k/100k vectors of adapters/hnsw's benchmarks,
#      their 100 queries and exact top 10 (TestExportVectors) to $OUT/vecs;
#   2. installs hnswlib-node from package-lock.json (npm ci, builds the
#      addon with node-gyp against /usr/include/node: no download);
#   3. per size and round, in turn: ours (BenchmarkBuild add-1: Add from one
#      goroutine; batch: AddBatch on GOMAXPROCS goroutines), BASE if given
#      (add-1, add-2), then hnswlib-node (compare.js: addPoint one by one,
#      single-threaded), all with M 16, efConstruction 200, then query p50
#      (5 rounds of 100 queries, one at a time) and recall@10 at ef 64/128/256;
#   4. prints a table of medians over the rounds (summary.js).
# Raw outputs stay in $OUT. The 100k build takes 1-3 minutes per variant
# here, so the default run takes about half an hour.
#
# The machine is shared: with QUIET_BUDGET=SECONDS each variant first waits,
# at most that long in all, until the other processes leave the cores
# nearly idle (machine busy under QUIET_BUSY percent, default 15, over 2 s).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
SIZES=${SIZES:-"10k 100k"}
ROUNDS=${ROUNDS:-3}
OUT=${OUT:-$(mktemp -d /tmp/hnswcmp.XXXXXX)}
mkdir -p "$OUT"
echo "raw outputs in $OUT" >&2
QUIET_BUDGET=${QUIET_BUDGET:-0}
QUIET_BUSY=${QUIET_BUSY:-15}

# busy: percent of the machine's CPU time (all cores) not idle over 2 s.
busy() {
  local a b
  read -r -a a < <(head -1 /proc/stat)
  sleep 2
  read -r -a b < <(head -1 /proc/stat)
  local total=0 idle i
  for i in 1 2 3 4 5 6 7 8; do total=$((total + b[i] - a[i])); done
  idle=$((b[4] - a[4] + b[5] - a[5]))
  echo $(((total - idle) * 100 / (total > 0 ? total : 1)))
}

# quiet waits for an idle machine while the budget lasts, and logs what it saw.
quiet() {
  local b
  b=$(busy)
  while [ "$b" -ge "$QUIET_BUSY" ] && [ "$QUIET_BUDGET" -gt 0 ]; do
    QUIET_BUDGET=$((QUIET_BUDGET - 2))
    b=$(busy)
  done
  echo "$1: machine ${b}% busy before it" >> "$OUT/quiet.log"
}

cd "$repo"
if [ ! -f "$here/node_modules/hnswlib-node/build/Release/addon.node" ]; then
  (cd "$here" && npm ci --no-audit --no-fund >&2)
fi
HNSW_EXPORT_DIR="$OUT/vecs" go test -count=1 -run '^TestExportVectors$' ./adapters/hnsw/ >&2
go test -c -o "$OUT/ours.test" ./adapters/hnsw/

if [ -n "${BASE:-}" ]; then
  # The older package in a module of its own (catalogs.go, which needs the
  # service's other packages, left out), with today's BenchmarkBuild.
  base="$OUT/base-src"
  rm -rf "$base" && mkdir -p "$base"
  git archive "$BASE" adapters/hnsw | tar -x -C "$base" --strip-components=2
  rm -f "$base/catalogs.go"
  printf 'module hnswbase\n\ngo 1.26\n' > "$base/go.mod"
  cp adapters/hnsw/build_bench_test.go "$base/"
  (cd "$base" && go test -c -o "$OUT/base.test" .)
fi

for size in $SIZES; do
  for round in $(seq "$ROUNDS"); do
    echo "size $size round $round: ours" >&2
    quiet "ours $size $round"
    "$OUT/ours.test" -test.run '^$' -test.bench "^BenchmarkBuild/$size/(add-1|batch)\$" \
      -test.benchtime 1x -test.timeout 2h | grep '^Benchmark' > "$OUT/ours-$size-$round.txt"
    if [ -n "${BASE:-}" ]; then
      echo "size $size round $round: base $BASE" >&2
      quiet "base $size $round"
      "$OUT/base.test" -test.run '^$' -test.bench "^BenchmarkBuild/$size/(add-1|add-2)\$" \
        -test.benchtime 1x -test.timeout 2h | grep '^Benchmark' > "$OUT/base-$size-$round.txt"
    fi
    echo "size $size round $round: hnswlib-node" >&2
    quiet "hnswlib $size $round"
    node "$here/compare.js" "$OUT/vecs" "skewed$size" 16 200 64,128,256 > "$OUT/hnswlib-$size-$round.json"
  done
done
node "$here/summary.js" "$OUT" "${BASE:-}"
