# SPDX-License-Identifier: MIT
"""Read and check a library spec (stubs/*.toml).

Every problem is reported as a GenError naming the spec file (and the line,
where tomllib gives one), so a build log points at the file to fix. A spec
may name shared defaults (defaults = "cuda": stubs/defaults/cuda.toml).
"""

import os
import re
try:
    import tomllib
except ImportError:  # Python before 3.11: the same parser, from PyPI (pyproject.toml asks for it)
    import tomli as tomllib
from dataclasses import dataclass, field


class GenError(Exception):
    """A user-facing generation error: 'file[:line]: message'."""

    def __init__(self, where, message):
        super().__init__(f"{where}: error: {message}")


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


@dataclass
class Spec:
    path: str
    id: str
    display: str
    shim: str
    headers: list
    function_pattern: re.Pattern
    sonames: list
    env: str
    feature: str
    description: str
    failure: dict
    own_answers: dict
    wheel_dirs: list = field(default_factory=list)
    required: list = field(default_factory=list)
    defines: list = field(default_factory=list)
    declarations_from: list = field(default_factory=list)  # files/dirs declarations may come from
    include_search: list = field(default_factory=list)  # [(kind, value)]
    roots_before: list = field(default_factory=list)    # [Root]
    roots_after: list = field(default_factory=list)
    default_dirs: list = field(default_factory=list)
    debug_env: str = "LAZYNCCL_DEBUG"
    strict_env: str = "LAZYNCCL_STRICT_VERSIONS"
    message_prefix: str = ""
    probe: bool = True            # probe candidates with libelf before dlopen
    visibility: str = "default"   # "hidden": a shim for the runtime's own use
    control_api: bool = True      # <shim>_load() and the rest
    note_priority: str = "recommended"  # .note.dlopen priority
    install: bool = True
    optional: bool = False        # a missing header skips the shim instead of failing
    symbol_prefix: str = ""
    version_marker: str = ""
    version_function: str = ""
    version_code: list = field(default_factory=list)   # divisors: 22809 -> 2.28.9
    version_code_below: list = field(default_factory=list)  # below version_code[0]: 2708 -> 2.7.8
    symbol_versions: object = None  # None: from the real library; True, False, or a node name
    version_macros: list = field(default_factory=list)
    versioned: Versioned = None
    extra_headers: list = field(default_factory=list)  # paths, beside the spec
    companions: list = field(default_factory=list)
    companions_for: list = field(default_factory=list)
    unsupported: dict = field(default_factory=dict)
    search: str = "full"  # "system": override, loaded, ld.so.cache, system dirs
    source_files: list = field(default_factory=list)  # the defaults file, if any

    @property
    def hidden(self):
        return self.visibility == "hidden"

    @property
    def served(self):
        """Installed for users (a public spec not marked install = false):
        lazynccl-info's default, the Python package's LIBRARIES."""
        return not self.hidden and self.install


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_STR, _LIST, _BOOL = str, list, bool
# key: (kind, required)
_KEYS = {
    "id": (_STR, True), "display": (_STR, True), "shim": (_STR, True),
    "headers": (_LIST, True), "function_pattern": (_STR, True), "sonames": (_LIST, True),
    "feature": (_STR, True), "description": (_STR, True),
    "env": (_STR, False), "wheel_dirs": (_LIST, False), "required": (_LIST, False),
    "defines": (_LIST, False), "version_macros": (_LIST, False), "defaults": (_STR, False),
    "declarations_from": (_LIST, False), "include_search": (_LIST, False),
    "search_roots_before": (_LIST, False), "search_roots_after": (_LIST, False),
    "default_dirs": (_LIST, False), "debug_env": (_STR, False), "strict_env": (_STR, False),
    "message_prefix": (_STR, False), "probe": (_BOOL, False), "visibility": (_STR, False),
    "control_api": (_BOOL, False), "note_priority": (_STR, False), "install": (_BOOL, False),
    "optional": (_BOOL, False), "symbol_prefix": (_STR, False), "version_marker": (_STR, False),
    "version_function": (_STR, False), "version_code": (_LIST, False),
    "version_code_below": (_LIST, False),
    "symbol_versions": ((bool, str), False), "extra_headers": (_LIST, False),
    "companions": (_LIST, False), "companions_for": (_LIST, False), "search": (_STR, False),
}
# The keys read into the Spec otherwise than copied as they are; every other
# key of _KEYS is a Spec field of the same name (a new plain setting: its
# _KEYS line and its field).
_READ_OTHERWISE = {"id", "display", "shim", "headers", "function_pattern", "sonames", "env",
                   "feature", "description", "defaults", "include_search",
                   "search_roots_before", "search_roots_after", "version_code",
                   "version_code_below",
                   "extra_headers", "message_prefix"}
_DIRECT = [k for k in _KEYS if k not in _READ_OTHERWISE]
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
        with open(path, "rb") as f:
            return tomllib.load(f)
    except OSError as e:
        raise GenError(path, f"cannot read spec: {e.strerror}")
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


