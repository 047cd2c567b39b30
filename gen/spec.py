"""Read and check a library spec (stubs/*.toml).

Every problem is reported as a GenError naming the spec file (and the line,
where tomllib gives one), so a build log points at the file to fix.
"""

import os
import re
import tomllib
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
class Spec:
    path: str
    id: str
    display: str
    shim: str
    headers: list
    function_pattern: re.Pattern
    sonames: list
    wheel_dirs: list
    env: str
    home_vars: list
    required: list
    feature: str
    description: str
    failure: dict
    own_answers: dict
    defines: list = field(default_factory=list)
    parse_include_dirs: list = field(default_factory=list)
    internal: bool = False
    symbol_prefix: str = ""
    version_marker: str = ""
    symbol_versions: bool = False
    version_macros: list = field(default_factory=list)
    versioned: Versioned = None
    extra_headers: list = field(default_factory=list)  # paths, beside the spec
    companions: list = field(default_factory=list)
    unsupported: dict = field(default_factory=dict)
    search: str = "full"  # "system": override, loaded, ld.so.cache, system dirs


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _need(table, key, kind, where):
    if key not in table:
        raise GenError(where, f"missing key '{key}'")
    value = table[key]
    if kind is list:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise GenError(where, f"'{key}' must be a list of strings")
    elif not isinstance(value, kind):
        raise GenError(where, f"'{key}' must be a {kind.__name__}")
    return value


def _regex(text, where, key):
    try:
        return re.compile(text)
    except re.error as e:
        raise GenError(where, f"'{key}' is not a valid regular expression: {e}")


def load_spec(path):
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise GenError(path, f"cannot read spec: {e.strerror}")
    except tomllib.TOMLDecodeError as e:
        # tomllib's message already carries "(at line N, column M)".
        raise GenError(path, f"malformed TOML: {e}")

    lib = data.get("library")
    if not isinstance(lib, dict):
        raise GenError(path, "missing [library] table")
    where = f"{path} [library]"
    known_keys = {"id", "display", "shim", "headers", "function_pattern", "sonames",
                  "wheel_dirs", "env", "home_vars", "required", "feature",
                  "description", "defines", "version_macros", "parse_include_dirs",
                  "internal", "symbol_prefix", "version_marker", "symbol_versions",
                  "extra_headers", "companions", "search"}
    for key in lib:
        if key not in known_keys:
            raise GenError(where, f"unknown key '{key}'")

    spec = Spec(
        path=path,
        id=_need(lib, "id", str, where),
        display=_need(lib, "display", str, where),
        shim=_need(lib, "shim", str, where),
        headers=_need(lib, "headers", list, where),
        function_pattern=_regex(_need(lib, "function_pattern", str, where), where,
                                "function_pattern"),
        sonames=_need(lib, "sonames", list, where),
        wheel_dirs=_need(lib, "wheel_dirs", list, where),
        env=_need(lib, "env", str, where),
        home_vars=_need(lib, "home_vars", list, where),
        required=_need(lib, "required", list, where),
        feature=_need(lib, "feature", str, where),
        description=_need(lib, "description", str, where),
        failure={},
        own_answers={},
        defines=lib.get("defines", []),
        version_macros=lib.get("version_macros", []),
        parse_include_dirs=lib.get("parse_include_dirs", []),
        internal=bool(lib.get("internal", False)),
        symbol_prefix=lib.get("symbol_prefix", ""),
        version_marker=lib.get("version_marker", ""),
        symbol_versions=bool(lib.get("symbol_versions", False)),
    )
    here = os.path.dirname(os.path.abspath(path))
    for name in lib.get("extra_headers", []):
        full = os.path.join(here, name)
        if not os.path.isfile(full):
            raise GenError(where, f"extra header {name!r} not found beside the spec ({full})")
        spec.extra_headers.append(full)
    spec.companions = lib.get("companions", [])
    spec.search = lib.get("search", "full")
    if spec.search not in ("full", "system"):
        raise GenError(where, f"'search' must be \"full\" or \"system\", not {spec.search!r}")
    for key in ("id", "shim", "env"):
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
        regex = _regex(_need(ver, "regex", str, w), w, "regex")
        for group in ("family", "major", "minor"):
            if group not in regex.groupindex:
                raise GenError(w, f"'regex' must have a named group '{group}'")
        known = []
        for text in _need(ver, "known", list, w):
            m = re.match(r"^([0-9]+)\.([0-9]+)$", text)
            if not m:
                raise GenError(w, f"known version {text!r} is not MAJOR.MINOR")
            known.append((int(m.group(1)), int(m.group(2))))
        spec.versioned = Versioned(regex, _need(ver, "format", str, w), sorted(set(known)))
    return spec
