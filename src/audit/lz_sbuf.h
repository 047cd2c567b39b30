/* SPDX-License-Identifier: MIT
 * A string built in a caller's buffer, bounded, never overflowing: what
 * the audit module writes (a restart's environment, the cache's lines, a
 * load report's lines) without a C library's stdio. Header-only. */
#ifndef LZ_SBUF_H
#define LZ_SBUF_H

#include "common/lz_cachefile.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct lz_sbuf {
    char *p;
    size_t n, cap;
    int full; /* something was cut: what is built is not the whole */
} lz_sbuf;

/* s[0..len) appended, cut to fit (full then set); always NUL-terminated. */
static inline __attribute__((unused)) void lz_sbuf_put_n(lz_sbuf *b, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (b->n + 1 >= b->cap) {
            b->full = 1;
            break;
        }
        b->p[b->n++] = s[i];
    }
    b->p[b->n] = '\0';
}

static inline __attribute__((unused)) void lz_sbuf_put(lz_sbuf *b, const char *s)
{
    lz_sbuf_put_n(b, s, strlen(s));
}

/* s as a field of a tab-separated line: its tabs and newlines, which would
 * break the line, as '?'. */
static inline __attribute__((unused)) void lz_sbuf_put_field(lz_sbuf *b, const char *s)
{
    for (; *s; s++)
        lz_sbuf_put_n(b, *s == '\t' || *s == '\n' ? "?" : s, 1);
}

static inline __attribute__((unused)) void lz_sbuf_put_num(lz_sbuf *b, unsigned long long v)
{
    char d[24];
    size_t n = sizeof d;
    do
        d[--n] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    lz_sbuf_put_n(b, d + n, sizeof d - n);
}

/* v in lower-case hex, without leading zeros. */
static inline __attribute__((unused)) void lz_sbuf_put_hex(lz_sbuf *b, uint64_t v)
{
    char h[16];
    lz_hex16(v, h);
    size_t i = 0;
    while (i < 15 && h[i] == '0')
        i++;
    lz_sbuf_put_n(b, h + i, 16 - i);
}

#endif
