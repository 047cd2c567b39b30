/* SPDX-License-Identifier: MIT */
/* A line formatted on the heap (lz_text.h). */
#include "base/lz_text.h"

#include <stdio.h>
#include <stdlib.h>

char *lz_text_vformat(char *small, size_t small_size, size_t size, const char *fmt, va_list ap)
{
    char *text = malloc(size);
    if (!text) {
        text = small;
        size = small_size;
    }
    vsnprintf(text, size, fmt, ap);
    return text;
}

char *lz_text_format(char *small, size_t small_size, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = lz_text_vformat(small, small_size, size, fmt, ap);
    va_end(ap);
    return text;
}

void lz_text_free(char *text, const char *small)
{
    if (text != small)
        free(text);
}
