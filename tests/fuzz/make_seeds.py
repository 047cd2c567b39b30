#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
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
    # fuzz_path: flags byte, then list, origin, cwd on lines.
    os.makedirs(f"{out}/path", exist_ok=True)
    for i, (flags, lst, origin, cwd) in enumerate([
            (0, "/usr/lib:$ORIGIN/../lib:rel::${ORIGIN}", "/opt/app/bin", "/home/u"),
            (1, "$ORIGIN:/lib/:./x", "/o", "/c"), (2, "a;b:c;;/d//", "", "/"),
            (0, "$LIB/x:$ORIGINX:$ORIGIN_:${ORIGIN}/" + "y" * 300, "/" + "o" * 4000, "/c"),
            (3, "", "", "")]):
        with open(f"{out}/path/seed{i}", "wb") as f:
            f.write(bytes([flags]) + f"{lst}\n{origin}\n{cwd}".encode())
    # fuzz_json: text, paths with bytes that are not UTF-8, controls, quotes.
    os.makedirs(f"{out}/json", exist_ok=True)
    for i, data in enumerate([b"plain /usr/lib/libnccl.so.2", b"\xff\xfe\xc3(\xe2\x82",
                              "é€𝄞 \"q\" \\ \n\t\x01\x7f".encode(), b"\xed\xa0\x80\xf4\x90\x80\x80",
                              b"\xc0\xaf\xe0\x80\xaf", b""]):
        with open(f"{out}/json/seed{i}", "wb") as f:
            f.write(data)
    # fuzz_textout: a first byte (colour, where the writes are cut), then
    # text with escapes, colour codes, C1 controls and cut sequences.
    os.makedirs(f"{out}/textout", exist_ok=True)
    for i, data in enumerate([b"\x00plain /usr/lib/libnccl.so.2\n", b"\x01\x1b[32mok\x1b[0m \x1b]0;t\x07",
                              b"\x07caf\xc3\xa9 \xc2\x9b2J \xe9\xff", b"\x0b\x1b[3\xe2\x82\xac",
                              b"\x05\xf0\x9d\x84\x9e\t\\x1b", b"\x01"]):
        with open(f"{out}/textout/seed{i}", "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1])
