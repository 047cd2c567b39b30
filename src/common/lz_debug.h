/* SPDX-License-Identifier: MIT
 * Whether the log is on, defined once for the runtime (each spec names its
 * variable, LZ_DEBUG_ENV by default: base/lz_report.c, gen/spec.py) and the
 * audit module. Header-only and free of library calls: the audit module
 * has no C library. */
#ifndef LZ_DEBUG_H
#define LZ_DEBUG_H

#define LZ_DEBUG_ENV "LAZYNCCL_DEBUG"

/* 1 when the variable's value asks for the log: set, not empty, not "0". */
static inline __attribute__((unused)) int lz_debug_wanted(const char *value)
{
    return value && value[0] && !(value[0] == '0' && value[1] == '\0');
}

#endif
