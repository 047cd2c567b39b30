/* SPDX-License-Identifier: MIT
 * ld.so's system directories (its default search, after ld.so.cache) as
 * the running ld.so was built with them, found once the same way by the
 * runtime's linker step and the audit module (which must know the last of
 * them). glibc keeps them as one constant in its read-only data, absolute
 * directories each ending in '/', NUL-separated, as `ld.so --help` lists
 * them ("/lib/x86_64-linux-gnu/\0/usr/lib/x86_64-linux-gnu/\0/lib/\0/usr/lib/\0"
 * on Debian, "/lib64/\0/usr/lib64/\0" on Fedora, the store's directory on
 * Nix). Header-only and free of library calls: the audit module has no C
 * library. */
#ifndef LZ_LDSODIRS_H
#define LZ_LDSODIRS_H

#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>

/* At most this many directories are taken (glibc's lists hold two to four). */
enum { LZ_LDSODIRS_MAX = 7 };

/* 1 when an ELF shared object's header lies at base. */
static inline __attribute__((unused)) int lz_ldsodirs_elf(uintptr_t base)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
    return base && eh->e_ident[EI_MAG0] == ELFMAG0 && eh->e_ident[EI_MAG1] == ELFMAG1 &&
           eh->e_ident[EI_MAG2] == ELFMAG2 && eh->e_ident[EI_MAG3] == ELFMAG3 && eh->e_type == ET_DYN;
}

/* The length of the directory at p (a string ending in '/', more than "/",
 * printable), read no further than end; 0 where p holds none. */
static inline __attribute__((unused)) size_t lz_ldsodirs_dir(const char *p, const char *end)
{
    size_t len = 0;
    while (p + len < end && p[len] > ' ' && p[len] < 127)
        len++;
    return p + len < end && p[len] == '\0' && len > 1 && p[0] == '/' && p[len - 1] == '/' ? len : 0;
}

/* The first run of two or more such directories in the read-only
 * segments of ld.so at base (where the runtime and the audit module found
 * it: the object that defines _rtld_global or __libc_stack_end; not
 * AT_BASE alone, which is 0 where ld.so runs as a command, nor AT_PHDR,
 * which ld.so then points at the program): the first of them, with their count in *n
 * (each NUL-terminated, the next right after), or NULL. The run stays
 * where it is: ld.so is never unloaded. */
static inline __attribute__((unused)) const char *lz_ldsodirs_find(uintptr_t base, size_t *n)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
    const ElfW(Phdr) *ph = lz_ldsodirs_elf(base) ? (const ElfW(Phdr) *)(base + eh->e_phoff) : NULL;
    for (size_t i = 0; ph && i < eh->e_phnum; i++) {
        if (ph[i].p_type != PT_LOAD || (ph[i].p_flags & (PF_W | PF_X)) != 0)
            continue;
        const char *seg = (const char *)(base + ph[i].p_vaddr);
        const char *end = seg + ph[i].p_filesz;
        for (const char *p = seg; p < end; p++) {
            if (*p != '/' || (p > seg && p[-1] != '\0'))
                continue;
            size_t count = 0, len;
            for (const char *q = p; count < LZ_LDSODIRS_MAX && (len = lz_ldsodirs_dir(q, end)); q += len + 1)
                count++;
            if (count >= 2) {
                *n = count;
                return p;
            }
        }
    }
    return NULL;
}

#endif
