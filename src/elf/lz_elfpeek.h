/* SPDX-License-Identifier: MIT
 * The small reads of a shared object on disk (lz_elfpeek.c): its SONAME,
 * its DT_NEEDED names, its run paths, whether it is of this process's
 * kind. Each reads into a room the caller gives, never onto its own
 * stack: the audit module judges on the thread that called dlopen, whose
 * stack may be the smallest a thread can have, and it cannot allocate
 * (it runs inside the dynamic linker; it keeps one room, under ld.so's
 * lock). No allocation but the run paths'. */
#ifndef LZ_ELFPEEK_H
#define LZ_ELFPEEK_H

#include "elf/lz_elfview.h"

enum { LZ_ELFPEEK_NOTE_MAX = 4096 }; /* a PT_NOTE segment read whole */

/* What one read of a file's head and dynamic segment fills. */
typedef struct lz_elfpeek_room {
    lz_elfview v;
    unsigned char win[LZ_ELF_WINDOW]; /* one: its reads go forward */
    ElfW(Phdr) ph[LZ_ELF_MAX_PHDRS];
    ElfW(Dyn) dyn[LZ_ELF_MAX_DYN]; /* or a note segment's bytes */
    char name[256];                /* the DT_NEEDED name given to each */
} lz_elfpeek_room;

/* Only the SONAME of a file of this process's class and byte order, with no
 * allocation (the audit module runs inside the dynamic linker): 1 when found. */
LZ_ELF_API int lz_elfpeek_soname(lz_elfpeek_room *room, int fd, char *out, size_t size);

/* Each DT_NEEDED name of a file of this process's class, byte order and
 * machine, in order, given to each (no allocation): how many. A name that
 * cannot be read whole (longer than 255 bytes, or out of the file) is
 * given as NULL. */
LZ_ELF_API int lz_elfpeek_needed(lz_elfpeek_room *room, int fd, void (*each)(void *ctx, const char *name), void *ctx);

/* The DT_RPATH and DT_RUNPATH strings of a file of this process's class,
 * byte order and machine, malloc'd (NULL for a tag it lacks): 1 when the
 * file's dynamic segment and both strings were read (else both NULL). */
LZ_ELF_API int lz_elfpeek_run_paths(lz_elfpeek_room *room, int fd, char **rpath, char **runpath);

/* 1 when the dynamic linker would map the file for a request, as far as
 * its header and program headers tell (lz_elfverify.h: a shared object of
 * this process's class, byte order and machine, nothing in its header that
 * ld.so refuses; program headers it can read, a loadable segment and a
 * dynamic one); no allocation: the audit module and the launcher ask it. */
LZ_ELF_API int lz_elfpeek_native(lz_elfpeek_room *room, int fd);

/* 1 when the file (of this process's class, byte order and machine) is a
 * drop-in of this project's, by its note (common/lz_note.h), never by its
 * name: the SONAME it stands for into soname (size bytes). */
LZ_ELF_API int lz_elfpeek_dropin(lz_elfpeek_room *room, int fd, char *soname, size_t size);

#endif
