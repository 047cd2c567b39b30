/* SPDX-License-Identifier: MIT
 * The fuzz targets' own check of UTF-8, by code point ranges, written apart
 * from src/info/utf8.c so that a wrong rule there is caught, not copied. */
#ifndef FUZZ_UTF8_CHECK_H
#define FUZZ_UTF8_CHECK_H

#include <stddef.h>

/* The length of the well-formed UTF-8 sequence at s (left bytes there), or
 * 0; *cp its code point. */
static inline size_t utf8_check(const unsigned char *s, size_t left, unsigned *cp)
{
    size_t n;
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if ((s[0] & 0xe0) == 0xc0) { n = 2; *cp = s[0] & 0x1f; }
    else if ((s[0] & 0xf0) == 0xe0) { n = 3; *cp = s[0] & 0x0f; }
    else if ((s[0] & 0xf8) == 0xf0) { n = 4; *cp = s[0] & 0x07; }
    else return 0;
    if (n > left)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        *cp = *cp << 6 | (s[i] & 0x3f);
    }
    static const unsigned min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (*cp < min[n] || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff))
        return 0;
    return n;
}

#endif
