/* SPDX-License-Identifier: MIT
 * What the dynamic linker does with a file's ELF header when a search
 * reaches it (glibc's open_verify, elf/dl-load.c): maps it, passes over it
 * (another class or machine: the search goes on), or fails the whole
 * request with its words. Defined once: the audit module stands a drop-in
 * in only for a file ld.so would map (elsewhere ld.so answers itself, as
 * plain), the probe refuses the rest with ld.so's words, and the launcher
 * and lazynccl-info read the same verdict. Inline and calling nothing: the
 * audit module runs inside the dynamic linker, with no C library. */
#ifndef LZ_ELFVERIFY_H
#define LZ_ELFVERIFY_H

#include "elf/lz_elfview.h"

#include <elf.h>
#include <link.h>
#include <stddef.h>

enum lz_ld_verdict {
    LZ_LD_MAPS = 0,   /* it would map it */
    LZ_LD_PASSES = 1, /* it goes on to the next candidate */
    LZ_LD_FAILS = 2,  /* the request fails: *words says how */
};

/* glibc's LIBC_ABI_MAX on x86-64 and AArch64 (2.28 to 2.41): an
 * ELFOSABI_GNU object may ask for an ABI version below it. */
#define LZ_LD_GNU_ABI_MAX 4

/* The verdict on the header at h (n bytes read from the file's start),
 * and where it fails, ld.so's words into *words (as it prints them after
 * the path; "cannot dynamically load executable" after the name asked). */
static inline __attribute__((unused)) enum lz_ld_verdict lz_elf_verify(const unsigned char *h, size_t n,
                                                                         const char **words)
{
    *words = "invalid ELF header";
    if (n < SELFMAG || h[EI_MAG0] != ELFMAG0 || h[EI_MAG1] != ELFMAG1 || h[EI_MAG2] != ELFMAG2 ||
        h[EI_MAG3] != ELFMAG3)
        return LZ_LD_FAILS;
    if (n < EI_NIDENT)
        return *words = "file too short", LZ_LD_FAILS;
    if (h[EI_CLASS] != LZ_ELF_NATIVE_CLASS)
        return *words = "wrong ELF class", LZ_LD_PASSES;
    ElfW(Ehdr) head = {0}, *eh = &head; /* h may lie unaligned in a read window */
    __builtin_memcpy(&head, h, n < sizeof head ? n : sizeof head);
    if (h[EI_DATA] != LZ_ELF_NATIVE_DATA)
        *words = LZ_ELF_NATIVE_DATA == ELFDATA2LSB ? "ELF file data encoding not little-endian"
                                                   : "ELF file data encoding not big-endian";
    else if (h[EI_VERSION] != EV_CURRENT)
        *words = "ELF file version ident does not match current one";
    else if (h[EI_OSABI] != ELFOSABI_SYSV && h[EI_OSABI] != ELFOSABI_GNU)
        *words = "ELF file OS ABI invalid";
    else if (h[EI_ABIVERSION] != 0 && !(h[EI_OSABI] == ELFOSABI_GNU && h[EI_ABIVERSION] < LZ_LD_GNU_ABI_MAX))
        *words = "ELF file ABI version invalid";
    else {
        int pad = 0;
        for (int i = EI_PAD; i < EI_NIDENT; i++)
            pad |= h[i];
        if (pad)
            *words = "nonzero padding in e_ident";
        else if (n < sizeof(ElfW(Ehdr))) /* ld.so's read of the header falls short */
            *words = "file too short";
        else if (eh->e_version != EV_CURRENT)
            *words = "ELF file version does not match current one";
        else if (eh->e_machine != lz_elf_own_machine())
            return *words = "wrong machine", LZ_LD_PASSES;
        else if (eh->e_type != ET_DYN && eh->e_type != ET_EXEC)
            *words = "only ET_DYN and ET_EXEC can be loaded";
        else if (eh->e_phentsize != sizeof(ElfW(Phdr)))
            *words = "ELF file's phentsize not the expected size";
        else if (eh->e_type == ET_EXEC)
            *words = "cannot dynamically load executable";
        else
            return *words = "", LZ_LD_MAPS;
    }
    return LZ_LD_FAILS;
}

#endif
