/* SPDX-License-Identifier: MIT */
/* Finding a library and opening it, in attempts: a search
 * (lz_order.c) chooses a file, the search is freed, the file is opened and
 * checked here (open_chosen); a file whose dlopen fails is skipped by the
 * next attempt, which reports it with the reason. */
#include "load/lz_open.h"
#include "base/lz_dl.h"
#include "base/lz_env.h"
#include "base/lz_lock.h"
#include "common/lz_stepnames.h"
#include "process/lz_ldlock.h"
#include "process/lz_needed.h"
#include "common/lz_note.h"
#include "process/lz_objects.h"
#include "elf/lz_probe.h"
#include "base/lz_report.h"
#include "base/lz_log.h"
#include "search/lz_emit.h"
#include "search/lz_order.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { WHY_SIZE = 512 }; /* why a chosen file was refused once loaded */

/* The first required symbol the handle lacks, or NULL. */
static const char *missing_required(const lz_lib *lib, void *handle)
{
    for (const char *const *r = lib->required; *r; r++)
        if (!lz_dlsym(handle, *r))
            return *r;
    return NULL;
}

/* 1 when a loaded handle is a shim (a drop-in), not the real library. */
static int is_shim(const lz_lib *lib, void *handle)
{
    char marker[128];
    return lz_dlsym(handle, lz_shim_marker(lib->shim, marker, sizeof marker)) != NULL;
}

/* The audit module answered a program's request for this very path with
 * the drop-in, and ld.so now knows the drop-in by that name too: the same
 * file named another way ("dir/./file") reaches the file itself. The name
 * on the heap: a first call may run on the smallest thread stack. */
static void *open_other_name(const char *path, int flags, const char **e)
{
    char *other = malloc(PATH_MAX);
    const char *slash = strrchr(path, '/');
    void *handle = NULL;
    *e = "the path names the drop-in, and is too long to name the file another way (dir/./file)";
    if (!other)
        *e = "out of memory";
    else if (slash && snprintf(other, PATH_MAX, "%.*s/.%s", (int)(slash - path), path, slash) <
                          PATH_MAX)
        handle = lz_dlopen(other, LZ_DLOPEN_FLAGS | flags, e);
    free(other);
    return handle;
}

/* Open the file a search chose (path, as c says) and check it is the one
 * judged (c's dev/ino, probed or only stat'ed): the handle, or NULL with the
 * reason in why. */
static void *open_chosen(const lz_lib *lib, const char *path, const lz_chosen *c, char *why,
                         size_t size)
{
    int probed = c->probed;
    const char *e;
    lz_asked_box *box = lib->st->asked;
    /* A drop-in: its own load, whoever ld.so sees asking (lz_note.h). */
    int slot = box ? lz_asked_box_enter(box, lz_ldlock_tid()) : -1;
    void *handle = lz_dlopen(path, LZ_DLOPEN_FLAGS | lib->dlopen_flags, &e);
    /* A probed file is no shim (the probe saw its exports), so dlopen hands
     * back a shim only where ld.so knows a drop-in by this path: checked in
     * drop-ins alone, the only objects the audit module maps for a path. */
    int shim = handle && (!probed || box) && is_shim(lib, handle);
    if (shim && probed) {
        lz_dlclose(handle);
        handle = open_other_name(path, lib->dlopen_flags, &e);
        shim = handle && is_shim(lib, handle);
    }
    if (box)
        lz_asked_box_leave(box, slot);
    if (!handle) {
        snprintf(why, size, "%s", e);
        return NULL;
    }
    struct stat sb;
    const char *missing;
    if (shim)
        snprintf(why, size, "a lazynccl shim (drop-in), not the real library");
    /* Checked again once loaded: the object is the file that was judged
     * (not one swapped in since), and dlsym finds what the probe saw (a
     * symbol exported only under a non-default version is not found by
     * dlsym). By the path, not the link map's l_name: reading that while
     * another thread's dlopen of the same object writes it is a race that
     * only the dynamic linker's internal lock orders (TSan cannot see it). */
    else if (stat(path, &sb) != 0 || (unsigned long long)sb.st_dev != c->dev ||
             (unsigned long long)sb.st_ino != c->ino)
        snprintf(why, size, "the file changed between the probe and dlopen");
    else if ((missing = missing_required(lib, handle)))
        snprintf(why, size, probed ? "dlsym does not find %s (exported only under a "
                                          "non-default symbol version?)"
                                        : "does not export %s", missing);
    else
        return handle;
    lz_dlclose(handle);
    return NULL;
}

