#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Everything of docs/concepts/gpu.md in one call on a GPU machine: build the GPU
# programs against a bundle of our built shims, check the collectives, the
# kernel pipeline and PyTorch coexistence, compare AllReduce bandwidth with a
# direct -lnccl build, and report which NCCL is chosen where two are installed.
#   tests/gpu/run.sh BUNDLE_DIR OUT_DIR
# BUNDLE_DIR holds liblazy*.so*, lazynccl-info and include/lazynccl.h (made by
# tests/gpu/bundle.sh on the build machine). Prints the table last.
set -u
export NCCL_NVLS_ENABLE=0          # NVLink multicast stays off on these machines
B=$(realpath "${1:?bundle dir}")
OUT=$(mkdir -p "${2:?out dir}" && realpath "$2")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
W=/tmp/lazynccl-gpu
rm -rf "$W" && mkdir -p "$W"
PY=${PYTHON:-python3}
SITE=$($PY -c 'import site; print(site.getsitepackages()[0])')
WHEEL_LIB=$SITE/nvidia/nccl/lib
NCCL_INC=$SITE/nvidia/nccl/include
[ -f "$NCCL_INC/nccl.h" ] || NCCL_INC=/usr/include
CUDA=${CUDA_HOME:-/usr/local/cuda}
table=$OUT/table.md
: > "$table"
row() { echo "| $1 | $2 |" >> "$table"; }

