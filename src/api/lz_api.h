/* SPDX-License-Identifier: MIT
 * What callers see of a library's state (lz_api.c): messages, the control
 * API behind <shim>_load() and the rest (gen/control_api.py writes those),
 * and the inspection API for tools. */
#ifndef LZ_API_H
#define LZ_API_H

#include "search/lz_search.h"

/* The message a failing function reports (library not loaded, or symbol
 * missing): always a valid string. */
LZ_HIDDEN const char *lz_message(const lz_lib *lib);

/* Called by a failure function before it returns the failure value. */
LZ_HIDDEN void lz_failed_call(const lz_lib *lib);
/* The one place the runtime ends a process: a function no header declares
 * was called and the library cannot be loaded; nothing can be returned
 * that is known not to mean success (a spec's opaque_failure avoids it).
 * Writes the report to stderr and exits with status 127, as the dynamic
 * linker does for a missing library. */
LZ_HIDDEN __attribute__((noreturn)) void lz_stop(const lz_lib *lib, const char *name);
/* The same for a call that cannot load now, the dynamic linker's lock held
 * by a thread joining this one (LZ_BUSY): no failure value to return, and
 * waiting would never end. Its own words: the library may well be there. */
LZ_HIDDEN __attribute__((noreturn)) void lz_stop_busy(const lz_lib *lib, const char *name);
/* The same where the library's variables are used (who: by whom) and it
 * cannot be loaded, before main or when an object loaded later binds one:
 * no variable may be read as a value the library never gave it. report:
 * the search's, or NULL for the failed load's message. */
LZ_HIDDEN __attribute__((noreturn)) void lz_stop_variables(const lz_lib *lib, const char *who,
                                                           const char *report);
/* Stop as the dynamic linker's lazy binding stops a program whose library
 * lacks a function it calls ("PROG: symbol lookup error: OBJ: undefined
 * symbol: NAME, version V"), then the report, exit 127: who is the object
 * whose reference it is (NULL: the program), version the one it asks for
 * (NULL: none). */
LZ_HIDDEN __attribute__((noreturn)) void lz_stop_unbound(const lz_lib *lib, const char *name,
                                                          const char *who, const char *version);
/* An own answer once the library is loaded: what the real function said,
 * or, when that is empty and a function of this shim has failed, why. */
LZ_HIDDEN const char *lz_fill_message(const lz_lib *lib, const char *real);

/* Control API, behind the per-library functions of include/lazynccl.h. */
LZ_HIDDEN int lz_api_load(const lz_lib *lib);
LZ_HIDDEN int lz_api_is_loaded(const lz_lib *lib);
LZ_HIDDEN const char *lz_api_loaded_path(const lz_lib *lib);
LZ_HIDDEN const char *lz_api_loaded_step(const lz_lib *lib);
LZ_HIDDEN const char *lz_api_last_error(const lz_lib *lib);
LZ_HIDDEN int lz_api_set_search_path(const lz_lib *lib, const char *list);
LZ_HIDDEN int lz_api_require(const lz_lib *lib, const char *names);
LZ_HIDDEN void lz_api_set_log_callback(const lz_lib *lib, lz_log_fn fn, void *user);
LZ_HIDDEN int lz_api_would_load(const lz_lib *lib, char *path, size_t size);
LZ_HIDDEN const char *lz_api_asked_path(const lz_lib *lib);
LZ_HIDDEN void lz_api_set_chooser(const lz_lib *lib, lz_choose_fn fn, void *user);
LZ_HIDDEN int lz_api_adopt(const lz_lib *lib, void *handle);
LZ_HIDDEN int lz_api_loaded_version(const lz_lib *lib, char *buf, size_t size);


/* Inspection, for tools (lazynccl-info) and would_load: the search as a
 * dry run with the program's search list, nothing loaded; the request's
 * dry_run is set here. Fills *res (and rep->text when given); 1 if found. */
LZ_HIDDEN int lz_inspect_search(const lz_lib *lib, const lz_request *req, lz_result *res,
                                char *report, size_t report_size);
/* The loaded library's path and step, copied: 1 when loaded. */
LZ_HIDDEN int lz_inspect_loaded(const lz_lib *lib, char *path, size_t path_size, char *step,
                                size_t step_size);
#endif
