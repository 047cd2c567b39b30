/* SPDX-License-Identifier: MIT
 * Dotted version numbers (lz_version.h). */
#include "elf/lz_version.h"

/* The decimal number at s (no locale tables: a first call touches as few
 * pages as it can); *end past it. */
static unsigned long number(const char *s, const char **end)
{
    unsigned long v = 0;
    while (*s >= '0' && *s <= '9' && v < (~0UL - 9) / 10)
        v = v * 10 + (unsigned long)(*s++ - '0');
    while (*s >= '0' && *s <= '9')
        s++;
    *end = s;
    return v;
}

int lz_version_cmp(const char *a, const char *b)
{
    while (*a || *b) {
        const char *ea, *eb;
        unsigned long x = number(a, &ea), y = number(b, &eb);
        if (x != y)
            return x < y ? -1 : 1;
        a = *ea == '.' ? ea + 1 : ea;
        b = *eb == '.' ? eb + 1 : eb;
        if (ea == a && eb == b)
            break;
    }
    return 0;
}
