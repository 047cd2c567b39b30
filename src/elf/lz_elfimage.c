/* SPDX-License-Identifier: MIT
 * A library file's loadable segments, placed for reading (lz_elfimage.h). */
#include "elf/lz_elfimage.h"
#include "elf/lz_elfmem.h"
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
static void *place(int fd, const ElfW(Phdr) *ph, size_t phnum, uintptr_t *base, size_t *span)
{
    uintptr_t page = (uintptr_t)getpagesize(), lo = UINTPTR_MAX, hi = 0;
    /* The segments lie in the file and fit in memory (lz_elfview_phdrs
     * judged them); here, what placing needs: offset and address congruent
     * to this machine's page, and an end that does not wrap. */
    for (size_t i = 0; i < phnum; i++) {
        if (ph[i].p_type != PT_LOAD)
            continue;
        if ((ph[i].p_vaddr - ph[i].p_offset) % page || ph[i].p_vaddr + ph[i].p_memsz < ph[i].p_vaddr)
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
    struct {
        lz_elfview v;
        unsigned char win[LZ_ELF_WINDOW];
    } *file = malloc(sizeof *file);
    ElfW(Phdr) *ph = NULL;
    struct stat sb;
    int elf_class, done = -1;
    unsigned machine;
    unsigned long long tls;
    /* Only a file the search's probe reads as ld.so would (lz_elfview: its
     * open_verify, the program headers' bounds). */
    if (file && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
        lz_elfview_init(&file->v, fd, (unsigned long long)sb.st_size, file->win, LZ_ELF_WINDOW, 1);
        if (lz_elfview_head(&file->v, &elf_class, &machine, NULL, 0) == 0 && machine == lz_elf_own_machine() &&
            (ph = malloc(file->v.eh.e_phnum * sizeof *ph)) && lz_elfview_phdrs(&file->v, ph, &tls, NULL, 0) == 0) {
            uintptr_t base;
            size_t span;
            void *room = place(fd, ph, file->v.nph, &base, &span);
            lz_elfmem m;
            const void *at;
            if (room && lz_elfmem_view(&m, base, ph, file->v.nph)) {
                done = 0;
                if ((at = lz_elfmem_plain_value(&m, name, size))) {
                    memcpy(out, at, size);
                    done = 1;
                }
            }
            if (room)
                munmap(room, span);
        }
    }
    free(ph);
    free(file);
    close(fd);
    return done;
}
