#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Figures written into README.md and docs/*.md from their sources, never
typed: counts read from the build (exports of each shim, the libraries an
installation serves, the search order's steps) and tables read from runs
recorded in docs/data.

In the text, a figure lies between two markers that name it:

    <!-- figure: exports.cublas -->766<!-- /figure -->

(a block figure, a table, has its markers on lines of their own). Usage:

    python3 docs/figures.py [--build DIR] --check   # exit 1, naming each figure that differs
    python3 docs/figures.py [--build DIR] --write   # rewrite every figure from its source

`tests/test_shape.py` (docs_figures_match_their_sources) runs --check, so a
text and its data cannot part. A figure of unknown name is an error."""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKER = re.compile(r"<!-- figure: ([\w.-]+) -->(.*?)<!-- /figure -->", re.S)


class Sources:
    """Each figure's value, computed on first use."""

    def __init__(self, build):
        self.build = build
        self._specs = None

    def specs(self):
        """{id: describe's keys} of every spec in stubs/ (the installation's)."""
        if self._specs is None:
            lazygen = [sys.executable, os.path.join(TOP, "gen", "lazygen.py")]
            paths = subprocess.run(lazygen + ["list-specs", os.path.join(TOP, "stubs")], check=True,
                                   capture_output=True, text=True).stdout.split()
            self._specs = {}
            for p in paths:
                out = subprocess.run(lazygen + ["describe", p], check=True, capture_output=True,
                                     text=True).stdout
                keys = dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)
                self._specs[keys["id"]] = keys
        return self._specs

    def served(self):
        return sorted((s for s in self.specs().values() if s.get("install") == "yes"),
                      key=lambda s: s["display"].lower())

    def exports(self, lib):
        path = os.path.join(self.build, "src", f"{lib}_exports.txt")
        if not os.path.exists(path):
            raise KeyError(f"{path}: {self.left_out(lib)}")
        with open(path) as f:
            return str(sum(1 for line in f if line.strip()))

    def left_out(self, lib):
        """Why the build has no export list for lib: the part it left out and
        the reason, asked of the generator as the build asked it."""
        lazygen = [sys.executable, os.path.join(TOP, "gen", "lazygen.py")]
        for d in ("stubs", os.path.join("tests", "specs")):
            spec = os.path.join(TOP, d, f"{lib}.toml")
            if os.path.exists(spec):
                break
        else:
            return f"no spec {lib}.toml in stubs/ or tests/specs/"
        rel = os.path.relpath(spec, TOP)
        if not os.path.exists(os.path.join(self.build, "build.ninja")):
            return f"{self.build} is not a configured build: meson setup {self.build}"
        r = subprocess.run(lazygen + ["find-include", spec, "--option-dir", "", "--cc", "cc"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            why = r.stderr.strip().split(": error: ", 1)[-1]
            return (f"{rel} is optional and this build left it out: {why}; install it, then "
                    f"meson setup --reconfigure {self.build}")
        return (f"{self.build} was configured before {rel}'s header could be found: "
                f"meson setup --reconfigure {self.build}")

    @staticmethod
    def newest(pattern):
        # Runs are named by what they measure, the day and the commit
        # (versus-2026-11-25-86fbe39.txt): the day orders them, and the
        # commit's time, where git knows it, orders one day's.
        def when(path):
            m = re.search(r"-(\d{4}-\d{2}-\d{2})-([0-9a-f]{7,40})\b", os.path.basename(path))
            t = subprocess.run(["git", "log", "-1", "--format=%ct", m.group(2)], cwd=TOP,
                               capture_output=True, text=True).stdout.strip() if m else ""
            return (m.group(1) if m else "", int(t) if t.isdigit() else 0, path)
        runs = sorted(glob.glob(os.path.join(TOP, "docs", "data", pattern)), key=when)
        if not runs:
            raise KeyError(f"no docs/data/{pattern}")
        return runs[-1]

    def versus(self, parts=True):
        """bench/versus's table and its header line, from its newest run;
        without parts, not the rows that take the first call apart or
        give its floors (the README's short table)."""
        path = self.newest("versus-*.txt")
        with open(path) as f:
            lines = f.read().splitlines()
        table = [line for line in lines if line.startswith("|") and (parts or not line.startswith(("| parts:", "| floor:")))]
        head = next((line for line in lines if line.startswith("commit ")), "")
        return ("\n" + "\n".join(table) + "\n\n(`bench/versus`, " + head + "; docs/data/"
                + os.path.basename(path) + ")\n")

    def tree(self, variant="lazynccl-run"):
        """A variant's ratio to plain for a tree of /bin/true, in the last
        run of the newest recorded bench/tree, and that file."""
        path = self.newest("tree-2*.txt")
        with open(path) as f:
            text = f.read()
        section = text[text.rindex("x /bin/true"):]
        m = re.search(r"^  " + re.escape(variant) + r" +[\d.]+ ms +([\d.]+x)$", section, re.M)
        if not m:
            raise KeyError(f"{path}: no lazynccl-run line")
        return m.group(1), "docs/data/" + os.path.basename(path)

    TREE_ROWS = [("empty audit module, no C library", "empty audit module, no C library"),
                 ("empty audit module, no C library, code and data in one mapping",
                  "the same, code and data in one mapping"),
                 ("lazynccl-run", "**`lazynccl-run`'s variables** (the module named directly; target 1.07x / 1.02x)"),
                 ("lazynccl-run --quiet-32bit (the module through $LIB)",
                  "`lazynccl-run --quiet-32bit` (the module through `$LIB`)"),
                 ("lazynccl-run --no-audit (drop-ins preloaded)", "`lazynccl-run --no-audit` (drop-ins preloaded)")]

    def tree_table(self):
        """bench/tree's runs side by side: each variant's ratio in every
        run's loops, and the paired spawns of the runs that have them."""
        path = self.newest("tree-2*.txt")
        with open(path) as f:
            text = f.read()
        runs = text.split("\n## run ")[1:] or [text]  # a record of one run has no "## run"
        cols = {"true": [], "py": [], "ptrue": [], "ppy": []}
        for run in runs:
            parts = {"true": run.split("x /bin/true\n", 1)[-1].split("\n\n")[0],
                     "py": run.split("x python3 -c pass\n", 1)[-1].split("\n\n")[0]}
            paired = run.split("paired spawns (bench/spawnpair)\n", 1)
            if len(paired) == 2:
                blocks = paired[1].split(" rounds of ")
                parts["ptrue"] = blocks[1] if len(blocks) > 1 else ""
                parts["ppy"] = blocks[2] if len(blocks) > 2 else ""
            for k in cols:
                rows = {}
                for line in parts.get(k, "").splitlines():
                    m = re.match(r"^  (.+?)\s+[\d.]+ (?:ms|us)\s+([\d.]+)x$", line)
                    if m:
                        rows[m.group(1).strip()] = m.group(2)
                cols[k].append(rows)
        out = ["| | 300 x `/bin/true` | 20 x `python3 -c pass` | paired `/bin/true` | paired `python3 -c pass` |",
               "|---|---|---|---|---|"]
        for key, label in self.TREE_ROWS:
            def cell(k, digits):
                vals = [f"{float(r[key]):.{digits}f}x" for r in cols[k] if key in r]
                return ", ".join(vals)
            cells = [cell("true", 3), cell("py", 3), cell("ptrue", 3), cell("ppy", 3)]
            if label.startswith("**"):
                cells = [f"**{c}**" if c else c for c in cells]
            out.append(f"| {label} | " + " | ".join(cells) + " |")
        return "\n" + "\n".join(out) + "\n\n(" + "docs/data/" + os.path.basename(path) + ")\n"

    def first_small(self):
        """The newest run of bench/run's small-library first calls: its
        table as it printed it, and that file."""
        path = self.newest("firstcall-small-*.txt")
        with open(path) as f:
            rows = [line.rstrip("\n") for line in f if line.startswith("|")]
        return "\n" + "\n".join(rows) + "\n\n(docs/data/" + os.path.basename(path) + ")\n"

    def walk(self):
        """The newest run of bench/walk: its table, and that file."""
        path = self.newest("walk-*.txt")
        with open(path) as f:
            rows = [line.rstrip("\n") for line in f if line.startswith("|")]
        return "\n" + "\n".join(rows) + "\n\n(docs/data/" + os.path.basename(path) + ")\n"

    def ci(self):
        """The newest fresh-clone CI's totals and wall time, and that file."""
        path = self.newest("ci-*.txt")
        with open(path) as f:
            text = f.read()
        total = re.findall(r"^(\d+ passed, \d+ failed, \d+ skipped)$", text, re.M)
        took = re.search(r"^# wall time: (\d+) min", text, re.M)
        if not total or not took:
            raise KeyError(f"{path}: no totals or no '# wall time: N min' line")
        return f"{took.group(1)} minutes on this machine's 2 cores, {total[-1]}: docs/data/{os.path.basename(path)}"

    # bench/run's table: a figure names a row by its label and a column
    # (1 value, 2 ratio).
    BENCH_ROWS = {
        "startup.linked": ("start-up (b) -lnccl -lnvrtc -lnvJitLink: wall", 2),
        "startup.shared": ("start-up (c) the three shims: wall", 2),
        "startup.static": ("start-up (d) the three static shims: wall", 2),
        "startup.empty3": ("start-up (e) three empty shared objects (the floor of (c)): wall", 2),
        "startup.fork3": ("start-up (f) the same, each registering fork handlers at load: wall", 2),
        "startup.interface": ("start-up (g) the shims' generated code and (f)'s registration, no runtime: wall", 2),
        "hot.direct": ("hot call ncclGetVersion, direct -l", 1),
        "hot.shared": ("hot call ncclGetVersion, shared shim", 2),
        "hot.static": ("hot call ncclGetVersion, static shim", 2),
        "first.nccl": ("first call ncclGetVersion, ld.so.cache: shim / bare dlopen+dlsym+call", 2),
        "first.nccl.off": ("first call ncclGetVersion, off the linker's path: shim / bare dlopen+dlsym+call", 2),
        "first.nvrtc": ("first call nvrtcVersion, ld.so.cache: shim / bare dlopen+dlsym+call", 2),
        "first.nvjitlink": ("first call nvJitLinkVersion, ld.so.cache: shim / bare dlopen+dlsym+call", 2),
        "launcher": ("launcher: lazynccl-run /bin/true over a bare /bin/true", 1),
    }

    # Measured by bench/run unpinned, for the trend; their goals are judged
    # by bench/versus, pinned to one CPU as they were set (a run of bench/run
    # before it said so carries them in its target column).
    VERSUS_OWNS = ("hot call ", "first call ncclGetVersion")

    def bench_file(self):
        return self.newest("bench-*.txt")

    def bench_rows(self):
        """bench/run's table of its newest run, as lists of cells; not the
        process-tree rows a run may hold: those are bench/tree's, whose
        newest run is the one shown (tree_table)."""
        with open(self.bench_file()) as f:
            return [[c.strip() for c in line.strip().strip("|").split("|")]
                    for line in f if line.startswith("|")
                    and not line.startswith(("| ---", "| measurement", "| process tree"))]

    def bench_head(self):
        with open(self.bench_file()) as f:
            return [line.rstrip("\n") for line in f if line.startswith(("commit:", "machine:", "date:"))]

    def bench_table(self):
        """The newest run's commit, machine, date and table."""
        rows = ["| measurement | value | ratio | target |", "| --- | --- | --- | --- |"]
        rows += ["| " + " | ".join(r) + " |" for r in self.bench_rows()]
        return ("\n" + "\n".join(self.bench_head()) + "\n\n" + "\n".join(rows) + "\n\n(docs/data/"
                + os.path.basename(self.bench_file()) + ")\n")

    def bench_cell(self, key):
        label, col = self.BENCH_ROWS[key]
        for cells in self.bench_rows():
            if cells[0].startswith(label):
                return cells[col].split()[0] if col == 2 else cells[col]
        raise KeyError(f"no row {label!r} in {self.bench_file()}")

    @staticmethod
    def met(figure, goal):
        """Whether figure ("1.080x", "1.926 ms", "0.882 ms (1.117x)") meets
        goal ("<= 1.10x", "1.07x", "<= 1.5 ms", "shared <= 1.02x, static
        <= 1.05x" with which): "met", "not met", or "" where the goal is no
        number (flat, every process: the text reads it)."""
        m = re.search(r"([\d.]+)\s*(x|ms)\b", goal)
        if not m:
            return ""
        unit = m.group(2)
        got = re.findall(r"([\d.]+)" + ("x" if unit == "x" else r" ms"), figure)
        if not got:
            return ""
        return "met" if float(got[-1]) <= float(m.group(1)) else "not met"

    def summary(self):
        """One row per measurement with a goal: bench/run's newest run and
        bench/versus's, the figure, the goal and whether it is met."""
        out = ["| benchmark | measurement | figure | goal | met |", "|---|---|---|---|---|"]
        for cells in self.bench_rows():
            what, value, ratio, goal = (cells + [""] * 4)[:4]
            if not goal or what.startswith(self.VERSUS_OWNS):
                continue
            figure = value if goal.endswith(" ms") else ratio
            out.append(f"| `bench/run` | {what} | {figure} | {goal} | {self.met(figure, goal) or 'see below'} |")
        tree = self.newest("tree-2*.txt")
        with open(tree) as f:
            last = f.read().split("\n## run ")[-1]
        for loop, goal in (("300 x /bin/true", "1.07x"), ("20 x python3 -c pass", "1.02x")):
            body = last.split(loop.split(" x ", 1)[1] + "\n", 1)[-1].split("\n\n")[0]
            m = re.search(r"^  lazynccl-run +[\d.]+ ms +([\d.]+x)$", body, re.M)
            if m:
                out.append(f"| `bench/tree` | process tree, {loop}: `lazynccl-run`'s variables / plain | "
                           f"{m.group(1)} | {goal} | {self.met(m.group(1), goal)} |")
        size = self.newest("size-*.txt")
        with open(size) as f:
            m = re.search(r"^per function .*: lazynccl ([\d.]+) B, Implib.so ([\d.]+) B, ratio ([\d.]+)$", f.read(), re.M)
        if m:
            out.append(f"| `bench/size` | a static shim's size per exported function / Implib.so's stubs' | "
                       f"{m.group(1)} B ({m.group(3)}x) | <= 1.00x | {self.met(m.group(3) + 'x', '1.00x')} |")
        with open(size) as f:
            text = f.read()
        small = re.search(r"^runtime, small: ([\d.]+) KiB", text, re.M)
        theirs = re.search(r"^fixed part, Implib.so .*: ([\d.]+) KiB$", text, re.M)
        if small and theirs:
            # "A few kilobytes": what Implib.so's stubs need for their own
            # dlopen and dlsym, twice over.
            goal = f"{2 * float(theirs.group(1)):.1f} KiB"
            ok = "met" if float(small.group(1)) <= 2 * float(theirs.group(1)) else "not met"
            out.append(f"| `bench/size` | a small library's static shim: its runtime (Implib.so's fixed part "
                       f"{theirs.group(1)} KiB) | {small.group(1)} KiB | <= {goal} | {ok} |")
        path = self.newest("versus-*.txt")
        with open(path) as f:
            lines = [l for l in f.read().splitlines() if l.startswith("|")]
        names = [c.strip() for c in lines[0].strip().strip("|").split("|")]
        for line in lines[2:]:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            goal = cells[-1]
            if not goal:
                continue
            for name, cell in zip(names[1:-1], cells[1:-1]):
                if not name.startswith("lazynccl") or cell in ("—", ""):
                    continue
                kind = name.split()[-1]
                # A goal may name the column it is for: "shared <= 1.02x,
                # static <= 1.05x", "shared <= 1.02x".
                parts = {p.strip().split(" ", 1)[0]: p.strip().split(" ", 1)[1]
                         for p in goal.split(",") if p.strip().split(" ", 1)[0] in ("shared", "static")}
                if parts and kind not in parts:
                    continue
                g = parts.get(kind, goal)
                out.append(f"| `bench/versus` | {cells[0]}, {name} | {cell} | {g} | {self.met(cell, g) or 'see below'} |")
        scale_rows, scale = self.scale_goals()
        out += scale_rows
        return ("\n" + "\n".join(out) + "\n\n(docs/data/" + os.path.basename(self.bench_file())
                + ", docs/data/" + os.path.basename(tree) + ", docs/data/" + os.path.basename(size)
                + ", docs/data/" + os.path.basename(path) + ", docs/data/" + os.path.basename(scale) + ")\n")

    def scale(self):
        """bench/scale's tables from its newest run, and that file."""
        path = self.newest("scale-2*.txt")
        with open(path) as f:
            text = f.read()
        head = text.splitlines()[0]
        tables = "\n".join(line for line in text.splitlines() if line.startswith("|") or not line.strip())
        tables = re.sub(r"\n{3,}", "\n\n", tables).strip()
        return f"\n({head}; docs/data/{os.path.basename(path)})\n\n{tables}\n"

    def scale_goals(self):
        """The goal rows of bench/scale's newest run, for the summary."""
        path = self.newest("scale-2*.txt")
        with open(path) as f:
            text = f.read()
        rows = []
        for line in text.split("| measurement | figure | goal | met |", 1)[-1].splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 4 or cells[0].startswith("---"):
                continue
            rows.append(f"| `bench/scale` | {cells[0]} | {cells[1]} | {cells[2]} | "
                        f"{'met' if cells[3] == 'yes' else 'not met'} |")
        return rows, path

    def steps(self):
        """The search order's table as the runtime holds it (lz_order.c),
        printed by the built lazynccl-info --steps."""
        exe = os.path.join(self.build, "lazynccl-info")
        if not os.path.exists(exe):
            raise KeyError(f"{exe}: not built")
        out = subprocess.run([exe, "--steps"], check=True, capture_output=True, text=True).stdout
        return "\n" + out

    def value(self, name):
        kind, _, arg = name.partition(".")
        if name == "steps.table":
            return self.steps()
        if kind == "exports":
            return self.exports(arg)
        if name == "served.count":
            return str(len(self.served()))
        if name == "served.names":
            return ", ".join(s["display"] for s in self.served())
        if name == "versus.table":
            return self.versus()
        if name == "versus.targets":
            return self.versus(parts=False)
        if name == "tree.ratio":
            return self.tree()[0]
        if name == "tree.noaudit":
            return self.tree("lazynccl-run --no-audit (drop-ins preloaded)")[0]
        if name == "tree.table":
            return self.tree_table()
        if name == "tree.file":
            return self.tree()[1]
        if name == "scale.table":
            return self.scale()
        if name == "ci.summary":
            return self.ci()
        if name == "walk.table":
            return self.walk()
        if name == "firstsmall.table":
            return self.first_small()
        if name == "bench.table":
            return self.bench_table()
        if name == "bench.summary":
            return self.summary()
        if kind == "bench" and arg in self.BENCH_ROWS:
            return self.bench_cell(arg)
        raise KeyError(f"unknown figure {name!r}")


def texts():
    return [os.path.join(TOP, "README.md")] + sorted(glob.glob(os.path.join(TOP, "docs", "**", "*.md"), recursive=True))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--write", action="store_true")
    a = ap.parse_args()
    src = Sources(os.path.abspath(a.build))
    problems, seen = [], 0
    for path in texts():
        with open(path, encoding="utf-8") as f:
            text = f.read()

        def fill(m):
            nonlocal seen
            seen += 1
            try:
                want = src.value(m.group(1))
            except KeyError as e:
                problems.append(f"{os.path.relpath(path, TOP)}: {m.group(1)}: {e.args[0]}")
                return m.group(0)
            if m.group(2) != want:
                problems.append(f"{os.path.relpath(path, TOP)}: {m.group(1)}: the text says "
                                f"{m.group(2).strip()[:60]!r}, its source {want.strip()[:60]!r}")
            return f"<!-- figure: {m.group(1)} -->{want}<!-- /figure -->"
        new = MARKER.sub(fill, text)
        if a.write and new != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
    for p in problems:
        print(p)
    if a.check:
        return 1 if problems else 0
    return 1 if any("unknown figure" in p or "build the project" in p or "no docs/data" in p
                    for p in problems) else 0


if __name__ == "__main__":
    sys.exit(main())
