#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On the GPU machine: PyTorch 2.11 plain and under lazynccl-run
# with gpu-bundle/ (tests/gpu/bundle.sh): what `import torch` maps of
# cuSPARSELt, NVSHMEM and cuFile, and what each of their uses maps
# (tests/gpu/torch_extra.py). JSON lines on stdout.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$top/gpu-bundle
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
export LAZYNCCL_DROPIN_DIR=$B/dropin LZ_BUNDLE=$B NCCL_NVLS_ENABLE=0
# cuFile without the nvidia-fs driver: its compatibility mode (POSIX I/O).
printf '{"properties": {"allow_compat_mode": true}}\n' > /tmp/cufile.json
export CUFILE_ENV_PATH_JSON=/tmp/cufile.json
for mode in ${MODES:-import sparse gds}; do
    echo "{\"run\": \"plain\", \"r\": $(timeout 240 $PY "$top/tests/gpu/torch_extra.py" $mode 2>/tmp/err_plain_$mode || echo null)}"
    echo "{\"run\": \"lazy\", \"r\": $(timeout 240 "$B/lazynccl-run" $PY "$top/tests/gpu/torch_extra.py" $mode 2>/tmp/err_lazy_$mode || echo null)}"
done
# NVSHMEM's symmetric memory: two ranks, one GPU each, where there are two.
if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then
    for run in plain lazy; do
        pre=""; [ $run = lazy ] && pre="$B/lazynccl-run"
        for r in 0 1; do
            timeout 240 $pre $PY "$top/tests/gpu/torch_extra.py" nvshmem $r 2 > /tmp/nvshmem_${run}_$r.json 2> /tmp/err_${run}_nvshmem_$r &
        done
        wait
        for r in 0 1; do echo "{\"run\": \"$run\", \"r\": $(cat /tmp/nvshmem_${run}_$r.json || echo null)}"; done
    done
fi
tail -n 3 /tmp/err_*
