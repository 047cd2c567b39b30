#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lazynccl-info --check over PyTorch's own libtorch_cuda.so
# (docs/reference/lazynccl-info.md, "--check"): against the NCCL its RUNPATH finds
# (the wheel's), and against the system's NCCL named by LAZYNCCL_LIBPATH;
# beside each, what nm says: the NCCL functions libtorch_cuda.so imports
# and how many of them that file lacks.
#   tests/gpu/check_torch.sh BUNDLE OUT
. "$(dirname "$0")/bundle_env.sh"
LIB=$($PY -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so"))')
SYS=$(readlink -f /lib/x86_64-linux-gnu/libnccl.so.2)
WHEEL=$(readlink -f "$SITE/nvidia/nccl/lib/libnccl.so.2")
R=$OUT/check-torch.txt
# lacking FILE: the NCCL names libtorch_cuda.so imports that FILE does not export.
lacking() {
    comm -23 <(nm -D --undefined-only "$LIB" | awk '{print $2}' | sed 's/@.*//' | grep '^nccl' | sort -u) \
             <(nm -D --defined-only "$1" | awk '{print $3}' | sed 's/@.*//' | sort -u)
}
{
    echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); torch $($PY -c 'import torch; print(torch.__version__)')"
    echo "# libtorch_cuda.so imports $(nm -D --undefined-only "$LIB" | awk '{print $2}' | grep -c '^nccl') NCCL functions (nm)"
    echo "# nm: the wheel's $WHEEL lacks $(lacking "$WHEEL" | wc -l): $(lacking "$WHEEL" | xargs)"
    echo "# nm: the system's $SYS lacks $(lacking "$SYS" | wc -l): $(lacking "$SYS" | xargs)"
    echo "\$ lazynccl-info --check $LIB"
    "$B/lazynccl-info" --check "$LIB"
    echo "exit $?"
    echo "\$ LAZYNCCL_LIBPATH=$SYS lazynccl-info --check $LIB nccl"
    LAZYNCCL_LIBPATH=$SYS "$B/lazynccl-info" --check "$LIB" nccl
    echo "exit $?"
} > "$R" 2>&1
cat "$R"
