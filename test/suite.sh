#!/usr/bin/env bash
# The whole test suite, runnable on a fresh Debian machine with Go:
# installs what the tests need, then vets and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
# Debian's chromium, the browser test/console drives (chromedp).
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
# Debian's PostgreSQL, run as throwaway clusters by test/pgtest (adapters/pgstore, the replica tests).
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need_apt+=(postgresql)
# promtool (Debian's prometheus), which checks the /metrics exposition (test/e2e).
command -v promtool >/dev/null || need_apt+=(prometheus)
command -v systemd-analyze >/dev/null || need_apt+=(systemd) # test/binary verifies deploy/climatesearch.service
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq "${need_apt[@]}"; else sudo apt-get update -qq && sudo apt-get install -y -qq "${need_apt[@]}"; fi
fi

# --- MCP clients (test/mcp) -------------------------------------------------
# The MCP Inspector CLI, the official conformance suite and the Node 22
# runtime they run on, pinned by test/mcp/package-lock.json; installed when
# node_modules is missing or older than the lock file.
if [ ! -d test/mcp/node_modules ] || [ test/mcp/package-lock.json -nt test/mcp/node_modules/.package-lock.json ]; then
  if ! command -v npm >/dev/null; then
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq npm; else sudo apt-get update -qq && sudo apt-get install -y -qq npm; fi
  fi
  echo "== npm ci (test/mcp)"
  (cd test/mcp && npm ci --no-audit --no-fund)
fi
# --- end MCP clients ---------------------------------------------------------

# --- Standard Webhooks receiver (test/webhooks) -----------------------------
# The reference JavaScript library that verifies the Go sender's signatures,
# pinned by test/webhooks/package-lock.json; installed when node_modules is
# missing or older than the lock file.
if [ ! -d test/webhooks/node_modules ] || [ test/webhooks/package-lock.json -nt test/webhooks/node_modules/.package-lock.json ]; then
  if ! command -v npm >/dev/null; then
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq npm; else sudo apt-get update -qq && sudo apt-get install -y -qq npm; fi
  fi
  echo "== npm ci (test/webhooks)"
  (cd test/webhooks && npm ci --no-audit --no-fund)
fi
# --- end Standard Webhooks receiver -----------------------------------------

# --- HTTP Payment client (test/payment) ---------------------------------------
# mppx, the reference client of the Payment scheme, pinned (with viem) by
# test/payment/package-lock.json; installed when node_modules is missing or
# older than the lock file. viem declares a peer mppx the registry does not
# have, hence --legacy-peer-deps (also in test/payment/.npmrc).
if [ ! -d test/payment/node_modules ] || [ test/payment/package-lock.json -nt test/payment/node_modules/.package-lock.json ]; then
  if ! command -v npm >/dev/null; then
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq npm; else sudo apt-get update -qq && sudo apt-get install -y -qq npm; fi
  fi
  echo "== npm ci (test/payment)"
  (cd test/payment && npm ci --no-audit --no-fund --legacy-peer-deps)
fi
# --- end HTTP Payment client ----------------------------------------------------

# --- Console browser tests (test/console) -----------------------------------
# axe-core, injected into every console page by the chromedp tests, pinned
# by test/console/package-lock.json; installed when node_modules is missing
# or older than the lock file. Screenshots land in test/console/artifacts/.
if [ ! -d test/console/node_modules ] || [ test/console/package-lock.json -nt test/console/node_modules/.package-lock.json ]; then
  if ! command -v npm >/dev/null; then
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq npm; else sudo apt-get update -qq && sudo apt-get install -y -qq npm; fi
  fi
  echo "== npm ci (test/console)"
  (cd test/console && npm ci --no-audit --no-fund)
fi
# --- end console browser tests ------------------------------------------------

# --- OpenAPI lint (test/openapi) ---------------------------------------------
# Redocly CLI, which lints web/openapi.yaml with its recommended ruleset,
# pinned by test/openapi/package-lock.json; installed when node_modules is
# missing or older than the lock file. (The oapi-codegen client test there
# fetches the generator from the Go module proxy at its pinned version.)
if [ ! -d test/openapi/node_modules ] || [ test/openapi/package-lock.json -nt test/openapi/node_modules/.package-lock.json ]; then
  if ! command -v npm >/dev/null; then
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq npm; else sudo apt-get update -qq && sudo apt-get install -y -qq npm; fi
  fi
  echo "== npm ci (test/openapi)"
  (cd test/openapi && npm ci --no-audit --no-fund)
fi
# --- end OpenAPI lint ----------------------------------------------------------

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then echo "gofmt would change: $unformatted"; exit 1; fi
echo "== go vet"
go vet ./...
echo "== go test"
go test -race -count=1 -timeout 20m ./... "$@"
# The patched ice is a module of its own, outside ./...: its tests, upstream's
# and the comparison of its segments' bytes with upstream's.
echo "== go test third_party/ice (the patched segment builder and merge)"
(cd third_party/ice && go vet . && go test -race -count=1 .)
# The exactness tests of the pruned search compare every answer with the
# exhaustive one over synthetic catalogs of 12,000 and more; under -race
# they ask a sample only (race_test.go), so they run whole here, without it.
echo "== go test ./core/search/ ./adapters/blugeindex/ (without -race)"
go test -count=1 -timeout 20m ./core/search/ ./adapters/blugeindex/
# The end-to-end suite once more on PostgreSQL (SERVICE_STORE), the store
# several replicas share: the same tests, a fresh database per test.
echo "== go test ./test/e2e/ on PostgreSQL"
CLIMATESEARCH_E2E_STORE=postgres go test -race -count=1 -timeout 20m ./test/e2e/ "$@"
# The hosted build's own code (compiled only with -tags hosted): the guard's
# unit tests; test/hosted above already runs the -tags hosted binary.
echo "== go vet, go test (-tags hosted)"
go vet -tags hosted ./...
go test -race -count=1 -tags hosted ./adapters/guard/ ./cmd/...

# Bounded fuzzing of the spreadsheet readers and the column mapping; new
# crashers land in adapters/filereader/testdata/fuzz and fail the run.
# The budget is a count of inputs, not a duration: with -fuzztime as a
# duration, Go 1.26's fuzzing coordinator can report "context deadline
# exceeded" as a failure when the time runs out while a worker is still in
# an input (go.dev/issue/75804, fixed in Go 1.27); it did so here once on a
# loaded CI machine, with no crasher. 10,000 inputs take 2-15 s per target.
echo "== fuzz (adapters/filereader)"
for f in FuzzReadCSV FuzzReadXLSX FuzzReadXLS FuzzMap; do
  go test -run '^$' -fuzz "^${f}\$" -fuzztime "${FUZZTIME:-10000x}" -fuzzminimizetime 2s ./adapters/filereader/
done
