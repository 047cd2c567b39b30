#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On the GPU machine: the wheel (gpu-bundle/*.whl, built on the
# CPU machine) pip-installed into a copy of PyTorch's venv; a 2-rank
# torch.distributed run through that venv's own lazynccl-run; each rank
# reports what it mapped and what lazynccl.status() says.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp}
V=/opt/torch/.venv-lz
rm -rf "$V" && cp -al /opt/torch/.venv "$V" || exit 1
"$V/bin/python" -m pip install --no-index --no-deps "$top"/gpu-bundle/lazynccl-*.whl > "$OUT/pip.log" 2>&1 || { tail "$OUT/pip.log"; exit 1; }
ls -la "$V/bin/lazynccl-run" "$V/bin/lazynccl-info"
export NCCL_NVLS_ENABLE=0 LZ_BUNDLE="$V/lib/python3.12/site-packages/lazynccl"
"$V/bin/lazynccl-run" --print-env
for r in 0 1; do
    timeout 300 "$V/bin/lazynccl-run" "$V/bin/python" "$top/tests/gpu/audit_torch.py" dist $r 2 > "$OUT/wheel_rank$r.json" 2> "$OUT/wheel_rank$r.err" &
done
wait
cat "$OUT"/wheel_rank0.json "$OUT"/wheel_rank1.json
"$V/bin/lazynccl-run" "$V/bin/python" -c 'import lazynccl, json; print(json.dumps({k: [v.loaded, v.shim] for k, v in lazynccl.status().items()}))'
"$V/bin/lazynccl-info" --json nccl | "$V/bin/python" -c 'import json,sys; d=json.load(sys.stdin); print("info would load:", d["libraries"][0]["chosen"]["path"])'
