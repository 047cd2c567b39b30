/* SPDX-License-Identifier: MIT
 * The small runtime (lz_small.c): the runtime of a small library's static
 * shim. The generated code of such a shim includes this header first when
 * it is compiled for the static archive (LZ_STATIC_SHIM, gen/emit_stubs.py
 * small_runtime): each entry point of the runtime that code calls is then
 * the small runtime's, under a name of its own, and the archive, which
 * holds both runtimes, gives the program only the small one. The same
 * declarations (api/lz_api.h, api/lz_resolve.h) check both. The header of
 * the small runtime's files: its first call (lz_small.c), its control API
 * (lz_small_control.c), an archive member of its own that the generated
 * <id>_control.c names, so that a program calling none of the control API
 * links none of it, and its roots' steps (lz_small_roots.c). */
#ifndef LZ_SMALL_H
#define LZ_SMALL_H

#define lz_message lz_small_message
#define lz_failed_call lz_small_failed_call
#define lz_resolve_from lz_small_resolve_from
#define lz_api_load lz_small_api_load
#define lz_api_is_loaded lz_small_api_is_loaded
#define lz_api_loaded_path lz_small_api_loaded_path
#define lz_api_loaded_step lz_small_api_loaded_step
#define lz_api_last_error lz_small_api_last_error
#define lz_api_set_search_path lz_small_api_set_search_path
#define lz_api_require lz_small_api_require
#define lz_api_set_chooser lz_small_api_set_chooser
#define lz_api_adopt lz_small_api_adopt
#define lz_api_resolve_all lz_small_api_resolve_all
#define lz_api_set_log_callback lz_small_api_set_log_callback
#define lz_api_asked_path lz_small_api_asked_path
#define lz_api_loaded_version lz_small_api_loaded_version
#define lz_api_would_load lz_small_api_would_load

#include "api/lz_api.h"
#include "api/lz_resolve.h"

/* The first call's pieces the control API uses too. */

/* The library's status (LZ_UNTRIED, LZ_LOADED, LZ_FAILED). */
static inline __attribute__((unused)) int lz_small_status(const lz_lib *lib)
{
    return __atomic_load_n(&lib->st->status, __ATOMIC_ACQUIRE);
}
/* The status once searched: an untried library is searched now. */
LZ_HIDDEN int lz_small_ensure_loaded(const lz_lib *lib);
/* What _last_error says in status (NULL: nothing failed). */
LZ_HIDDEN const char *lz_small_state_message(const lz_lib *lib, int status);
/* The file the dynamic linker loaded for handle h, absolute, on the heap
 * (NULL: none, the program itself included). */
LZ_HIDDEN char *lz_small_file_of(void *h);
/* Why the object of handle h is not the library (NULL: it is), written
 * to why; named: the dynamic linker found it by the soname. */
LZ_HIDDEN const char *lz_small_misjudged(const lz_lib *lib, void *h, int named, char *why,
                                         size_t size);
/* How many of the names the program declared it needs the loaded library
 * h lacks; with say, _last_error says which. */
LZ_HIDDEN int lz_small_required_missing(const lz_lib *lib, void *h, const char *path, int say);
/* Export i bound to f unless another thread bound it first: what the
 * slot then holds. */
LZ_HIDDEN lz_fn lz_small_publish(const lz_lib *lib, size_t i, lz_fn f);

/* One search's report: a line for each candidate refused, as the full
 * runtime writes them ("  [step] path: rejected: why"), each logged too. */
typedef struct lz_small_report {
    const lz_lib *lib;
    /* LZ_MESSAGE_MAX bytes, made at the first line (a search that finds
     * the library at once allocates nothing), or NULL: out of memory, the
     * log alone. */
    char *text;
    int started;
    size_t len;
    size_t dropped;  /* lines that did not fit */
    int closing;     /* its closing lines may use the room kept for them */
    int log;         /* lz_logging, asked once: the quiet path logs nothing */
    int own;         /* the dlopen this object binds is the C library's */
} lz_small_report;

/* The search's pieces its parts use (lz_small.c). A candidate: a file, or
 * a bare name the dynamic linker searches for (more: RTLD_NOLOAD); each
 * soname in a directory; a ':'-separated list that decides (when it finds
 * nothing, nothing else is tried). A candidate refused; the report's
 * closing line. Whether handle h names an object. */
LZ_HIDDEN void *lz_small_open(lz_small_report *r, const char *step, const char *name, int more);
LZ_HIDDEN void *lz_small_open_in(lz_small_report *r, const char *step, const char *dir);
LZ_HIDDEN void *lz_small_open_list(lz_small_report *r, const char *step, const char *list);
LZ_HIDDEN void lz_small_refused(lz_small_report *r, const char *step, const char *path,
                                const char *why);
LZ_HIDDEN void lz_small_last_line(lz_small_report *r, const char *text);
LZ_HIDDEN int lz_small_is_object(void *h);
/* "a/b" on the heap (NULL: out of memory): a first call may run on the
 * smallest thread stack, which holds no path-sized buffer. */
LZ_HIDDEN char *lz_small_joined(const char *a, const char *b);
/* The override (LAZY<ID>_LIBPATH): the handle it found, with *decided set
 * where it is set (it decides the search). */
LZ_HIDDEN void *lz_small_override(lz_small_report *r, const char **step, int *decided);

/* The parts of the search a library or a program may not need, each in an
 * archive member of its own, which the linker takes only where something
 * names it:
 *   lz_small_program_steps  the steps a program sets (adopted, the
 *       chooser, the search list) around the override, with the control
 *       API that sets them (lz_small_control.c): taken with it;
 *   lz_small_roots  the spec's roots before the dynamic linker's search
 *       (after: 0) or after it and its default directories (after: 1)
 *       (lz_small_roots.c): taken where the generated code names
 *       lz_small_roots_part;
 *   lz_stop_uncalled, lz_say_unavailable  the stop of a function with no
 *       failure value, the first failed call's line (base/lz_stop.c):
 *       taken where the generated code names lz_stop_part.
 * lz_small.c defines each weakly as what the search is without it (the
 * override alone; no roots), which the member's own definition replaces:
 * a weak definition, not a weak reference, which some linkers (gold)
 * resolve to an address where it is undefined and hidden. The generated
 * code of a spec names the members it needs (LZ_SMALL_NEEDS,
 * gen/emit_stubs.py). */
LZ_HIDDEN void *lz_small_program_steps(lz_small_report *r, const char **step, int *decided);
LZ_HIDDEN void *lz_small_roots(lz_small_report *r, const char **step, int after);
LZ_DECL_DATA const char lz_small_roots_part;
#define LZ_SMALL_NEEDS(id, ...) \
    __attribute__((used)) static const void *const lz_small_needs_##id[] = {__VA_ARGS__};

#endif
