/* SPDX-License-Identifier: MIT
 * The small runtime's steps of a spec's roots ($CUDA_HOME/lib64, ...)
 * and default directories: an archive member of its own, which only the
 * generated code of a spec that has any names (small/lz_small.h), so that
 * a library without them carries none of it. */
#include "small/lz_small.h"
#include "base/lz_env.h"
#include "common/lz_stepnames.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* Below each prefix the roots name; *step: the variable of the one that
 * served. */
static void *open_roots(lz_small_report *r, const lz_root *roots, const char **step)
{
    for (const lz_root *root = roots; root && root->var; root++) {
        *step = root->var;
        const char *prefix = lz_getenv(root->var);
        for (const char *const *sub = root->subdirs; prefix && *prefix && *sub; sub++) {
            char *dir = lz_small_joined(prefix, *sub);
            void *h = dir ? lz_small_open_in(r, root->var, dir) : NULL;
            free(dir);
            if (h)
                return h;
        }
    }
    return NULL;
}

LZ_DEF_DATA const char lz_small_roots_part = 1;

void *lz_small_roots(lz_small_report *r, const char **step, int after)
{
    const lz_lib *lib = r->lib;
    void *h = NULL;
    if (after) {
        h = open_roots(r, lib->roots_after, step);
        if (!h)
            *step = LZ_STEP_DEFAULT_DIRS;
        for (const char *const *d = lib->default_dirs; !h && d && *d; d++)
            h = lz_small_open_in(r, *step, *d);
        return h;
    }
    /* Before the dynamic linker's search, a copy already loaded comes
     * first: asked by name (RTLD_NOLOAD), only where a root is set. */
    int set = 0;
    for (const lz_root *root = lib->roots_before; root && root->var; root++)
        set |= lz_getenv(root->var) && *lz_getenv(root->var);
    for (const char *const *s = lib->sonames; set && *s && !h; s++)
        h = lz_small_open(r, *step, *s, RTLD_NOLOAD);
    return !h && set ? open_roots(r, lib->roots_before, step) : h;
}
