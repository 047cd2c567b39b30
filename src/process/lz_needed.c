/* SPDX-License-Identifier: MIT */
/* The names a process needs from a library (lz_needed.h). */
#include "process/lz_needed.h"
#include "base/lz_env.h"
#include "process/lz_objects_imports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 when the ','-separated list holds name (spaces around an entry are
 * ignored). */
static int listed(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; p && *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *end = p;
        while (*end && *end != ',')
            end++;
        const char *last = end;
        while (last > p && last[-1] == ' ')
            last--;
        if ((size_t)(last - p) == len && memcmp(p, name, len) == 0)
            return 1;
        p = end;
    }
    return 0;
}

static const char *required(const lz_lib *lib)
{
    return lib->st ? __atomic_load_n(&lib->st->required, __ATOMIC_ACQUIRE) : NULL;
}

static const char *from_env(const lz_lib *lib)
{
    return lib->require_env ? lz_getenv(lib->require_env) : NULL;
}

unsigned char *lz_needed_marks(const lz_lib *lib)
{
    unsigned char *marks = calloc(lib->nsyms ? lib->nsyms : 1, 1);
    if (!marks)
        return NULL;
    lz_objects_imports(lib, marks);
    const char *env = from_env(lib), *api = required(lib);
    if ((env && *env) || api)
        for (size_t i = 0; i < lib->nsyms; i++) {
            const char *name = lz_sym_name(lib, &lib->syms[i]);
            marks[i] |= listed(env, name) || listed(api, name);
        }
    /* A function the shim answers itself where the library lacks it
     * (ncclGetLastError) is served by any copy. (One its dependencies
     * define stays needed: no candidate is asked for it, lz_open.c, but
     * the loaded library is, by dlsym.) */
    for (size_t i = 0; lib->answers && i < lib->nsyms; i++)
        if (lz_fn_at(lib->answers, i))
            marks[i] = 0;
    return marks;
}

void lz_needed_why(const lz_lib *lib, const char *name, char *out, size_t size)
{
    if (listed(from_env(lib), name)) {
        snprintf(out, size, "which the program requires (%s)", lib->require_env);
        return;
    }
    if (listed(required(lib), name)) {
        snprintf(out, size, "which the program requires (%s_require)", lib->shim);
        return;
    }
    char *who = lz_objects_importer(lib, name, NULL, NULL, NULL, NULL);
    snprintf(out, size, who ? "which %s imports" : "which the first call needs", who);
    free(who);
}
