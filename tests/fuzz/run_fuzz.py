#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One bounded libFuzzer run (a test of the 'fuzz' suite): seeds from
make_seeds.py, then TARGET for SECONDS; prints executions and coverage.
Fails on any crash; the crashing input is kept under tests/fuzz/regressions/
by the developer and replayed by every later run."""
import glob
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import lztest as t  # noqa: E402
import make_seeds  # noqa: E402


def main(target, seconds):
    exe = os.path.join(t.BUILD, target)
    if not os.path.exists(exe):
        print(f"SKIP: {target} not built (configure with CC=clang -Dfuzz=true)")
        return t.SKIP
    work = t.workdir(f"fuzz_{target}")
    make_seeds.main(f"{work}/seeds")
    kind = target[len("fuzz_"):]
    corpus = f"{work}/corpus"
    shutil.copytree(f"{work}/seeds/{kind}", corpus)
    regress = glob.glob(os.path.join(t.SOURCE, "tests", "fuzz", "regressions", kind, "*"))
    if regress:  # replay every crash found before
        r = t.run([exe, "-timeout=10"] + regress)
        if r.returncode != 0:
            print(r.stderr[-4000:])
            print("FAIL: a regression input crashes again")
            return 1
    r = t.run([exe, corpus, f"-max_total_time={seconds}", "-print_final_stats=1",
               f"-artifact_prefix={work}/", "-rss_limit_mb=2048", "-timeout=10"], cwd=work)
    stats = dict(re.findall(r"^stat::(\w+):\s+(\d+)", r.stderr, re.M))
    cov = re.findall(r"cov: (\d+) ft: (\d+)", r.stderr)
    print(f"{target}: {stats.get('number_of_executed_units', '?')} executions in {seconds} s, "
          f"coverage {cov[-1][0] if cov else '?'} edges, {cov[-1][1] if cov else '?'} features, "
          f"corpus {len(os.listdir(corpus))} inputs, {len(regress)} regression inputs")
    if r.returncode != 0:
        print(r.stderr[-4000:])
        print(f"FAIL: crash; the input is in {work} (add it to tests/fuzz/regressions/{kind}/)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 30))
