/* SPDX-License-Identifier: MIT
 * The search order's steps but the wheel's (lz_wheel.c), side by side
 * (docs/reference/search-order.md; lz_order.c holds them in order): each proposes
 * its candidates to the judge (lz_candidate.c), and answers 1 when the
 * search must stop. */
#include "search/lz_steps.h"
#include "common/lz_stepnames.h"
#include "base/lz_asked.h"
#include "search/lz_candidate.h"
#include "search/lz_linker.h"
#include "base/lz_env.h"
#include "search/lz_emit.h"
#include "base/lz_path.h"
#include "process/lz_objects.h"
#include "search/lz_release.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One entry of an override list: a file or a directory, absolute only. */
static int try_entry(lz_search *w, const char *step, const char *entry, size_t len)
{
    if (len == 0) {
        lz_verdict(w, step, "", LZ_REJECTED, NULL, "never read as the current directory");
        return 0;
    }
    if (len >= PATH_MAX) {
        char shown[80];
        snprintf(shown, sizeof shown, "%.64s...", entry);
        lz_verdict(w, step, shown, LZ_REJECTED, NULL, "path longer than PATH_MAX (%d)", PATH_MAX);
        return 0;
    }
    /* The entry is copied once, where the search's result lies: a file
     * accepted there is the result (lz_candidate_buffer). A directory is
     * copied aside, and its candidates are joined there in turn. */
    char *buf = lz_candidate_buffer(w), *own = NULL;
    char *path = buf ? buf : (own = malloc(len + 1));
    if (!path) {
        lz_note(w, "[%s] out of memory: an entry was not tried", step);
        return 0;
    }
    memcpy(path, entry, len);
    path[len] = '\0';
    struct stat sb;
    int rc = 0;
    if (path[0] != '/') {
        lz_verdict(w, step, path, LZ_REJECTED, NULL, "relative path (only absolute paths are accepted)");
    } else if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        if (path == buf && !(own = strndup(buf, len)))
            lz_note(w, "[%s] out of memory: an entry was not tried", step);
        else
            rc = lz_try_dir(w, step, own, 0);
    } else {
        rc = lz_try_file(w, step, path);
    }
    free(own);
    return rc;
}

static int try_list(lz_search *w, const char *step, const char *list)
{
    for (const char *p = list;; p++) {
        size_t len = lz_path_next(p, ":");
        if (try_entry(w, step, p, len))
            return 1;
        p += len;
        if (!*p)
            return 0;
    }
}

/* The one file the program chose: judged like any candidate, and nothing
 * else is tried (the program said which file). */
static int step_chosen(lz_search *w)
{
    const char *path = w->req.chosen, *step = w->req.chosen_step;
    lz_looked(w, step, path);
    if (path[0] == '(') /* no file: lz_chosen_file's words for a handle that names none */
        lz_verdict(w, step, "", LZ_REJECTED, NULL, "%s", path);
    else if (!try_entry(w, step, path, strlen(path))) {
        lz_closing(w);
        lz_note(w, "%s", strcmp(step, LZ_STEP_ADOPTED) == 0
                             ? "the program adopted that file's handle, so nothing else was tried"
                         : strcmp(step, LZ_STEP_CHOSEN) == 0
                             ? "the program's chooser named that file, so nothing else was tried"
                             : "that is the file the dynamic linker would load, so nothing else "
                               "was tried");
    }
    return 1;
}

/* A handle the program adopted (its library in the process already):
 * before the override, and nothing else is tried. */
int lz_step_adopted(lz_search *w)
{
    return w->req.chosen && strcmp(w->req.chosen_step, LZ_STEP_ADOPTED) == 0 && step_chosen(w);
}

/* The override variable (LAZY<ID>_LIBPATH): authoritative when set. */
int lz_step_variable(lz_search *w)
{
    const lz_lib *lib = w->lib;
    if (lz_secure() && getenv(lib->env_var))
        lz_note(w, "[%s] ignored: secure-execution process (setuid/setcap)", lib->env_var);
    const char *env = lz_getenv(lib->env_var);
    if (env && !*env) {
        /* As glibc takes an empty LD_LIBRARY_PATH: unset, not "nothing". */
        lz_note(w, "[%s] ignored: set but empty, so taken as unset", lib->env_var);
        env = NULL;
    }
    if (!env)
        return 0;
    const char *asked, *by, *step;
    if (lz_asked(lib, &asked, &by, &step))
        lz_note(w, "[%s] %s (%s by %s): not tried, %s names the library", step, asked,
                strcmp(step, LZ_STEP_ASKED) == 0 ? "dlopen" : "needed", by, lib->env_var);
    if (!try_list(w, lib->env_var, env)) {
        lz_closing(w);
        lz_note(w, "%s is set, so nothing else was tried", lib->env_var);
    }
    return 1;
}

/* The file or handle the program's chooser answered: nothing else is tried. */
int lz_step_chooser(lz_search *w)
{
    return w->req.chosen && step_chosen(w);
}

/* The search list the program set: authoritative when set. */
int lz_step_search_list(lz_search *w)
{
    if (!w->req.search_list)
        return 0;
    if (!try_list(w, LZ_STEP_SEARCH_LIST, w->req.search_list)) {
        lz_closing(w);
        lz_note(w, "a search list was set by the program, so nothing else was tried");
    }
    return 1;
}

