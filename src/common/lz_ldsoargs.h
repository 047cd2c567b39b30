/* SPDX-License-Identifier: MIT
 * ld.so run as a command (`ld.so [OPTION]... PROGRAM [ARG]...`): which of
 * its options take a value, defined once for the audit module (which
 * stands aside for `--list` and `--verify`) and the runtime's linker step
 * (which follows `--library-path`, `--inhibit-cache` and `--preload`). Its options come
 * before the program's name, each "--NAME"; both readers stop at a bare
 * "--" (glibc refuses one). Header-only and free of library calls: the
 * audit module has no C library. */
#ifndef LZ_LDSOARGS_H
#define LZ_LDSOARGS_H

/* 1 when a and b are the same string. */
static inline __attribute__((unused)) int lz_ldsoargs_same(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

/* 1 when ld.so's option name (without its "--") takes the next argument
 * as its value (glibc 2.33 and later). */
static inline __attribute__((unused)) int lz_ldsoargs_takes_value(const char *name)
{
    return lz_ldsoargs_same(name, "library-path") || lz_ldsoargs_same(name, "inhibit-rpath") ||
           lz_ldsoargs_same(name, "audit") || lz_ldsoargs_same(name, "preload") ||
           lz_ldsoargs_same(name, "argv0") || lz_ldsoargs_same(name, "glibc-hwcaps-prepend") ||
           lz_ldsoargs_same(name, "glibc-hwcaps-mask");
}

#endif
