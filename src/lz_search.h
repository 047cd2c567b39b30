/* The search for a library: steps, candidates, and the report of each. */
#ifndef LZ_SEARCH_H
#define LZ_SEARCH_H

#include "lz_runtime.h"

/* One walk of the search order. dry_run walks it without loading anything
 * (the would-load question); otherwise the first acceptable candidate is
 * loaded and the walk stops. */
typedef struct lz_walk {
    const lz_lib *lib;
    int dry_run;
    int found;
    void *handle;            /* when found and not dry_run */
    const char *step;        /* the step that found it */
    char path[PATH_MAX];     /* the candidate that was accepted */
    char *report;            /* every candidate and its verdict */
    size_t report_size, report_len;
} lz_walk;

/* Walk the whole search order (lz_search.c). */
LZ_HIDDEN void lz_search(lz_walk *w);

/* Judge one file: 1 when it was accepted (lz_candidate.c). */
LZ_HIDDEN int lz_try_file(lz_walk *w, const char *step, const char *path);
/* Judge a bare soname left to the dynamic linker's own search. */
LZ_HIDDEN int lz_try_soname(lz_walk *w, const char *step, const char *soname);
/* Reuse a copy already in the process: 1 when one was found. */
LZ_HIDDEN int lz_try_loaded(lz_walk *w, const char *step, const char *soname);

/* Append one line to the walk's report and to the log (lz_report.c). */
LZ_HIDDEN void lz_note(lz_walk *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Log a line when logging is on (LAZYNCCL_DEBUG or a callback). */
LZ_HIDDEN void lz_log(const lz_lib *lib, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* 1 in a secure-execution process (setuid, setcap): environment ignored. */
LZ_HIDDEN int lz_secure(void);
/* getenv, except in secure execution, where it is always NULL. */
LZ_HIDDEN const char *lz_getenv(const char *name);

#endif