{
    nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
    nvidia-smi topo -m 2>/dev/null | head -4
    echo "python: $PY ($($PY --version 2>&1)); site-packages: $SITE"
    ls -l "$WHEEL_LIB" /lib/x86_64-linux-gnu/libnccl.so* 2>&1
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

CC="gcc -O2 -I$CUDA/include -I$NCCL_INC -I$B/include"
SHIM="-L$B -Wl,-rpath,$B"
build() { echo "+ $*"; "$@" || echo "BUILD FAILED: $*"; }
build $CC "$SRC/tests/gpu/collectives.c" -o "$W/coll" $SHIM -llazynccl -L$CUDA/lib64 -lcudart -Wl,-rpath,$CUDA/lib64
build $CC "$SRC/tests/gpu/bandwidth.c" -o "$W/bw_shim" $SHIM -llazynccl -L$CUDA/lib64 -lcudart -Wl,-rpath,$CUDA/lib64
build $CC "$SRC/tests/gpu/bandwidth.c" -o "$W/bw_direct" -L"$WHEEL_LIB" -l:libnccl.so.2 -Wl,-rpath,"$WHEEL_LIB" -L$CUDA/lib64 -lcudart -Wl,-rpath,$CUDA/lib64
build $CC "$SRC/tests/gpu/kernel.c" -o "$W/kernel" $SHIM -llazynvrtc -llazynvjitlink -L$CUDA/lib64/stubs -lcuda -lm
build $CC -I"$SRC/tests/progs" "$SRC/tests/progs/nccl_client.c" -o "$W/client" $SHIM -llazynccl

echo "| check | result |" >> "$table"; echo "| --- | --- |" >> "$table"
if [ "${ONLY_BANDWIDTH:-0}" != 1 ]; then

# 1. Collectives, through the shim, on the wheel's NCCL.
export LAZYNCCL_LIBPATH=$WHEEL_LIB/libnccl.so.2
"$W/coll" single > "$OUT/coll_single.txt" 2>&1; rc=$?
cat "$OUT/coll_single.txt"
row "collectives, 1 process, ncclCommInitAll ($(grep -c ' ok$' "$OUT/coll_single.txt")/7 ok)" \
    "$([ $rc = 0 ] && echo pass || echo FAIL) — $(grep -o '^[A-Za-z]* [a-zA-Z]*' "$OUT/coll_single.txt" | tr '\n' ' ')"
rm -f "$W/id"
# Two ranks need two GPUs: on one, rank 1 finds no device and rank 0 waits
# for it forever.
if [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -ge 2 ]; then
    "$W/coll" rank 0 2 "$W/id" > "$OUT/coll_rank0.txt" 2>&1 & p0=$!
    CUDA_VISIBLE_DEVICES=1 "$W/coll" rank 1 2 "$W/id" > "$OUT/coll_rank1.txt" 2>&1; rc1=$?
    wait $p0; rc0=$?
    cat "$OUT/coll_rank0.txt" "$OUT/coll_rank1.txt"
    row "collectives, 2 processes, unique id through a file (rank0 $(grep -c ' ok$' "$OUT/coll_rank0.txt")/7, rank1 $(grep -c ' ok$' "$OUT/coll_rank1.txt")/7 ok)" \
        "$([ $rc0 = 0 ] && [ $rc1 = 0 ] && echo pass || echo FAIL)"
else
    row "collectives, 2 processes" "not run: one GPU"
fi
unset LAZYNCCL_LIBPATH

# 2. Kernel: NVRTC + nvJitLink through the shims, run by the driver.
"$W/kernel" > "$OUT/kernel.txt" 2>&1; rc=$?
cat "$OUT/kernel.txt"
row "NVRTC + nvJitLink kernel run on the GPU" "$([ $rc = 0 ] && echo pass || echo FAIL) — $(head -1 "$OUT/kernel.txt")"

# 3. PyTorch coexistence.
$PY "$SRC/tests/gpu/torch_coexist.py" "$B" > "$OUT/torch.json" 2> "$OUT/torch.err"; rc=$?
tail -3 "$OUT/torch.err"; cat "$OUT/torch.json"
row "PyTorch first, then the shim: reuse of torch's NCCL" \
    "$($PY -c "import json,sys; d=json.load(open('$OUT/torch.json')); print(('pass' if d['same_file'] and d['shim_loaded_step']=='already loaded' and d['torch_after_shim_ok'] and d['shim_rc']==0 else 'FAIL')+' — torch '+d['torch']+' NCCL '+d['torch_nccl']+'; shim: '+d['shim_loaded_step']+' '+d['shim_loaded_path']+', version '+str(d['shim_version'])+'; libnccl mapped: '+str(len(d['maps_after_shim'])))" 2>&1)"

# 3b. The wheel step in the venv: an extension of the venv imported first
# (no NCCL), then the bundle's shim, outside any site-packages, by ctypes.
$PY "$SRC/tests/gpu/wheel_of_loaded.py" "$B" > "$OUT/wheel_of_loaded.json" 2> "$OUT/wheel_of_loaded.err"
tail -3 "$OUT/wheel_of_loaded.err"; cat "$OUT/wheel_of_loaded.json"
row "venv extension imported, then the shim from outside site-packages: the venv's wheel" \
    "$($PY -c "import json; d=json.load(open('$OUT/wheel_of_loaded.json')); print(('pass' if d['rc']==0 and d['step']=='wheel' and d['path'].startswith('$SITE/nvidia/') and len(d['libnccl_mapped'])==1 else 'FAIL')+' — after '+str(d['extension'])+': '+str(d['step'])+' '+str(d['path'])+', version '+str(d['version']))" 2>&1)"

# 4. Two NCCLs on one host.
STAGE=$W/stage/lib/python3/site-packages
mkdir -p "$STAGE/lazytest" && ln -s "$SITE/nvidia" "$STAGE/nvidia"
cp -P "$B"/liblazynccl.so* "$STAGE/lazytest/"
build $CC -I"$SRC/tests/progs" "$SRC/tests/progs/nccl_client.c" -o "$STAGE/lazytest/client" -L"$STAGE/lazytest" -Wl,-rpath,"$STAGE/lazytest" -llazynccl
"$B/lazynccl-info" nccl > "$OUT/info_plain.txt" 2>&1
"$B/lazynccl-info" --json nccl > "$OUT/info_plain.json" 2>&1
"$B/lazynccl-info" --from "$STAGE/lazytest/liblazynccl.so" nccl > "$OUT/info_wheel.txt" 2>&1
"$B/lazynccl-info" --json --from "$STAGE/lazytest/liblazynccl.so" nccl > "$OUT/info_wheel.json" 2>&1
NCCL_NET=IB "$B/lazynccl-info" --doctor --from "$STAGE/lazytest/liblazynccl.so" nccl > "$OUT/info_doctor.txt" 2>&1
cat "$OUT/info_plain.txt" "$OUT/info_wheel.txt" "$OUT/info_doctor.txt"
pick() { $PY -c "import json; d=json.load(open('$1'))['libraries'][0]; c=d['chosen'] or {}; v=[x['version'] for x in d['candidates'] if x['verdict']=='chosen']; print(c.get('step','-'), c.get('path','-'), (v or ['?'])[0])"; }
row "lazynccl-info, wheel layout out of reach" "$(pick "$OUT/info_plain.json")"
row "lazynccl-info --from site-packages/lazytest/liblazynccl.so" "$(pick "$OUT/info_wheel.json")"
"$W/client" call ncclGetVersion > "$OUT/client_plain.txt" 2>&1
"$STAGE/lazytest/client" call ncclGetVersion > "$OUT/client_wheel.txt" 2>&1
cat "$OUT/client_plain.txt" "$OUT/client_wheel.txt"
row "program linked to the bundle's shim (no wheel beside it)" "$(tr '\n' ' ' < "$OUT/client_plain.txt")"
row "program linked to the shim vendored next to the wheel" "$(tr '\n' ' ' < "$OUT/client_wheel.txt")"

fi

# 5. AllReduce bandwidth: the link-time shim, the drop-in (the -lnccl build
# under lazynccl-run) and direct, interleaved.
# All pinned to the same cores: NCCL places its proxy threads by affinity,
# and latency-bound sizes move by 20% with that placement.
# The order rotates each round, so no build always follows another.
PIN=$(command -v taskset >/dev/null && echo "taskset -c 0-7")
bw() {
    case $1 in
    shim) LAZYNCCL_LIBPATH=$WHEEL_LIB/libnccl.so.2 $PIN "$W/bw_shim" ;;
    dropin) LAZYNCCL_DROPIN_DIR=$B/dropin $PIN "$B/lazynccl-run" --only nccl "$W/bw_direct" ;;
    direct) $PIN "$W/bw_direct" ;;
    esac > "$OUT/bw_$1_$2.txt" 2>&1
}
VARIANTS=(shim dropin direct)
for round in $(seq "${BW_ROUNDS:-6}"); do
    for k in 0 1 2; do bw "${VARIANTS[$(((round + k) % 3))]}" "$round"; done