/* The file lazynccl-run's audit module stood this drop-in in for: the
 * path the program asked for, or, for a request by name, the file the
 * dynamic linker would have mapped (named by the linker's step that found
 * it): what the program would have loaded. */
int lz_step_asked(lz_search *w)
{
    const char *asked, *by, *step;
    if (!lz_asked(w->lib, &asked, &by, &step))
        return 0;
    lz_looked(w, step, asked);
    lz_aside(w, "the program asked for %s (%s by %s)", asked,
           strcmp(step, LZ_STEP_ASKED) == 0 ? "dlopen" : "needed", by);
    w->standing_in = 1;
    int rc = lz_try_file(w, step, asked);
    w->standing_in = 0;
    if (rc)
        return 1;
    /* Nothing else is tried: plain, the request would have got this file
     * or failed; another file would make a different job. */
    lz_closing(w);
    lz_note(w, "that is the file the request would have loaded without lazynccl-run, so nothing "
               "else was tried");
    return 1;
}

/* A copy already in the process: every loaded object carrying one of the
 * spec's sonames, in preference order (not dlopen(RTLD_NOLOAD), which sees
 * one object per soname). lz_try_file judges each like any candidate. */
static int visit_loaded(void *ctx, const char *path, const char *why)
{
    (void)why;
    return path && lz_try_file(ctx, LZ_STEP_LOADED, path);
}

int lz_step_loaded(lz_search *w)
{
    w->reusing = 1;
    int rc = 0;
    for (const char *const *s = w->lib->sonames; *s && !rc; s++) {
        if (lz_heard(w)) {
            char place[128];
            snprintf(place, sizeof place, "objects with SONAME %s", *s);
            lz_looked(w, LZ_STEP_LOADED, place);
        }
        rc = lz_objects_with_soname(*s, visit_loaded, w);
    }
    w->reusing = 0;
    return rc;
}

/* The directory of a library released with this one that the process
 * has loaded (cuBLASLt's, for cuBLAS): where its release lies
 * (docs/reference/search-order.md, "Released together"). */
int lz_step_release(lz_search *w)
{
    int bad;
    if (!w->lib->peers || !w->lib->peers[0].display ||
        lz_release_policy(w->lib, &bad) == LZ_RELEASE_OFF)
        return 0;
    if (bad)
        lz_note(w, "[%s] '%s' is not a policy (strict, best_effort, off): best_effort",
                w->lib->release_env, lz_getenv(w->lib->release_env));
    char *dir = malloc(PATH_MAX);
    int rc = dir && lz_release_peer_dir(w->lib, dir, PATH_MAX) &&
             lz_try_dir(w, LZ_STEP_RELEASE, dir, 0);
    free(dir);
    return rc;
}

/* Directories below the prefixes environment variables name
 * (the spec's search roots: CONDA_PREFIX, CUDA_HOME, ...). */
static int step_env_dirs(lz_search *w, const char *var, const char *const *subdirs)
{
    const char *root = lz_getenv(var);
    if (!root || !*root) {
        lz_looked(w, "not set", var);
        return 0;
    }
    if (root[0] != '/') {
        lz_verdict(w, var, root, LZ_REJECTED, NULL,
                   "relative path (only absolute paths are accepted)");
        return 0;
    }
    int rc = 0;
    for (const char *const *s = subdirs; *s && !rc; s++) {
        char *dir = lz_join(w, var, root, *s);
        rc = dir && lz_try_dir(w, var, dir, 1);
        free(dir);
    }
    return rc;
}

static int step_roots(lz_search *w, const lz_root *roots)
{
    for (const lz_root *r = roots; r && r->var; r++)
        if (step_env_dirs(w, r->var, r->subdirs))
            return 1;
    return 0;
}

int lz_step_roots_before(lz_search *w)
{
    return step_roots(w, w->lib->roots_before);
}

int lz_step_roots_after(lz_search *w)
{
    return step_roots(w, w->lib->roots_after);
}

static int visit_candidate(void *ctx, const char *step, const char *path)
{
    return lz_try_file(ctx, step, path);
}

static void note_candidate(void *ctx, const char *step, const char *text)
{
    lz_note(ctx, "[%s] %s", step, text);
}

static void looked_candidate(void *ctx, const char *step, const char *place)
{
    lz_looked(ctx, step, place);
}

int lz_step_linker(lz_search *w)
{
    lz_linker_hooks h = {visit_candidate, note_candidate, lz_heard(w) ? looked_candidate : NULL, w};
    if (w->lib->system_only)
        return lz_linker_system_lookup(w->lib->sonames, 0, &h);
    if (w->req.asker)
        return lz_linker_lookup_asker(w->lib->sonames, w->req.asker, &h);
    return lz_linker_lookup(w->lib->sonames, &h);
}

/* The spec's default directories (the CUDA Toolkit's, for CUDA's libraries). */
int lz_step_default(lz_search *w)
{
    for (const char *const *d = w->lib->default_dirs; d && *d; d++)
        if (lz_try_dir(w, LZ_STEP_DEFAULT_DIRS, *d, 1))
            return 1;
    return 0;
}
