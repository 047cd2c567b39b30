#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# torchrun over every GPU, plain and under lazynccl-run (docs/concepts/gpu.md):
#   tests/gpu/torchrun.sh BUNDLE OUT
# Rows (each rank one JSON line of tests/gpu/dist_probe.py, tagged):
#   collectives: plain; lazynccl-run torchrun; the same with LAZYNCCL_LIBPATH
#   naming the system's NCCL; torchrun with the environment of
#   `lazynccl-run --print-env` (how a job script under srun takes it);
#   symm (NVSHMEM's symmetric memory): plain; lazynccl-run torchrun.
# Writes OUT/torchrun.jsonl and OUT/torchrun.txt (the checks, last).
. "$(dirname "$0")/bundle_env.sh"
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
NG=$(nvidia-smi -L | grep -c '^GPU')
TR=$(dirname "$PY")/torchrun
[ -x "$TR" ] || TR="$PY -m torch.distributed.run"
P=$SRC/tests/gpu/dist_probe.py
jsonl torchrun
job() {   # LABEL MODE CMD... : one torchrun job, its ranks' lines tagged
    local label=$1 mode=$2 port=$((29400 + RANDOM % 500))
    shift 2
    timeout 300 "$@" $TR --nproc-per-node "$NG" --master-port "$port" "$P" "$mode" \
        2>>"$OUT/torchrun.err" | grep '^{' | tag "$label"
}
if [ "${ONLY:-}" != symm ]; then   # ONLY=symm: the symmetric-memory jobs alone
    job "plain" collectives env
    job "lazynccl-run torchrun" collectives "$RUN"
    job "lazynccl-run torchrun, LAZYNCCL_LIBPATH=system" collectives \
        env LAZYNCCL_LIBPATH=/lib/x86_64-linux-gnu/libnccl.so.2 "$RUN"
    job "torchrun after eval of --print-env" collectives \
        bash -c 'eval "$("$0" --print-env)" && exec "$@"' "$RUN"
fi
job "symm plain" symm env
job "symm lazynccl-run torchrun" symm "$RUN"
$PY - "$J" "$SITE" > "$OUT/torchrun.txt" <<'PYEOF'
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
site = sys.argv[2]
wheel = f"{site}/nvidia/nccl/lib/libnccl.so.2"
# the system's NCCL as /proc/self/maps names it (argv[3]: as another machine did)
system = sys.argv[3] if len(sys.argv) > 3 else os.path.realpath("/lib/x86_64-linux-gnu/libnccl.so.2")
def plain_nccl(symm):
    """The real NCCL the plain ranks of the same kind of job mapped."""
    return sorted({p for r in rows if r["run"] == ("symm plain" if symm else "plain")
                   for p in r["nccl_end"]})
print("| run | ranks | exact | real NCCL per rank | NVIDIA libraries mapped by import torch | check |")
print("| --- | --- | --- | --- | --- | --- |")
for run in dict.fromkeys(r["run"] for r in rows):
    rs = [r for r in rows if r["run"] == run]
    exact = all(r["exact"] and all(r["exact"].values()) for r in rs) and not any("error" in r for r in rs)
    want = [system] if "LIBPATH=system" in run else plain_nccl(run.startswith("symm"))
    one = all(r["nccl_end"] == want for r in rs)
    imported = sorted({k for r in rs for k in r["after_import_torch"]})
    # PyTorch preloads NVRTC's builtins by path too: their drop-in stands in
    lazy_import = "plain" in run or set(imported) <= {"libcudart"}
    extra = ""
    if run.startswith("symm"):
        nv = [(r["nvshmem_before"], r.get("nvshmem_after_rendezvous"), r["nvshmem_end"]) for r in rs]
        one = one and all(len(e) == 1 for _, _, e in nv)
        if "lazynccl-run" in run:
            one = one and all(not b for b, _, _ in nv)
        extra = "; NVSHMEM before/after: " + ", ".join(f"{len(b)}/{len(e)}" for b, _, e in nv)
    ok = len(rs) >= 2 and exact and one and lazy_import
    print(f"| {run} | {len(rs)} | {exact} {[r['exact'] for r in rs]} | {sorted({p for r in rs for p in r['nccl_end']})}{extra} "
          f"| {imported} | {'pass' if ok else 'FAIL'} |")
for r in rows:
    for k in ("error", "one_shot_all_reduce_error"):
        if k in r:
            print(f"{r['run']} rank {r['rank']}: {k}: {r[k]}")
PYEOF
cat "$OUT/torchrun.txt"
tail -5 "$OUT/torchrun.err"
