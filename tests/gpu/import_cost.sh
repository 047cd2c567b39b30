#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What `import torch` maps and costs plain and under lazynccl-run, with each
# bundle given (e.g. drop-ins before and after a change), rounds alternated:
#   tests/gpu/import_cost.sh OUT BUNDLE [BUNDLE...]
# One JSON line per run (tests/gpu/consumer_probe.py import), tagged with
# the bundle; OUT/import_cost.jsonl.
set -u
export NCCL_NVLS_ENABLE=0
OUT=$(mkdir -p "${1:?out}" && realpath "$1"); shift
SRC=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
J=$OUT/import_cost.jsonl
: > "$J"
for round in 1 2 3; do
    $PY "$SRC/tests/gpu/consumer_probe.py" import 2>>"$OUT/err.log" | sed "s/^{/{\"run\": \"plain\", /" >> "$J"
    for b in "$@"; do
        B=$(realpath "$b")
        LAZYNCCL_DROPIN_DIR=$B/dropin "$B/lazynccl-run" $PY "$SRC/tests/gpu/consumer_probe.py" import \
            2>>"$OUT/err.log" | sed "s|^{|{\"run\": \"lazynccl-run $(basename "$B")\", |" >> "$J"
    done
done
$PY - "$J" <<'PYEOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| run | mappings | VmSize kB | VmRSS kB | seconds |")
print("| --- | --- | --- | --- | --- |")
for run in dict.fromkeys(r["run"] for r in rows):
    rs = [r for r in rows if r["run"] == run]
    med = lambda k: statistics.median(r[k] for r in rs)
    print(f"| {run} | {med('mappings'):.0f} | {med('VmSize'):.0f} | {med('VmRSS'):.0f} | {med('seconds'):.2f} |")
PYEOF
tail -3 "$OUT/err.log" 2>/dev/null
