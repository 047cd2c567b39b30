#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# torch as shipped, plain vs under lazynccl-run: which real CUDA libraries are
# mapped after import and after a matmul, and the audit module's words.
set -u
B=$(cd "$(dirname "$0")/../.." && pwd)/gpu-bundle
PY=/opt/torch/.venv/bin/python3
export LAZYNCCL_DROPIN_DIR=$B/dropin NCCL_NVLS_ENABLE=0
cat > /tmp/probe.py <<'PY'
import os, sys, json
def real():
    out = set()
    for line in open("/proc/self/maps"):
        p = line.split()[-1] if len(line.split()) >= 6 else ""
        if p.startswith("/") and "gpu-bundle" not in p and any(k in os.path.basename(p) for k in ("libnccl", "libcublas", "libcudnn", "libcufft", "libcusparse", "libcusolver", "libcurand", "libnvrtc", "libnvJitLink", "libcupti", "libcufile", "libnvshmem")):
            out.add(os.path.basename(p))
    return sorted(out)
import torch
a = real()
x = torch.randn(256, 256, device="cuda"); y = (x @ x).sum().item()
b = real()
print(json.dumps({"after_import": a, "after_matmul": b}))
PY
echo "== plain"; $PY /tmp/probe.py
echo "== lazy"; LAZYNCCL_DEBUG=1 $B/lazynccl-run $PY /tmp/probe.py 2> $OUT/debug.txt
grep -c "" $OUT/debug.txt
echo "== module said needs:"; grep -i "not needed by its drop-in" $OUT/debug.txt | head -20
echo "== stands in:"; grep -c "stands in" $OUT/debug.txt
