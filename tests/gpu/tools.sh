#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On the GPU machine: NVIDIA's tools through lazynccl-run, in both
# orders (lazynccl-run TOOL cmd, TOOL lazynccl-run cmd), against plain.
#   tests/gpu/tools.sh BUNDLE_DIR OUT_DIR       (bundle from tests/gpu/bundle.sh)
# The program (tools_app.py) asks CuPy's NCCL its version, runs a RawKernel
# (with "oob", a planted out-of-bounds write) and prints the real NCCL files
# its process maps. Writes OUT_DIR/tools.txt: per row the exit status, the
# tool's verdict line and the app's own lines.
. "$(dirname "$0")/bundle_env.sh"
APP=$SRC/tests/gpu/tools_app.py
T=$OUT/tools.txt
: > "$T"
LOGS=${LOGS:-/tmp/tools-logs}   # each row's whole output
mkdir -p "$LOGS"
export PATH=/usr/local/cuda/bin:$PATH
LIMIT=${LIMIT:-240}

# row LABEL VERDICT_REGEX CMD...: runs CMD, keeps its verdict lines and the app's.
row() {
    label=$1 verdict=$2
    shift 2
    log=$LOGS/$(printf '%s' "$label" | tr -c 'A-Za-z0-9' _).log
    start=$SECONDS
    timeout "$LIMIT" "$@" > "$log" 2>&1
    rc=$?
    {
        echo "== $label (rc=$rc, $((SECONDS - start)) s)"
        grep -E "$verdict" "$log" | head -4
        grep -E '^app ' "$log"
    } >> "$T"
}

CS="ERROR SUMMARY|RACECHECK SUMMARY|Invalid __global__ write|No attachable|timed-out"
NCU="gpu__time_duration|Duration|No kernels were profiled|==ERROR=="
GDB="exited normally|exited with code|Program terminated|Error"
# ONLY=dist: the two-rank rows alone.
for mode in plain wrapped-outer wrapped-inner; do
    [ "${ONLY:-}" = dist ] && break
    case $mode in
    plain) pre=() post=() ;;
    wrapped-outer) pre=("$RUN") post=() ;;
    wrapped-inner) pre=() post=("$RUN") ;;
    esac
    if command -v compute-sanitizer > /dev/null; then
        row "memcheck $mode" "$CS" "${pre[@]}" compute-sanitizer --tool memcheck "${post[@]}" "$PY" "$APP"
        row "memcheck oob $mode" "$CS" "${pre[@]}" compute-sanitizer --tool memcheck "${post[@]}" "$PY" "$APP" oob
        row "racecheck $mode" "$CS" "${pre[@]}" compute-sanitizer --tool racecheck "${post[@]}" "$PY" "$APP"
    fi
    if command -v ncu > /dev/null; then
        row "ncu $mode" "$NCU" "${pre[@]}" ncu --target-processes all -k regex:^k$ -c 1 \
            --metrics gpu__time_duration.sum "${post[@]}" "$PY" "$APP"
    fi
    if command -v cuda-gdb > /dev/null; then
        # gdb runs an ELF program, not a script: inside it, lazynccl-run is
        # gdb's exec-wrapper (docs/concepts/the-same-job.md).
        wrap=()
        [ $mode = wrapped-inner ] && wrap=(-ex "set exec-wrapper $RUN")
        row "cuda-gdb $mode" "$GDB" "${pre[@]}" cuda-gdb -batch "${wrap[@]}" -ex run --args "$PY" "$APP"
    fi
    if command -v nsys > /dev/null; then
        row "nsys $mode" "Generated|Error|error" "${pre[@]}" nsys profile -o "$OUT/nsys-$mode" --force-overwrite true \
            "${post[@]}" "$PY" "$APP"
    fi
done

# PyTorch as shipped, one process: lazy at import, one NCCL after a call.
TORCH='import torch, torch.distributed as d, os
m = lambda: sorted({l.split()[-1] for l in open("/proc/self/maps") if "/libnccl.so" in l and not l.split()[-1].startswith(os.environ.get("LAZYNCCL_DROPIN_DIR", "\0"))})
print("app after import", m() or "-")
print("app version", torch.cuda.nccl.version())
print("app after version", m() or "-")'
[ "${ONLY:-}" = dist ] || row "torch plain" "Error" "$PY" -c "$TORCH"
[ "${ONLY:-}" = dist ] || row "torch wrapped" "Error" "$RUN" "$PY" -c "$TORCH"
[ "${ONLY:-}" = dist ] || row "torch wrapped --preload" "Error" "$RUN" --preload "$PY" -c "$TORCH"

# Two ranks (torchrun) where two GPUs are visible: an all_reduce plain,
# wrapped, and under compute-sanitizer memcheck in both orders.
if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then
    TR=$(dirname "$PY")/torchrun
    D=$SRC/tests/gpu/tools_dist.py
    export PYTHONPATH=$SRC/tests/gpu${PYTHONPATH:+:$PYTHONPATH}
    row "dist plain" "Error|error" "$TR" --nproc-per-node 2 "$D"
    row "dist wrapped" "Error|error" "$RUN" "$TR" --nproc-per-node 2 "$D"
    row "dist wrapped --preload" "Error|error" "$RUN" --preload "$TR" --nproc-per-node 2 "$D"
    # NCCL chosen at run time: the system's, for every rank, one copy each.
    if [ -f /lib/x86_64-linux-gnu/libnccl.so.2 ]; then
        export LAZYNCCL_LIBPATH=/lib/x86_64-linux-gnu/libnccl.so.2
        row "dist wrapped system-nccl" "Error|error" "$RUN" "$TR" --nproc-per-node 2 "$D"
        unset LAZYNCCL_LIBPATH
    fi
    row "dist memcheck wrapped-outer" "$CS" "$RUN" compute-sanitizer --tool memcheck --target-processes all \
        "$TR" --nproc-per-node 2 "$D"
    row "dist memcheck wrapped-inner" "$CS" compute-sanitizer --tool memcheck --target-processes all \
        "$RUN" "$TR" --nproc-per-node 2 "$D"
    row "dist memcheck plain" "$CS" compute-sanitizer --tool memcheck --target-processes all \
        "$TR" --nproc-per-node 2 "$D"
fi
cat "$T"
