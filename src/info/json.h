/* SPDX-License-Identifier: MIT */
/* JSON strings of arbitrary bytes, for lazynccl-info --json (json.c). */
#ifndef LZ_INFO_JSON_H
#define LZ_INFO_JSON_H

#include <stdio.h>

/* Write text as a JSON string (null for NULL). Well-formed UTF-8 is copied;
 * a byte that is not part of it (paths are bytes) is written as \u00XX, its
 * value, so that a reader can recover the bytes (docs/reference/lazynccl-info.md,
 * "Bytes that are not UTF-8"). */
void info_json_string(FILE *f, const char *text);

#endif
