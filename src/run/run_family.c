/* SPDX-License-Identifier: MIT */
/* The families this launcher serves (run_family.h). */
#include "run_family.h"
#include "run_path.h"

#include <string.h>

/* Written by meson.build: the families ("id=stem id=stem ...", the stem of
 * each first soname; "+id=stem" for one served only when --only names it:
 * the suite's own test libraries in a build tree). */
#ifndef RUN_FAMILIES
#error RUN_FAMILIES is defined by meson.build
#endif

/* The stem of a family ("libcublas.so" for cublas), or 0. */
int run_family_stem(const char *id, size_t idlen, char *out, size_t size)
{
    for (const char *p = RUN_FAMILIES; *p;) {
        const char *end = p + strcspn(p, " ");
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (*p == '+')
            p++;
        if (eq && (size_t)(eq - p) == idlen && strncmp(p, id, idlen) == 0) {
            run_path_fmt(out, size, "%.*s", (int)(end - eq - 1), eq + 1);
            return 1;
        }
        p = *end ? end + 1 : end;
    }
    return 0;
}

const char *run_family_names(int on_request)
{
    static char buf[2][1024];
    char *out = buf[on_request != 0];
    size_t n = 0, size = sizeof buf[0];
    out[0] = '\0';
    for (const char *p = RUN_FAMILIES; *p && n + 1 < size;) {
        const char *end = p + strcspn(p, " ");
        const char *eq = memchr(p, '=', (size_t)(end - p));
        int requested = *p == '+';
        if (requested != (on_request != 0)) {
            p = *end ? end + 1 : end;
            continue;
        }
        p += requested;
        size_t len = (size_t)((eq ? eq : end) - p);
        if (n + len + 3 > size)
            break;
        if (n)
            memcpy(out + n, ", ", 2), n += 2;
        memcpy(out + n, p, len);
        n += len;
        out[n] = '\0';
        p = *end ? end + 1 : end;
    }
    return out;
}


int run_family_stems(char stems[][RUN_FAMILY_STEM], int max)
{
    int n = 0;
    for (const char *f = RUN_FAMILIES; *f && n < max;) {
        const char *end = f + strcspn(f, " ");
        const char *eq = memchr(f, '=', (size_t)(end - f));
        if (*f != '+' && eq && run_family_stem(f, (size_t)(eq - f), stems[n], RUN_FAMILY_STEM))
            n++;
        f = *end ? end + 1 : end;
    }
    return n;
}
