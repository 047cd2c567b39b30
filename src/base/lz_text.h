/* SPDX-License-Identifier: MIT
 * A line formatted on the heap (lz_text.c). A first call may run on a
 * thread whose stack is PTHREAD_STACK_MIN bytes, and its search goes on
 * into the dynamic linker: no frame of the runtime holds a buffer the size
 * of a path or of a report's line. */
#ifndef LZ_TEXT_H
#define LZ_TEXT_H

#include "base/lz_runtime.h"

#include <stdarg.h>
#include <stddef.h>

/* fmt formatted into a buffer of size bytes from the heap; out of memory,
 * into small (small_size bytes, the text cut). Given back with
 * lz_text_free. */
LZ_HIDDEN char *lz_text_vformat(char *small, size_t small_size, size_t size, const char *fmt,
                                va_list ap) __attribute__((format(printf, 4, 0)));
LZ_HIDDEN char *lz_text_format(char *small, size_t small_size, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
LZ_HIDDEN void lz_text_free(char *text, const char *small);

#endif
