/* SPDX-License-Identifier: MIT
 * The types of one search: what it is asked (request),
 * what it found (result), what it says (events). Types only. */
#ifndef LZ_SEARCH_H
#define LZ_SEARCH_H

#include "elf/lz_probe.h"
#include "base/lz_runtime.h"

enum { LZ_CHOSEN, LZ_REJECTED, LZ_KEPT, LZ_NOT_REACHED,
       LZ_SELF /* lz_verdict only: rejected, being this shim's own file */ };
#define LZ_SELF_REASON "this shim itself (a drop-in), not the real library"

/* What a search says, as events its listeners hear (search/lz_emit.c):
 * the report and the log (base/lz_report.c), a tool's on_event. A step
 * emits; it never knows who listens. */
enum { LZ_EVENT_VERDICT, /* a verdict on a candidate: step, path, verdict, reason, probe */
       LZ_EVENT_NOTE,    /* a line of the report: reason */
       LZ_EVENT_ASIDE,   /* a line of the log alone: reason */
       LZ_EVENT_LOOKED,  /* a place the step looked in: step, path */
       LZ_EVENT_CLOSING, /* the report's closing lines follow */
       LZ_EVENT_PLACES   /* nothing was found: the places looked in close the report */ };

/* One event. probe is NULL where the file was not read. */
typedef struct lz_event {
    int kind;
    const char *step;
    const char *path;
    int verdict;
    const char *reason;
    const lz_probe *probe;
} lz_event;

typedef void (*lz_listener_fn)(void *ctx, const lz_event *ev);
typedef struct lz_listener {
    lz_listener_fn heard;
    void *ctx;
} lz_listener;
/* A tool, the report and the log (one listener) and a spare. */
#define LZ_MAX_LISTENERS 3

/* A file whose dlopen (or the checks after it) failed in an earlier attempt
 * of the same search: the next attempt rejects it on sight, with this reason. */
typedef struct lz_skip {
    unsigned long long dev, ino;
    char reason[512];
} lz_skip;

/* Attempts of one search: after this many failed dlopens, the rest of the
 * search only reports (a bound on the work a hostile search path can cause). */
#define LZ_MAX_SKIPS 16

/* What a search is asked. dry_run follows it without loading anything (the
 * would-load question); tools also set exhaustive (search on past the chosen
 * candidate, calling on_event for every verdict) and origin (stands for the
 * shim's own path). on_event hears every event of the search (lz_emit.c). */
typedef struct lz_request {
    const lz_sym *want;      /* the export whose first call started the load */
    /* Versioned names loaded objects import (lib->nsyms marks, or NULL): the
     * library chosen must serve them too, whichever call comes first. */
    const unsigned char *wanted;
    /* Their names and the first call's, NULL-terminated (or NULL): what a
     * lean probe of each candidate is asked. */
    const char *const *asks;
    const char *search_list; /* the program's list (a copy), or NULL */
    /* The one file the program chose (its chooser's answer, a handle it
     * adopts), and the step that names it (LZ_STEP_CHOSEN, LZ_STEP_ADOPTED). */
    const char *chosen;
    const char *chosen_step;
    int dry_run;
    /* Made inside the dynamic linker, its lock held (a variable's resolver):
     * no program code is called, which may wait for a thread that waits
     * for that lock: not the chooser, not the log callback. */
    int in_linker;
    int exhaustive;
    const char *origin;
    /* The requester of the linker step, described (lazynccl-info --check),
     * or NULL: the loaded objects that need the library. */
    const struct lz_linker_asker *asker;
    lz_listener_fn on_event;
    void *ctx;
    const lz_skip *skips;    /* the files earlier attempts failed to open */
    int nskips;
} lz_request;

/* What it found. The first candidate that fully serves ends the search; one
 * that serves only by a versioned-name fallback is kept, and taken when the
 * search finds none better. A search opens nothing itself: the caller dlopens
 * the file chosen once the search is over (lz_open.c's open_chosen), on a shallow
 * stack and over the heap the search has freed, as a bare dlopen would run;
 * when that fails, a new attempt skips the file. */
/* fallback_score when no candidate was kept as a fallback. */
#define LZ_NO_FALLBACK (-1L)
/* The report's line when the search met no file at all. */
#define LZ_NOTE_NOTHING_FOUND "(no candidate was found)"

/* The file a search chose, as lz_open.c's open_chosen needs it: the caller copies it
 * out of the search, which is freed before the dlopen. */
typedef struct lz_chosen {
    const char *step;        /* the step that found it (static text) */
    int probed;              /* dev, ino: the file the probe read (else stat) */
    unsigned long long dev, ino;
} lz_chosen;

typedef struct lz_result {
    int found;
    lz_chosen chosen;
    long fallback_score;     /* rank of the best kept, LZ_NO_FALLBACK: none kept */
    const char *fallback_step;
    size_t companions_len;
    /* Buffers last, read only as the fields above say (path when found,
     * fallback_path when fallback_score >= 0, companions_len bytes), so a
     * search starts without writing them (lz_search_init). */
    char path[PATH_MAX];     /* the candidate that was accepted */
    char companions[PATH_MAX]; /* to load later ('\n'-separated), for lz_state */
    char fallback_path[PATH_MAX];
} lz_result;

/* One search. */
typedef struct lz_search {
    const lz_lib *lib;
    lz_request req;
    int reusing;             /* judging copies already loaded (step `already loaded`) */
    int standing_in;         /* judging the file a drop-in stands in for (step `asked by path`) */
    /* Who hears what it says (lz_emit.c): a search nobody hears formats
     * nothing. said counts its notes and verdicts. */
    int nlisteners;
    lz_listener listeners[LZ_MAX_LISTENERS];
    size_t said;
    /* The file holding this code, found once per search (is_self): 0 not yet,
     * 1 self_dev/self_ino are it, -1 unknown. */
    int self_known;
    unsigned long long self_dev, self_ino;
    size_t sites_len;
    lz_result res;
    /* The site-packages directories already tried ('\0'-separated, sites_len
     * bytes), so that each is tried once however many objects lie below it. */
    char sites[2048];
} lz_search;

/* Start a search: everything zero but the result's buffers and the sites,
 * which are not written until used. A first call's memory is mostly fresh
 * pages, and on a virtual machine each page first written costs as much as
 * many instructions (docs/concepts/performance.md): zeroing 16 KiB up front was a
 * tenth of the first call's overhead. */
static inline void lz_search_init(lz_search *w, const lz_lib *lib, const lz_request *req)
{
    __builtin_memset(w, 0, __builtin_offsetof(lz_search, res.path));
    w->lib = lib;
    if (req)
        w->req = *req;
    if (w->req.on_event)
        w->listeners[w->nlisteners++] = (lz_listener){w->req.on_event, w->req.ctx};
    w->res.fallback_score = LZ_NO_FALLBACK;
}

#endif
