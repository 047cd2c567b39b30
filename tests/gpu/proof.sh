#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On the GPU machine: tests/gpu/proof.c through the proof shims in
# gpu-bundle/ (tests/gpu/bundle.sh), against the libraries the machine has
# (cuDNN from PyTorch's wheel when the Toolkit has none).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$top/gpu-bundle
out=${OUT:-/tmp}
gcc -O1 -o "$out/proof" "$top/tests/gpu/proof.c" -I/usr/local/cuda/include \
    -L"$B" -Wl,-rpath,"$B" -llazycublas -llazycufft -llazycudnn \
    -L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcudart -lm || exit 1
for d in /usr/local/cuda/lib64 /opt/torch/.venv/lib/python3.*/site-packages/nvidia/cudnn/lib; do
    [ -e "$d/libcudnn.so.9" ] && export LAZYCUDNN_LIBPATH=$d && break
done
echo "LAZYCUDNN_LIBPATH=${LAZYCUDNN_LIBPATH:-unset}"
LZ_NOT_REAL=$B LAZYNCCL_DEBUG=${LAZYNCCL_DEBUG:-0} "$out/proof"
