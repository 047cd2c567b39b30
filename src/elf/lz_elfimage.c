/* SPDX-License-Identifier: MIT
 * A library file's loadable segments, placed for reading (lz_elfimage.h). */
#include "elf/lz_elfimage.h"
#include "elf/lz_elfmem.h"
#include "elf/lz_elfverify.h"
#include "elf/lz_elfview.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file's segments, each where ld.so would put it relative to the
 * others, in one reservation (read-only, its bytes past a segment's file
 * size zero, as ld.so leaves them): *base the load address, *span the
 * reservation's size. NULL where it cannot be placed. */
static void *place(int fd, off_t file_size, const ElfW(Phdr) *ph, size_t phnum, uintptr_t *base,
                   size_t *span)
{
    uintptr_t page = (uintptr_t)getpagesize(), lo = UINTPTR_MAX, hi = 0;
    /* A whole page past the file's end would be a SIGBUS when read; the
     * rest of the last page reads as zeros, for ld.so too. */
    uint64_t mappable = ((uint64_t)file_size + page - 1) & ~(uint64_t)(page - 1);
    for (size_t i = 0; i < phnum; i++) {
        if (ph[i].p_type != PT_LOAD)
            continue;
        if (ph[i].p_filesz > ph[i].p_memsz || (ph[i].p_vaddr - ph[i].p_offset) % page ||
            ph[i].p_vaddr + ph[i].p_memsz < ph[i].p_vaddr || ph[i].p_offset > mappable ||
            ph[i].p_filesz > mappable - ph[i].p_offset)
            return NULL;
        lo = ph[i].p_vaddr < lo ? ph[i].p_vaddr : lo;
        hi = ph[i].p_vaddr + ph[i].p_memsz > hi ? ph[i].p_vaddr + ph[i].p_memsz : hi;
    }
    if (lo >= hi || hi - lo > UINTPTR_MAX - 2 * page)
        return NULL;
    lo &= ~(page - 1);
    *span = (size_t)((hi - lo + page - 1) & ~(page - 1));
    /* Read-only, so that a large .bss is charged nothing (ld.so maps it
     * writable, where it could fail first); mmap bounds the rest. */
    char *room = mmap(NULL, *span, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (room == MAP_FAILED)
        return NULL;
    *base = (uintptr_t)room - lo;
    for (size_t i = 0; i < phnum; i++) {
        if (ph[i].p_type != PT_LOAD || !ph[i].p_filesz)
            continue;
        uintptr_t start = (*base + ph[i].p_vaddr) & ~(page - 1);
        uintptr_t end = *base + ph[i].p_vaddr + ph[i].p_filesz;
        off_t off = (off_t)(ph[i].p_offset & ~(page - 1));
        if (mmap((void *)start, end - start, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, off) ==
            MAP_FAILED) {
            munmap(room, *span);
            return NULL;
        }
        /* The rest of the segment's last page is no part of it. */
        uintptr_t page_end = (end + page - 1) & ~(page - 1);
        memset((void *)end, 0, page_end - end);
    }
    mprotect(room, *span, PROT_READ);
    return room;
}

int lz_elfimage_value(const char *path, const char *name, void *out, size_t size)
{
    /* Without blocking: the file the search chose may have been replaced
     * by a FIFO since, and this runs with the dynamic linker's lock held. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return -1;
    ElfW(Ehdr) eh;
    ElfW(Phdr) *ph = NULL;
    struct stat sb;
    const char *words;
    int done = -1;
    /* Only a file ld.so would map (its open_verify, lz_elfverify.h), with
     * no more program headers than the search's probe reads. */
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
        lz_elf_verify((const unsigned char *)&eh, sizeof eh, &words) == LZ_LD_MAPS &&
        eh.e_phnum <= LZ_ELF_MAX_PHDRS && (ph = malloc(eh.e_phnum * sizeof *ph + 1)) &&
        pread(fd, ph, eh.e_phnum * sizeof *ph, (off_t)eh.e_phoff) == (ssize_t)(eh.e_phnum * sizeof *ph)) {
        uintptr_t base;
        size_t span;
        void *room = place(fd, sb.st_size, ph, eh.e_phnum, &base, &span);
        lz_elfmem m;
        const void *at;
        if (room && lz_elfmem_view(&m, base, ph, eh.e_phnum)) {
            done = 0;
            if ((at = lz_elfmem_plain_value(&m, name, size))) {
                memcpy(out, at, size);
                done = 1;
            }
        }
        if (room)
            munmap(room, span);
    }
    free(ph);
    close(fd);
    return done;
}
