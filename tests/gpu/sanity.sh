#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On the GPU machine, after tests/gpu/bundle.sh here (gpu-bundle/ carried):
# PyTorch as shipped, plain, under lazynccl-run, and under lazynccl-run with
# LAZYNCCL_LIBPATH naming the system's NCCL (tests/gpu/sanity.py for each);
# then lazynccl-info's exit status. docs/data/gpu-h100-sanity-*.txt.
set -u
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 LAZYNCCL_DROPIN_DIR=$PWD/gpu-bundle/dropin
py=/opt/torch/.venv/bin/python3
echo "== plain"; $py tests/gpu/sanity.py
echo "== lazynccl-run"; gpu-bundle/lazynccl-run $py tests/gpu/sanity.py
echo "== lazynccl-run, LAZYNCCL_LIBPATH=system"
LAZYNCCL_LIBPATH=$(readlink -f /lib/x86_64-linux-gnu/libnccl.so.2) gpu-bundle/lazynccl-run $py tests/gpu/sanity.py
echo "== lazynccl-run, LAZYNCCL_DEBUG=1: the search's log of NCCL's first call"
LAZYNCCL_DEBUG=1 gpu-bundle/lazynccl-run $py tests/gpu/sanity.py 2>&1 | grep -E "lazynccl: (loaded|\[)" | head -12
gpu-bundle/lazynccl-info >/dev/null 2>&1; echo "lazynccl-info rc=$?"
