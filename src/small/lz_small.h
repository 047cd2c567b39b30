/* SPDX-License-Identifier: MIT
 * The small runtime (lz_small.c): the runtime of a small library's static
 * shim. The generated code of such a shim includes this header first when
 * it is compiled for the static archive (LZ_STATIC_SHIM, gen/emit_stubs.py
 * small_runtime): each entry point of the runtime that code calls is then
 * the small runtime's, under a name of its own, and the archive, which
 * holds both runtimes, gives the program only the small one. The same
 * declarations (api/lz_api.h, api/lz_resolve.h) check both. The header of
 * both the small runtime's files: its first call (lz_small.c) and its
 * control API (lz_small_control.c), an archive member of its own that
 * the generated <id>_control.c names, so that a program calling none of
 * the control API links none of it. */
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

#endif
