/* SPDX-License-Identifier: MIT
 * A loaded object read in memory (lz_memobj.c): its lazynccl notes
 * (lz_note.h), and, through the runtime's own bounds-checked reader of
 * dynamic sections (lz_elfmem.h), its SONAME and the symbols it defines.
 * Shared by the audit module (from la_objopen's link maps) and the preload
 * redirector (from dl_iterate_phdr); it calls no library function but
 * memcmp and strlen. */
#ifndef LZ_MEMOBJ_H
#define LZ_MEMOBJ_H

#include "elf/lz_elfmem.h"
#include "common/lz_note.h"

#include <link.h>
#include <stddef.h>
#include <stdint.h>

#define LZ_MEM_API __attribute__((visibility("hidden")))

typedef struct lz_mem_obj {
    ElfW(Addr) base;          /* load address (the link map's l_addr) */
    const ElfW(Phdr) *ph;     /* program headers, mapped */
    size_t phnum;
    const ElfW(Dyn) *dyn;     /* dynamic section, or NULL */
    /* Its dynamic section read once, on the first question that needs it
     * (every audited process asks two of ld.so and of libc.so.6):
     * viewed 0 not yet, 1 read, -1 unreadable. Zero it with the rest. */
    signed char viewed;
    lz_elfmem view;
} lz_mem_obj;

/* From dl_iterate_phdr's view of an object. */
LZ_MEM_API void lz_mem_from_phdr(lz_mem_obj *o, const struct dl_phdr_info *info);

/* 1 when the object holds a lazynccl runtime that may load soname: its
 * LZ_NOTE_RUNTIME lists it. */
LZ_MEM_API int lz_mem_runtime_loads(const lz_mem_obj *o, const char *soname);
/* The box of the drop-in standing for soname, when the object is one. */
LZ_MEM_API lz_asked_box *lz_mem_dropin_box(const lz_mem_obj *o, const char *soname);
/* Its SONAME, or NULL. */
LZ_MEM_API const char *lz_mem_soname(lz_mem_obj *o);
/* Its first dynamic string tagged tag (DT_RPATH, DT_RUNPATH), or NULL. */
LZ_MEM_API const char *lz_mem_dynstr(lz_mem_obj *o, long tag);
/* Its first dynamic value tagged tag (DT_FLAGS_1), or 0. */
LZ_MEM_API unsigned long lz_mem_dynval(lz_mem_obj *o, long tag);
/* The address of a symbol it defines (through its GNU hash table), or NULL. */
LZ_MEM_API void *lz_mem_defined(lz_mem_obj *o, const char *name);

#endif
