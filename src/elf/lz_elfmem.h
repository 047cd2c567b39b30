/* SPDX-License-Identifier: MIT
 * A loaded object's dynamic section read in memory (lz_elfmem.c): its
 * string and symbol tables, its SONAME and DT_NEEDED entries, a GNU-hash
 * lookup; every address checked to lie inside one of the object's loaded
 * segments before it is read. The one reader for the runtime
 * (lz_objects.c) and the rtld-audit module and preload redirector
 * (audit/lz_memobj.c), so it calls no library function but memcmp and
 * strlen (the module provides those itself). */
#ifndef LZ_ELFMEM_H
#define LZ_ELFMEM_H

#include <link.h>
#include <stddef.h>
#include <stdint.h>

#ifdef LZ_AMALGAMATION
#define LZ_ELFMEM_API static __attribute__((unused))
#else
#define LZ_ELFMEM_API __attribute__((visibility("hidden")))
#endif

typedef struct lz_elfmem {
    uintptr_t base;             /* load address */
    const ElfW(Phdr) *ph;       /* program headers, mapped */
    size_t phnum;
    const ElfW(Dyn) *dyn;       /* the dynamic section */
    size_t ndyn;                /* its entries, by its segment's size */
    const char *strtab;
    size_t strsz;
    const ElfW(Sym) *symtab;
    size_t nsyms;               /* every symbol (DT_HASH), or the undefined ones [0, symoffset) */
    const uint32_t *gnu_hash;   /* NULL without one */
    const ElfW(Half) *versym;   /* DT_VERSYM, NULL without one (each entry checked when read) */
} lz_elfmem;

/* Fill v for the object loaded at base with these program headers: 1 when
 * it has a dynamic section whose string table lies in its segments. */
LZ_ELFMEM_API int lz_elfmem_view(lz_elfmem *v, uintptr_t base, const ElfW(Phdr) *ph, size_t phnum);
/* 1 when [addr, addr + len) lies inside one loaded segment of the object. */
LZ_ELFMEM_API int lz_elfmem_mapped(uintptr_t base, const ElfW(Phdr) *ph, size_t phnum,
                                   uintptr_t addr, size_t len);
/* The string at off in its string table, NULL when it runs past the table. */
LZ_ELFMEM_API const char *lz_elfmem_str(const lz_elfmem *v, size_t off);
/* The string of its first dynamic entry tagged tag (DT_SONAME, DT_RPATH,
 * DT_RUNPATH), or NULL. */
LZ_ELFMEM_API const char *lz_elfmem_dynstr(const lz_elfmem *v, long tag);
/* The value of its first dynamic entry tagged tag (DT_FLAGS_1), or 0. */
LZ_ELFMEM_API unsigned long lz_elfmem_dynval(const lz_elfmem *v, long tag);
/* Its SONAME, or NULL. */
LZ_ELFMEM_API const char *lz_elfmem_soname(const lz_elfmem *v);
/* 1 when one of its DT_NEEDED entries is soname. */
LZ_ELFMEM_API int lz_elfmem_needs(const lz_elfmem *v, const char *soname);
/* The version its symbol table entry i refers to (DT_VERSYM's index named
 * in DT_VERNEED: "libnvJitLink.so.12"), or NULL for none or out of bounds:
 * the version an undefined symbol asks for. */
LZ_ELFMEM_API const char *lz_elfmem_needed_version(const lz_elfmem *v, size_t i);
/* The symbol it defines under name, found through its GNU hash table as
 * the dynamic linker finds it; NULL when none (or no GNU hash table). */
LZ_ELFMEM_API const ElfW(Sym) *lz_elfmem_lookup(const lz_elfmem *v, const char *name);
/* The symbol it defines under name at address at (base + st_value), at any
 * version; NULL when none. */
LZ_ELFMEM_API const ElfW(Sym) *lz_elfmem_lookup_at(const lz_elfmem *v, const char *name, uintptr_t at);
/* The same as lz_elfmem_lookup, unversioned or at a version not hidden: what dlsym without a
 * version finds. */
LZ_ELFMEM_API const ElfW(Sym) *lz_elfmem_lookup_default(const lz_elfmem *v, const char *name);
/* 1 when it defines name unversioned or at a version that is not hidden
 * (name@@NODE: what dlsym without a version finds first), through its GNU
 * hash table; 0 otherwise, a name only at hidden versions included. */
LZ_ELFMEM_API int lz_elfmem_defines(const lz_elfmem *v, const char *name);
/* 1 when a relocation of the object writes into [at, at + size), or its
 * relocation tables cannot be read: there the bytes may hold an address
 * (into the object, or a symbol's). Every kind counts: RELA, REL, the
 * PLT's, packed relative (RELR, decoded as ld.so decodes it). */
LZ_ELFMEM_API int lz_elfmem_relocated(const lz_elfmem *v, uintptr_t at, size_t size);
/* Where the object holds the value of its variable name (an STT_OBJECT of
 * exactly size bytes, as dlsym without a version finds it), when no
 * relocation writes into it: bytes that hold no address, so they are the
 * file's own whatever becomes of the object. NULL otherwise. */
LZ_ELFMEM_API const void *lz_elfmem_plain_value(const lz_elfmem *v, const char *name, size_t size);

#endif
