# SPDX-License-Identifier: MIT
"""Emit the C source of one shim from the spec and the header model.

The output is one translation unit that includes the real header, so the
compiler checks every thunk's signature against it. All per-function code is
one line each, through the hand-written macros of src/arch/lz_thunk.h.
"""

import os
import re

from control_api import c_functions
from exports import add_opaque, check_names, expand_exports, split_variadic
from failure import failure_value, stopping
from spec import GenError, c_settings, peers


def _wide_target(e):
    """A function taking or returning AVX vectors: its typed code compiled
    for AVX (or AVX-512), which its callers already run (they pass such
    vectors); the rest of the shim keeps the baseline."""
    return f'LZ_TARGET("{"avx512f" if e.fn.wide_vector > 32 else "avx"}") '


def _define(d):
    """NAME=VALUE as #define NAME VALUE; NAME alone as the compiler's -DNAME
    defines it, to 1 (the same definition twice is no redefinition)."""
    name, eq, value = d.partition("=")
    return f"#define {name} {value if eq else '1'}\n"


def _pinned_defines(spec):
    """The generated file is compiled with the defines generation saw,
    whatever the build adds (Meson's -D_FILE_OFFSET_BITS=64 makes zlib.h
    rename gzopen to gzopen64)."""
    return ("/* Compiled with exactly the defines generation saw. */\n"
            "#undef _FILE_OFFSET_BITS\n#undef _TIME_BITS\n"
            + "".join(_define(d) for d in spec.defines))


def _pointee(param):
    m = re.match(r"^((?:const )?(?:unsigned int|unsigned|int|long|size_t))\s*\*\s*a\d+$", param)
    return m.group(1).replace("const ", "") if m else None


_INTEGER = re.compile(r"^(unsigned |signed )?(char|short|int|long|long long|long int|"
                      r"unsigned|size_t|u?int(8|16|32|64)_t)$")


def _code_snprintf(divisors):
    """snprintf of an integer version code v0 cut by divisors ([10000, 100,
    1]: 22809 is "2.28.9 (22809)")."""
    parts = ".".join("%ld" for _ in divisors)
    vals = ", ".join([f"(long)v0 / {divisors[0]}"] +
                     [f"(long)v0 / {d} % {divisors[k - 1] // d}" for k, d in enumerate(divisors) if k])
    return f"snprintf(out, size, \"{parts} (%ld)\", {vals}, (long)v0);\n"


def version_shape(fn):
    """How a version function is asked, or None where it cannot be:
    "text" (const char *f(void), char *f(void)), "number" (an integer
    f(void)), "pointers" (up to three pointers to integers)."""
    ret = fn.ret_canonical or fn.ret
    if fn.params == "void" and re.match(r"^(const )?char \*$", ret):
        return "text"
    if fn.params == "void" and _INTEGER.match(ret):
        return "number"
    params = [p.strip() for p in fn.params.split(",")]
    types = [_pointee(p) for p in params]
    return "pointers" if params and None not in types and len(params) <= 3 else None


def version_function(spec, exports):
    """A function writing the loaded library's version as text (for
    lazynccl-info --load), called through the slot; "" when the spec names none."""
    if not spec.version_function:
        return ""
    e = next((x for x in exports if x.name == spec.version_function), None)
    if e is None:
        raise GenError(spec.path, f"version_function {spec.version_function!r} is not a "
                                  f"wrapped function")
    i_d, fn = spec.id, e.fn
    call = f"LZ_C_CALL({e.typed_as if not e.declared else e.name}, {e.sym}, "
    out = [f"static int lz_version_{i_d}(char *out, size_t size)\n{{\n"]
    shape = version_shape(fn)
    if shape == "text":
        out.append(f"    const char *v = {call}());\n"
                   f"    if (!v)\n        return -1;\n"
                   f"    snprintf(out, size, \"%s\", v);\n    return 0;\n}}\n")
        return "".join(out)
    if shape == "number":
        # A number (sqlite3_libversion_number: 3040001), cut by version_code.
        out.append(f"    long v0 = (long){call}());\n    ")
        out.append(_code_snprintf(spec.version_code) if spec.version_code else
                   "snprintf(out, size, \"%ld\", v0);\n")
        out.append("    return 0;\n}\n")
        return "".join(out)
    if shape is None:
        raise GenError(spec.path, f"version_function {e.name}: takes ({fn.params}); only "
                                  f"'const char *f(void)', 'char *f(void)', an integer 'f(void)' "
                                  f"or pointers to integers are understood")
    types = [_pointee(p.strip()) for p in fn.params.split(",")]
    for k, t in enumerate(types):
        out.append(f"    {t} v{k} = 0;\n")
    args = ", ".join(f"&v{k}" for k in range(len(types)))
    ok = f"{call}({args}))"
    out.append(f"    if ({ok} != 0)\n        return -1;\n" if fn.ret != "void" else f"    {ok};\n")
    if len(types) == 1 and spec.version_code:
        if spec.version_code_below:  # an older code scheme, below the first divisor
            out.append(f"    if ((long)v0 < {spec.version_code[0]})\n"
                       f"        {_code_snprintf(spec.version_code_below)}"
                       f"    else\n        {_code_snprintf(spec.version_code)}")
        else:
            out.append(f"    {_code_snprintf(spec.version_code)}")
    else:
        fmt = ".".join("%ld" for _ in types)
        out.append(f"    snprintf(out, size, \"{fmt}\", " +
                   ", ".join(f"(long)v{k}" for k in range(len(types))) + ");\n")
    out.append("    return 0;\n}\n")
    return "".join(out)


