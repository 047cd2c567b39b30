/* The search order (docs/search-order.md). Each step proposes candidates;
 * the first candidate accepted ends the walk. */
#include "lz_search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Try every soname in a directory. */
static int try_dir(lz_walk *w, const char *step, const char *dir)
{
    char path[PATH_MAX];
    for (const char *const *s = w->lib->sonames; *s; s++) {
        int n = snprintf(path, sizeof path, "%s/%s", dir, *s);
        if (n < 0 || (size_t)n >= sizeof path) {
            lz_note(w, "[%s] %s/%s: rejected: path longer than PATH_MAX", step, dir, *s);
            continue;
        }
        if (lz_try_file(w, step, path))
            return 1;
    }
    return 0;
}

/* One entry of an override list: a file or a directory, absolute only. */
static int try_entry(lz_walk *w, const char *step, const char *entry, size_t len)
{
    if (len == 0) {
        lz_note(w, "[%s] empty entry: rejected (never read as the current directory)", step);
        return 0;
    }
    if (len >= PATH_MAX) {
        lz_note(w, "[%s] %.64s...: rejected: path longer than PATH_MAX (%d)", step, entry,
                PATH_MAX);
        return 0;
    }
    char path[PATH_MAX];
    memcpy(path, entry, len);
    path[len] = '\0';
    if (path[0] != '/') {
        lz_note(w, "[%s] %s: rejected: relative path (only absolute paths are accepted)",
                step, path);
        return 0;
    }
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        if (try_dir(w, step, path))
            return 1;
        return 0;
    }
    return lz_try_file(w, step, path);
}

static int try_list(lz_walk *w, const char *step, const char *list)
{
    const char *p = list;
    for (;;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (try_entry(w, step, p, len))
            return 1;
        if (!end)
            return 0;
        p = end + 1;
    }
}

/* Step 1: the override, authoritative when set. Returns 1 when the walk must
 * stop here (found, or an override was set and failed). */
static int step_override(lz_walk *w)
{
    const lz_lib *lib = w->lib;
    if (lz_secure() && getenv(lib->env_var))
        lz_note(w, "[%s] ignored: secure-execution process (setuid/setcap)", lib->env_var);
    const char *env = lz_getenv(lib->env_var);
    if (env) {
        if (!try_list(w, lib->env_var, env))
            lz_note(w, "%s is set, so nothing else was tried", lib->env_var);
        return 1;
    }
    if (lib->st->search_list) {
        if (!try_list(w, "search list", lib->st->search_list))
            lz_note(w, "a search list was set by the program, so nothing else was tried");
        return 1;
    }
    return 0;
}

/* Step 6: the dynamic linker's own search for each soname. */
static int step_linker(lz_walk *w)
{
    for (const char *const *s = w->lib->sonames; *s; s++)
        if (lz_try_soname(w, "dynamic linker", *s))
            return 1;
    return 0;
}

void lz_search(lz_walk *w)
{
    if (step_override(w))
        return;
    if (step_linker(w))
        return;
}
