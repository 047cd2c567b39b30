# SPDX-License-Identifier: MIT
"""Read and check a library spec (stubs/*.toml).

Every problem is reported as a GenError naming the spec file (and the line,
where tomllib gives one), so a build log points at the file to fix. A spec
may name shared defaults (defaults = "cuda": stubs/defaults/cuda.toml).
"""

import os
import re
import stat
try:
    import tomllib
except ImportError:  # Python before 3.11: the same parser, from PyPI (pyproject.toml asks for it)
    import tomli as tomllib
from dataclasses import MISSING, dataclass, field, fields


def _debug_env():
    """The log's variable where a spec names none: the C code's own
    (src/common/lz_debug.h, which the audit module reads too)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "src", "common", "lz_debug.h")
    with open(path, encoding="utf-8") as f:
        return re.search(r'#define LZ_DEBUG_ENV "(\w+)"', f.read()).group(1)


DEBUG_ENV = _debug_env()


class GenError(Exception):
    """A user-facing generation error: 'file[:line]: message'."""

    def __init__(self, where, message):
        super().__init__(f"{where}: error: {message}")


class SpecErrors(GenError):
    """Several problems of one spec, one line each."""

    def __init__(self, errors):
        Exception.__init__(self, "\n".join(str(e) for e in errors))


class Problems:
    """Every problem of a spec, gathered so that one run names them all,
    each with the key to change."""

    def __init__(self):
        self.errors = []

    def add(self, where, message):
        self.errors.append(GenError(where, message))

    def check(self, fn, *args, default=None, **kwargs):
        """fn(*args, **kwargs); a GenError it raises is kept, and default
        returned."""
        try:
            return fn(*args, **kwargs)
        except GenError as e:
            self.errors.append(e)
            return default

    def raise_any(self):
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            raise SpecErrors(self.errors)


@dataclass
class Versioned:
    regex: re.Pattern
    format: str
    known: list  # [(major, minor)], ascending


@dataclass
class Root:
    """An environment variable naming a prefix, and the subdirectories of it searched."""
    var: str
    subdirs: list


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_STR, _LIST, _BOOL = str, list, bool


def setting(kind, default=MISSING, *, required=False, key=None, copied=True, c=None):
    """A Spec field filled from the spec's [library] table, and the one place
    a per-library setting is declared on this side: the key's kind (the
    schema load_spec checks), whether it is required, its name when not the
    field's (key), whether load_spec copies the value as it is (copied; else
    it is read by hand below), and the lz_lib member the generator writes it
    to (c; the runtime's side of the same setting, src/base/lz_runtime.h)."""
    meta = {"kind": kind, "required": required, "key": key, "c": c,
            "copied": copied and not required}
    if isinstance(default, list):
        return field(default_factory=list, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class Spec:
    path: str
    id: str = setting(_STR, required=True, c="id")
    display: str = setting(_STR, required=True, c="display")
    shim: str = setting(_STR, required=True, c="shim")
    headers: list = setting(_LIST, required=True)
    function_pattern: re.Pattern = setting(_STR, required=True)  # compiled by load_spec
    sonames: list = setting(_LIST, required=True)
    feature: str = setting(_STR, required=True)
    description: str = setting(_STR, required=True)
    failure: dict = field(default_factory=dict)      # [failure]: return type -> value
    failure_functions: dict = field(default_factory=dict)  # [failure.functions]: name -> value
    # [failure.functions] name = {value = ..., out = {param = ...}}: what each
    # out-parameter gets (through a non-NULL pointer) on the failure path
    failure_outs: dict = field(default_factory=dict)
    # Names the spec wrote that the header's macros rename, and what to
    # (filled by the generator, for its messages)
    renamed: dict = field(default_factory=dict)
    own_answers: dict = field(default_factory=dict)  # [own_answers]
    env: str = setting(_STR, "", c="env_var")        # "": LAZY<ID>_LIBPATH
    wheel_dirs: list = setting(_LIST, [])
    required: list = setting(_LIST, [])
    exclude: list = setting(_LIST, [])  # names left out though the pattern selects them
    defines: list = setting(_LIST, [])
    # link options a program using the library needs besides it (ncurses'
    # -ltinfo), carried by the shim's pkg-config and CMake files
    libs: list = setting(_LIST, [])
    # "c++": the headers are C++; their extern "C" functions are served,
    # typed in C (gen/model.py, lower_type).
    language: str = setting(_STR, "c")
    declarations_from: list = setting(_LIST, [])  # files/dirs declarations may come from
    include_search: list = setting(_LIST, [], copied=False)  # [(kind, value)]
    roots_before: list = setting(_LIST, [], key="search_roots_before", copied=False)  # [Root]
    roots_after: list = setting(_LIST, [], key="search_roots_after", copied=False)
    default_dirs: list = setting(_LIST, [])
    debug_env: str = setting(_STR, DEBUG_ENV, c="debug_env")
    strict_env: str = setting(_STR, "LAZYNCCL_STRICT_VERSIONS", c="strict_env")
    require_env: str = setting(_STR, "", c="require_env")  # "": LAZY<ID>_REQUIRE
    # Libraries of one release (docs/reference/search-order.md, "Released together"):
    # ids of specs beside this one; the policy's variable; the versions'
    # scheme (versions compare only within one: "": the id).
    released_with: list = setting(_LIST, [])
    not_older_than: list = setting(_LIST, [])
    release_env: str = setting(_STR, "LAZYNCCL_RELEASE_POLICY", c="release_env")
    version_scheme: str = setting(_STR, "", c="scheme")
    # Added to RTLD_LAZY | RTLD_LOCAL where the library needs them.
    dlopen_flags: list = setting(_LIST, [])
    message_prefix: str = setting(_STR, "", c="prefix")  # "": the shim's name
    probe: bool = setting(_BOOL, True, c="probe")  # probe candidates with libelf before dlopen
    # The first failed call prints why on stderr, once: for a library whose
    # programs have no other error channel (off where the API has its own).
    say_unavailable: bool = setting(_BOOL, False, c="say_unavailable")
    # One of the families an installation must load: lazynccl-info asked
    # for nothing fails when it cannot (NCCL, NVRTC, nvJitLink); the others
    # are shown, with the reason, without failing it.
    must_load: bool = setting(_BOOL, False, c="must_load")
    visibility: str = setting(_STR, "default")   # "hidden": a shim for the runtime's own use
    control_api: bool = setting(_BOOL, True)      # <shim>_load() and the rest
    note_priority: str = setting(_STR, "recommended")  # .note.dlopen priority
    install: bool = setting(_BOOL, True)
    optional: bool = setting(_BOOL, False)  # a missing header skips the shim instead of failing
    symbol_prefix: str = setting(_STR, "")
    version_marker: str = setting(_STR, "", c="version_marker")
    version_function: str = setting(_STR, "")
    version_code: list = setting(_LIST, [], copied=False)  # divisors: 22809 -> 2.28.9
    version_code_below: list = setting(_LIST, [], copied=False)  # below version_code[0]: 2708 -> 2.7.8
    # None: from the real library; True, False, or a node name
    symbol_versions: object = setting((bool, str), None)
    version_macros: list = setting(_LIST, [])
    extra_headers: list = setting(_LIST, [], copied=False)  # paths, beside the spec
    # A symbol list (lazygen symbols): the library's exports where neither
    # its header nor the library is at hand; served without types.
    symbols: str = setting(_STR, "")
    # What an export served without a type returns when the library cannot
    # be loaded ("": the process stops with the report, as Implib.so's do).
    opaque_failure: str = setting(_STR, "")
    companions: list = setting(_LIST, [])
    companions_for: list = setting(_LIST, [])
    search: str = setting(_STR, "full")  # "system": override, loaded, ld.so.cache, system dirs
    versioned: Versioned = None      # [versioned]
    unsupported: dict = field(default_factory=dict)  # [unsupported]
    source_files: list = field(default_factory=list)  # the defaults file, if any

    @property
    def hidden(self):
        return self.visibility == "hidden"

    @property
    def served(self):
        """Installed for users (a public spec not marked install = false):
        lazynccl-info's default, the Python package's LIBRARIES."""
        return not self.hidden and self.install


_SETTINGS = [f for f in fields(Spec) if "kind" in f.metadata]
# key: (kind, required); "defaults" names a shared file read before the rest
_KEYS = {(f.metadata["key"] or f.name): (f.metadata["kind"], f.metadata["required"])
         for f in _SETTINGS}
_KEYS["defaults"] = (_STR, False)
_COPIED = {(f.metadata["key"] or f.name): f.name for f in _SETTINGS if f.metadata["copied"]}


def c_settings(spec):
    """(lz_lib member, value) of every setting the runtime reads, for the
    generator's lz_lib initializer; an empty string is left NULL."""
    return [(f.metadata["c"], getattr(spec, f.name)) for f in _SETTINGS
            if f.metadata["c"] and getattr(spec, f.name) != ""]


_DEFAULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "stubs",
                             "defaults")


def _check(table, key, where):
    kind, _ = _KEYS[key]
    value = table[key]
    if kind is list:
        ok = isinstance(value, list) and all(isinstance(v, (str, int)) and not isinstance(v, bool)
                                             for v in value)
        if not ok:
            raise GenError(where, f"'{key}' must be a list of strings")
    elif isinstance(kind, tuple) and not isinstance(value, kind):
        raise GenError(where, f"'{key}' must be one of: " + ", ".join(k.__name__ for k in kind))
    elif not isinstance(value, kind):
        raise GenError(where, f"'{key}' must be a {kind.__name__}")
    return value


def _regex(text, where, key):
    try:
        return re.compile(text)
    except re.error as e:
        raise GenError(where, f"'{key}' is not a valid regular expression: {e}")


def _read_toml(path):
    try:
        # stat first: a FIFO named like a spec must be refused, not waited on.
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise GenError(path, "cannot read spec: not a regular file")
        with open(path, "rb") as f:
            return tomllib.load(f)
    except OSError as e:
        raise GenError(path, f"cannot read spec: {e.strerror}")
    except UnicodeDecodeError as e:
        raise GenError(path, f"not UTF-8 text: byte 0x{e.object[e.start]:02x} at offset {e.start} "
                             f"(a spec is TOML, which is UTF-8)")
    except tomllib.TOMLDecodeError as e:
        # tomllib's message already carries "(at line N, column M)".
        raise GenError(path, f"malformed TOML: {e}")


def _merge(own, defaults):
    """A spec's value replaces the default; '@defaults' in a list splices it in."""
    out = dict(defaults)
    for key, value in own.items():
        if isinstance(value, list) and "@defaults" in value:
            spliced = []
            for v in value:
                spliced += defaults.get(key, []) if v == "@defaults" else [v]
            value = spliced
        out[key] = value
    return out


def _roots(items, where, key):
    roots = []
    for item in items:
        var, _, subs = item.partition(":")
        if not _IDENT.match(var) or not subs:
            raise GenError(where, f"'{key}': {item!r} is not VAR:subdir[,subdir...]")
        roots.append(Root(var, subs.split(",")))
    return roots


def _include_search(items, where, here):
    """[(kind, value)]; a relative dir:PATH is the spec's own directory's
    (a spec outside the tree keeps its header beside it)."""
    out = []
    for item in items:
        kind, _, value = item.partition(":")
        if kind not in ("option", "env", "dir") or not value:
            raise GenError(where, f"'include_search': {item!r} is not option:NAME, env:VAR "
                                  f"or dir:PATH")
        out.append((kind, os.path.join(here, value) if kind == "dir" else value))
    return out


def _library_table(path, data, problems):
    """[library], checked key by key, merged over its defaults file:
    (table, the defaults file or None). A key of the wrong kind is left
    out of the table, its problem kept."""
    lib = data.get("library")
    if not isinstance(lib, dict):
        raise GenError(path, "missing [library] table")
    where = f"{path} [library]"
    wrong = set()
    for key in list(lib):
        if key not in _KEYS:
            problems.add(where, f"unknown key '{key}'")
            del lib[key]
        elif problems.check(_check, lib, key, where, default=problems) is problems:
            wrong.add(key)
            del lib[key]
    defaults_file = None
    if "defaults" in lib:
        name = lib["defaults"]
        defaults_file = os.path.normpath(os.path.join(_DEFAULTS_DIR, name + ".toml"))
        if not _IDENT.match(name) or not os.path.isfile(defaults_file):
            raise GenError(where, f"defaults {name!r}: no such file {defaults_file}")
        dlib = _read_toml(defaults_file).get("library", {})
        for key in dlib:
            if key not in _KEYS:
                problems.add(f"{defaults_file} [library]", f"unknown key '{key}'")
        lib = _merge(lib, {k: v for k, v in dlib.items() if k in _KEYS})
    if lib.get("headers") == [] and "function_pattern" not in lib:
        lib["function_pattern"] = "^$"  # no header, no declaration to select
    for key, (_, required) in _KEYS.items():
        if required and key not in lib and key not in wrong:
            problems.add(where, f"missing key '{key}'")
    return lib, defaults_file


def _settings(path, lib, defaults_file, problems):
    """The Spec of a checked [library] table: the copied keys as they are,
    the others read here."""
    where = f"{path} [library]"
    spec = Spec(path=path, **{k: lib[k] for k, (_, required) in _KEYS.items() if required})
    spec.function_pattern = problems.check(_regex, lib["function_pattern"], where,
                                           "function_pattern")
    for key, name in _COPIED.items():
        if key in lib:
            setattr(spec, name, lib[key])
    spec.env = spec.env or f"LAZY{spec.id.upper()}_LIBPATH"
    spec.require_env = spec.require_env or f"LAZY{spec.id.upper()}_REQUIRE"
    spec.message_prefix = spec.message_prefix or spec.shim
    spec.version_scheme = spec.version_scheme or spec.id
    spec.source_files = [defaults_file] if defaults_file else []
    spec.include_search = problems.check(_include_search, lib.get("include_search", []), where,
                                         os.path.dirname(os.path.abspath(path)), default=[])
    spec.roots_before = problems.check(_roots, lib.get("search_roots_before", []), where,
                                       "search_roots_before", default=[])
    spec.roots_after = problems.check(_roots, lib.get("search_roots_after", []), where,
                                      "search_roots_after", default=[])
    spec.version_code = [int(v) for v in lib.get("version_code", [])]
    spec.version_code_below = [int(v) for v in lib.get("version_code_below", [])]
    here = os.path.dirname(os.path.abspath(path))
    for name in lib.get("extra_headers", []):
        full = os.path.join(here, name)
        if not os.path.isfile(full):
            problems.add(where, f"'extra_headers': {name!r} not found beside the spec ({full})")
        spec.extra_headers.append(full)
    if spec.symbols:
        spec.symbols = os.path.join(here, spec.symbols)
        if not os.path.isfile(spec.symbols):
            problems.add(where, f"'symbols': {spec.symbols} not found (lazygen symbols LIBRARY "
                                f"--out FILE writes one)")
    return spec


def _validate(spec, problems):
    """The values a kind alone does not check."""
    where = f"{spec.path} [library]"
    if isinstance(spec.symbol_versions, str) and not re.match(r"^[A-Za-z_.][A-Za-z0-9_.+-]*$",
                                                             spec.symbol_versions):
        problems.add(where, f"'symbol_versions': {spec.symbol_versions!r} is not a version "
                            f"node name")
    for key, allowed in (("search", ("full", "system")), ("visibility", ("default", "hidden")),
                         ("language", ("c", "c++")),
                         ("note_priority", ("required", "recommended", "suggested"))):
        value = getattr(spec, key)
        if value not in allowed:
            problems.add(where, f"'{key}' must be {' or '.join(map(repr, allowed))}, "
                                f"not {value!r}")
    for flag in spec.dlopen_flags:
        if flag not in DLOPEN_FLAGS:
            problems.add(where, f"'dlopen_flags': {flag!r} is not one of "
                                f"{', '.join(DLOPEN_FLAGS)}")
    for key in ("released_with", "not_older_than"):
        for other in getattr(spec, key):
            if not _IDENT.match(other) or other == spec.id:
                problems.add(where, f"'{key}': {other!r} is not the id of another spec")
    for key in ("id", "shim", "env", "debug_env", "strict_env", "require_env", "release_env"):
        if not _IDENT.match(getattr(spec, key)):
            problems.add(where, f"'{key}' must be a C identifier")
    if not spec.sonames or not (spec.headers or spec.symbols):
        problems.add(where, "'sonames' must not be empty, nor 'headers' unless 'symbols' "
                            "names the library's symbol list")
    if spec.opaque_failure and not c_constant(spec.opaque_failure):
        problems.add(where, f"'opaque_failure': {spec.opaque_failure!r} is not a C constant "
                            f"expression")
    for name in spec.sonames:
        if not re.match(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$", name):
            problems.add(where, f"'sonames': {name!r} is not a file name (letters, digits, "
                                f"'_', '.', '+', '-'; no '/': a SONAME names no directory)")
    if spec.companions and not spec.companions_for:
        problems.add(where, "'companions' needs 'companions_for': the functions before whose "
                            "first call they are loaded")
    for key in ("required", "exclude"):
        for name in getattr(spec, key):
            if not _IDENT.match(name):
                problems.add(where, f"'{key}': {name!r} is not a C identifier")


# The dlopen flags a spec may add: what a library may need of its loading
# (RTLD_LAZY and RTLD_LOCAL are always there; RTLD_NOW would bind the whole
# library at its first call).
DLOPEN_FLAGS = ("RTLD_GLOBAL", "RTLD_DEEPBIND", "RTLD_NODELETE")


def peers(spec):
    """The libraries released with spec, as [(their Spec, relation)]
    (relation 0: one release; 1: spec not older than it; 2: not newer): the
    specs beside it that its released_with and not_older_than name, and
    those that name it (a group is declared once, from either side)."""
    here = os.path.dirname(os.path.abspath(spec.path))
    wanted = {i: 0 for i in spec.released_with}
    wanted.update({i: 1 for i in spec.not_older_than})
    out = {}
    for name in sorted(os.listdir(here)):
        if not name.endswith(".toml") or os.path.join(here, name) == os.path.abspath(spec.path):
            continue
        try:
            other = load_spec(os.path.join(here, name))
        except GenError:
            continue  # a broken spec beside it is its own build's error
        if other.id in wanted:
            out[other.id] = (other, wanted.pop(other.id))
        elif spec.id in other.not_older_than:
            out.setdefault(other.id, (other, 2))  # this one must not be newer than it
        elif spec.id in other.released_with:
            out.setdefault(other.id, (other, 0))
    if wanted:
        raise GenError(f"{spec.path} [library]", f"no spec beside it has the id "
                                                 f"{', '.join(sorted(wanted))}")
    return [out[k] for k in sorted(out)]


_TOKEN = re.compile(r"\s*(?:(?P<num>(?:0[xX][0-9A-Fa-f]+|[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)"
                    r"[uUlLfF]*)|(?P<id>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>[-+~(){},*]))")


def c_constant(text):
    """1 when text is a C constant expression of the forms a failure value
    takes: a number, an enumerator or macro, NULL, a signed or cast one
    ("-1", "(size_t)-1"), or a compound literal of them ("(ncclTeam_t){0, 0,
    0}"); nothing that could close a statement or open another."""
    toks, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            if text[pos:].strip() == "":
                break
            return False
        toks.append((m.lastgroup, m.group(m.lastgroup)))
        pos = m.end()
    i = 0

    def peek(v=None):
        return i < len(toks) and (v is None or toks[i][1] == v)

    def typename():
        nonlocal i
        n = 0
        while i < len(toks) and (toks[i][0] == "id" or toks[i][1] == "*"):
            i, n = i + 1, n + 1
        return n > 0

    def value():
        nonlocal i
        if peek("-") or peek("+") or peek("~"):
            i += 1
            return value()
        if peek("("):
            i += 1
            if not typename() or not peek(")"):
                return False
            i += 1
            if peek("{"):
                i += 1
                if not value():
                    return False
                while peek(","):
                    i += 1
                    if not value():
                        return False
                if not peek("}"):
                    return False
                i += 1
                return True
            return value()
        if i < len(toks) and toks[i][0] in ("num", "id"):
            i += 1
            return True
        return False

    return bool(toks) and value() and i == len(toks)


def _failure_value(where, key, value):
    if not isinstance(value, str):
        raise GenError(where, f"value for '{key}' must be a string")
    if value not in ("@message", "@stop") and not (key == "void" and value == "") and not c_constant(value):
        raise GenError(where, f"value for '{key}': {value!r} is not a C constant expression (a "
                              f"number, an enumerator, NULL, a cast or a compound literal of "
                              f"them), \"@message\", or \"@stop\"; \"\" for \"void\")")
    return value


def _function_failure(where, name, v, outs):
    """One [failure.functions] entry: a value, or {value = ..., out =
    {param = value}} (outs[name] gets the out table)."""
    if not isinstance(v, dict):
        return _failure_value(where, name, v)
    unknown = sorted(set(v) - {"value", "out"})
    if unknown or "value" not in v or not isinstance(v.get("out", {}), dict):
        raise GenError(where, f"'{name}': a table takes value = \"...\" (the return value) and "
                              f"out = {{PARAM = \"...\"}} (what each out-parameter gets)"
                              + (f"; unknown: {', '.join(unknown)}" if unknown else ""))
    out = {}
    for param, pv in v.get("out", {}).items():
        if not _IDENT.match(param):
            raise GenError(where, f"'{name}': out: '{param}' is not a parameter name")
        if not isinstance(pv, str) or not c_constant(pv):
            raise GenError(where, f"'{name}': out: value for '{param}' is not a C constant expression")
        out[param] = pv
    outs[name] = out
    return _failure_value(where, name, v["value"])


def _failures(path, data, problems):
    """[failure] (return type -> value) and [failure.functions] (name ->
    value, or a table that also sets out-parameters), every value checked:
    (by type, by function, out-parameters by function)."""
    table = data.get("failure")
    table = {} if table is None else table  # none: every function without a value stops
    if not isinstance(table, dict):
        raise GenError(path, "[failure] must be a table")
    by_type, by_function, outs = {}, {}, {}
    for key, value in table.items():
        if key == "functions" and isinstance(value, dict):
            for name, v in value.items():
                if not _IDENT.match(name):
                    raise GenError(f"{path} [failure.functions]", f"'{name}' is not a C identifier")
                by_function[name] = problems.check(_function_failure, f"{path} [failure.functions]",
                                                   name, v, outs)
        else:
            by_type[key] = problems.check(_failure_value, f"{path} [failure]", key, value)
    return by_type, by_function, outs


def _string_table(path, data, name):
    """A table of strings ([failure], [unsupported]), {} when absent."""
    table = data.get(name, {})
    for key, value in table.items():
        if not isinstance(value, str):
            raise GenError(f"{path} [{name}]", f"value for '{key}' must be a string")
    return table


def _own_answers(path, data):
    answers = data.get("own_answers", {})
    for name, value in answers.items():
        if value != "@message":
            raise GenError(f"{path} [own_answers]",
                           f"'{name}': only \"@message\" is supported, not {value!r}")
    return answers


def _versioned(path, data):
    """[versioned], or None."""
    ver = data.get("versioned")
    if ver is None:
        return None
    w = f"{path} [versioned]"
    for key in ("regex", "format", "known"):
        if key not in ver:
            raise GenError(w, f"missing key '{key}'")
    regex = _regex(ver["regex"], w, "regex")
    for group in ("family", "major", "minor"):
        if group not in regex.groupindex:
            raise GenError(w, f"'regex' must have a named group '{group}'")
    known = []
    for text in ver["known"]:
        m = re.match(r"^([0-9]+)\.([0-9]+)$", str(text))
        if not m:
            raise GenError(w, f"known version {text!r} is not MAJOR.MINOR")
        known.append((int(m.group(1)), int(m.group(2))))
    return Versioned(regex, ver["format"], sorted(set(known)))


def load_spec(path):
    """The checked Spec; every problem found is named in one error."""
    data = _read_toml(path)
    problems = Problems()
    table = _library_table(path, data, problems)
    spec = None
    if all(k in table[0] for k, (_, required) in _KEYS.items() if required):
        # every required key, each of its kind: the rest is checked too
        spec = _settings(path, *table, problems)
        _validate(spec, problems)
    failures = problems.check(_failures, path, data, problems, default=({}, {}, {}))
    unsupported = problems.check(_string_table, path, data, "unsupported", default={})
    own_answers = problems.check(_own_answers, path, data, default={})
    versioned = problems.check(_versioned, path, data)
    for name in sorted(set(data) - {"library", "failure", "unsupported", "own_answers",
                                    "versioned"}):
        problems.add(path, f"unknown table [{name}]")
    problems.raise_any()
    spec.failure, spec.failure_functions, spec.failure_outs = failures
    spec.unsupported, spec.own_answers, spec.versioned = unsupported, own_answers, versioned
    return spec


def spec_label(path):
    """How generated files name their spec: relative to the project for its
    own specs (the same text in every build directory), else as given."""
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    full = os.path.abspath(path)
    if full.startswith(top + os.sep):
        return os.path.relpath(full, top)
    return path