_CONTROL = re.compile(r"[\x00-\x1f]")


def _c_string(text):
    """text as a C string literal, which is also a JSON string: the escapes
    both read alike (backslash, quote, newline, tab); the generated JSON
    (the wheel's feature table) goes through here too."""
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    if _CONTROL.search(out):
        raise GenError("(generated string)", f"a control character in {text!r}: not written as C or JSON")
    return '"' + out + '"'


def _c_setting(value):
    """A spec setting as C: a string literal, or 1/0 for a flag."""
    if isinstance(value, bool):
        return "1" if value else "0"
    return _c_string(value)


def rel_table(w, name, i_d, targets, none="none"):
    """A table of lz_fnrel (src/base/lz_runtime.h): each entry the distance from
    itself to its function, computed by the assembler and the linker
    (".long f - ."), 0 for none (a None target; the comment says which
    row and what none means)."""
    w(f"__asm__(\".pushsection .rodata\\n\\t.p2align 2\\n{name}:\\n\"\n")
    for t in targets:
        if isinstance(t, tuple):
            w(f"        \"\\t.long 0\\n\" /* {t[1]}: {none} */\n")
        else:
            w(f"        \"\\t.long {t} - .\\n\"\n" if t else "        \"\\t.long 0\\n\"\n")
    w("        \"\\t.popsection\");\n")
    w(f"extern const lz_fnrel {name}[LZ_COUNT_{i_d}] __asm__(\"{name}\") "
      "__attribute__((visibility(\"hidden\")));\n")


def _string_array(name, items):
    body = "".join(f"    {_c_string(s)},\n" for s in items)
    return f"static const char *const {name}[] = {{\n{body}    NULL\n}};\n"


def _peers_array(name, spec):
    """The libraries released with spec (lz_peer, src/base/lz_runtime.h), ended
    by a row of NULLs (every field named: clang warns of missing ones)."""
    out, rows = [], []
    for k, (other, not_older) in enumerate(peers(spec)):
        out.append(_string_array(f"{name}_{k}", other.sonames))
        rows.append(f"    {{{_c_string(other.display)}, {_c_string(other.shim)}, "
                    f"{_c_string(other.version_scheme)}, {1 if other.versioned else 0}, {name}_{k}, "
                    f"{not_older}}},\n")
    return "".join(out) + f"static const lz_peer {name}[] = {{\n{''.join(rows)}    {{NULL, NULL, NULL, 0, NULL, 0}}\n}};\n"


def dlopen_note_json(spec):
    sonames = ",".join(_c_string(s) for s in spec.sonames)
    return (f'[{{"feature":{_c_string(spec.feature)},'
            f'"description":{_c_string(spec.description)},'
            f'"priority":"{spec.note_priority}",'
            f'"soname":[{sonames}]}}]')


def dlopen_note_asm(spec):
    """The ELF note "FDO"/0x407c0c0a holding the JSON (freedesktop/systemd
    dlopen metadata), in a COMDAT group named after the feature: an object
    that links several amalgamations (each with the libelf probe) carries
    one entry per feature, not one per copy."""
    desc = dlopen_note_json(spec).encode() + b"\0"
    desc += b"\0" * (-len(desc) % 4)
    rows = []
    for k in range(0, len(desc), 32):
        rows.append("\\t.byte " + ",".join(str(b) for b in desc[k:k + 32]) + "\\n")
    group = "lz_dlopen_note_" + re.sub(r"\W", "_", spec.feature)
    body = "".join(f'    "{r}"\n' for r in rows)
    return ("/* ELF dlopen metadata (freedesktop/systemd format): the soft dependency. */\n"
            f'__asm__(".pushsection .note.dlopen,\\"aG\\",@note,{group},comdat\\n"\n'
            f'    "\\t.p2align 2\\n\\t.long 4, {len(dlopen_note_json(spec)) + 1}, 0x407c0c0a\\n"\n'
            f'    "\\t.asciz \\"FDO\\"\\n"\n{body}'
            f'    "\\t.popsection");\n')


