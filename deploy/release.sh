#!/usr/bin/env bash
# Static, version-stamped binaries of climatesearch with SHA-256 checksums
# (task release). Usage: deploy/release.sh [GOOS/GOARCH ...]
#   default targets: linux/amd64 linux/arm64 darwin/arm64 windows/amd64
#   DIST=dir      output directory (default dist)
#   VERSION=v..   version to stamp (default: git describe, or "dev")
#   TAGS=hosted   build tags (default none: the self-hosted build)
set -euo pipefail
cd "$(dirname "$0")/.."
dist=${DIST:-dist}
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(linux/amd64 linux/arm64 darwin/arm64 windows/amd64)
pkg=github.com/climatesearch/climatesearch/cmd/climatesearch/buildinfo
mkdir -p "$dist"
rm -f "$dist/SHA256SUMS"
names=()
for t in "${targets[@]}"; do
  os=${t%/*} arch=${t#*/}
  name=climatesearch-$os-$arch
  [ "$os" = windows ] && name=$name.exe
  echo "building $name ($version)" >&2
  # -buildvcs=auto stamps the revision from a git checkout (GOFLAGS may say false).
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=auto ${TAGS:+-tags "$TAGS"} \
    -ldflags "-s -w -X $pkg.version=$version" -o "$dist/$name" ./cmd/climatesearch
  names+=("$name")
done
(cd "$dist" && sha256sum "${names[@]}" > SHA256SUMS)
echo "$dist: ${names[*]} SHA256SUMS" >&2
