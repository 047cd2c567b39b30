#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check that a shim exports exactly the names the generator listed.

    check_exports.py NM EXPECTED_LIST LIBRARY STAMP

A header macro that renamed a symbol (zlib.h's gzopen -> gzopen64 under
_FILE_OFFSET_BITS=64) would otherwise go unnoticed: the signature check
passes because both sides expand alike. Fails naming what is missing and
what is extra; writes STAMP when they agree."""
import subprocess
import sys


def exported(nm, lib):
    r = subprocess.run([nm, "-D", "--defined-only", lib], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"check_exports: {nm} -D {lib} failed: {r.stderr.strip()}")
    names = set()
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in "TWiDBRGSV":  # functions and variables
            names.add(parts[2].split("@")[0])
    return names


def main(nm, expected_list, lib, stamp):
    with open(expected_list) as f:
        expected = set(f.read().split())
    got = exported(nm, lib)
    missing, extra = sorted(expected - got), sorted(got - expected)
    if missing or extra:
        print(f"check_exports: {lib} does not export what the generator listed ({expected_list}):",
              file=sys.stderr)
        if missing:
            print(f"  listed, not exported: {' '.join(missing[:20])}"
                  f"{' ...' if len(missing) > 20 else ''}", file=sys.stderr)
        if extra:
            print(f"  exported, not listed: {' '.join(extra[:20])}"
                  f"{' ...' if len(extra) > 20 else ''}", file=sys.stderr)
        return 1
    with open(stamp, "w") as f:
        f.write(f"{len(got)} exports match\n")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
