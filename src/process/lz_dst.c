/* SPDX-License-Identifier: MIT
 * The values ld.so gives $PLATFORM and $LIB (lz_dst.h), read from the
 * running ld.so itself: neither is public, and each is the one ld.so
 * substitutes (glibc's _dl_dst_substitute), so an entry naming them is
 * searched where ld.so searches it. */
#include "process/lz_dst.h"

#include "common/lz_ldsodirs.h"
#include "process/lz_objects.h"

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

/* 1 when [p, p + len) lies in one of the read-only loaded segments of the
 * ELF object at base. */
static int in_rodata(uintptr_t base, const char *p, size_t len)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
    const ElfW(Phdr) *ph = lz_ldsodirs_elf(base) ? (const ElfW(Phdr) *)(base + eh->e_phoff) : NULL;
    for (size_t i = 0; ph && i < eh->e_phnum; i++) {
        uintptr_t from = base + ph[i].p_vaddr, to = from + ph[i].p_filesz;
        if (ph[i].p_type == PT_LOAD && !(ph[i].p_flags & PF_W) && (uintptr_t)p >= from &&
            (uintptr_t)p + len <= to)
            return 1;
    }
    return 0;
}

/* Whether s is a string of its own (a NUL before and after it) in the
 * read-only, non-executable loaded segments of the object at base. */
static int ldso_string(uintptr_t base, const char *s, size_t n)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
    const ElfW(Phdr) *ph = lz_ldsodirs_elf(base) ? (const ElfW(Phdr) *)(base + eh->e_phoff) : NULL;
    char needle[72];
    if (n + 2 > sizeof needle)
        return 0;
    needle[0] = needle[n + 1] = '\0';
    memcpy(needle + 1, s, n);
    for (size_t i = 0; ph && i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && !(ph[i].p_flags & (PF_W | PF_X)) &&
            memmem((const void *)(base + ph[i].p_vaddr), ph[i].p_filesz, needle, n + 2))
            return 1;
    return 0;
}

/* glibc's struct rtld_global_ro (_rtld_global_ro, exported by ld.so) opens
 * with an int (the debug mask) and, before glibc 2.36, an unsigned int
 * (the OS version): on a 64-bit system the platform's pointer lies at 8
 * either way, and its length, a size_t, right after. Trusted only where
 * that length is the string's and the string is the kernel's AT_PLATFORM
 * or one of ld.so's own constants. */
static const char *read_platform(void)
{
    uintptr_t base = lz_objects_ldso_base();
    size_t size = 0;
    const unsigned char *ro = sizeof(void *) == 8 ? lz_objects_ldso_symbol("_rtld_global_ro", &size) : NULL;
    if (!ro || size < 24)
        return NULL;
    const char *p;
    size_t len;
    memcpy(&p, ro + 8, sizeof p);
    memcpy(&len, ro + 16, sizeof len);
    const char *kernel = (const char *)getauxval(AT_PLATFORM);
    if (!p || len == 0 || len > 64 || (p != kernel && !in_rodata(base, p, len + 1)) || memchr(p, '\0', len) ||
        p[len] != '\0')
        return NULL;
    return p;
}

/* The names ld.so's first system directory suggests for $LIB, most
 * specific first: the directory without its slashes ("lib/x86_64-linux-gnu",
 * Debian's; "lib64", upstream's), without a leading "usr/", and its last
 * component (upstream's rule, notdir of the library directory); the first
 * that is a string of ld.so's own is taken. */
static const char *read_lib(char *out, size_t size)
{
    uintptr_t base = lz_objects_ldso_base();
    size_t n = 0;
    const char *dir = lz_ldsodirs_find(base, &n);
    if (!dir)
        return NULL;
    size_t len = strlen(dir); /* "/lib/x86_64-linux-gnu/" */
    const char *full = dir + 1;
    size_t full_len = len - 2;
    const char *cands[3] = {full, NULL, NULL};
    size_t lens[3] = {full_len, 0, 0};
    if (full_len > 4 && memcmp(full, "usr/", 4) == 0)
        cands[1] = full + 4, lens[1] = full_len - 4;
    for (size_t i = full_len; i > 0; i--)
        if (full[i - 1] == '/') {
            cands[2] = full + i, lens[2] = full_len - i;
            break;
        }
    for (int i = 0; i < 3; i++)
        if (cands[i] && lens[i] && lens[i] < size && ldso_string(base, cands[i], lens[i])) {
            memcpy(out, cands[i], lens[i]);
            out[lens[i]] = '\0';
            return out;
        }
    return NULL;
}

/* Each read when a search first meets its token, apart (the legacy
 * subdirectories need the platform in every first call, $LIB almost no
 * one), and published once: the values never change in a process, so
 * threads that race read the same one. */
const char *lz_dst_platform(void)
{
    static const char *value;
    static int read;
    if (__atomic_load_n(&read, __ATOMIC_ACQUIRE))
        return __atomic_load_n(&value, __ATOMIC_RELAXED);
    const char *p = read_platform();
    __atomic_store_n(&value, p, __ATOMIC_RELAXED);
    __atomic_store_n(&read, 1, __ATOMIC_RELEASE);
    return p;
}

const char *lz_dst_lib(void)
{
    static char *published;
    static int none;
    char *r = __atomic_load_n(&published, __ATOMIC_ACQUIRE), *expect = NULL;
    if (r || __atomic_load_n(&none, __ATOMIC_RELAXED))
        return r;
    char text[64];
    if (!read_lib(text, sizeof text)) {
        __atomic_store_n(&none, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    if (!(r = strdup(text)))
        return NULL;
    if (!__atomic_compare_exchange_n(&published, &expect, r, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        free(r);
        return expect;
    }
    return r;
}
