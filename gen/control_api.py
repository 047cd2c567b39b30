# SPDX-License-Identifier: MIT
"""The control API, written once: every shim's C functions, the public
header, the amalgamation's header and the drop-ins' version scripts are
emitted from this list.

Each entry: (name, return type, parameters, arguments passed on, what it
does and what it costs). <shim>_<name> calls lz_api_<name>(&lib, args)."""

CONTROL_API = [
    ("load", "int", "void", "",
     "Load now (search, probe, load): 0 on success, -1 on failure (see\n"
     "_last_error). After a failure it searches again, so a fixed environment\n"
     "can recover. Cost: the search, once."),
    ("is_loaded", "int", "void", "",
     "1 when the library is loaded, else 0. Never loads. Cost: one load."),
    ("loaded_path", "const char *", "void", "",
     "The path of the loaded library, or NULL. Cost: one load."),
    ("loaded_step", "const char *", "void", "",
     "The search step that found it (\"LAZYNCCL_LIBPATH\", \"run path\", ...),\n"
     "or NULL when not loaded. Cost: one load."),
    ("last_error", "const char *", "void", "",
     "Why the last load failed, with every candidate tried and the reason it\n"
     "was rejected, then every place searched; or why a function is missing\n"
     "from the loaded library; NULL when nothing failed. The string stays\n"
     "valid. Cost: one load."),
    ("set_search_path", "int", "const char *list", "list",
     "Replace the default search order by a ':'-separated list of absolute\n"
     "files or directories (NULL restores the default). The environment\n"
     "override, when set, still wins. 0 on success, -1 when the library is\n"
     "already loaded. Cost: a lock and a copy."),
    ("require", "int", "const char *names", "names",
     "Name functions the program needs from the library besides those its\n"
     "loaded objects import (a vendored amalgamation's, a later dlopen's):\n"
     "a ','-separated list, added to the environment's (LAZY<ID>_REQUIRE).\n"
     "The first call then passes over a copy that lacks any, saying which, and\n"
     "takes one only if none has them all. 0 on success, -1 when the library\n"
     "is already loaded or out of memory. Cost: a lock and a copy."),
    ("set_chooser", "void", "void *(*fn)(void *user, char *path, size_t size), void *user",
     "fn, user",
     "Choose the library before the search: fn is called at the start of each\n"
     "search (unless the environment override is set) with a PATH_MAX buffer.\n"
     "It returns a handle from dlopen to use that library; or NULL, having\n"
     "written an absolute path, to load that file; or NULL with path left\n"
     "empty, to search as usual. The file is judged like any candidate and\n"
     "nothing else is tried. fn must not call the library's functions, and\n"
     "must return (no exception or longjmp out of it). NULL\n"
     "turns it off. Cost: a lock; then one call of fn per search."),
    ("adopt", "int", "void *handle", "handle",
     "Use a library the program has already opened (a handle dlopen\n"
     "returned, which the program keeps open): its file is judged like any\n"
     "candidate, then published as loaded (step \"adopted\"). 0 on success;\n"
     "-1 when it is refused (_last_error says why) or another copy is\n"
     "loaded. Cost: the probe of one file."),
    ("resolve_all", "int", "char *missing, size_t size", "missing, size",
     "Load the library and bind every export now: the number of names it\n"
     "lacks (0: every call will reach it), listed in one message written to\n"
     "missing (and kept for _last_error); -1 when it cannot be loaded\n"
     "(missing: why). For a job's pre-flight. Cost: the load, one dlsym per\n"
     "export, and the companions of every function loaded now."),
    ("set_log_callback", "void", "void (*fn)(void *user, const char *line), void *user",
     "fn, user",
     "Receive log lines (each search step and candidate) instead of stderr.\n"
     "fn must return, as the chooser must. NULL turns it off. Cost: a lock."),
    ("asked_path", "const char *", "void", "",
     "The file the program asked for by path (PyTorch's preload, a ctypes\n"
     "load) when lazynccl-run's audit module redirected that load to this\n"
     "drop-in; the first call loads it unless the override names another.\n"
     "NULL otherwise, and always for a shim that is not a drop-in. Cost: one load."),
    ("loaded_version", "int", "char *buf, size_t size", "buf, size",
     "Write the loaded library's version as its own version function gives\n"
     "it (\"2.28.9 (22809)\", \"13.0\"): 1 when written, 0 when the library is\n"
     "not loaded or has no version function. Never loads. Cost: one call of\n"
     "that function."),
    ("would_load", "int", "char *path, size_t size", "path, size",
     "1 when a call would load a library now, writing its path; 0 if not,\n"
     "writing why (the search's report, cut to size).\n"
     "Probes only: nothing is loaded and no constructor runs. Cost: the\n"
     "search with file probes."),
]

NAMES = [c[0] for c in CONTROL_API]


def _decl(ret, name, params):
    return f"{ret}{'' if ret.endswith('*') else ' '}{name}({params})"


def c_functions(prefix, lib):
    """The C definitions for one shim (prefix includes the underscore)."""
    out = []
    for name, ret, params, args, _ in CONTROL_API:
        call = f"lz_api_{name}(&{lib}{', ' + args if args else ''})"
        body = f"return {call};" if ret != "void" else f"{call};"
        out.append(f"LZ_API {_decl(ret, prefix + name, params)} {{ {body} }}\n")
    return "".join(out)


def declarations(prefix, indent=""):
    """Commented declarations for a header."""
    out = []
    for name, ret, params, _, doc in CONTROL_API:
        text = doc.replace("\n_", f"\n{prefix}")
        lines = text.split("\n")
        out.append(f"{indent}/* " + f"\n{indent} * ".join(lines) + " */\n")
        out.append(f"{indent}{_decl(ret, prefix + name, params)};\n")
    return "".join(out)


def exported_names(prefix):
    return [prefix + n for n in NAMES]
