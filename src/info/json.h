/* SPDX-License-Identifier: MIT */
/* JSON strings of arbitrary bytes, for lazynccl-info --json (json.c). */
#ifndef LZ_INFO_JSON_H
#define LZ_INFO_JSON_H

#include <stdio.h>

/* Write text as a JSON string (null for NULL). Well-formed UTF-8 is copied;
 * a byte that is not part of it (paths are bytes) is written as the lone
 * surrogate \udcXX, which no UTF-8 text holds, so that a reader recovers the
 * bytes without mistaking U+00XX for one (docs/reference/lazynccl-info.md,
 * "Bytes that are not UTF-8"). */
void info_json_string(FILE *f, const char *text);

#endif
