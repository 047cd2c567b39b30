#!/usr/bin/env python3
"""Seed corpora for the fuzz targets, made from files the suite builds:
fake libraries, a truncated and a patched ELF, text; and override lists."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import lztest as t  # noqa: E402


def main(out):
    probe, lists = f"{out}/probe", f"{out}/search_list"
    os.makedirs(probe, exist_ok=True)
    os.makedirs(lists, exist_ok=True)
    work = f"{out}/libs"  # under out: each fuzz run has its own (they run in parallel)
    os.makedirs(work, exist_ok=True)
    good = open(t.fake_nccl(f"{work}/good", extra=['-DFAKE_VERSION_STRING="2.28.9"']), "rb").read()
    wrong = open(t.fake_nccl(f"{work}/wrong", soname="libfoo.so.1"), "rb").read()
    seeds = {"good": good, "wrong_soname": wrong, "truncated": good[:1500], "header": good[:64],
             "class32": good[:4] + b"\x01" + good[5:], "arm64": good[:18] + b"\xb7\x00" + good[20:],
             "text": b"not an ELF file\n", "empty": b""}
    for name, data in seeds.items():
        with open(f"{probe}/{name}", "wb") as f:
            f.write(data)
    for i, text in enumerate(["", ":", "::", "relative/libnccl.so.2", f"{work}/good",
                              f"{work}/good/libnccl.so.2:{work}/wrong", "/" + "a" * 5000,
                              "/proc/self/fd/0:/dev/null:/", f"{work}:{work}/good/"]):
        with open(f"{lists}/seed{i}", "w") as f:
            f.write(text)


if __name__ == "__main__":
    main(sys.argv[1])
