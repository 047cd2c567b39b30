#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Which sections of README.md and docs/*.md give figures (x, ms, MB, %,
...) without naming the run in docs/data (or docs/gpu-results) they come
from, and which named runs do not exist (issue 39: every figure comes from a
recorded run or is removed). Prints one line per problem; exit status 1
when there is any. The suite runs it (test_shape.py)."""
import glob
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIGURE = re.compile(r"\b\d+(\.\d+)?(x|\s?(ms|MB|GB|KiB|kB|%|ns|us|µs|min|minutes))(?![\w.])")


def sections(text):
    """The text cut at its headings (not at a shell comment in a code block)."""
    out, cur, fenced = [], [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and re.match(r"#{1,3} ", line) and cur:
            out.append("\n".join(cur))
            cur = []
        cur.append(line)
    out.append("\n".join(cur))
    return out


def expand(name):
    """stack-issue37-h100.{jsonl,txt} -> both names."""
    m = re.match(r"^(.*)\{([^}]*)\}(.*)$", name)
    return [m.group(1) + x + m.group(3) for x in m.group(2).split(",")] if m else [name]


def main():
    bad = 0
    for path in [os.path.join(TOP, "README.md")] + sorted(glob.glob(os.path.join(TOP, "docs", "*.md"))):
        for section in sections(open(path, encoding="utf-8").read()):
            n = len(FIGURE.findall(section))
            if n and "data/" not in section and "gpu-results/" not in section:
                bad += 1
                print(f"{os.path.relpath(path, TOP)}: {section.splitlines()[0][:70]!r}: "
                      f"{n} figures, no docs/data run named")
            for named in re.findall(r"\bdata/([\w.{},-]+\.(?:txt|jsonl|log|diff|json))", section):
                for f in expand(named):
                    if not os.path.exists(os.path.join(TOP, "docs", "data", f)):
                        bad += 1
                        print(f"{os.path.relpath(path, TOP)}: names docs/data/{f}, which does not exist")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
