# SPDX-License-Identifier: MIT
"""What a shim exports: the header's functions, each versioned family
expanded to its unversioned name and every known version, the real
library's undeclared functions (typeless, forwarded by assembly), the
variadic ones where a thunk can forward them; the names checked against
the spec and the control API, and the list the build checks."""

from dataclasses import dataclass

from model import Function
from spec import GenError


@dataclass
class Export:
    name: str        # the library's name for it (resolved with dlsym)
    typed_as: str    # the header-declared function whose type it has
    fn: object       # model.Function giving return type and parameters
    family: str      # versioned family, "" when not versioned
    major: int
    minor: int
    declared: bool   # declared by the header (else we declare it)
    sym: str = ""    # the symbol the shim defines: name, prefixed if internal


def expand_exports(spec, functions):
    """Header functions plus, for versioned families, the unversioned name and
    every known version, each typed like the version the header declares."""
    exports, names = [], set()

    def add(e):
        e.sym = spec.symbol_prefix + e.name
        if e.name not in names:
            names.add(e.name)
            exports.append(e)

    for fn in functions:
        m = spec.versioned.regex.match(fn.name) if spec.versioned else None
        if not m:
            add(Export(fn.name, fn.name, fn, "", -1, -1, True))
            continue
        family = m.group("family")
        add(Export(family, fn.name, fn, family, -1, -1, False))
        versions = set(spec.versioned.known) | {(int(m.group("major")), int(m.group("minor")))}
        for major, minor in sorted(versions):
            name = spec.versioned.format.format(family=family, major=major, minor=minor)
            add(Export(name, fn.name, fn, family, major, minor, name == fn.name))
    return exports


def check_names(spec, exports, control_prefix=None):
    """Names the spec gives that the header does not declare, and exported
    names that would clash with the control API, all in one message."""
    served = {e.name for e in exports}
    def becomes(n):
        x = spec.renamed.get(n)
        if x == "":
            return (" (the header defines it as a macro that becomes no one name, a function-like "
                    "macro or an expression: name the function it calls)")
        return f" (the header's macros make it {x}, which function_pattern does not select)" if x else ""
    problems = [f"'required': {n} is not a function the header declares and function_pattern "
                f"selects{becomes(n)}" for n in spec.required if n not in served]
    problems += [f"[failure.functions]: {n} is not a function the header declares and "
                 f"function_pattern selects{becomes(n)}" for n in spec.failure_functions if n not in served]
    control = set(control_names(spec, control_prefix))
    problems += [f"{e.name} (from {e.fn.file or spec.path}:{e.fn.line}) has the name of a "
                 f"control-API function of shim '{spec.shim}': rename the shim or leave it "
                 f"out of function_pattern" for e in exports if e.name in control]
    if problems:
        raise GenError(spec.path, "\n  ".join([f"{len(problems)} name(s) cannot be served:"] + problems))


def split_variadic(spec, exports, arch):
    """Variadic functions are served by an assembly thunk on x86-64 and
    AArch64; on targets with C thunks they are left out, each with a note."""
    if arch in ("x86_64", "aarch64"):
        return exports, []
    kept = [e for e in exports if not e.fn.variadic]
    notes = [f"{spec.path}: note: {e.name} is variadic and is not served on {arch} "
             f"(a C thunk cannot forward '...')" for e in exports if e.fn.variadic]
    return kept, notes


def add_opaque(spec, exports, names, arch):
    """The real library's functions no header declares (cuBLASLt's
    cublasLtCtxInit, which libcublas calls): a drop-in stands for the whole
    library, and another real library bound to it by SONAME needs them
    (PyTorch's matmul failed with "undefined symbol: cublasLtCtxInit,
    version libcublasLt.so.13" without them).
    Forwarded by an assembly thunk, which needs no type; not on targets with
    C thunks (a note)."""
    have = {e.name for e in exports}
    # Every function, not only the spec's pattern: cuBLASLt's
    # cublasLt_for_cublas_* are what libcublas calls. Not the ELF file's own
    # _init and _fini, nor weak ones (the caller leaves out C++'s vague
    # linkage: elfvers.Versions.vague).
    extra = [n for n in sorted(names) if n not in have and n not in ("_init", "_fini")]
    if arch not in ("x86_64", "aarch64"):
        return exports, ([f"{spec.path}: note: {len(extra)} undeclared functions of the library "
                          f"are not served on {arch} (a C thunk needs their type)"] if extra else [])
    for n in extra:
        fn = Function(n, "", "", "", 0, variadic=True, opaque=True)
        exports.append(Export(n, n, fn, "", -1, -1, True, sym=spec.symbol_prefix + n))
    return exports, []


def control_names(spec, control_prefix=None):
    """The control API's exported names (<shim>_load, ...), [] where the
    shim has none."""
    if spec.hidden or not spec.control_api:
        return []
    from control_api import exported_names
    return exported_names(control_prefix or spec.shim + "_")


def export_names(spec, exports, control_prefix=None):
    """What the shim's shared object must export, for the build's check."""
    if spec.hidden:
        return []
    return [e.name for e in exports] + control_names(spec, control_prefix)
