#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Gather what tests/gpu/run.sh needs from a build (BUILD, default build) into
# gpu-bundle/ (git-ignored; carried to the GPU machine).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
dst=$top/gpu-bundle
rm -rf "$dst" && mkdir -p "$dst/include"
for f in "$build"/src/liblazy*.so*; do [ -d "$f" ] || cp -P "$f" "$dst/"; done
cp "$build/lazynccl-info" "$dst/"
cp "$top/include/lazynccl.h" "$build/lazynccl_api.h" "$dst/include/"
strip --strip-debug "$dst"/*.so.*.* "$dst/lazynccl-info"
du -sh "$dst"
# Drop-ins and lazynccl-run (docs/concepts/the-same-job.md): the script finds
# them through LAZYNCCL_DROPIN_DIR.
mkdir -p "$dst/dropin"
# Not the suite's own (tests/specs: zlib, libcrypto, ...), which no job on
# the GPU machine should have redirected.
suite=$(cat "$top"/tests/specs/*.toml | sed -n 's/^sonames = \[\(.*\)\]/\1/p' | tr -d '",' | tr '\n' ' ')
for f in "$build"/src/dropin/lib*.so.[0-9]*; do
    case $f in *.map|*.p) continue ;; esac
    case " $suite " in *" $(basename "$f") "*) continue ;; esac
    [ -f "$f" ] && cp "$f" "$dst/dropin/"
done
strip --strip-debug "$dst"/dropin/*
# The manifest lazynccl-run reads (src/run/run_manifest.h): the installed
# drop-ins, the audit module in the directory above, as here.
cp "$build/src/dropin/lazynccl-dropins.installed" "$dst/dropin/lazynccl-dropins"
cp "$build/lazynccl-run" "$dst/"
du -sh "$dst"
# The audit module: lazynccl-run finds it above its drop-in dir.
cp "$build/src/audit/liblazynccl-audit.so" "$dst/"
# The preload redirector (lazynccl-run --preload): beside the audit module.
cp "$build/src/audit/liblazynccl-redirect.so" "$dst/"
# The module's copies that lazynccl-run names through $LIB where a 32-bit
# ld.so is installed (src/audit/meson.build).
for d in lib lib32; do [ -d "$build/src/audit/$d" ] && cp -r "$build/src/audit/$d" "$dst/"; done
find "$dst/lib" "$dst/lib32" -name '*.p' -prune -exec rm -rf {} + 2>/dev/null || true
# bench/tree's paired spawns (bench/spawnpair.c), found beside lazynccl-run.
if [ -x "$build/bench/spawnpair" ]; then mkdir -p "$dst/bench" && cp "$build/bench/spawnpair" "$dst/bench/"; fi
