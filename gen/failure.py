# SPDX-License-Identifier: MIT
"""What a call gets when its library cannot be had: the spec's failure
value for a function (and a function-pointer variable, gen/emit_data.py),
or the stop where the API has none, and the note naming those."""


def failure_value(spec, fn):
    """The spec's [failure.functions] value for the function, else its
    [failure] value for the return type ("void" included), else, for a
    pointer (through typedefs: CURL *, gzFile), its "*" value. None where
    the spec gives none, or "@stop": the API has no failure value for it, so
    called without its library the function stops the process with the
    report, as the dynamic linker would have at start, rather than return
    (or, for void, return at all) as if it had done its work. The one rule
    for functions and function-pointer variables (gen/emit_data.py)."""
    if getattr(fn, "noreturn", False):
        return None  # returning from it would run off its caller's end
    value = spec.failure_functions.get(fn.name,
                                       spec.failure.get(getattr(fn, "ret_spelled", "") or fn.ret))
    if value is None and fn.ret_pointer:
        value = spec.failure.get("*")
    if value is None or value == "@stop":
        return None
    return "lz_message(&LZ_LIB)" if value == "@message" else value


def stopping(spec, exports):
    """The note naming the functions that stop the process when called
    without their library (no failure value), by return type; None when
    none."""
    stops = {}
    for e in exports:
        if e.fn.opaque or e.name in spec.own_answers or failure_value(spec, e.fn) is not None:
            continue
        stops.setdefault("noreturn (never returns: no value applies)" if e.fn.noreturn
                         else e.fn.ret_spelled or e.fn.ret, []).append(e.fn.name)
    if not stops:
        return None
    n = sum(len(v) for v in stops.values())
    return (f"{spec.path}: note: {n} function(s) stop the process when called without the library, "
            f"as the dynamic linker would have at start ([failure] gives their return type no value): "
            + "; ".join(f"{ret}: {', '.join(sorted(set(names))[:3])}"
                        + (f" and {len(set(names)) - 3} more" if len(set(names)) > 3 else "")
                        for ret, names in stops.items()))
