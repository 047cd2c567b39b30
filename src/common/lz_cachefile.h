/* SPDX-License-Identifier: MIT
 * The job's resolution cache (LAZYNCCL_CACHE; docs/guides/large-jobs.md): the file the audit module reads once per process and writes
 * where it learnt something, and lazynccl-info shows and checks. Defined
 * once here for both; plain text, one entry a line, fields apart by tabs:
 *
 *   KEY NAME PATH SIZE MTIME STEP BEFORE
 *
 * KEY, 16 hex digits: FNV-1a 64 of NAME, BEFORE and the node's id (its
 * hardware capabilities, GLIBC_TUNABLES and /etc/ld.so.cache's contents),
 * everything that decides what ld.so maps for a request by name; PATH: the
 * file ld.so mapped, or "-" where it found none; SIZE, MTIME: the file's
 * size and modification time (seconds) then, in hex, which a node's copy
 * must still have (a device and inode differ from node to node); STEP: the
 * linker's step that found it (lz_stepnames.h; "none"); BEFORE: the directories
 * ld.so searches ahead of ld.so.cache for that request, in order,
 * ':'-joined ($ORIGIN expanded): the requester's DT_RPATH, its loaders'
 * and the program's, then LD_LIBRARY_PATH ("R:...|C:...|E:...|L:...") or,
 * where it has a DT_RUNPATH, LD_LIBRARY_PATH then that ("L:...|U:...").
 * A header of inline code: the module links no C library. */
#ifndef LZ_CACHEFILE_H
#define LZ_CACHEFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#define LZ_CACHE_ENV "LAZYNCCL_CACHE"
#define LZ_CACHE_MAGIC "lazynccl-cache 1\n"
/* A cache is read whole by every process: bounded. */
#define LZ_CACHE_MAX (4u << 20)
#define LZ_CACHE_FIELDS 7

/* Why a cache file of this id cannot be used by user euid, or NULL: only a
 * regular file of the user's own that nobody else can write is read (a
 * cache names files every process of the job then maps). */
static inline __attribute__((unused)) const char *lz_cache_refusal(const struct stat *st, unsigned long euid)
{
    if (!S_ISREG(st->st_mode))
        return "not a regular file";
    if (st->st_uid != euid)
        return "not the user's own";
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return "writable by others";
    if ((uint64_t)st->st_size > LZ_CACHE_MAX)
        return "larger than the bound (4 MiB)";
    return 0;
}

/* Lines a cache may hold besides its first, and so a writer adds. */
#define LZ_CACHE_MAX_ENTRIES 16384

/* 1 when s is 1 to 16 lower-case hex digits (exactly 16 for a key). */
static inline __attribute__((unused)) int lz_cache_hex(const char *s, int key)
{
    int n = 0;
    for (; *s; s++, n++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')) || n == 16)
            return 0;
    return key ? n == 16 : n > 0;
}

/* One line of a cache (its newline gone) split in place at its tabs into
 * f[LZ_CACHE_FIELDS]: 1 when it is an entry, by the one rule every reader
 * of the file (the audit module, the launcher, lazynccl-info) applies:
 * seven fields, a key of 16 hex digits, an absolute path or "-", a size
 * and a time in hex, a step, the directories. */
static inline __attribute__((unused)) int lz_cache_entry(char *line, char **f)
{
    int nf = 0;
    f[nf++] = line;
    for (char *q = line; *q; q++)
        if (*q == '\t') {
            if (nf == LZ_CACHE_FIELDS)
                return 0;
            *q = '\0';
            f[nf++] = q + 1;
        }
    if (nf != LZ_CACHE_FIELDS || !lz_cache_hex(f[0], 1) || !f[1][0] || !f[5][0])
        return 0;
    int none = f[2][0] == '-' && !f[2][1];
    return (none || f[2][0] == '/') && (none || (lz_cache_hex(f[3], 0) && lz_cache_hex(f[4], 0)));
}

#define LZ_FNV_START 0xcbf29ce484222325ull

/* FNV-1a 64 of s[0..len), continuing h; each field ends with a 0 byte of
 * its own, so that ("ab","c") and ("a","bc") differ. */
static inline __attribute__((unused)) uint64_t lz_fnv(uint64_t h, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return (h ^ 0) * 0x100000001b3ull;
}

/* v as 16 lower-case hex digits into out[16] (no NUL). */
static inline __attribute__((unused)) void lz_hex16(uint64_t v, char *out)
{
    for (int i = 15; i >= 0; i--, v >>= 4)
        out[i] = "0123456789abcdef"[v & 15];
}

#endif