def _include_search(items, where):
    out = []
    for item in items:
        kind, _, value = item.partition(":")
        if kind not in ("option", "env", "dir") or not value:
            raise GenError(where, f"'include_search': {item!r} is not option:NAME, env:VAR "
                                  f"or dir:PATH")
        out.append((kind, value))
    return out


def load_spec(path):
    data = _read_toml(path)
    lib = data.get("library")
    if not isinstance(lib, dict):
        raise GenError(path, "missing [library] table")
    where = f"{path} [library]"
    for key in lib:
        if key not in _KEYS:
            raise GenError(where, f"unknown key '{key}'")
        _check(lib, key, where)
    if "defaults" in lib:
        name = lib["defaults"]
        dpath = os.path.normpath(os.path.join(_DEFAULTS_DIR, name + ".toml"))
        if not _IDENT.match(name) or not os.path.isfile(dpath):
            raise GenError(where, f"defaults {name!r}: no such file {dpath}")
        dlib = _read_toml(dpath).get("library", {})
        for key in dlib:
            if key not in _KEYS:
                raise GenError(f"{dpath} [library]", f"unknown key '{key}'")
        lib = _merge(lib, dlib)
        defaults_file = dpath
    else:
        defaults_file = None
    for key, (_, required) in _KEYS.items():
        if required and key not in lib:
            raise GenError(where, f"missing key '{key}'")

    spec = Spec(
        path=path, id=lib["id"], display=lib["display"], shim=lib["shim"],
        headers=lib["headers"],
        function_pattern=_regex(lib["function_pattern"], where, "function_pattern"),
        sonames=lib["sonames"], env=lib.get("env", f"LAZY{lib['id'].upper()}_LIBPATH"),
        feature=lib["feature"], description=lib["description"], failure={}, own_answers={},
    )
    for key in _DIRECT:
        if key in lib:
            setattr(spec, key, lib[key])
    spec.message_prefix = lib.get("message_prefix", spec.shim)
    spec.source_files = [defaults_file] if defaults_file else []
    spec.include_search = _include_search(lib.get("include_search", []), where)
    spec.roots_before = _roots(lib.get("search_roots_before", []), where, "search_roots_before")
    spec.roots_after = _roots(lib.get("search_roots_after", []), where, "search_roots_after")
    spec.version_code = [int(v) for v in lib.get("version_code", [])]
    spec.version_code_below = [int(v) for v in lib.get("version_code_below", [])]
    here = os.path.dirname(os.path.abspath(path))
    for name in lib.get("extra_headers", []):
        full = os.path.join(here, name)
        if not os.path.isfile(full):
            raise GenError(where, f"extra header {name!r} not found beside the spec ({full})")
        spec.extra_headers.append(full)
    if isinstance(spec.symbol_versions, str) and not re.match(r"^[A-Za-z_.][A-Za-z0-9_.+-]*$",
                                                             spec.symbol_versions):
        raise GenError(where, f"'symbol_versions': {spec.symbol_versions!r} is not a version "
                              f"node name")
    if spec.search not in ("full", "system"):
        raise GenError(where, f"'search' must be \"full\" or \"system\", not {spec.search!r}")
    if spec.visibility not in ("default", "hidden"):
        raise GenError(where, f"'visibility' must be \"default\" or \"hidden\", "
                              f"not {spec.visibility!r}")
    if spec.note_priority not in ("required", "recommended", "suggested"):
        raise GenError(where, f"'note_priority' must be required, recommended or suggested")
    for key in ("id", "shim", "env", "debug_env", "strict_env"):
        if not _IDENT.match(getattr(spec, key)):
            raise GenError(where, f"'{key}' must be a C identifier")
    if not spec.headers or not spec.sonames:
        raise GenError(where, "'headers' and 'sonames' must not be empty")

    failure = data.get("failure")
    if not isinstance(failure, dict) or not failure:
        raise GenError(path, "missing or empty [failure] table")
    for ctype, value in failure.items():
        if not isinstance(value, str):
            raise GenError(f"{path} [failure]", f"value for '{ctype}' must be a string")
    spec.failure = failure

    unsupported = data.get("unsupported", {})
    for soname, what in unsupported.items():
        if not isinstance(what, str):
            raise GenError(f"{path} [unsupported]", f"value for '{soname}' must be a string")
    spec.unsupported = unsupported

    answers = data.get("own_answers", {})
    for name, value in answers.items():
        if value != "@message":
            raise GenError(f"{path} [own_answers]",
                           f"'{name}': only \"@message\" is supported, not {value!r}")
    spec.own_answers = answers

    ver = data.get("versioned")
    if ver is not None:
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
        spec.versioned = Versioned(regex, ver["format"], sorted(set(known)))
    unknown = set(data) - {"library", "failure", "unsupported", "own_answers", "versioned"}
    if unknown:
        raise GenError(path, f"unknown table [{sorted(unknown)[0]}]")
    return spec
