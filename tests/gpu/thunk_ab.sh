#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/thunk_ab.c three ways on every GPU of the machine (docs/concepts/gpu.md):
# linked to liblazynccl (A: the shim's thunk), linked -lnccl under
# lazynccl-run (A: the drop-in's), linked -lnccl plain (A is B: the
# method's noise floor). Every way loads the libnccl.so.2 of ld.so.cache.
#   tests/gpu/thunk_ab.sh BUNDLE OUT [ROUNDS] [BATCH]
. "$(dirname "$0")/bundle_env.sh"
CUDA=${CUDA_HOME:-/usr/local/cuda}
R=$OUT/thunk-ab.txt
cc -O2 -o "$OUT/ab_shim" "$SRC/tests/gpu/thunk_ab.c" -I"$CUDA/include" -I"$B/include" \
    -L"$B" -l:liblazynccl.so.0 -Wl,-rpath,"$B" -L"$CUDA/lib64" -lcudart -ldl
cc -O2 -o "$OUT/ab_direct" "$SRC/tests/gpu/thunk_ab.c" -I"$CUDA/include" \
    -L"$CUDA/lib64" -l:libnccl.so.2 -lcudart -ldl
{
    echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs); libnccl.so.2 by ld.so.cache: $(ldconfig -p | grep -m1 'libnccl.so.2 ' | sed 's/.*=> //')"
    for way in shim dropin plain; do
        echo "## $way"
        case $way in
        shim) "$OUT/ab_shim" "${3:-200}" "${4:-50}" ;;
        dropin) "$RUN" --only nccl "$OUT/ab_direct" "${3:-200}" "${4:-50}" ;;
        plain) "$OUT/ab_direct" "${3:-200}" "${4:-50}" ;;
        esac 2>&1 | grep -v '^NCCL INFO'
    done
} > "$R"
rm -f "$OUT/ab_shim" "$OUT/ab_direct"
cat "$R"
