#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On the GPU machine (bundle from tests/gpu/bundle.sh): the shared shim's
# own answers as indirect functions (src/api/lz_bind.h) beside real
# collectives. The collectives program linked with lazy binding and again
# run under LD_BIND_NOW=1, each checking its results; which file the
# program's PLT slots point into (tests/progs/bind_client.c: an own answer
# bound after the load in NCCL's, the rest in the shim's);
# compute-sanitizer's memcheck over the collectives, against a build linked
# to NCCL itself; cuda-gdb stopping on a plain export, and on an own answer
# with LD_BIND_NOW=1 (docs/reference/limitations.md).
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
    GDB_SEEN="Breakpoint 1|internal-error|exited with|exited normally"
    echo "== cuda-gdb: break ncclAllReduce"
    PATH=$CUDA/bin:$PATH timeout 150 cuda-gdb -q -batch -nx -ex "break ncclAllReduce" -ex run -ex continue \
        --args "$W/coll" single 2>&1 | grep -E "$GDB_SEEN" | sort -u
    for bindnow in 1 0; do
        echo "== cuda-gdb: break ncclGetErrorString, LD_BIND_NOW=$bindnow"
        env=()
        [ $bindnow = 1 ] && env=(-ex "set environment LD_BIND_NOW=1")
        PATH=$CUDA/bin:$PATH timeout 150 cuda-gdb -q -batch -nx "${env[@]}" -ex "break ncclGetErrorString" \
            -ex run -ex continue --args "$W/bind" version errstr 2>&1 | grep -E "$GDB_SEEN" | sort -u
    done
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
