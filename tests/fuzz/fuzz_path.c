/* SPDX-License-Identifier: MIT
 * libFuzzer target: the LD_LIBRARY_PATH / run-path entry parser
 * (src/base/lz_path.c). The input is split into a list, an origin and a
 * current directory; every entry must get a verdict, and a followed one must
 * be an absolute path, without NUL, shorter than PATH_MAX, without trailing
 * slash (but "/"), without $ORIGIN left, and never followed in secure mode
 * unless it was absolute with no $ORIGIN (a '$' naming no token is the
 * entry's own, as ld.so reads it, in secure mode too). */
#include "base/lz_path.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static char *part(const uint8_t **p, const uint8_t *end)
{
    const uint8_t *sep = memchr(*p, '\n', (size_t)(end - *p));
    size_t n = (size_t)((sep ? sep : end) - *p);
    char *s = malloc(n + 1);
    memcpy(s, *p, n);
    s[n] = '\0';
    *p = sep ? sep + 1 : end;
    return s;
}

/* 1 when e holds the token $ORIGIN (not followed by a name's character)
 * or ${ORIGIN}. */
static int has_origin(const char *e, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (e[i] != '$')
            continue;
        if (len - i >= 9 && memcmp(e + i, "${ORIGIN}", 9) == 0)
            return 1;
        if (len - i >= 7 && memcmp(e + i, "$ORIGIN", 7) == 0 &&
            (len - i == 7 || !(e[i + 7] == '_' || (e[i + 7] >= '0' && e[i + 7] <= '9') ||
                               ((e[i + 7] | 0x20) >= 'a' && (e[i + 7] | 0x20) <= 'z'))))
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int secure = data[0] & 1, seps = data[0] & 2;
    const uint8_t *p = data + 1, *end = data + size;
    char *list = part(&p, end), *origin = part(&p, end), *cwd = part(&p, end), *platform = part(&p, end),
         *lib = part(&p, end);
    /* ld.so's $PLATFORM and $LIB are names, never absolute. */
    lz_path_tokens tok = {origin[0] ? origin : NULL, platform[0] && platform[0] != '/' ? platform : NULL,
                          lib[0] && lib[0] != '/' ? lib : NULL};
    for (const char *e = list;;) {
        size_t len = lz_path_next(e, seps ? ":;" : ":");
        char out[PATH_MAX], why[512];
        memset(out, 'x', sizeof out);
        int ok = lz_path_entry(e, len, &tok, cwd[0] ? cwd : NULL, secure,
                               out, sizeof out, why, sizeof why);
        if (ok) {
            size_t n = strnlen(out, sizeof out);
            if (n == sizeof out || out[0] != '/' || (n > 1 && out[n - 1] == '/'))
                __builtin_trap();
            if (secure && (len == 0 || e[0] != '/' || has_origin(e, len)))
                __builtin_trap();
            if (!memchr(e, '$', len) && e[0] == '/' && len < sizeof out &&
                strncmp(out, e, n) != 0)
                __builtin_trap(); /* an absolute entry without token is itself */
        } else if (!why[0] || strnlen(why, sizeof why) == sizeof why)
            __builtin_trap(); /* refused without a reason */
        if (!e[len])
            break;
        e += len + 1;
    }
    free(list);
    free(origin);
    free(cwd);
    free(platform);
    free(lib);
    return 0;
}
