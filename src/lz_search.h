/* The search for a library: steps, candidates, and the report of each. */
#ifndef LZ_SEARCH_H
#define LZ_SEARCH_H

#include "lz_probe.h"
#include "lz_runtime.h"

enum { LZ_CHOSEN, LZ_REJECTED, LZ_KEPT, LZ_NOT_REACHED };

/* One verdict on one candidate, for tools (lazynccl-info). probe is NULL
 * where the file was not read. */
typedef struct lz_event {
    const char *step;
    const char *path;
    int verdict;
    const char *reason;
    const lz_probe *probe;
} lz_event;

/* What a walk is asked. dry_run walks it without loading anything (the
 * would-load question); tools also set exhaustive (walk on past the chosen
 * candidate, calling on_event for every verdict) and origin (stands for the
 * shim's own path). */
typedef struct lz_request {
    const lz_sym *want;      /* the export whose first call started the load */
    /* Versioned names loaded objects import (lib->nsyms marks, or NULL): the
     * library chosen must serve them too, whichever call comes first. */
    const unsigned char *wanted;
    const char *search_list; /* the program's list (a copy), or NULL */
    int dry_run;
    int exhaustive;
    const char *origin;
    void (*on_event)(void *ctx, const lz_event *ev);
    void *ctx;
} lz_request;

/* What it found. The first candidate that fully serves ends the walk; one
 * that serves only by a versioned-name fallback is kept, and taken when the
 * walk finds none better. */
typedef struct lz_result {
    int found;
    void *handle;            /* when found and not dry_run */
    const char *step;        /* the step that found it */
    char path[PATH_MAX];     /* the candidate that was accepted */
    long fallback_score;     /* rank of the best kept, -1: none kept */
    const char *fallback_step;
    char fallback_path[PATH_MAX];
} lz_result;

/* What it says: every candidate and its verdict (text, when given a
 * buffer), then, on failure, every place looked in, grouped by step. */
typedef struct lz_report {
    char *text;
    size_t size, len;
    char places[2048];
    size_t places_len;
    const char *places_step;
} lz_report;

/* One walk of the search order. */
typedef struct lz_walk {
    const lz_lib *lib;
    lz_request req;
    lz_result res;
    lz_report rep;
    int reusing;             /* judging copies already loaded (step 2) */
    int wheel_sites;         /* site-packages directories found above objects */
} lz_walk;

/* Walk the whole search order (lz_search.c). */
LZ_HIDDEN void lz_search(lz_walk *w);

/* Judge one file: 1 when it was accepted and the walk ends (lz_candidate.c). */
LZ_HIDDEN int lz_try_file(lz_walk *w, const char *step, const char *path);
/* Take the fallback kept by the walk, if any (after the last step). */
LZ_HIDDEN void lz_take_fallback(lz_walk *w);

/* Follow the dynamic linker's search for soname: visit(ctx, step, path) for
 * each existing file until it returns 1 (lz_search.c). */
typedef int (*lz_visit_fn)(void *ctx, const char *step, const char *path);
/* What the walk could not follow (a run-path entry with an unknown token),
 * and each place it looked in (a directory, ld.so.cache): either may be NULL. */
typedef void (*lz_note_fn)(void *ctx, const char *step, const char *text);
typedef struct lz_linker_hooks {
    lz_visit_fn visit;
    lz_note_fn note, looked;
    void *ctx;
} lz_linker_hooks;
LZ_HIDDEN int lz_linker_lookup(const char *const *sonames, const lz_linker_hooks *hooks);

/* Only its last two steps: ld.so.cache, then the system directories. */
LZ_HIDDEN int lz_system_lookup(const char *const *sonames, const lz_linker_hooks *hooks);

/* The path ld.so.cache gives for soname: 1 when found (lz_ldcache.c). */
LZ_HIDDEN int lz_ldcache_lookup(const char *cache, const char *soname, char *out, size_t size);

/* Append one line to the walk's report and to the log (lz_report.c). */
LZ_HIDDEN void lz_note(lz_walk *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Record a verdict on a candidate: a report line, a log line, an event. */
LZ_HIDDEN void lz_verdict(lz_walk *w, const char *step, const char *path, int verdict,
                          const lz_probe *probe, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Record a place the walk looked in, for the failure report's last lines. */
LZ_HIDDEN void lz_looked(lz_walk *w, const char *step, const char *place);
/* Append the places looked in to the report (when nothing was found). */
LZ_HIDDEN void lz_report_places(lz_walk *w);
/* Log a line when logging is on (LAZYNCCL_DEBUG or a callback). */
LZ_HIDDEN void lz_log(const lz_lib *lib, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* 1 in a secure-execution process (setuid, setcap): environment ignored. */
LZ_HIDDEN int lz_secure(void);
/* getenv, except in secure execution, where it is always NULL. */
LZ_HIDDEN const char *lz_getenv(const char *name);

#endif
