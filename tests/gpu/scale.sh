#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Loading at scale on the GPU machine (docs/concepts/performance.md, "Loading at
# scale"): `import torch`, a matmul and a one-rank NCCL communicator, plain,
# under lazynccl-run's variables, and with the job's resolution cache
# (warmed by one run first); per run, strace's file system calls, failed
# lookups and of them the dynamic linker's, and the wall time.
#   tests/gpu/scale.sh OUT BUNDLE
set -u
export NCCL_NVLS_ENABLE=0
OUT=$(mkdir -p "${1:?out}" && realpath "$1")
B=$(realpath "${2:?bundle}")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
WORK=$(mktemp -d)
# strace from the bundle's Debian packages where the machine has none, its
# libraries given to ld.so for strace alone (the job's environment is the
# job's: LD_LIBRARY_PATH decides what it loads).
STRACE="strace"
if ! command -v strace >/dev/null && ls "$B"/debs/*.deb >/dev/null 2>&1; then
    for d in "$B"/debs/*.deb; do dpkg -x "$d" "$WORK/debs"; done
    STRACE="/lib64/ld-linux-x86-64.so.2 --library-path $WORK/debs/usr/lib/x86_64-linux-gnu $WORK/debs/usr/bin/strace"
fi
echo "# strace: $STRACE; LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}" >> "$OUT/err.log"
$STRACE -V >/dev/null 2>&1 || { echo "strace cannot run on this machine" | tee "$OUT/scale.txt"; exit 1; }
cat > "$WORK/job.py" <<'PYEOF'
import os, time
t0 = time.monotonic()
import torch
import torch.distributed as dist
x = torch.randn(1024, 1024, device="cuda")
y = (x @ x).sum().item()
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
t = torch.ones(4, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
ok = t.sum().item() == 4.0
dist.destroy_process_group()
maps = sorted({l.split()[-1] for l in open("/proc/self/maps") if "libnccl" in l})
print(f"ok={ok} seconds={time.monotonic() - t0:.2f} nccl={maps}")
PYEOF
wrapped() { env LAZYNCCL_DROPIN_DIR="$B/dropin" "$B/lazynccl-run" "$@" --print-env; }
count() {  # name env...
    local name=$1; shift
    local log=$WORK/$name.trace
    local out
    out=$(env "$@" $STRACE -f -qq -e trace=%file -o "$log" "$PY" "$WORK/job.py" 2>>"$OUT/err.log")
    local calls failed ldso
    calls=$(grep -vc 'resumed>' "$log")
    failed=$(grep -cE '= -1 E[A-Z]+' "$log")
    ldso=$(grep -E '= -1 E[A-Z]+' "$log" | grep -cE 'openat\(AT_FDCWD, "[^"]*/lib[^"/]*\.so[^"/]*", O_RDONLY\|O_CLOEXEC\)|newfstatat\(AT_FDCWD, "[^"]*/(glibc-hwcaps/[^"]*|tls|x86_64|haswell)"')
    grep -E '= -1 E[A-Z]+' "$log" | sed 's/^[0-9]* //' | sort | uniq -c | sort -rn > "$OUT/failed-${name// /_}.txt"
    echo "| $name | $calls | $failed | $ldso | $out |"
}
{
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); $($PY -c 'import torch; print("torch", torch.__version__)'); lazynccl at ${LZ_COMMIT:-$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
echo "# import torch + 1024x1024 matmul + a one-rank NCCL communicator and all_reduce, under strace -f -e trace=%file"
echo "| run | file system calls | failed lookups | of them the dynamic linker's | the job's own line |"
echo "| --- | --- | --- | --- | --- |"
count plain
W=$(wrapped | sed -n "s/^export \([A-Z_]*\)='\(.*\)'$/\1=\2/p" | tr '\n' ' ')
count lazynccl-run $W
C=$(wrapped --cache "$WORK/job.cache" | sed -n "s/^export \([A-Z_]*\)='\(.*\)'$/\1=\2/p" | tr '\n' ' ')
env $C "$PY" "$WORK/job.py" > /dev/null 2>>"$OUT/err.log"   # the warm-up: records
echo "# cache entries: $(($(wc -l < "$WORK/job.cache") - 1))"
count "lazynccl-run --cache" $C
} | tee "$OUT/scale.txt"
tail -3 "$OUT/err.log" 2>/dev/null
