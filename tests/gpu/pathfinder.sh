#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cuda.pathfinder under lazynccl-run, against plain (run from the repository root with gpu-bundle/).
PY=/opt/torch/.venv/bin/python3
export LAZYNCCL_DROPIN_DIR=$PWD/gpu-bundle/dropin NCCL_NVLS_ENABLE=0
$PY -c 'import cuda.pathfinder' 2>&1 | tail -1
echo "plain: $($PY tests/gpu/pathfinder_probe.py 2>&1 | tail -1)"
echo "wrapped: $(gpu-bundle/lazynccl-run $PY tests/gpu/pathfinder_probe.py 2>&1 | tail -1)"
echo "wrapped, debug:"; LAZYNCCL_DEBUG=1 gpu-bundle/lazynccl-run $PY tests/gpu/pathfinder_probe.py 2>&1 | grep -E "lazynccl" | head -8
