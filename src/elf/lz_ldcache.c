/* SPDX-License-Identifier: MIT
 * Looking a soname up in /etc/ld.so.cache, as the dynamic linker does, so
 * that the file it would load can be probed first. Only the current format
 * ("glibc-ld.so.cache1.1") is read; anything else is "not found". */
#include "elf/lz_ldcache.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_MAGIC "glibc-ld.so.cache1.1"
#define FLAG_ELF_LIBC6 0x0003
#define FLAG_TYPE_MASK 0x00ff
#define FLAG_ARCH_MASK 0xff00
#if defined(__x86_64__)
#define FLAG_OWN_ARCH 0x0300
#elif defined(__aarch64__)
#define FLAG_OWN_ARCH 0x0a00
#else
#define FLAG_OWN_ARCH (-1)
#endif

struct cache_header {
    char magic[sizeof CACHE_MAGIC - 1];
    uint32_t nlibs, len_strings;
    uint8_t flags, pad[3];
    uint32_t extension_offset, unused[3];
};

struct cache_entry {
    int32_t flags;
    uint32_t key, value, osversion;
    uint64_t hwcap;
};

/* The string at off, if it ends inside the file. */
static const char *string_at(const char *buf, size_t len, uint32_t off)
{
    return off < len && memchr(buf + off, '\0', len - off) ? buf + off : NULL;
}

/* The file as mapped, kept for the process: unmapping pages once read
 * costs a TLB shootdown, ten times the mapping and more than the rest of a
 * first call's lookup on a virtual machine. Checked against
 * the file on each lookup (ldconfig replaces it: a new inode); a stale one
 * is left mapped, never unmapped under a reader. Published atomically: no
 * lock, so nothing for fork() to find taken. */
static char *ldc_lookup(const char *buf, size_t len, const char *soname, lz_ldcache_hwcaps_fn hwcaps);

typedef struct mapped_cache {
    const char *buf;
    size_t len;
    dev_t dev;
    ino_t ino;
    struct timespec mtime;
} mapped_cache;

static mapped_cache *ldc_current LZ_STARTUP_DATA;

static int ldc_same_file(const mapped_cache *c, const struct stat *sb)
{
    return c && c->dev == sb->st_dev && c->ino == sb->st_ino && c->len == (size_t)sb->st_size &&
           c->mtime.tv_sec == sb->st_mtim.tv_sec && c->mtime.tv_nsec == sb->st_mtim.tv_nsec;
}

/* The mapping of the open file fd (stat sb), or NULL. *own: a mapping of
 * this lookup alone (another thread published one first), for the caller
 * to release. */
