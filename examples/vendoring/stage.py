#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Complete a vendoring recipe into a project you can build (docs/guides/vendoring.md):
the recipe's files, its extension's source among them (a link in the
folder to examples/vendoring/lazyext.c, which stands for your own code, copied
as a file), and the amalgamation generated into vendor/ with the
documented command (for mesonpy, this checkout staged as the subproject
subprojects/lazynccl, which generates it): generated code is never kept in
the tree.
The suite stages every recipe through here (tests/test_recipes.py).
Usage: /usr/bin/python3 examples/vendoring/stage.py RECIPE DEST [--include-dir DIR]
RECIPE: setuptools, cmake or mesonpy. Run with the Python that has
libclang's bindings (Debian's /usr/bin/python3 with python3-clang-14)."""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
# Where each recipe's build takes the extension's source from (in the folder).
EXTENSION = {"setuptools": "src/mypkg_st/_nccl.c", "cmake": "src/mypkg_cm/_nccl.c", "mesonpy": "src/_nccl.c"}


def stage(recipe, dest, include_dir):
    if recipe not in EXTENSION:
        raise SystemExit(f"stage.py: unknown recipe {recipe!r} (known: {', '.join(EXTENSION)})")
    if os.path.exists(dest):
        raise SystemExit(f"stage.py: {dest} exists: give a new directory")
    shutil.copytree(os.path.join(HERE, "recipes", recipe), dest)  # links followed: files
    if recipe == "mesonpy":
        # lazynccl as a Meson subproject, which generates the amalgamation
        # itself: this checkout's files, as a wrap would fetch them.
        files = subprocess.run(["git", "-C", TOP, "ls-files", "--cached", "--others", "--exclude-standard"],
                               check=True, capture_output=True, text=True).stdout.split()
        for f in files:
            target = os.path.join(dest, "subprojects", "lazynccl", f)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(os.path.join(TOP, f), target)
    else:
        os.makedirs(os.path.join(dest, "vendor"))
        subprocess.run([sys.executable, os.path.join(TOP, "gen", "lazygen.py"), "amalgamate",
                        os.path.join(TOP, "stubs", "nccl.toml"), "--include-dir", include_dir,
                        "--prefix", "mypkg_", "--libelf-spec", os.path.join(TOP, "stubs", "libelf.toml"),
                        "--out-c", os.path.join(dest, "vendor", "lazynccl_amalg.c"),
                        "--out-h", os.path.join(dest, "vendor", "lazynccl_amalg.h")], check=True)
    if not os.path.isfile(os.path.join(dest, EXTENSION[recipe])):
        raise SystemExit(f"stage.py: the recipe lacks its extension's source {EXTENSION[recipe]}")
    return dest


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("recipe")
    ap.add_argument("dest")
    ap.add_argument("--include-dir", default=os.environ.get("NCCL_INCLUDE", "/usr/local/cuda/include"),
                    help="the directory holding nccl.h (default: $NCCL_INCLUDE, else /usr/local/cuda/include)")
    a = ap.parse_args()
    print(stage(a.recipe, a.dest, a.include_dir))


if __name__ == "__main__":
    main()
