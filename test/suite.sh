#!/usr/bin/env bash
# The whole test suite, runnable on a fresh Debian machine with Go:
# installs what the tests need, then vets and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
# (Later issues add chromium and the MCP clients here.)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq "${need_apt[@]}"; else sudo apt-get update -qq && sudo apt-get install -y -qq "${need_apt[@]}"; fi
fi

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then echo "gofmt would change: $unformatted"; exit 1; fi
echo "== go vet"
go vet ./...
echo "== go test"
go test -race -count=1 -timeout 20m ./... "$@"
