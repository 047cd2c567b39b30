/* SPDX-License-Identifier: MIT
 * LAZYNCCL_AUDIT_DROPINS, the contract between lazynccl-run (which writes
 * it) and the audit module and the preload redirector (which read it):
 * the drop-ins' absolute paths, ':'-separated, each file named by the
 * SONAME it stands for. Defined once here; a header of inline code, as the
 * audit module links no C library (lz_sys.h). */
#ifndef LZ_DROPINS_H
#define LZ_DROPINS_H

#include "common/lz_pathlist.h"

#include <stddef.h>

#define LZ_DROPINS_ENV "LAZYNCCL_AUDIT_DROPINS"
/* The separator, as lz_pathlist_entry takes it; LZ_DROPINS_SEP[0] where one
 * character is wanted. */
#define LZ_DROPINS_SEP ":"

/* Where lazynccl-run's other pieces lie, relative to the drop-ins'
 * directory: the directory above it (an install, the wheel), else its
 * audit/ sibling (a build tree). */
#define LZ_AUDIT_FILE "liblazynccl-audit.so"
#define LZ_REDIRECT_FILE "liblazynccl-redirect.so"
#define LZ_BESIDE_DROPINS {"/../", "/../audit/"}

/* 1 when an entry of LD_AUDIT (len bytes at entry) is lazynccl's module:
 * its file is named LZ_AUDIT_FILE, wherever it lies (the install, the
 * module's node copy, a $LIB form). */
static inline __attribute__((unused)) int lz_audit_entry_ours(const char *entry, size_t len)
{
    size_t mlen = sizeof LZ_AUDIT_FILE - 1;
    if (len < mlen)
        return 0;
    for (size_t i = 0; i < mlen; i++)
        if (entry[len - mlen + i] != LZ_AUDIT_FILE[i])
            return 0;
    return len == mlen || entry[len - mlen - 1] == '/';
}
/* The module's copies beside it that LD_AUDIT's $LIB leads each process
 * to where ld.so expands it as Debian's does (src/audit/meson.build):
 * 64-bit x86 processes, and 32-bit ones (a module that declines). */
#if defined(__x86_64__)
#define LZ_AUDIT_LIB64 "lib/x86_64-linux-gnu"
#else
#define LZ_AUDIT_LIB64 ""
#endif
#define LZ_AUDIT_LIB32 "lib32"

/* One entry of the list. */
typedef struct lz_dropin_item {
    const char *path; /* the entry, not NUL-terminated */
    size_t len;
    const char *name; /* its file name: the SONAME it stands for */
    size_t name_len;
    size_t stem;      /* the file name up to its first '.': "libnccl" of
                       * "libnccl.so.2"; a by-path request is read only when
                       * its file name starts so */
} lz_dropin_item;

/* The next usable entry at *list into it, advancing *list: 1, or 0 at the
 * end. Empty and relative entries are skipped, as the runtime's own path
 * lists skip them (never the current directory), and so is an entry whose
 * file name has no stem. */
static inline __attribute__((unused)) int lz_dropins_next(const char **list, lz_dropin_item *it)
{
    const char *p = *list;
    while (p && *p) {
        /* Every audited process parses the list: its file name is found
         * backwards from the entry's end (a few bytes). */
        const char *end = p + lz_pathlist_entry(p, LZ_DROPINS_SEP), *name = end;
        while (name > p && name[-1] != '/')
            name--;
        it->path = p;
        it->len = (size_t)(end - p);
        it->name = name;
        it->name_len = (size_t)(end - it->name);
        for (it->stem = 0; it->stem < it->name_len && it->name[it->stem] != '.'; it->stem++)
            ;
        p = *end ? end + 1 : end;
        if (it->len && it->path[0] == '/' && it->stem) {
            *list = p;
            return 1;
        }
    }
    *list = p;
    return 0;
}

#endif
