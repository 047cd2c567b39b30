# SPDX-License-Identifier: MIT
"""The table of tests/gpu/stack.sh's output (stack.jsonl): per workload, the
NVIDIA libraries mapped at import and those the workload added, plain and
under lazynccl-run, copies, results; import medians.

    python3 tests/gpu/stack_table.py OUT/stack/stack.jsonl
"""
import json
import statistics
import sys


def short(names):
    return " ".join(n.replace(".so", "").replace("lib", "", 1) for n in names) or "-"


def main(path):
    lines = [json.loads(line) for line in open(path)]
    rows = [d for d in lines if "workload" in d]
    steps = [d for d in lines if "step" in d]  # consumer_probe.py's dist rows
    print("| run | workload | mapped at import | added by the workload | copies > 1 | result |")
    print("|---|---|---|---|---|---|")
    for d in rows:
        if d["workload"] == "import" and d["run"] in ("plain", "lazy"):
            continue
        imp = sorted(d.get("at_import", {}))
        after = sorted(d.get("after", {}))
        multi = {k: v for k, v in d.get("after", {}).items() if len(v) > 1}
        print(f"| {d['run']} | {d['workload']} | {short(imp)} | "
              f"{short(n for n in after if n not in imp)} | {multi or 'none'} | {d.get('result')} |")
    if steps:
        print()
        print("| run | 2-rank step | real libnccl mapped | collectives exact |")
        print("|---|---|---|---|")
        for d in steps:
            print(f"| {d['run']} | {d['step']} | {d.get('libnccl')} | {d.get('exact', '')} |")
    print()
    for run in ("plain", "lazy"):
        imps = [d for d in rows if d["workload"] == "import" and d["run"] == run]
        if imps:
            med = {k: statistics.median(d[k] for d in imps) for k in ("import_s", "vmsize_kb", "rss_kb")}
            print(f"{run}: import {med['import_s']:.2f} s, VmSize {med['vmsize_kb']:,.0f} kB, "
                  f"VmRSS {med['rss_kb']:,.0f} kB (medians of {len(imps)}): "
                  f"at import {short(sorted(imps[0]['at_import']))}")


if __name__ == "__main__":
    main(sys.argv[1])