static const mapped_cache *ldc_map(int fd, const struct stat *sb, mapped_cache **own)
{
    mapped_cache *c = __atomic_load_n(&ldc_current, __ATOMIC_ACQUIRE);
    if (ldc_same_file(c, sb))
        return c;
    mapped_cache *fresh = malloc(sizeof *fresh);
    void *buf = fresh ? mmap(NULL, (size_t)sb->st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (buf == MAP_FAILED) {
        free(fresh);
        return NULL;
    }
    *fresh = (mapped_cache){buf, (size_t)sb->st_size, sb->st_dev, sb->st_ino, sb->st_mtim};
    if (__atomic_compare_exchange_n(&ldc_current, &c, fresh, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return fresh;
    /* Another thread published one first: theirs if it is this file, else
     * ours, for this lookup only. */
    if (ldc_same_file(c, sb)) {
        munmap(buf, fresh->len);
        free(fresh);
        return c;
    }
    *own = fresh;
    return fresh;
}

char *lz_ldcache_path(const char *file, const char *soname, lz_ldcache_hwcaps_fn hwcaps)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat sb;
    const mapped_cache *c = NULL;
    mapped_cache *own = NULL;
    /* fstat as glibc makes it, with an empty path of ours: glibc's own ""
     * lies in a page of its read-only data that nothing else of a first
     * call reads, and the kernel reading it there is a page fault. */
    if (fstatat(fd, "", &sb, AT_EMPTY_PATH) == 0 && sb.st_size >= (off_t)sizeof(struct cache_header) &&
        sb.st_size <= (64 << 20))
        c = ldc_map(fd, &sb, &own);
    close(fd);
    if (!c)
        return NULL;
    char *found = ldc_lookup(c->buf, c->len, soname, hwcaps);
    if (own) {
        munmap((void *)own->buf, own->len);
        free(own);
    }
    return found;
}

/* _dl_cache_libcmp(name, key at off): ld.so's order of the cache, runs of
 * digits compared as numbers; a key that runs off the file ends there. */
static int ldc_cmp(const char *buf, size_t len, uint32_t off, const char *name)
{
    const char *k = off < len ? buf + off : "", *end = off < len ? buf + len : k + 1;
#define KEY (k < end ? *k : '\0')
#define DIGIT(c) ((c) >= '0' && (c) <= '9')
    while (*name) {
        if (DIGIT(*name)) {
            if (!DIGIT(KEY))
                return 1;
            unsigned long a = 0, b = 0;
            while (DIGIT(*name))
                a = a * 10 + (unsigned long)(*name++ - '0');
            while (k < end && DIGIT(*k))
                b = b * 10 + (unsigned long)(*k++ - '0');
            if (a != b)
                return a < b ? -1 : 1;
        } else if (DIGIT(KEY)) {
            return -1;
        } else if (*name != KEY) {
            return (unsigned char)*name - (unsigned char)KEY;
        } else {
            name++, k++;
        }
    }
    return -(int)(unsigned char)KEY;
#undef DIGIT
#undef KEY
}

static struct cache_entry ldc_entry(const char *buf, uint32_t i)
{
    struct cache_entry e;
    memcpy(&e, buf + sizeof(struct cache_header) + (size_t)i * sizeof e, sizeof e);
    return e;
}

/* An entry from a glibc-hwcaps subdirectory (DL_CACHE_HWCAP_EXTENSION in
 * the high word, beside an ISA level's ten bits): the low word indexes the
 * extension's list of subdirectory names. */
#define HWCAP_EXTENSION_WORD 0x40000000u
#define HWCAP_ISA_LEVEL_MASK 0x3ffu
#define EXTENSION_MAGIC 0xeaa42174u
#define EXTENSION_TAG_GLIBC_HWCAPS 1u

static int ldc_named_hwcap(uint64_t hwcap)
{
    return ((uint32_t)(hwcap >> 32) & ~HWCAP_ISA_LEVEL_MASK) == HWCAP_EXTENSION_WORD;
}

/* The extension's list of glibc-hwcaps subdirectory names (string offsets)
 * into *off, *count: 1 when the extension is one ld.so reads (its
 * cache_extension_load): 4-aligned, every section inside the file, the
 * last section of the tag the one taken, the list 4-aligned and whole. */
static int ldc_hwcaps_list(const char *buf, size_t len, uint32_t ext, uint32_t *off, uint32_t *count)
{
    uint32_t head[2];
    *count = 0;
    if (ext == 0 || ext % 4 || ext > len || len - ext < sizeof head)
        return 0;
    memcpy(head, buf + ext, sizeof head);
    if (head[0] != EXTENSION_MAGIC || head[1] > (len - ext - sizeof head) / 16)
        return 0;
    int found = 0;
    for (uint32_t i = 0; i < head[1]; i++) {
        uint32_t sec[4]; /* tag, flags, offset, size */
        memcpy(sec, buf + ext + sizeof head + (size_t)i * sizeof sec, sizeof sec);
        if (sec[2] > len || sec[3] > len - sec[2])
            return 0;
        if (sec[0] == EXTENSION_TAG_GLIBC_HWCAPS)
            *off = sec[2], *count = sec[3], found = 1;
    }
    if (!found || *off % 4 || *count % 4)
        return 0;
    *count /= 4;
    return 1;
}

/* The place (1 best) of the entry's subdirectory in hwcaps, the
 * subdirectories ld.so searches, best first; 0 where it is not one of them
 * (ld.so passes the entry over). */
static unsigned ldc_hwcap_priority(const char *buf, size_t len, uint32_t ext, uint32_t index,
                                   const char *const *hwcaps)
{
    uint32_t list, count;
    if (!hwcaps || !hwcaps[0] || !ldc_hwcaps_list(buf, len, ext, &list, &count) || index >= count)
        return 0;
    uint32_t off;
    memcpy(&off, buf + list + (size_t)index * 4, sizeof off);
    const char *name = string_at(buf, len, off);
    for (unsigned k = 0; name && hwcaps[k]; k++)
        if (strcmp(name, hwcaps[k]) == 0)
            return k + 1;
    return 0;
}

/* An entry of a legacy hardware-capability subdirectory ld.so passes over
 * (glibc 2.36 and older read them; ldconfig records the subdirectory's bits
 * in hwcap): on x86-64 it takes only "x86_64" (bit 1) and "tls" (bit 63),
 * where the platform ("x86_64") is none of glibc's x86 platform names,
 * whose bits an entry of i686/, haswell/ ... carries. Elsewhere every
 * entry is taken. */
static int ldc_legacy_excluded(uint64_t hwcap)
{
#if defined(__x86_64__)
    return (hwcap & ~((1ull << 1) | (1ull << 63))) != 0;
#else
    (void)hwcap;
    return 0;
#endif
}

/* The entry for soname of this machine's C library that ld.so takes: its
 * path copied (malloc'd), or NULL. As ld.so does, a binary search (the
 * cache is sorted, descending in ldc_cmp's order: a scan of every entry was
 * most of a first call's lookup), back to the first entry of that name, then on
 * through its entries: those of glibc-hwcaps subdirectories come first, and
 * the one whose subdirectory comes first in hwcaps wins; else the first
 * other one ld.so takes. (The ISA level an entry may carry is not compared.) */
static char *ldc_lookup(const char *buf, size_t len, const char *soname, lz_ldcache_hwcaps_fn hwcaps)
{
    struct cache_header h;
    memcpy(&h, buf, sizeof h);
    if (memcmp(h.magic, CACHE_MAGIC, sizeof h.magic) != 0 ||
        h.nlibs > (len - sizeof h) / sizeof(struct cache_entry))
        return NULL;
    uint32_t lo = 0, hi = h.nlibs, at = h.nlibs;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = ldc_cmp(buf, len, ldc_entry(buf, mid).key, soname);
        if (c == 0) {
            at = mid;
            break;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (at == h.nlibs)
        return NULL;
    while (at > 0 && ldc_cmp(buf, len, ldc_entry(buf, at - 1).key, soname) == 0)
        at--;
    const char *best = NULL;
    unsigned best_priority = 0;
    for (; at < h.nlibs; at++) {
        struct cache_entry e = ldc_entry(buf, at);
        if (ldc_cmp(buf, len, e.key, soname) != 0)
            break;
        /* ld.so's _dl_cache_check_flags: exactly this machine's C library. */
        if (FLAG_OWN_ARCH == -1 ? (e.flags & FLAG_TYPE_MASK) != FLAG_ELF_LIBC6
                                : e.flags != (FLAG_ELF_LIBC6 | FLAG_OWN_ARCH))
            continue;
        const char *value;
        if (!(value = string_at(buf, len, e.value)) || strlen(value) >= PATH_MAX)
            continue;
        if (!ldc_named_hwcap(e.hwcap)) {
            if (best)
                break;
            if (ldc_legacy_excluded(e.hwcap))
                continue;
            best = value;
            break;
        }
        unsigned p = hwcaps ? ldc_hwcap_priority(buf, len, h.extension_offset, (uint32_t)e.hwcap, hwcaps())
                            : 0;
        if (p && (!best || p < best_priority))
            best = value, best_priority = p;
    }
    return best ? strdup(best) : NULL;
}
