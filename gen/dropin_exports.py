# SPDX-License-Identifier: MIT
"""What a drop-in exports and under which versions: the shim's names less
those the real library lacks (said in a note), then the version script and
.symver header (gen/dropin_versions.py) written for them."""

import dropin_versions
import symlist
from output import say, write_if_changed
from spec import GenError


def _library_has(spec, soname, names, versions):
    """The names a drop-in exports: where the real library is known, none
    it lacks (a function_pattern matching a header's other widths, or
    names the header declares for another build of the library), unless
    the spec asks for them (required, a [versioned] family's members, which
    a newer header names before the library has them); the control API is
    the drop-in's own. A note names what was left out."""
    if versions is None or spec.versioned:
        return names
    own = spec.shim + "_"
    lacking = [n for n in names if n not in versions.symbols and not n.startswith(own)
               and n not in spec.required]
    if lacking:
        shown = ", ".join(lacking[:5]) + (f" and {len(lacking) - 5} more" if len(lacking) > 5 else "")
        say(f"lazygen: {spec.path}: note: the drop-in {soname} leaves out {len(lacking)} name(s) "
            f"the header declares that {versions.path} does not define: {shown} (name one in "
            f"'required' to export it anyway)")
    return [n for n in names if n not in lacking]


def dropin(spec, soname, exports_txt, library, out_map, out_symver):
    with open(exports_txt, encoding="utf-8") as f:
        names = f.read().split()
    versions = symlist.load_versions(library) if library and library != "-" else None
    names = _library_has(spec, soname, names, versions)
    hidden = dropin_versions.plan(names, soname, spec.symbol_versions, versions).hidden
    if spec.own_answers and hidden:
        # A call at a hidden version can fail after the load (dlvsym finds no
        # such node), which an own answer bound to the real function
        # (src/api/lz_bind.h) would then not explain.
        raise GenError(f"{spec.path} [own_answers]",
                       f"{soname} has hidden symbol versions ({hidden[0][0]}@{hidden[0][1]}); "
                       f"own answers are not supported beside them")
    script, header = dropin_versions.write(names, soname, spec.symbol_versions, versions)
    write_if_changed(out_map, script)
    write_if_changed(out_symver, header)
