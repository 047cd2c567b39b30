# SPDX-License-Identifier: MIT
# Sourced by the GPU scripts that run a bundle (tests/gpu/bundle.sh) through
# lazynccl-run: "$1" the bundle, "$2" the output directory. Sets B, OUT,
# SRC, PY (PYTHON, else PyTorch's venv on the GPU machine), RUN, SITE (its
# site-packages), the functions jsonl and tag, and the
# environment every run there needs (NVLink multicast off; the bundle's
# drop-ins for lazynccl-run).
set -u
export NCCL_NVLS_ENABLE=0
B=$(realpath "${1:?bundle}")
OUT=$(mkdir -p "${2:?out}" && realpath "$2")
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
export LAZYNCCL_DROPIN_DIR=$B/dropin
RUN=$B/lazynccl-run
SITE=$($PY -c 'import site; print(site.getsitepackages()[0])')
# jsonl NAME: the results file $OUT/NAME.jsonl, emptied; tag RUN: each JSON
# line read on stdin is written there with "run": RUN first.
jsonl() { J=$OUT/$1.jsonl; : > "$J"; }
tag() { sed "s/^{/{\"run\": \"$1\", /" >> "$J"; }
