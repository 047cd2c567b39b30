#!/usr/bin/env python3
"""lazygen: generate a lazy-loading shim from a library spec and its header.

Run by Meson at build time (custom_target); never at run time.

    lazygen.py --spec stubs/nccl.toml --include-dir /usr/local/cuda/include \
               --cc cc --out-c nccl_stubs.c --out-list nccl_exports.txt
"""

import argparse
import os
import re
import shlex
import sys

sys.dont_write_bytecode = True  # keep the source tree clean when run from it
HERE = os.path.dirname(os.path.abspath(__file__))

from amalgamate import amalgamate  # noqa: E402
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
    ap.add_argument("--out-c")
    ap.add_argument("--out-list", help="write the exported names, one a line")
    ap.add_argument("--out-h", help="write declarations of the shim's symbols (internal shims), "
                                    "or the control API of an amalgamation")
    ap.add_argument("--amalgamate", action="store_true",
                    help="write one .c (runtime included) and one .h for vendoring")
    ap.add_argument("--prefix", help="control API prefix of the amalgamation (default: <shim>_)")
    ap.add_argument("--runtime-dir", help="src/ of lazynccl (for --amalgamate)")
    ap.add_argument("--libelf-spec", help="stubs/libelf.toml (for --amalgamate)")
    ap.add_argument("--libelf-include-dir", default="/usr/include")
    ap.add_argument("--describe", action="store_true",
                    help="print the spec's sonames and symbol versioning, for meson.build")
    a = ap.parse_args(argv)
    cc = shlex.split(a.cc)
    if a.describe:
        try:
            spec = load_spec(a.spec)
        except GenError as e:
            print(f"lazygen: {e}", file=sys.stderr)
            return 1
        print(" ".join(spec.sonames))
        print("versioned" if spec.symbol_versions else "unversioned")
        return 0
    if not a.out_c:
        ap.error("--out-c is required")
    try:
        spec = load_spec(a.spec)
        headers, functions = parse_functions(cc, spec, a.include_dir)
        macros = []
        if spec.version_macros:
            text = preprocess(cc, headers[0], a.include_dir, spec.defines, real=True)
            macros = macro_values(text, spec.version_macros)
        spec_display = os.path.join("stubs", os.path.basename(a.spec))
        h_text = None
        if a.amalgamate:
            prefix = a.prefix or spec.shim + "_"
            if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", prefix):
                raise GenError("--prefix", f"{prefix!r} is not a C identifier prefix")
            runtime = a.runtime_dir or os.path.join(os.path.dirname(HERE), "src")
            libelf = None
            if a.libelf_spec:
                e_spec = load_spec(a.libelf_spec)
                try:
                    libelf = (e_spec,) + parse_functions(cc, e_spec, [a.libelf_include_dir])
                except GenError as e:  # no libelf headers: the probe loads, then checks
                    print(f"lazygen: note: amalgamating without libelf ({e})", file=sys.stderr)
            c_text, h_text, exports = amalgamate(spec, spec_display, headers, functions, macros,
                                                 prefix, runtime, libelf)
        else:
            c_text, exports = emit(spec, spec_display, headers, functions, macros)
            if a.out_h:
                h_text = emit_header(spec, exports)
    except GenError as e:
        print(f"lazygen: {e}", file=sys.stderr)
        return 1
    write_if_changed(a.out_c, c_text)
    if a.out_h and h_text is not None:
        write_if_changed(a.out_h, h_text)
    if a.out_list:
        write_if_changed(a.out_list, "".join(e.name + "\n" for e in exports))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception as e:  # a bug of ours: say so, with the traceback for the report
        import traceback
        traceback.print_exc()
        print(f"lazygen: internal error: {e!r} (please report it with the traceback above)",
              file=sys.stderr)
        sys.exit(2)
