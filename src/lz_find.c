/* SPDX-License-Identifier: MIT */
/* Finding a library and opening it, in rounds: a walk of the search order
 * (lz_search.c) chooses a file, the walk is freed, the file is opened
 * (lz_open_chosen); a file whose dlopen fails is skipped by the next
 * round, which reports it with the reason. */
#include "lz_find.h"
#include "lz_candidate.h"
#include "lz_ld.h"
#include "lz_objects.h"
#include "lz_report.h"
#include "lz_search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The versioned names loaded objects import from us (marks over lib->syms),
 * so that the first call, whichever it is, loads a library that serves them. */
static unsigned char *imported_names(const lz_lib *lib)
{
    /* Only a library with versioned names has any to mark (nvJitLink's;
     * not NCCL's): nothing to allocate or walk for the others. */
    size_t versioned = 0;
    for (size_t i = 0; i < lib->nsyms && !versioned; i++)
        versioned = lib->syms[i].major >= 0;
    if (!versioned)
        return NULL;
    unsigned char *marks = calloc(lib->nsyms, 1);
    if (marks)
        lz_objects_imports(lib, marks);
    return marks;
}

void lz_walk_search(lz_walk *w)
{
    unsigned char *wanted = w->req.wanted ? NULL : imported_names(w->lib);
    if (wanted)
        w->req.wanted = wanted;
    lz_search(w); /* notes LZ_NOTE_NOTHING_FOUND itself */
    if (wanted)
        w->req.wanted = NULL;
    free(wanted);
}

/* The failure report, for lz_state (it outlives the search). */
static lz_msg *keep_report(const char *text)
{
    size_t len = strlen(text);
    lz_msg *m = malloc(sizeof *m + len + 1);
    if (m) {
        m->next = NULL;
        memcpy(m->text, text, len + 1);
    }
    return m;
}

/* A round's walk and its report: on the heap, freed before the chosen file
 * is opened, so that the dynamic linker's allocations reuse its pages. The
 * text only where a report is wanted: a round is quiet (formats nothing)
 * unless the log is on, and a quiet round that finds nothing is run again
 * with a report, for the failure's message. */
typedef struct lz_round {
    lz_walk w;
    char text[];
} lz_round;

/* One round, run with no lock held: a walk that skips the files earlier
 * rounds failed to open, with a report when asked (report; else the walk
 * formats nothing, the log being off: one getenv, not one per note). list
 * is the caller's copy of the search list. NULL when out of memory. */
static lz_round *walk_round(const lz_lib *lib, const lz_sym *want, const char *list,
                            const lz_skip *skips, int nskips, int report)
{
    lz_round *r = malloc(sizeof *r + (report ? LZ_MESSAGE_MAX : 0));
    if (!r)
        return NULL;
    lz_request req = {.want = want, .search_list = list, .skips = skips, .nskips = nskips};
    lz_walk *w = &r->w;
    lz_walk_init(w, lib, &req);
    w->silent = !report;
    if (report) {
        w->rep.text = r->text;
        w->rep.size = LZ_MESSAGE_MAX;
        int n = snprintf(r->text, LZ_MESSAGE_MAX, "%s: %s could not be loaded; candidates tried:\n",
                         lib->prefix, lib->display);
        w->rep.len = (size_t)n;
    }
    const char *unsafe = lz_ld_unsafe();
    if (unsafe) {
        lz_note(w, "%s", unsafe);
        return r;
    }
    lz_walk_search(w);
    return r;
}

/* The chosen path and its companions in one allocation, for lz_outcome and
 * lz_state: the path, '\0', the companions, '\0'. NULL when out of memory. */
static char *paths_of(const lz_result *f)
{
    size_t plen = strlen(f->path);
    char *path = malloc(plen + 1 + f->companions_len + 1);
    if (path) {
        memcpy(path, f->path, plen + 1);
        memcpy(path + plen + 1, f->companions, f->companions_len);
        path[plen + 1 + f->companions_len] = '\0';
    }
    return path;
}

/* Remember a file that failed to open, for the next round: 0 when out of
 * memory. */
static int add_skip(lz_skip **skips, int *nskips, const lz_chosen *c, const char *why)
{
    lz_skip *more = realloc(*skips, (size_t)(*nskips + 1) * sizeof *more);
    if (!more)
        return 0;
    more[*nskips].dev = c->dev;
    more[*nskips].ino = c->ino;
    snprintf(more[*nskips].reason, sizeof more[*nskips].reason, "%s", why);
    *skips = more;
    ++*nskips;
    return 1;
}

/* The dlopen runs here, after the walk has returned, not at the bottom of
 * its calls: NCCL's dlopen is a few milliseconds, and on a virtual machine
 * every fresh page of stack or heap it would otherwise touch below the
 * walk costs about 11 us (docs/performance.md, "First calls"). */
void lz_find_and_open(const lz_lib *lib, const lz_sym *want, const char *list, lz_outcome *out)
{
    lz_skip *skips = NULL;
    int nskips = 0;
    int report = lz_logging(lib);
    for (;;) {
        lz_round *r = walk_round(lib, want, list, skips, nskips, report);
        if (!r) {
            lz_log(lib, "%s could not be loaded: out of memory", lib->display);
            break;
        }
        if (!r->w.res.found && !report) {
            /* A quiet round found nothing: again, with the report the
             * failure's message needs. */
            free(r);
            report = 1;
            continue;
        }
        if (!r->w.res.found) {
            out->report = r->text[0] ? keep_report(r->text) : NULL;
            free(r);
            break;
        }
        lz_chosen c = r->w.res.chosen;
        char *path = paths_of(&r->w.res);
        free(r);
        char why[512];
        void *h = path ? lz_open_chosen(lib, path, &c, why, sizeof why) : NULL;
        if (h) {
            lz_log(lib, "[%s] %s: chosen", c.step, path);
            out->handle = h;
            out->step = c.step;
            out->path = path;
            out->companions = path + strlen(path) + 1;
            break;
        }
        int kept = add_skip(&skips, &nskips, &c, path ? why : "out of memory");
        free(path);
        if (!kept) {
            lz_log(lib, "%s could not be loaded: out of memory", lib->display);
            break;
        }
    }
    free(skips);
}
