#!/usr/bin/env bash
# Gather what tests/gpu/run.sh needs from a build (BUILD, default build) into
# gpu-bundle/ (git-ignored; carried to the GPU machine).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
dst=$top/gpu-bundle
rm -rf "$dst" && mkdir -p "$dst/include"
for f in "$build"/liblazy*.so*; do [ -d "$f" ] || cp -P "$f" "$dst/"; done
cp "$build/lazynccl-info" "$dst/"
cp "$top/include/lazynccl.h" "$dst/include/"
strip --strip-debug "$dst"/*.so.*.* "$dst/lazynccl-info"
du -sh "$dst"
