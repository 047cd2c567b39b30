#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On the GPU machine: PyTorch 2.11 as shipped, plain vs under
# lazynccl-run (drop-ins + audit module) from gpu-bundle/ (tests/gpu/bundle.sh).
# Writes JSON lines to $OUT/audit_torch.jsonl.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$top/gpu-bundle
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
RUN=$B/lazynccl-run
export LAZYNCCL_DROPIN_DIR=$B/dropin LZ_BUNDLE=$B NCCL_NVLS_ENABLE=0
J=${OUT:-/tmp}/audit_torch.jsonl
: > "$J"
P=$top/tests/gpu/audit_torch.py
[ "${ONLY_REST:-0}" = 1 ] || for i in 1 2 3 4 5; do
    echo "{\"run\": \"plain\", \"i\": $i, \"r\": $($PY $P import)}" >> "$J"
    echo "{\"run\": \"lazy\", \"i\": $i, \"r\": $($RUN $PY $P import)}" >> "$J"
done
dist() {
    local tag=$1; shift
    for r in 0 1; do
        "$@" $PY $P dist $r 2 > "${OUT:-/tmp}/dist_${tag}_$r.json" 2> "${OUT:-/tmp}/dist_${tag}_$r.err" &
    done
    wait
    for r in 0 1; do echo "{\"run\": \"$tag\", \"r\": $(cat "${OUT:-/tmp}/dist_${tag}_$r.json" || echo null)}" >> "$J"; done
}
if [ "${ONLY_REST:-0}" != 1 ]; then
    dist plain env
    dist lazy_wheel "$RUN"
    dist lazy_system env LAZYNCCL_LIBPATH=/lib/x86_64-linux-gnu/libnccl.so.2 "$RUN"
fi
dist_mode() {
    local mode=$1 tag=$2; shift 2
    for r in 0 1; do
        timeout 120 "$@" $PY $P $mode $r 2 > "${OUT:-/tmp}/${mode}_${tag}_$r.json" 2> "${OUT:-/tmp}/${mode}_${tag}_$r.err" &
    done
    wait
    for r in 0 1; do echo "{\"run\": \"${mode}_$tag\", \"r\": $(cat "${OUT:-/tmp}/${mode}_${tag}_$r.json" || echo null)}" >> "$J"; done
}
if [ "${ONLY_REST:-0}" = 1 ]; then : > "$J"; fi
dist_mode absent lazy env LAZYNCCL_LIBPATH=/nonexistent/libnccl.so.2 "$RUN"
for round in 1 2; do
    dist_mode bw plain env
    dist_mode bw lazy "$RUN"
done
echo "{\"run\": \"cupy_plain\", \"r\": $($PY $P cupy 2>/dev/null || echo null)}" >> "$J"
echo "{\"run\": \"cupy_lazy\", \"r\": $($RUN $PY $P cupy 2>/dev/null || echo null)}" >> "$J"
echo "{\"run\": \"jit_lazy\", \"r\": $($RUN $PY $P jit 2>/dev/null || echo null)}" >> "$J"
LAZYNCCL_DEBUG=1 "$RUN" $PY -c 'import torch' 2> "${OUT:-/tmp}/debug_import.txt" >/dev/null
cat "$J"
