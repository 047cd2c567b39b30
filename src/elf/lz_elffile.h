/* SPDX-License-Identifier: MIT
 * Reading a shared object whole, the way the dynamic linker reads it
 * (lz_elffile.c): what its dynamic segment points to (dynamic strings and
 * symbols, DT_VERNEED), through the bounded view of lz_elfview.h: the
 * probe's reader, and lazynccl-info's. */
#ifndef LZ_ELFFILE_H
#define LZ_ELFFILE_H

#include "elf/lz_elfview.h"

#include <stddef.h>
#include <sys/types.h>


/* What a file says of itself, as ld.so would see it. */
typedef struct lz_elffile {
    int elf_class;        /* ELFCLASS32 / ELFCLASS64, as the file says */
    unsigned machine;     /* e_machine, in this process's byte order */
    int native;           /* class and byte order are this process's: the rest was read */
    char soname[256];     /* "" if none */
    char glibc[32];       /* the newest GLIBC_x.y of DT_VERNEED, "" if none */
    unsigned long long tls; /* its static TLS block (PT_TLS, aligned), 0 if none */
    char *strings;        /* the dynamic string table (owned; names point into it) */
    const char **names;   /* the defined dynamic symbols, unsorted (owned) */
    size_t nnames;
    /* Read with every name (ask NULL) only, pointing into strings: what a
     * pre-flight of a program needs (lazynccl-info --check). */
    const char **imports; /* undefined, not weak: what the dynamic linker must find (owned) */
    size_t nimports;
    const char **needed;  /* DT_NEEDED, in order (owned) */
    size_t nneeded;
    const char *rpath, *runpath; /* DT_RPATH, DT_RUNPATH, or NULL */
    unsigned long long flags_1;  /* DT_FLAGS_1 (DF_1_NODEFLIB), 0 if none */
    unsigned long long answers; /* bit i: the file defines ask[i] (lz_elffile_read) */
} lz_elffile;

/* Read the open file fd (size bytes) into d. 0 when it is an ELF shared
 * object whose facts could be read (for a file of another class or byte
 * order only elf_class and machine are set, native is 0); -1 with a reason
 * in why otherwise ("not an ELF file", "truncated ELF: ..."). Bounded: a
 * hostile file costs at most a few megabytes and a few dozen reads.
 * ask NULL: every defined name is read (names, strings). Else a
 * NULL-terminated list of at most 64 names: each is looked up through the
 * file's hash table, as ld.so would, and answered in d->answers; names and
 * strings stay NULL. The checks of the file are the same either way; the
 * lookups read a few words each where the list reads every name (a first
 * call's probe: fewer fresh heap pages, each a page fault). */
LZ_ELF_API int lz_elffile_read(int fd, off_t size, const char *const *ask, lz_elffile *d, char *why,
                           size_t whysize);
LZ_ELF_API void lz_elffile_free(lz_elffile *d);

#endif
