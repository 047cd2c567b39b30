#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The documentation's runnable examples, run as written: every fenced block
of README.md and docs/*.md whose info string says `runnable` (```sh
runnable) is one case. Each runs under `bash -e -o pipefail` in a copy of
the checkout (its files git tracks or does not ignore), whose `build` is
the suite's build tree, so
what a block writes lands in the copy; a block may write under /tmp, as a
reader's would. A block that fails fails its case with its output."""
import glob
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lztest as t  # noqa: E402

FENCE = re.compile(r"^```(\w+)[ \t]+runnable[^\n]*\n(.*?)^```", re.M | re.S)


def blocks():
    """{case name: (file, line, text)} of every runnable block."""
    out = {}
    files = [os.path.join(t.SOURCE, "README.md")] + sorted(
        glob.glob(os.path.join(t.SOURCE, "docs", "**", "*.md"), recursive=True))
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        # A page's name, or its folder's for a folder's index page.
        name = os.path.splitext(os.path.basename(path))[0]
        if name == "index":
            name = os.path.basename(os.path.dirname(path))
        stem = re.sub(r"\W", "_", name.lower())
        for k, m in enumerate(FENCE.finditer(text), 1):
            line = text.count("\n", 0, m.start()) + 1
            out[f"docs_run_{stem}_{k}"] = (os.path.relpath(path, t.SOURCE), line, m.group(2))
    return out


def checkout_copy(d):
    """The checkout's files (tracked, and new ones git does not ignore) under d,
    with build -> the suite's build."""
    files = subprocess.run(["git", "-C", t.SOURCE, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           capture_output=True, check=True).stdout
    for rel in files.decode().split("\0"):
        if not rel:
            continue
        src, dst = os.path.join(t.SOURCE, rel), os.path.join(d, rel)
        if os.path.isfile(src) or os.path.islink(src):
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(src, dst, follow_symlinks=False)
    os.symlink(t.BUILD, os.path.join(d, "build"))


def run_block(name):
    path, line, text = BLOCKS[name]
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("the documentation's commands name the plain build")
    if t.EXE_WRAPPER:
        raise t.Skip("a cross build's programs do not run here as written")
    d = t.workdir(name)
    checkout_copy(d)
    r = t.run(["bash", "-e", "-o", "pipefail", "-c", text], cwd=d)
    t.equal(r.returncode, 0, f"{path}:{line}: the block\n{text}\nexited {r.returncode}:\n"
            f"{r.stdout[-3000:]}{r.stderr[-3000:]}")


BLOCKS = blocks()
t.case_per(sorted(BLOCKS), run_block, "{}", "The runnable block {} of the documentation, run as written.")

if __name__ == "__main__":
    raise SystemExit(t.main())
