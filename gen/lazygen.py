#!/usr/bin/env python3
"""lazygen: generate a lazy-loading shim from a library spec and its header.

Run by Meson at build time (custom_target); never at run time.

    lazygen.py --spec stubs/nccl.toml --include-dir /usr/local/cuda/include \
               --cc cc --out-c nccl_stubs.c --out-list nccl_exports.txt
"""

import argparse
import os
import shlex
import sys

sys.dont_write_bytecode = True  # keep the source tree clean when run from it

from emit_stubs import emit, emit_header  # noqa: E402
from model import macro_values, parse_functions, preprocess  # noqa: E402
from spec import GenError, load_spec  # noqa: E402


def write_if_changed(path, text):
    """Deterministic output, rewritten only when it changes (no needless rebuilds)."""
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except OSError:
        pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--spec", required=True)
    ap.add_argument("--include-dir", action="append", default=[])
    ap.add_argument("--cc", default="cc", help="C compiler command (split like a shell)")
    ap.add_argument("--out-c", required=True)
    ap.add_argument("--out-list", help="write the exported names, one a line")
    ap.add_argument("--out-h", help="write declarations of the shim's symbols (internal shims)")
    a = ap.parse_args(argv)
    cc = shlex.split(a.cc)
    try:
        spec = load_spec(a.spec)
        headers, functions = parse_functions(cc, spec, a.include_dir)
        macros = []
        if spec.version_macros:
            text = preprocess(cc, headers[0], a.include_dir, spec.defines, real=True)
            macros = macro_values(text, spec.version_macros)
        spec_display = os.path.join("stubs", os.path.basename(a.spec))
        c_text, exports = emit(spec, spec_display, headers, functions, macros)
    except GenError as e:
        print(f"lazygen: {e}", file=sys.stderr)
        return 1
    write_if_changed(a.out_c, c_text)
    if a.out_h:
        write_if_changed(a.out_h, emit_header(spec, exports))
    if a.out_list:
        write_if_changed(a.out_list, "".join(e.name + "\n" for e in exports))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