done
grep -h "lazynccl\|error" "$OUT"/bw_dropin_*.txt | sort | uniq -c | head -5
$PY - "$OUT" >> "$table" <<'PYEOF'
import glob, statistics, sys
out = sys.argv[1]
def load(kind):
    runs = []
    for f in sorted(glob.glob(f"{out}/bw_{kind}_*.txt")):
        rows = {}
        for line in open(f):
            p = line.split()
            if len(p) == 3 and p[0].isdigit():
                rows[int(p[0])] = (float(p[1]), float(p[2]))
        runs.append(rows)
    return runs
runs = {k: load(k) for k in ("shim", "dropin", "direct")}
every = [r for v in runs.values() for r in v]
sizes = sorted(set.intersection(*[set(r) for r in every])) if all(runs.values()) else []
n = {k: len(v) for k, v in runs.items()}
print(f"\nruns: {n}, order rotated each round; busbw in GB/s (median), time in us (median)\n")
print("| AllReduce bytes | direct busbw | shim busbw | drop-in busbw | shim/direct | drop-in/direct "
      "| direct us | shim us | drop-in us |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for s in sizes:
    med = {k: (statistics.median(r[s][0] for r in v), statistics.median(r[s][1] for r in v))
           for k, v in runs.items()}
    d, sh, dr = med["direct"], med["shim"], med["dropin"]
    # one GPU: the bus bandwidth is 0 (2(n-1)/n of the data crosses a bus),
    # so the ratios are of time, inverted (direct us / shim us)
    ratio = (lambda x: x[1] / d[1]) if d[1] else (lambda x: d[0] / x[0] if x[0] else float("nan"))
    print(f"| {s} | {d[1]:.4g} | {sh[1]:.4g} | {dr[1]:.4g} | {ratio(sh):.3f} | {ratio(dr):.3f} "
          f"| {d[0]:.4g} | {sh[0]:.4g} | {dr[0]:.4g} |")
# Latency of each process (one run = one process), to see the modes.
print("\n| run | " + " | ".join(f"{k} 8 B us, 1 MiB us" for k in runs) + " |")
print("| --- |" + " --- |" * len(runs))
for i in range(max(n.values())):
    cells = []
    for k, v in runs.items():
        r = v[i] if i < len(v) else {}
        cells.append(", ".join(f"{r[s][0]:.3g}" if s in r else "-" for s in (8, 1048576)))
    print(f"| {i + 1} | " + " | ".join(cells) + " |")
PYEOF
echo
echo "=== table"
cat "$table"
