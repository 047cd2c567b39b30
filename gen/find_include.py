#!/usr/bin/env python3
"""Find the directory holding a header, for meson.build.

    find_include.py HEADER [--dir D]... [--env VAR]...

Directories are tried in the order given: each --dir as is, each --env as
$VAR/include. Prints the first directory holding HEADER; otherwise exits 1
with a message naming everything that was searched.
"""
import os
import sys


def main(argv):
    header, order, i = argv[0], [], 1
    while i + 1 < len(argv):
        kind, value = argv[i], argv[i + 1]
        i += 2
        if kind == "--dir" and value:
            order.append((value, value))
        elif kind == "--env":
            v = os.environ.get(value)
            if v:
                order.append((os.path.join(v, "include"), f"${value}/include = {v}/include"))
            else:
                order.append((None, f"${value}/include (${value} not set)"))
    for d, _ in order:
        if d and os.path.isfile(os.path.join(d, header)):
            print(os.path.abspath(d))
            return 0
    print(f"{header} not found; searched: " + "; ".join(w for _, w in order), file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
