/* SPDX-License-Identifier: MIT
 * Looking a soname up in /etc/ld.so.cache, as the dynamic linker does, so
 * that the file it would load can be probed first. Only the current format
 * ("glibc-ld.so.cache1.1") is read; anything else is "not found". */
#include "lz_ldcache.h"
#include "lz_pathlist.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
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

/* 1 when the string at off is want (n bytes and its NUL), inside the file:
 * compared in place, so an entry that differs costs a byte or two, not a
 * search for its end (hundreds of entries per lookup). */
static int key_is(const char *buf, size_t len, uint32_t off, const char *want, size_t n)
{
    if (off >= len || len - off <= n)
        return 0;
    const char *k = buf + off;
    size_t i = 0;
    while (i <= n && k[i] == want[i])
        i++;
    return i > n;
}

int lz_ldcache_lookup(const char *file, const char *soname, char *out, size_t size)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat sb;
    int found = 0;
    /* Mapped, not read: page-cache pages mapped in a few faults, where a
     * copy into the heap costs a fresh page each (microseconds apiece on a
     * virtual machine, for a file the first call reads once). */
    if (fstat(fd, &sb) != 0 || sb.st_size < (off_t)sizeof(struct cache_header) ||
        sb.st_size > (64 << 20)) {
        close(fd);
        return 0;
    }
    size_t len = (size_t)sb.st_size;
    const char *buf = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (buf == MAP_FAILED)
        return 0;
    struct cache_header h;
    memcpy(&h, buf, sizeof h);
    if (memcmp(h.magic, CACHE_MAGIC, sizeof h.magic) != 0 ||
        h.nlibs > (len - sizeof h) / sizeof(struct cache_entry))
        goto out;
    size_t n = strlen(soname);
    for (uint32_t i = 0; i < h.nlibs && !found; i++) {
        struct cache_entry e;
        memcpy(&e, buf + sizeof h + i * sizeof e, sizeof e);
        if ((e.flags & FLAG_TYPE_MASK) != FLAG_ELF_LIBC6)
            continue;
        if (FLAG_OWN_ARCH != -1 && (e.flags & FLAG_ARCH_MASK) != FLAG_OWN_ARCH)
            continue;
        const char *value;
        if (key_is(buf, len, e.key, soname, n) && (value = string_at(buf, len, e.value))) {
            found = lz_copy(out, size, value);
        }
    }
out:
    munmap((void *)buf, len);
    return found;
}
