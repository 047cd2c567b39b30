#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Which sections of README.md and docs/*.md give figures (x, ms, MB, %,
...) without naming the run in docs/data (or docs/gpu-results) they come
from, and which named runs do not exist (every figure comes from a
recorded run or is removed). Prints one line per problem; exit status 1
when there is any. The suite runs it (test_shape.py).

With --verify, each typed figure (one not written by docs/figures.py) is
looked for in what its section names: runs in docs/data, results in
docs/gpu-results, and the tests under tests/ whose parameters it describes;
a figure none of them holds is unverified. docs/figures-unverified.txt
lists those known today (derived ratios, rounded values, runs not named);
a figure unverified and not
listed, or listed and now verified or gone, fails, so no new figure can
part from its data unseen and the list only shrinks. --write-unverified
rewrites the list."""
import glob
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIGURE = re.compile(r"(?<![\d.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(x|\s?(ms|MB|GB|KiB|kB|%|ns|us|µs|min|minutes))(?![\w.])")


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


MARKED = re.compile(r"<!-- figure: [\w.-]+ -->.*?<!-- /figure -->", re.S)
UNVERIFIED = os.path.join(TOP, "docs", "figures-unverified.txt")


def named_files(section):
    """The text of every file the section names that exists: runs in
    docs/data, results in docs/gpu-results, and tests under tests/ (for the
    parameters it describes)."""
    paths = [os.path.join(TOP, "docs", "data", f)
             for named in re.findall(r"\bdata/([\w.{},-]+\.(?:txt|jsonl|log|diff|json))", section)
             for f in expand(named)]
    paths += [os.path.join(TOP, named) for named in re.findall(r"\b(tests/[\w/.-]+\.(?:c|py|sh))\b", section)]
    paths += [os.path.join(TOP, "docs", "gpu-results", named)
              for named in re.findall(r"\bgpu-results/([\w.-]+\.(?:md|txt|json))", section)]
    return "".join(open(p, encoding="utf-8", errors="replace").read() for p in paths if os.path.exists(p))


def unverified():
    """'path | section | figure' of each typed figure its section's runs do
    not hold (commas ignored: 4,496,400 kB is 4496400 in a JSON line)."""
    out = []
    for path in [os.path.join(TOP, "README.md")] + sorted(glob.glob(os.path.join(TOP, "docs", "**", "*.md"), recursive=True)):
        for section in sections(open(path, encoding="utf-8").read()):
            data = named_files(section).replace(",", "")
            title = section.splitlines()[0][:60]
            for m in FIGURE.finditer(MARKED.sub("", section)):
                # the whole number (its comma groups joined), as a number of
                # the files: not a piece of a longer one; trailing zeros
                # aside (1.15 is 1.150), a rounded figure is not its value
                num = (m.group(1) + (m.group(2) or "")).replace(",", "")
                if not re.search(r"(?<![\w.])" + re.escape(num) + ("0*" if "." in num else "")
                                 + r"(?![\d])", data):
                    out.append(f"{os.path.relpath(path, TOP)} | {title} | {m.group(0)}")
    return out


def verify(write):
    now = unverified()
    if write:
        with open(UNVERIFIED, "w", encoding="utf-8") as f:
            f.write("# Typed figures that the runs their sections name do not hold (tests/figures_audit.py\n"
                    "# --verify): derived or rounded values, runs not named. Fix one (write it from its run\n"
                    "# with docs/figures.py, or name the run that holds it) and take its line out.\n")
            f.write("".join(line + "\n" for line in now))
        return 0
    known = [line for line in open(UNVERIFIED, encoding="utf-8").read().splitlines()
             if line and not line.startswith("#")]
    bad = 0
    left = list(known)
    for line in now:
        if line in left:
            left.remove(line)
        else:
            bad += 1
            print(f"unverified, not listed in docs/figures-unverified.txt: {line}")
    for line in left:
        bad += 1
        print(f"listed in docs/figures-unverified.txt, no longer unverified (take it out): {line}")
    return 1 if bad else 0


def main():
    if "--verify" in sys.argv or "--write-unverified" in sys.argv:
        return verify("--write-unverified" in sys.argv)
    bad = 0
    for path in [os.path.join(TOP, "README.md")] + sorted(glob.glob(os.path.join(TOP, "docs", "**", "*.md"), recursive=True)):
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
