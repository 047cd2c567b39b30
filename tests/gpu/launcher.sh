#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The native lazynccl-run under NVIDIA's debugger and profiler on the GPU
# machine (docs/concepts/the-same-job.md, "Debuggers and profilers"):
#   tests/gpu/launcher.sh BUNDLE_DIR OUT_DIR      (bundle from tests/gpu/bundle.sh)
# Rows: cuda-gdb --args lazynccl-run python3 GEMM; ncu --target-processes all
# over the GEMM plain, with the wrapper's environment preset (eval of
# --print-env) and through lazynccl-run, each timed (wall seconds); the
# launcher's start cost (bench/launch.c) and its exec count. Writes
# OUT_DIR/launcher.txt.
. "$(dirname "$0")/bundle_env.sh"
T=$OUT/launcher.txt
: > "$T"
export PATH=/usr/local/cuda/bin:$PATH
APP='import torch, os
a = torch.randn(2048, 2048, device="cuda")
b = (a @ a).sum().item()
m = sorted({l.split()[-1] for l in open("/proc/self/maps") if "/libnccl.so" in l})
print("app gemm ok, NCCL files mapped:", m or "-", "LD_AUDIT" in os.environ)'
timed() {
    label=$1; shift
    start=$(date +%s%N)
    timeout 500 "$@" > "$OUT/$label.log" 2>&1
    rc=$?
    end=$(date +%s%N)
    echo "== $label rc=$rc $(( (end - start) / 1000000 )) ms" >> "$T"
    grep -E '^app |exited normally|exited with code|==PROF==|==ERROR==|Disconnected' "$OUT/$label.log" | head -5 >> "$T"
}
timed gdb-launcher cuda-gdb -batch -ex run --args "$RUN" "$PY" -c "$APP"
timed gdb-plain cuda-gdb -batch -ex run --args "$PY" -c "$APP"
NCU=(ncu --target-processes all -c 3 --metrics gpu__time_duration.sum)
for round in 1 2; do
    timed "ncu-plain-$round" "${NCU[@]}" "$PY" -c "$APP"
    timed "ncu-preset-$round" bash -c "eval \"\$($RUN --print-env)\" && exec \"\$@\"" _ "${NCU[@]}" "$PY" -c "$APP"
    timed "ncu-launcher-$round" "${NCU[@]}" "$RUN" "$PY" -c "$APP"
done
if command -v cc > /dev/null && cc -O2 -o "$OUT/launch" "$SRC/bench/launch.c"; then
    echo "== launch (bench/launch.c, 500 pairs)" >> "$T"
    "$OUT/launch" "$RUN" 500 >> "$T" 2>&1
fi
if command -v strace > /dev/null; then
    echo "== execs of lazynccl-run /bin/true: $(strace -f -qq -e trace=execve "$RUN" /bin/true 2>&1 | grep -c 'execve(')" >> "$T"
fi
cat "$T"
