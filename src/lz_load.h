/* Once-only loading of a library (lz_load.c). */
#ifndef LZ_LOAD_H
#define LZ_LOAD_H

#include "lz_search.h"

/* Returned by lz_ensure_loaded to a call made from inside the load itself
 * (a constructor of the real library calling back into the shim). */
enum { LZ_REENTERED = 3 };

/* Load the library unless done already; LZ_LOADED, LZ_FAILED or LZ_REENTERED.
 * want (or NULL) is the export whose first call asks: a candidate that
 * exports it exactly is preferred. Thread-safe, holds no lock across the
 * search; after the first call it is one acquire load. */
LZ_HIDDEN int lz_ensure_loaded(const lz_lib *lib, const lz_sym *want);
/* Publish export i's failure value in its slot unless a retry has reset
 * the library since: 1 when published, 0 when the caller must resolve again. */
LZ_HIDDEN int lz_publish_failure(const lz_lib *lib, size_t i);
/* A copy of the search list set by the program (NULL: none; *lost when it
 * could not be copied), for a walk that must not hold the lock. */
LZ_HIDDEN char *lz_search_list_copy(const lz_lib *lib, int *lost);
/* Inspection, for tools (lazynccl-info) and would_load: the search as a
 * dry run with the program's search list, nothing loaded; the request's
 * dry_run is set here. Fills *res (and rep->text when given); 1 if found. */
LZ_HIDDEN int lz_inspect_search(const lz_lib *lib, const lz_request *req, lz_result *res,
                                char *report, size_t report_size);
/* The loaded library's path and step, copied: 1 when loaded. */
LZ_HIDDEN int lz_inspect_loaded(const lz_lib *lib, char *path, size_t path_size, char *step,
                                size_t step_size);
/* Take a library's lock (short sections only) with cancellation disabled;
 * returns the old cancellation state for lz_unlock. */
LZ_HIDDEN int lz_lock(const lz_lib *lib);
LZ_HIDDEN void lz_unlock(const lz_lib *lib, int cancel_state);

#endif