def runtime_note_asm(spec):
    """The ".note.lazynccl" notes that lazynccl-run's audit module reads
    (their format: src/common/lz_note.h): LZ_NOTE_RUNTIME lists the sonames this
    runtime copy may load, so that its own loads are never redirected; a
    drop-in also carries LZ_NOTE_DROPIN: where its lz_asked_box lies (the
    module writes the path asked for there) and the SONAME it stands for."""
    group = "lz_runtime_note_" + re.sub(r"\W", "_", spec.feature)
    body = "".join(f'    "\\t.asciz {_c_string(_c_string(s))[1:-1]}\\n"\n' for s in spec.sonames)
    head = ('    "\\t.p2align 2\\n\\t.long 8f - 7f, 6f - 5f, " LZ_NOTE_STR({type}) "\\n"\n'
            '    "7:\\t.asciz \\"" LZ_NOTE_OWNER "\\"\\n8:\\t.p2align 2\\n5:\\n"\n')
    return ("/* Marks of a lazynccl runtime for the audit module (src/common/lz_note.h). */\n"
            f'__asm__(".pushsection .note.lazynccl,\\"aG\\",@note,{group},comdat\\n"\n'
            + head.format(type="LZ_NOTE_RUNTIME") + body +
            '    "6:\\t.p2align 2\\n\\t.popsection");\n'
            "#ifdef LZ_DROPIN_SONAME\n"
            '__asm__(".pushsection .note.lazynccl.dropin,\\"a\\",@note\\n"\n'
            + head.format(type="LZ_NOTE_DROPIN") +
            f'    "\\t.long lz_asked_box_{spec.id} - 5b\\n"\n'
            '    "\\t.asciz \\"" LZ_DROPIN_SONAME "\\"\\n"\n'
            '    "6:\\t.p2align 2\\n\\t.popsection");\n'
            "#endif\n")


def _unsupported_array(name, table):
    body = "".join(f"    {{{_c_string(k)}, {_c_string(v)}}},\n" for k, v in table.items())
    return f"static const lz_unsupported {name}[] = {{\n{body}    {{NULL, NULL}}\n}};\n"


def _roots_array(name, roots):
    subs = "".join(_string_array(f"{name}_{k}", r.subdirs) for k, r in enumerate(roots))
    body = "".join(f"    {{{_c_string(r.var)}, {name}_{k}}},\n" for k, r in enumerate(roots))
    return subs + f"static const lz_root {name}[] = {{\n{body}    {{NULL, NULL}}\n}};\n"


def _per_function(e, macro, *middle):
    """One export's line through a macro of src/arch/lz_thunk.h (its _VOID form
    for a void function): (ret, the header's name, symbol, middle...,
    (params), (args))."""
    typed = e.name if e.declared else e.typed_as
    args = [e.fn.ret, typed, e.sym, *middle, f"({e.fn.params})", f"({e.fn.args})"]
    return f"{macro}{'_VOID' if e.fn.ret == 'void' else ''}({', '.join(args)})"


def small_runtime(spec, exports, has_variables):
    """Whether the static shim takes the small runtime (src/small/lz_small.c),
    which leaves the search to the dynamic linker: the library uses nothing
    that runtime lacks. One soname (the dynamic linker searches name after
    name, the full runtime directory after directory); no variables, own
    answers or versioned names; none of the search's own steps (wheels, a
    release, companions, unsupported sonames, "system")."""
    return (len(spec.sonames) == 1 and not has_variables and not spec.own_answers
            and not any(e.family for e in exports) and not spec.hidden
            and not (spec.wheel_dirs or spec.released_with or spec.companions
                     or spec.unsupported) and spec.search == "full")


