/* SPDX-License-Identifier: MIT */
/* The text views' output stream, safe for a terminal (textout.h). Paths
 * and variables are bytes: a directory named with an escape sequence
 * would otherwise move the cursor, retitle the window or hide the line
 * that names it. */
#include "textout.h"
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    FILE *to;
    int color;
    unsigned char held[8]; /* a sequence cut by the end of a write */
    size_t nheld;
} textout;

/* What the views paint with (print.c). */
static const char *const PAINT[] = {"\033[32m", "\033[31m", "\033[33m", "\033[1m", "\033[0m"};

/* How many bytes of s (n of them) one of PAINT is: its length, 0 for none,
 * -1 where s could still become one (the next write may end it). */
static int paint_at(const unsigned char *s, size_t n)
{
    for (size_t k = 0; k < sizeof PAINT / sizeof *PAINT; k++) {
        size_t len = strlen(PAINT[k]);
        if (n >= len && memcmp(s, PAINT[k], len) == 0)
            return (int)len;
        if (n < len && memcmp(s, PAINT[k], n) == 0)
            return -1;
    }
    return 0;
}

/* How many bytes of s (n of them) a shown character is: a well-formed
 * UTF-8 sequence other than a C1 control; 0 for a byte to escape; -1 where
 * the sequence runs past n. */
static int shown_at(const unsigned char *s, size_t n)
{
    if (s[0] == '\n' || s[0] == '\t' || (s[0] >= 0x20 && s[0] < 0x7f))
        return 1;
    if (s[0] < 0x80)
        return 0;
    size_t want = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3
                  : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 1;
    unsigned char one[5] = {0};
    memcpy(one, s, want <= n ? want : n);
    int len = info_utf8_len(one); /* the NUL ends a cut sequence early */
    if (len == 0 && want > n) {
        size_t k = 1;
        while (k < n && (s[k] & 0xc0) == 0x80)
            k++;
        return k == n ? -1 : 0;
    }
    if (len == 2 && s[0] == 0xc2 && s[1] < 0xa0)
        return 0; /* U+0080-U+009F: the C1 controls */
    return len;
}

/* Write n bytes of s; at the end of a write, a cut sequence is held back
 * unless last (the stream closes). 0, or -1 where `to` failed. */
static int put(textout *t, const unsigned char *s, size_t n, int last)
{
    size_t i = 0;
    t->nheld = 0;
    while (i < n) {
        int len = s[i] == 0x1b && t->color ? paint_at(s + i, n - i) : shown_at(s + i, n - i);
        if (len < 0 && !last && n - i <= sizeof t->held) {
            memcpy(t->held, s + i, n - i);
            t->nheld = n - i;
            return 0;
        }
        if (len > 0) {
            if (fwrite(s + i, 1, (size_t)len, t->to) != (size_t)len)
                return -1;
            i += (size_t)len;
        } else {
            if (fprintf(t->to, "\\x%02x", s[i]) < 0)
                return -1;
            i++;
        }
    }
    return 0;
}

static ssize_t text_write(void *cookie, const char *buf, size_t size)
{
    textout *t = cookie;
    size_t n = t->nheld + size;
    unsigned char small[256];
    unsigned char *all = n <= sizeof small ? small : malloc(n);
    if (!all)
        return -1;
    memcpy(all, t->held, t->nheld);
    memcpy(all + t->nheld, buf, size);
    int rc = put(t, all, n, 0);
    if (all != small)
        free(all);
    return rc == 0 ? (ssize_t)size : -1;
}

static int text_close(void *cookie)
{
    textout *t = cookie;
    unsigned char held[sizeof t->held];
    size_t n = t->nheld;
    memcpy(held, t->held, n);
    int rc = put(t, held, n, 1);
    if (fflush(t->to) != 0)
        rc = -1;
    free(t);
    return rc;
}

FILE *info_text_stream(FILE *to, int color)
{
    textout *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->to = to;
    t->color = color;
    cookie_io_functions_t io = {.write = text_write, .close = text_close};
    FILE *f = fopencookie(t, "w", io);
    if (!f)
        free(t);
    return f;
}
