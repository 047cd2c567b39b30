/* SPDX-License-Identifier: MIT */
/* Reading one entry of a search-path list as ld.so does (lz_path.h). */
#include "base/lz_path.h"
#include "common/lz_pathlist.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lz_copy(char *out, size_t size, const char *s)
{
    if (size == 0)
        return 0;
    size_t n = strnlen(s, size);
    int whole = n < size;
    if (!whole)
        n = size - 1;
    memcpy(out, s, n);
    out[n] = '\0';
    return whole;
}

int lz_path_join(char *out, size_t size, const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    if (size == 0)
        return 0;
    if (a + 1 + b >= size) {
        out[0] = '\0';
        return 0;
    }
    memcpy(out, dir, a);
    out[a] = '/';
    memcpy(out + a + 1, name, b + 1);
    return 1;
}

size_t lz_path_next(const char *list, const char *seps)
{
    return lz_pathlist_entry(list, seps);
}

/* ASCII letters, digits and '_', as ld.so reads a token's end; not
 * isalnum(), whose locale table is a page of its own. */
static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int refuse(char *why, size_t wsize, const char *fmt, const char *a, int alen)
{
    snprintf(why, wsize, fmt, alen, a);
    return 0;
}

/* 1 when p (a '$' before end) starts the token $NAME or ${NAME}, as glibc's
 * is_dst reads one. */
static int token_at(const char *p, const char *end, const char *name)
{
    size_t n = strlen(name);
    if (end - p >= (long)n + 3 && p[1] == '{')
        return memcmp(p + 2, name, n) == 0 && p[2 + n] == '}';
    return end - p >= (long)n + 1 && memcmp(p + 1, name, n) == 0 &&
           (end - p == (long)n + 1 || !name_char(p[1 + n]));
}

/* The length of the token at p (past its '$': NAME or {NAME}), as glibc's
 * is_dst reads it; 0 where p holds not that token. */
static size_t token_len(const char *p, const char *end, const char *name)
{
    return token_at(p, end, name) ? strlen(name) + (p[1] == '{' ? 3 : 1) : 0;
}

int lz_path_names(const char *entry, size_t len, const char *name)
{
    for (const char *p = entry, *end = entry + len; (p = memchr(p, '$', (size_t)(end - p))); p++)
        if (token_at(p, end, name))
            return 1;
    return 0;
}

int lz_path_entry(const char *entry, size_t len, const lz_path_tokens *tokens, const char *cwd,
                  int secure, char *out, size_t size, char *why, size_t wsize)
{
    if (size < 2 || wsize < 1)
        return 0;
    why[0] = '\0';
    int shown = len > 256 ? 256 : (int)len;
    /* Expanded in out itself (no second PATH_MAX buffer: a first call
     * pays for each fresh page it writes), at most PATH_MAX - 1 bytes. */
    size_t cap = size < PATH_MAX ? size : PATH_MAX, o = 0;
    if (memchr(entry, '\0', len))
        return refuse(why, wsize, "entry %.*s: holds a NUL byte", entry, shown);
    for (const char *p = entry, *end = entry + len; p < end;) {
        static const char *const names[] = {"ORIGIN", "PLATFORM", "LIB"};
        const char *values[] = {tokens ? tokens->origin : NULL, tokens ? tokens->platform : NULL,
                                tokens ? tokens->lib : NULL};
        size_t tok = 0;
        int which = 0;
        for (; *p == '$' && which < 3 && !(tok = token_len(p, end, names[which])); which++)
            ;
        /* Any other '$' is the name's own: ld.so copies it as it stands. */
        if (tok) {
            if (secure && which == 0)
                return refuse(why, wsize, "entry %.*s: $ORIGIN ignored in a secure-execution "
                              "process", entry, shown);
            static const char *const unknown[] = {"entry %.*s: $ORIGIN is unknown here",
                                                  "entry %.*s: ld.so's $PLATFORM is unknown here",
                                                  "entry %.*s: ld.so's $LIB is unknown here"};
            if (!values[which])
                return refuse(why, wsize, unknown[which], entry, shown);
            if (!lz_copy(out + o, cap - o, values[which]))
                return refuse(why, wsize, "entry %.*s: longer than PATH_MAX", entry, shown);
            o += strlen(out + o);
            p += tok;
            continue;
        }
        if (o >= cap - 1)
            return refuse(why, wsize, "entry %.*s: longer than PATH_MAX", entry, shown);
        out[o++] = *p++;
    }
    out[o] = '\0';
    if (out[0] != '/') {
        /* ld.so reads an empty entry as the current directory and a relative
         * one relative to it: followed, except where ld.so trusts neither. */
        if (secure)
            return refuse(why, wsize, len ? "relative entry %.*s ignored in a secure-execution "
                          "process" : "%.*sempty entry (the current directory) ignored in a "
                          "secure-execution process", entry, shown);
        if (!cwd || cwd[0] != '/')
            return refuse(why, wsize, "entry %.*s: relative, and the current directory is "
                          "unknown", entry, shown);
        size_t c = strlen(cwd), extra = c + (o ? 1 : 0);
        if (o + extra >= size)
            return refuse(why, wsize, "entry %.*s: longer than PATH_MAX", entry, shown);
        memmove(out + extra, out, o + 1);
        memcpy(out, cwd, c);
        if (o)
            out[c] = '/';
        o += extra;
    }
    while (o > 1 && out[o - 1] == '/')
        out[--o] = '\0';
    return 1;
}

char *lz_path_dup(const char *dir, const char *name)
{
    size_t n = strlen(dir) + 1 + strlen(name) + 1;
    char *out = n <= PATH_MAX ? malloc(n) : NULL;
    if (out)
        lz_path_join(out, n, dir, name);
    return out;
}