class ShimWriter:
    """The shim's C text, one small writer per section, in file order
    (write()). Every file-scope name carries the spec's id, so several shims
    can share one translation unit (the amalgamation)."""

    def __init__(self, spec, spec_display, headers, functions, macros, control_prefix=None,
                 inline_extras=False, arch="x86_64", library_functions=(), enums=None,
                 has_variables=True, control_apart=False, dependency_functions=()):
        self.spec, self.spec_display, self.headers = spec, spec_display, headers
        self.control_apart = control_apart
        self.enums = enums or {}
        self.functions, self.macros, self.inline_extras = functions, macros, inline_extras
        self.control_prefix = control_prefix
        exports, self.notes = split_variadic(spec, expand_exports(spec, functions), arch)
        self.exports, more = add_opaque(spec, exports, library_functions, arch)
        self.notes += more
        wrapped = {e.name for e in self.exports}
        for name in spec.own_answers:
            if name not in wrapped:
                raise GenError(f"{spec.path} [own_answers]", f"'{name}' is not a wrapped function")
        check_names(spec, self.exports, control_prefix)
        stops = stopping(spec, self.exports)
        if stops:
            self.notes.append(stops)
        self.answers = [e for e in self.exports if e.name in spec.own_answers]
        # What the library's dependencies define for it (ncurses' libtinfo
        # its curses_version): no candidate's own table holds them, so
        # none is asked for them; dlsym finds them once it is loaded.
        self.from_deps = [e for e in self.exports if e.name in dependency_functions and not e.family]
        for e in self.answers:
            if e.fn.ret != "const char *" or e.fn.variadic:
                raise GenError(f"{spec.path} [own_answers]",
                               f"'{e.name}' returns '{e.fn.ret}'; only 'const char *' can be answered")
        self.version = version_function(spec, self.exports)
        self.small = small_runtime(spec, self.exports, has_variables)
        self.id = spec.id
        self.out = []
        # Where the assembly forward exists, a function's first call needs
        # no typed code of its own: it goes through the forward, every
        # argument register kept, to what the runtime answers (the library's
        # function, or the typed failure function, with the same
        # arguments), as Implib.so's stubs do. A function that only stops
        # without its library has no failure function either (untyped).
        # Its thunk keeps the compiler's check of its type against the
        # header.
        self.forwarded = {e.name for e in self.exports
                          if arch in ("x86_64", "aarch64") and not e.fn.variadic
                          and not e.fn.wide_vector  # AVX/SVE registers: typed
                          and e.name not in spec.own_answers and not spec.hidden}
        self.untyped = {e.name for e in self.exports
                        if e.name in self.forwarded and failure_value(spec, e.fn) is None}

    def w(self, text):
        self.out.append(text)

    def write(self):
        for section in (self.write_provenance, self.write_includes, self.write_names,
                        self.write_undeclared, self.write_index, self.write_resolvers,
                        self.write_answers, self.write_failures, self.write_tables,
                        self.write_version, self.write_lists, self.write_state, self.write_lib,
                        self.write_thunks, self.write_control_api, self.write_notes,
                        self.write_symbol_versions):
            section()
        return "".join(self.out)

    def write_provenance(self):
        self.w("/* Generated by lazynccl's gen/lazygen.py: do not edit.\n")
        self.w(f" * Spec:    {self.spec_display}\n")
        for h in self.headers:
            self.w(f" * Header:  {h}\n")
        for name, value in self.macros:
            self.w(f" *          {name} = {value}\n")
        self.w(f" * Exports: {len(self.exports)} functions ({len(self.functions)} declared by the "
               f"header)\n */\n")

    def write_includes(self):
        if not self.inline_extras:
            self.w(_pinned_defines(self.spec))
        if self.spec.language == "c++":
            self.write_cxx_declarations()
        for h in self.spec.headers if self.headers and self.spec.language == "c" else []:
            self.w(f"#include <{h}>\n")  # none found: a symbol list serves
        for path in self.spec.extra_headers:
            if self.inline_extras:  # the amalgamation carries them: vendors have no stubs/
                with open(path, encoding="utf-8") as f:
                    self.w(f"/* ---- stubs/{os.path.basename(path)} ---- */\n{f.read()}\n")
            else:
                self.w(f'#include "{os.path.basename(path)}"\n')
        if self.small:
            self.w("/* The static shim's runtime is the small one (src/small/lz_small.h). */\n"
                   '#ifdef LZ_STATIC_SHIM\n#include "small/lz_small.h"\n#endif\n')
        self.w('#include <dlfcn.h>\n#include <stdio.h>\n#include "arch/lz_thunk.h"\n#include "common/lz_note.h"\n\n')
        self.w("/* Thunks of deprecated functions are still exported; forwarding is not use. */\n")
        self.w('#pragma GCC diagnostic ignored "-Wdeprecated-declarations"\n')
        self.w('#pragma GCC diagnostic ignored "-Wunused-parameter"\n\n')

    def write_cxx_declarations(self):
        """A C++ header cannot be included in C: its extern "C" functions
        declared in their C form (model.lower_type), and the enumerators
        the failure values name."""
        self.w("/* The C form of the C++ headers' extern \"C\" functions. */\n#include <stddef.h>\n")
        used = " ".join(list(self.spec.failure.values()) + list(self.spec.failure_functions.values()))
        for name, value in sorted(self.enums.items()):
            if re.search(rf"\b{re.escape(name)}\b", used):
                self.w(f"#define {name} {value}\n")
        for fn in self.functions:
            self.w(f"extern {fn.ret}{'' if fn.ret.endswith('*') else ' '}{fn.name}({fn.params});\n")

    def write_names(self):
        i_d = self.id
        self.w("#undef LZ_LIB\n#undef LZ_SLOTS\n#undef LZ_REALS\n#undef LZ_VRESOLVE\n")
        self.w(f"#define LZ_LIB lz_lib_{i_d}\n#define LZ_SLOTS lz_slots_{i_d}\n"
               f"#define LZ_REALS lz_reals_{i_d}\n#define LZ_VRESOLVE lz_vresolve_{i_d}\n")
        self.w("LZ_DECL_DATA const lz_lib LZ_LIB;\n\n")

    def write_undeclared(self):
        undeclared = [e for e in self.exports
                      if not e.declared and not self.spec.hidden and not e.fn.opaque]
        if undeclared:
            self.w("/* Names the header does not declare, typed like the version it does. */\n")
            for e in undeclared:
                self.w(f"extern __typeof__({e.typed_as}) {e.name};\n")
            self.w("\n")

    def write_index(self):
        self.w("/* Index of each export in the tables below. */\nenum {\n")
        for e in self.exports:
            self.w(f"    LZ_I_{e.sym},\n")
        self.w(f"    LZ_COUNT_{self.id}\n}};\n\n")

    def write_resolvers(self):
        self.w("/* First-call resolvers: load, resolve, publish, call. */\n")
        if any(e.fn.variadic or e.name in self.forwarded for e in self.exports):
            self.w("LZ_VARIADIC_HELPER\n")
        for i, e in enumerate(self.exports):
            if e.fn.variadic or e.name in self.forwarded:
                self.w(f"LZ_RESOLVER_VARIADIC({e.sym}, {i})\n")
                continue
            line = _per_function(e, "LZ_RESOLVER")
            self.w((_wide_target(e) + line if e.fn.wide_vector else line) + "\n")

    def write_answers(self):
        if not self.answers:
            return
        self.w("\n/* Own answers once loaded: the library's message, or ours when it has none. */\n")
        self.w(f"static lz_fn lz_reals_{self.id}[LZ_COUNT_{self.id}];\n")
        for e in self.answers:
            self.w(f"LZ_ANSWER({e.fn.ret}, {e.typed_as if not e.declared else e.name}, {e.sym}, "
                   f"({e.fn.params}), ({e.fn.args}))\n")

    def write_failures(self):
        """Failure code for the functions that have a failure value; the
        others (self.stops) none: their lz_fails entry is 0 and the runtime
        stops the process (lz_resolve.c, failure)."""
        self.w("\n/* What a function does when the library or its symbol cannot be had. */\n")
        self.stops = set()
        for e in self.exports:
            opaque_value = self.spec.failure_functions.get(e.name, self.spec.opaque_failure)
            value = failure_value(self.spec, e.fn)
            # typed code of a function passing AVX vectors is compiled for AVX
            target = _wide_target(e) if e.fn.wide_vector else ""
            if e.fn.opaque and opaque_value:
                self.w(f"LZ_FAIL_OPAQUE({e.sym}, {opaque_value})\n")
            elif e.name in self.spec.own_answers:
                self.w(f"LZ_OWN_FAIL({e.fn.ret}, {e.sym}, ({e.fn.params}), lz_message(&LZ_LIB))\n")
            elif e.fn.opaque or e.name in self.untyped or value is None:
                self.stops.add(e.sym)
            elif e.name in self.spec.failure_outs:
                self.write_failure_with_outs(e, value, target)
            elif e.fn.ret == "void":
                self.w(f"{target}LZ_FAIL_VOID({e.sym}, ({e.fn.params}))\n")
            else:
                self.w(f"{target}LZ_FAIL({e.fn.ret}, {e.sym}, ({e.fn.params}), {value})\n")

    def write_failure_with_outs(self, e, value, target):
        """A failure function that also stores what the spec says each
        out-parameter gets (through the pointer, where it is not NULL),
        as the API does when it fails (a compile function's error code)."""
        outs = self.spec.failure_outs[e.name]
        names = list(e.fn.param_names)
        missing = [p for p in outs if p not in names]
        if missing:
            raise GenError(self.spec.path, f"[failure.functions] {e.name}: out: no parameter named "
                                           f"{', '.join(missing)} (its parameters: "
                                           f"{', '.join(n or '(unnamed)' for n in names) or 'none'})")
        fixed = [p for p in outs if not (e.fn.param_writable and e.fn.param_writable[names.index(p)])]
        if fixed:
            raise GenError(self.spec.path, f"[failure.functions] {e.name}: out: {', '.join(fixed)} "
                                           f"{'is' if len(fixed) == 1 else 'are'} not a pointer to "
                                           f"something it may write (an out-parameter is a pointer "
                                           f"to a type that is not const)")
        stores = "".join(f" if (a{names.index(p)}) *a{names.index(p)} = {v};" for p, v in outs.items())
        ret = "" if e.fn.ret == "void" else f" return {value};"
        self.w(f"{target}__attribute__((used)) static {e.fn.ret} lz_f_{e.sym}({e.fn.params})\n"
               f"{{ lz_failed_call(&LZ_LIB);{stores} errno = LZ_FAIL_ERRNO;{ret} }}\n")

    def _table(self, decl, row):
        self.w(f"{decl}[LZ_COUNT_{self.id}] = {{\n"
               + "".join(f"    {row(e)},\n" for e in self.exports) + "};\n")

    def write_tables(self):
        i_d, exports = self.id, self.exports
        self.w("\n")
        self._table(f"__attribute__((used)) static lz_fn lz_slots_{i_d}",
                    lambda e: f"(lz_fn)lz_r_{e.sym}")
        # Resolvers and failures as distances the linker fills in (lz_fnrel):
        # read-only data, no relocation at start-up.
        rel_table(self.w, f"lz_resolvers_{i_d}", i_d, [f"lz_r_{e.sym}" for e in exports])
        rel_table(self.w, f"lz_fails_{i_d}", i_d,
                  [(None, e.sym) if e.sym in self.stops else f"lz_f_{e.sym}" for e in exports],
                  none="no failure value, stops")
        # Names as offsets into one string, not pointers: the table then needs
        # no relocation and stays the file's pages at start-up (lz_runtime.h).
        offsets, blob, end = {}, [""], [1]

        def offset(text):
            if text not in offsets:
                offsets[text] = end[0]
                end[0] += len(text) + 1
                blob.append(text)
            return offsets[text]
        rows = {e.sym: (offset(e.name), offset(e.family) if e.family else 0) for e in exports}
        self.w(f"static const char lz_names_{i_d}[] =\n" +
               "".join(f"    {_c_string(b)} \"\\0\"\n" for b in blob) + "    ;\n")
        self._table(f"static const lz_sym lz_syms_{i_d}",
                    lambda e: f"{{{rows[e.sym][0]}, {rows[e.sym][1]}, {e.major}, {e.minor}}}")
        # The names in strcmp's order, sorted here once rather than by every
        # process's first call (lz_objects_imports).
        order = sorted(range(len(exports)), key=lambda k: exports[k].name.encode())
        self.w(f"static const uint32_t lz_by_name_{i_d}[LZ_COUNT_{i_d}] = {{"
               + ", ".join(str(k) for k in order) + "};\n")
        if self.answers:
            own = {e.sym for e in self.answers}
            rel_table(self.w, f"lz_answers_{i_d}", i_d,
                      [f"lz_a_{e.sym}" if e.sym in own else None for e in exports])
        if self.from_deps:
            deps = {e.sym for e in self.from_deps}
            bits = [0] * ((len(exports) + 7) // 8)
            for k, e in enumerate(exports):
                if e.sym in deps:
                    bits[k // 8] |= 1 << (k % 8)
            self.w(f"/* The {len(deps)} names the library's dependencies define for it, a bit each. */\n"
                   f"static const unsigned char lz_from_deps_{i_d}[] = {{"
                   + ", ".join(str(b) for b in bits) + "};\n")
        self.w("\n")

    def write_version(self):
        if self.version:
            self.w("/* The loaded library's version as text (lazynccl-info --load). */\n"
                   + self.version + "\n")

    def write_lists(self):
        i_d, spec = self.id, self.spec
        self.w("/* A drop-in stands in for one soname and accepts only that one. */\n"
               "#ifdef LZ_DROPIN_SONAME\n"
               f"static const char *const lz_sonames_{i_d}[] = {{LZ_DROPIN_SONAME, NULL}};\n"
               "#else\n")
        self.w(_string_array(f"lz_sonames_{i_d}", spec.sonames))
        self.w("#endif\n")
        self.w(_unsupported_array(f"lz_unsupported_{i_d}", spec.unsupported))
        for name in ("companions", "companions_for", "wheel_dirs"):
            self.w(_string_array(f"lz_{name}_{i_d}", getattr(spec, name)))
        self.w(_roots_array(f"lz_roots_before_{i_d}", spec.roots_before))
        self.w(_roots_array(f"lz_roots_after_{i_d}", spec.roots_after))
        for name in ("default_dirs", "required"):
            self.w(_string_array(f"lz_{name}_{i_d}", getattr(spec, name)))
        self.w(_peers_array(f"lz_peers_{i_d}", spec))

    def write_state(self):
        i_d = self.id
        # Only a drop-in is told by the audit module what was asked for: only a
        # drop-in has a box for it (runtime_note_asm, src/common/lz_note.h).
        self.w("#ifdef LZ_DROPIN_SONAME\n"
               f"LZ_HIDDEN lz_asked_box lz_asked_box_{i_d};\n"
               f"static lz_state lz_state_{i_d} = {{.mu = PTHREAD_MUTEX_INITIALIZER, "
               f".asked = &lz_asked_box_{i_d}}};\n"
               "#else\n"
               f"static lz_state lz_state_{i_d} = LZ_STATE_INIT;\n"
               "#endif\n\n")

    def lib_fields(self):
        """The lz_lib initializer, field by field: the spec's settings the
        runtime reads (gen/spec.py's setting(c=...): a new one needs no line
        here), then what the generator derives and the tables."""
        spec, i_d, p = self.spec, self.id, self.spec.message_prefix
        fields = [(member, _c_setting(value)) for member, value in c_settings(spec)]
        fields += [("no_error", _c_string(p + ": no error")),
                   ("not_loaded", _c_string(p + ": " + spec.display + " not loaded yet"))]
        fields += [(f, f"lz_{f}_{i_d}") for f in ("sonames", "wheel_dirs", "roots_before",
                                                  "roots_after", "default_dirs", "required",
                                                  "syms", "names", "by_name")]
        fields += [("nsyms", f"LZ_COUNT_{i_d}")]
        fields += [(f, f"lz_{f}_{i_d}") for f in ("slots", "resolvers", "fails", "unsupported",
                                                  "companions", "companions_for")]
        if self.answers:
            fields += [("answers", f"lz_answers_{i_d}"), ("reals", f"lz_reals_{i_d}")]
        if self.from_deps:
            fields.append(("from_deps", f"lz_from_deps_{i_d}"))
        if self.version:
            fields.append(("version", f"lz_version_{i_d}"))
        fields += [("peers", f"lz_peers_{i_d}"),
                   ("dlopen_flags", " | ".join(spec.dlopen_flags) or "0"),
                   ("system_only", "1" if spec.search == "system" else "0"),
                   ("st", f"&lz_state_{i_d}")]
        return fields

    def write_lib(self):
        self.w("LZ_DEF_DATA const lz_lib LZ_LIB = {\n")
        self.w("".join(f"    .{k} = {v},\n" for k, v in self.lib_fields()))
        self.w("};\n\n")
        self.write_small_needs()

    def write_small_needs(self):
        """The small runtime's parts this library needs, named so that the
        static archive gives them (src/small/lz_small.h): the roots' steps
        where the spec has roots or default directories, the stop where a
        function has no failure value or the first failed call speaks."""
        spec = self.spec
        roots = bool(spec.roots_before or spec.roots_after or spec.default_dirs)
        stop = bool(self.stops or spec.say_unavailable)
        needs = (["lz_small_roots_part"] if roots else []) + (["lz_stop_part"] if stop else [])
        if not (self.small and needs):
            return
        self.w("#ifdef LZ_STATIC_SHIM\n" + ('#include "base/lz_stop.h"\n' if stop else "")
               + f"LZ_SMALL_NEEDS({self.id}, {', '.join('&' + n for n in needs)})\n"
               "#endif\n\n")

    def write_thunks(self):
        hidden = self.spec.hidden
        self.w("/* The API: one indirect jump through the slot each. Symbol names are\n"
               " * string literals, so no macro of the header can rename them. */\n")
        for i, e in enumerate(self.exports):
            typed = e.name if e.declared else e.typed_as
            if e.fn.opaque:
                self.w(f"LZ_THUNK_OPAQUE({_c_string(e.sym)}, {i})\n")
                continue
            if e.fn.variadic:
                self.w(f"LZ_THUNK_VARIADIC{'_HIDDEN' if hidden else ''}({e.fn.ret}, {typed}, "
                       f"{_c_string(e.sym)}, {i}, ({e.fn.params}))\n")
                continue
            # An own answer's caller bound after the load gets the real
            # function (src/api/lz_bind.h).
            macro = ("LZ_THUNK_VOID" if e.fn.ret == "void" else "LZ_THUNK") + \
                ("_HIDDEN" if hidden else "_ANSWER" if e.name in self.spec.own_answers else "")
            self.w(f"{macro}({e.fn.ret}, {typed}, {e.sym}, {_c_string(e.sym)}, {i}, "
                   f"({e.fn.params}), ({e.fn.args}))\n")

    def control_functions(self):
        """The control API's C functions (gen/control_api.py), under the
        shim's prefix."""
        return c_functions(self.control_prefix or self.spec.shim + "_", "LZ_LIB")

    def write_control_api(self):
        if self.spec.control_api:
            self.w("\n/* The control API (gen/control_api.py). */\n")
            apart = self.control_apart and self.small
            if apart:
                self.w(f"#ifndef LZ_STATIC_SHIM /* the static archive's is {self.id}_control.c */\n")
            self.w(self.control_functions())
            if apart:
                self.w("#endif\n")
        self.w("\n")

    def control_file(self):
        """<id>_control.c: the control API of a small library's static
        shim, an archive member of its own, so that a program calling none
        of it links none of the small runtime's control code
        (docs/concepts/performance.md, "Size"). Declarations only
        elsewhere: the shared shim, the drop-ins and the full runtime's
        static shims take the stubs' copy (the full runtime's control code
        is linked with its first call anyway)."""
        out = [f"/* Generated by lazynccl's gen/lazygen.py: do not edit.\n"
               f" * Spec:    {self.spec_display}\n"]
        if not self.small:
            out.append(f" * The control API is in {self.id}_stubs.c: the static shim takes the full "
                       "runtime. */\n#include \"api/lz_api.h\"\n")
            return "".join(out)
        out.append(f" * The control API of the static shim ({self.id}_stubs.c has the others'). */\n")
        out.append('#ifdef LZ_STATIC_SHIM\n#include "small/lz_small.h"\n#endif\n')
        out.append('#include "api/lz_api.h"\n#include "api/lz_resolve.h"\n#include <stddef.h>\n\n')
        out.append(f"#undef LZ_LIB\n#define LZ_LIB lz_lib_{self.id}\n"
                   "LZ_DECL_DATA const lz_lib LZ_LIB;\n\n")
        if self.spec.control_api:
            out.append("#ifdef LZ_STATIC_SHIM\n" + self.control_functions() + "#endif\n")
        return "".join(out)

    def write_notes(self):
        self.w(dlopen_note_asm(self.spec))
        self.w(runtime_note_asm(self.spec))

    def write_symbol_versions(self):
        self.w("\n/* A drop-in's explicit symbol versions (gen/dropin_versions.py): its\n"
               " * header says which hidden versions exist, through these. */\n"
               "#ifdef LZ_DROPIN_SYMVER\n")
        for e in self.exports:
            if e.fn.variadic:
                self.w(f"#define LZ_HV_{e.sym}(alias, node) "
                       f"LZ_VERSION_ALIAS({_c_string(e.sym)}, alias)\n")
                continue
            self.w(f"#define LZ_HV_{e.sym}(alias, node) "
                   + _per_function(e, "LZ_VERSION_THUNK", "alias", "node") + "\n")
        self.w("#include LZ_DROPIN_SYMVER\n#endif\n")


def emit(spec, spec_display, headers, functions, macros, control_prefix=None,
         inline_extras=False, arch="x86_64", library_functions=(), enums=None, has_variables=True,
         control=None, dependency_functions=()):
    """The shim's C text, its exports and the generator's notes (ShimWriter).
    library_functions: the real library's function names, for those no
    header declares; dependency_functions: the names its dependencies define
    (find_library.dependency_names) that it does not; enums: a C++ header's
    enumerators (model.enumerators);
    has_variables: whether the shim serves variables too (emit_data);
    control: a list that receives the text of <id>_control.c, whose
    control API the static archive takes instead of the stubs' own."""
    writer = ShimWriter(spec, spec_display, headers, functions, macros, control_prefix,
                        inline_extras, arch, library_functions, enums, has_variables,
                        control_apart=control is not None,
                        dependency_functions=dependency_functions)
    text = writer.write()
    if control is not None:
        control.append(writer.control_file())
    return text, writer.exports, writer.notes


def emit_header(spec, exports):
    """Declarations of an internal shim's prefixed functions, for the runtime."""
    guard = f"LZ_{spec.id.upper()}_SHIM_H"
    out = [f"/* Generated by lazynccl's gen/lazygen.py from stubs/{spec.id}.toml: do not edit. */\n",
           f"#ifndef {guard}\n#define {guard}\n"]
    out += [f"#include <{h}>\n" for h in spec.headers]
    out.append('#include "base/lz_runtime.h"\n\n')
    out.append(f"LZ_DECL_DATA const lz_lib lz_lib_{spec.id};\n")
    for e in exports:
        out.append(f"LZ_HIDDEN __typeof__({e.name}) {e.sym};\n")
    out.append("\n#endif\n")
    return "".join(out)
