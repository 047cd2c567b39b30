#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On the GPU machine (bundle from tests/gpu/bundle.sh): the shared shim's
# indirect-function exports (src/lz_bind.h) with real collectives. The
# collectives program linked with lazy binding (its NCCL calls bound after
# the first one loads NCCL: one jump into NCCL) and again run under
# LD_BIND_NOW=1 (every call on a thunk), each checking its results; which
# file the program's PLT slots point into (tests/progs/bind_client.c);
# compute-sanitizer's memcheck over the collectives.
#   tests/gpu/bind.sh BUNDLE_DIR OUT_DIR
. "$(dirname "$0")/bundle_env.sh"
W=/tmp/lazynccl-bind && rm -rf "$W" && mkdir -p "$W"
CUDA=${CUDA_HOME:-/usr/local/cuda}
NCCL_INC=$SITE/nvidia/nccl/include
export LAZYNCCL_LIBPATH=$SITE/nvidia/nccl/lib/libnccl.so.2
CC="gcc -O2 -Wl,-z,lazy -I$CUDA/include -I$NCCL_INC -I$B/include -L$B -Wl,-rpath,$B"
$CC "$SRC/tests/gpu/collectives.c" -o "$W/coll" -llazynccl -L$CUDA/lib64 -lcudart -Wl,-rpath,$CUDA/lib64
$CC "$SRC/tests/progs/bind_client.c" -o "$W/bind" -llazynccl
# The same collectives linked to NCCL itself, for memcheck's own count:
# lazynccl's control API answered by three stand-ins.
printf '%s\n' 'const char *lazynccl_last_error(void) { return 0; }' \
    'const char *lazynccl_loaded_path(void) { return "direct"; }' \
    'const char *lazynccl_loaded_step(void) { return "-"; }' > "$W/direct.c"
gcc -O2 -I$CUDA/include -I$NCCL_INC -I$B/include "$SRC/tests/gpu/collectives.c" "$W/direct.c" \
    -o "$W/coll_direct" -L"$SITE/nvidia/nccl/lib" -l:libnccl.so.2 -Wl,-rpath,"$SITE/nvidia/nccl/lib" \
    -L$CUDA/lib64 -lcudart -Wl,-rpath,$CUDA/lib64
{
    echo "== collectives, lazy binding"; "$W/coll" single; echo "rc=$?"
    echo "== collectives, LD_BIND_NOW=1"; LD_BIND_NOW=1 "$W/coll" single; echo "rc=$?"
    echo "== bind_client"
    "$W/bind" version errstr lasterr count got:ncclGetVersion got:ncclGetErrorString \
        got:ncclGetLastError got:ncclCommCount; echo "rc=$?"
    for p in coll coll_direct; do
        for bind in lazy now; do
            [ $p = coll_direct ] && [ $bind = now ] && continue
            echo "== compute-sanitizer memcheck, $p, binding $bind"
            env $([ $bind = now ] && echo LD_BIND_NOW=1) PATH=$CUDA/bin:$PATH timeout 200 \
                compute-sanitizer --tool memcheck "$W/$p" single > "$W/memcheck.txt" 2>&1
            echo "rc=$?"
            grep -E "ok$|^========= (Program hit|Invalid|ERROR SUMMARY)" "$W/memcheck.txt" | sort | uniq -c
        done
    done
} 2>&1 | tee "$OUT/bind.txt"
