/* SPDX-License-Identifier: MIT
 * Reading a shared object the way the dynamic linker reads it (lz_dynread.c):
 * ELF header, program headers, the dynamic segment and what it points to
 * (dynamic strings and symbols, DT_VERNEED), with pread and nothing else.
 * Section headers are never read: ld.so does not need them, so neither does
 * a check of what ld.so would do. Depends on the C library only, so the
 * rtld-audit module (inside the dynamic linker's lock) uses it too. */
#ifndef LZ_DYNREAD_H
#define LZ_DYNREAD_H

#include <stddef.h>
#include <sys/types.h>

/* Hidden in a shared object; file-local in an amalgamation, where two
 * vendored copies may be linked into one object. */
#ifdef LZ_AMALGAMATION
#define LZ_DYN_API static __attribute__((unused))
#else
#define LZ_DYN_API __attribute__((visibility("hidden")))
#endif

/* What a file says of itself, as ld.so would see it. */
typedef struct lz_dyn {
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
    unsigned long long answers; /* bit i: the file defines ask[i] (lz_dyn_read) */
} lz_dyn;

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
LZ_DYN_API int lz_dyn_read(int fd, off_t size, const char *const *ask, lz_dyn *d, char *why,
                           size_t whysize);
LZ_DYN_API void lz_dyn_free(lz_dyn *d);

/* Only the SONAME of a file of this process's class and byte order, with no
 * allocation (the audit module runs inside the dynamic linker): 1 when found. */
LZ_DYN_API int lz_dyn_soname(int fd, char *out, size_t size);

/* Each DT_NEEDED name of a file of this process's class, byte order and
 * machine, in order, given to each (no allocation): how many. */
LZ_DYN_API int lz_dyn_needed(int fd, void (*each)(void *ctx, const char *name), void *ctx);

/* The DT_RPATH and DT_RUNPATH strings of a file of this process's class,
 * byte order and machine, malloc'd (NULL for a tag it lacks): 1 when the
 * file's dynamic segment and both strings were read (else both NULL). */
LZ_DYN_API int lz_dyn_run_paths(int fd, char **rpath, char **runpath);

/* This process's e_machine, as compiled (not dladdr: it takes the dynamic
 * linker's lock, which a search must never wait for outside lz_dl.c). */
LZ_DYN_API unsigned lz_dyn_own_machine(void);

/* 1 when the file's ELF header is a shared object's of this process's
 * class, byte order and machine: what the dynamic linker maps for it, as
 * far as one read of the header tells (no allocation: the audit module and
 * the launcher ask it). */
LZ_DYN_API int lz_dyn_native(int fd);

/* "2.38" < "2.41": compare dotted version numbers (-1, 0, 1). */
LZ_DYN_API int lz_version_cmp(const char *a, const char *b);

#endif