/* The names a candidate is asked about: the first call's, then every one
 * marked, but those the library's dependencies define, which no
 * candidate's own table holds (NULL-terminated, malloc'd; NULL when out of
 * memory). */
static const char **asks_of(const lz_lib *lib, const lz_sym *want, const unsigned char *marks)
{
    size_t n = 0;
    for (size_t i = 0; marks && i < lib->nsyms; i++)
        n += marks[i];
    const char **asks = malloc((n + 2) * sizeof *asks);
    if (!asks)
        return NULL;
    size_t k = 0;
    if (want && !lz_sym_from_deps(lib, (size_t)(want - lib->syms)))
        asks[k++] = lz_sym_name(lib, want);
    for (size_t i = 0; marks && i < lib->nsyms; i++)
        if (marks[i] && &lib->syms[i] != want && !lz_sym_from_deps(lib, i))
            asks[k++] = lz_sym_name(lib, &lib->syms[i]);
    asks[k] = NULL;
    return asks;
}

void lz_search_run(lz_search *w)
{
    /* The names the process needs decide too, whichever call comes first. */
    unsigned char *wanted = w->req.wanted ? NULL : lz_needed_marks(w->lib);
    if (wanted)
        w->req.wanted = wanted;
    const char **asks = w->req.asks ? NULL : asks_of(w->lib, w->req.want, w->req.wanted);
    if (asks)
        w->req.asks = asks;
    lz_order(w); /* notes LZ_NOTE_NOTHING_FOUND itself */
    if (asks)
        w->req.asks = NULL;
    free(asks);
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

/* A attempt's search and its report: on the heap, freed before the chosen file
 * is opened, so that the dynamic linker's allocations reuse its pages. The
 * text only where a report is wanted: a attempt is quiet (formats nothing)
 * unless the log is on, and a quiet attempt that finds nothing is run again
 * with a report, for the failure's message. */
typedef struct lz_attempt {
    lz_search w;
    struct {
        lz_report rep;
        char text[LZ_MESSAGE_MAX];
    } said[]; /* one where a report is wanted */
} lz_attempt;

/* One attempt, run with no lock held: a search that skips the files earlier
 * attempts failed to open, with a report when asked (report; else nobody
 * hears the search, the log being off: one getenv, not one per note). list
 * is the caller's copy of the search list. NULL when out of memory. */
static lz_attempt *search_attempt(const lz_lib *lib, const lz_sym *want, const char *list,
                            const char *chosen, const char *chosen_step, const lz_skip *skips,
                            int nskips, int report)
{
    lz_attempt *r = malloc(sizeof *r + (report ? sizeof r->said[0] : 0));
    if (!r)
        return NULL;
    lz_request req = {.want = want, .search_list = list, .chosen = chosen,
                      .chosen_step = chosen_step, .skips = skips, .nskips = nskips};
    lz_search *w = &r->w;
    lz_search_init(w, lib, &req);
    if (report) {
        char *text = r->said->text;
        int n = snprintf(text, LZ_MESSAGE_MAX, "%s: %s could not be loaded; candidates tried:\n",
                         lib->prefix, lib->display);
        lz_report_init(&r->said->rep, lib, text, LZ_MESSAGE_MAX, (size_t)n);
        lz_listen(w, lz_report_heard, &r->said->rep);
    }
    const char *unsafe = lz_dl_unsafe();
    if (unsafe) {
        lz_note(w, "%s", unsafe);
        return r;
    }
    lz_search_run(w);
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

/* Remember a file that failed to open, for the next attempt: 0 when out of
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

char *lz_chosen_file(const lz_lib *lib, const char **step, int may_choose)
{
    const char *adopted = __atomic_load_n(&lib->st->adopted, __ATOMIC_ACQUIRE);
    if (adopted) {
        *step = LZ_STEP_ADOPTED;
        return strdup(adopted);
    }
    if (!may_choose || lz_override_set(lib->env_var))
        return NULL; /* the override wins over the program's chooser */
    int cs = lz_lock(lib);
    lz_choose_fn fn = lib->st->chooser;
    void *user = lib->st->chooser_user;
    lz_unlock(lib, cs);
    char *path = fn ? calloc(1, PATH_MAX) : NULL;
    if (!path)
        return NULL;
    void *handle = fn(user, path, PATH_MAX);
    lz_dl_epoch_next(); /* the program's code ran */
    path[PATH_MAX - 1] = '\0';
    if (handle && !lz_dl_path_of(handle, path, PATH_MAX))
        snprintf(path, PATH_MAX, "(the chooser returned a handle that names no file: the "
                 "program itself, RTLD_DEFAULT or RTLD_NEXT, or no handle dlopen returned)");
    if (!path[0]) {
        free(path);
        return NULL; /* no answer: the usual search */
    }
    *step = LZ_STEP_CHOSEN;
    return path;
}

/* The dlopen runs here, after the search has returned, not at the bottom of
 * its calls: every fresh page of stack or heap NCCL's dlopen would
 * otherwise touch below the search is a page fault of its own, dear on a
 * virtual machine (docs/concepts/performance.md, "First calls"). */
void lz_search_and_open(const lz_lib *lib, const lz_sym *want, const char *list, lz_outcome *out)
{
    lz_skip *skips = NULL;
    int nskips = 0;
    int report = lz_logging(lib);
    const char *chosen_step = NULL;
    char *chosen = lz_chosen_file(lib, &chosen_step, 1);
    for (;;) {
        lz_attempt *r = search_attempt(lib, want, list, chosen, chosen_step, skips, nskips, report);
        if (!r) {
            lz_log(lib, "%s could not be loaded: out of memory", lib->display);
            break;
        }
        if (lz_ldlock_refused(NULL, 0)) { /* cut short: the caller says why */
            free(r);
            break;
        }
        if (!r->w.res.found && !report) {
            /* A quiet attempt found nothing: again, with the report the
             * failure's message needs. */
            free(r);
            report = 1;
            continue;
        }
        if (!r->w.res.found) {
            out->report = r->said->text[0] ? keep_report(r->said->text) : NULL;
            free(r);
            break;
        }
        lz_chosen c = r->w.res.chosen;
        char *path = paths_of(&r->w.res);
        free(r);
        /* On the heap: the library's constructors run below this frame,
         * on a stack that may be PTHREAD_STACK_MIN bytes. */
        char *why = path ? malloc(WHY_SIZE) : NULL;
        void *h = why ? open_chosen(lib, path, &c, why, WHY_SIZE) : NULL;
        if (h && (lib->dlopen_flags & ~(RTLD_LAZY | RTLD_LOCAL)))
            lz_log(lib, "[%s] %s: opened with the spec's dlopen flags (0x%x)", c.step, path,
                   (unsigned)lib->dlopen_flags);
        if (h) {
            lz_log(lib, "[%s] %s: chosen", c.step, path);
            out->handle = h;
            out->step = c.step;
            out->path = path;
            out->companions = path + strlen(path) + 1;
            free(why);
            break;
        }
        if (lz_ldlock_refused(NULL, 0)) {
            free(why);
            free(path);
            break;
        }
        if (why)
            lz_log(lib, "[%s] %s: refused once loaded: %s", c.step, path, why);
        int kept = add_skip(&skips, &nskips, &c, why ? why : "out of memory");
        free(why);
        free(path);
        if (!kept) {
            lz_log(lib, "%s could not be loaded: out of memory", lib->display);
            break;
        }
    }
    free(skips);
    free(chosen);
}
