/* SPDX-License-Identifier: MIT
 * The bounded view of a file on disk (lz_elfview.h). */
#include "elf/lz_elfview.h"
#include "elf/lz_elfverify.h"
#include "common/lz_tls.h"

#include <elf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int lz_elfview_fail(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int lz_elfview_fail(char *why, size_t n, const char *fmt, ...)
{
#ifdef LZ_ELF_NO_REASONS /* the audit module: no C library, no reasons asked for */
    (void)why, (void)n, (void)fmt;
#else
    if (why && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, n, fmt, ap);
        va_end(ap);
    }
#endif
    return -1;
}

int lz_elfview_pread(int fd, void *buf, size_t len, unsigned long long off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
        if (n <= 0)
            return -1;
        done += (size_t)n;
    }
    return 0;
}

/* The len bytes at off where one window holds them all, else NULL. */
static const unsigned char *in_window(const lz_elfview *v, unsigned long long off, size_t len)
{
    for (unsigned i = 0; i < v->nwin; i++) {
        unsigned long long wo = v->win_off[i];
        size_t wl = v->win_len[i];
        if (wl && off >= wo && len <= wl && off - wo <= wl - len)
            return v->win + (size_t)i * v->win_cap + (off - wo);
    }
    return NULL;
}

/* len bytes at off through the window; NULL when they are not in the file. */
const void *lz_elfview_at(lz_elfview *v, unsigned long long off, size_t len)
{
    if (len > v->win_cap || off > v->size || len > v->size - off)
        return NULL;
    const unsigned char *cached = in_window(v, off, len);
    if (cached)
        return cached;
    size_t want = v->win_cap;
    if (want > v->size - off)
        want = (size_t)(v->size - off);
    unsigned i = v->next;
    unsigned char *win = v->win + (size_t)i * v->win_cap;
    v->win_len[i] = 0;
    if (lz_elfview_pread(v->fd, win, want, off) != 0)
        return NULL;
    v->win_off[i] = off;
    v->win_len[i] = want;
    v->next = (i + 1) % v->nwin;
    return win;
}

/* len bytes at off into out: from the window when it holds them, else
 * read. */
int lz_elfview_fill(lz_elfview *v, void *out, size_t len, unsigned long long off)
{
    const unsigned char *cached = in_window(v, off, len);
    if (!cached)
        return lz_elfview_pread(v->fd, out, len, off);
    memcpy(out, cached, len);
    return 0;
}

/* The file offset of len bytes at address addr: inside one loadable
 * segment's file image, or (unsigned long long)-1. */
unsigned long long lz_elfview_offset(const lz_elfview *v, unsigned long long addr, unsigned long long len)
{
    for (unsigned i = 0; i < v->nph; i++) {
        const ElfW(Phdr) *p = &v->ph[i];
        if (p->p_type != PT_LOAD || addr < p->p_vaddr || addr - p->p_vaddr > p->p_filesz ||
            len > p->p_filesz - (addr - p->p_vaddr))
            continue;
        return p->p_offset + (addr - p->p_vaddr);
    }
    return (unsigned long long)-1;
}

/* len bytes at address addr copied into out: 0, or -1 when they are not
 * in one loadable segment of the file. */
int lz_elfview_copy(lz_elfview *v, unsigned long long addr, void *out, size_t len)
{
    unsigned long long off = lz_elfview_offset(v, addr, len);
    const void *p = off == (unsigned long long)-1 ? NULL : lz_elfview_at(v, off, len);
    if (!p)
        return -1;
    memcpy(out, p, len);
    return 0;
}

void lz_elfview_init(lz_elfview *v, int fd, unsigned long long size, unsigned char *win,
                     size_t win_cap, unsigned nwin)
{
    v->nwin = nwin;
    v->win = win;
    v->win_cap = win_cap;
    v->fd = fd;
    v->size = size;
    v->nph = 0;
    v->dynamic = NULL;
    for (unsigned i = 0; i < nwin; i++)
        v->win_len[i] = 0;
    v->next = 0;
}

int lz_elfview_head(lz_elfview *v, int *elf_class, unsigned *machine, char *why, size_t n)
{
    const unsigned char *id = lz_elfview_at(v, 0, EI_NIDENT + 4);
    if (!id || memcmp(id, ELFMAG, SELFMAG) != 0)
        return lz_elfview_fail(why, n, "not an ELF file");
    *elf_class = id[EI_CLASS];
    int big = id[EI_DATA] == ELFDATA2MSB;
    const unsigned char *h = id + EI_NIDENT; /* e_type, e_machine: same place in both classes */
    unsigned type = big ? (unsigned)h[0] << 8 | h[1] : (unsigned)h[1] << 8 | h[0];
    *machine = big ? (unsigned)h[2] << 8 | h[3] : (unsigned)h[3] << 8 | h[2];
    if (*elf_class != LZ_ELF_NATIVE_CLASS)
        return 1;
    if (type != ET_DYN)
        return lz_elfview_fail(why, n, "not a shared object (ELF type %u)", type);
    const void *ehp = lz_elfview_at(v, 0, sizeof v->eh);
    if (!ehp)
        return lz_elfview_fail(why, n, "truncated ELF: the header is cut short");
    /* What else the dynamic linker refuses in the header, in its words (a
     * file of another machine it passes over: said by the caller). */
    const char *words;
    if (lz_elf_verify(ehp, sizeof v->eh, &words) == LZ_LD_FAILS)
        return lz_elfview_fail(why, n, "%s", words);
    memcpy(&v->eh, ehp, sizeof v->eh);
    const ElfW(Ehdr) *eh = &v->eh;
    if (eh->e_phnum == 0 || eh->e_phentsize != sizeof(ElfW(Phdr)))
        return lz_elfview_fail(why, n, "malformed ELF: no program headers");
    if (eh->e_phnum > LZ_ELF_MAX_PHDRS)
        return lz_elfview_fail(why, n, "malformed ELF: %u program headers (more than %d)",
                    (unsigned)eh->e_phnum, LZ_ELF_MAX_PHDRS);
    unsigned long long end = eh->e_phoff + (unsigned long long)eh->e_phnum * sizeof(ElfW(Phdr));
    if (eh->e_phoff > v->size || end > v->size)
        return lz_elfview_fail(why, n, "truncated ELF: program headers end at byte %llu, the file has %llu",
                    end, v->size);
    return 0;
}

int lz_elfview_phdrs(lz_elfview *v, ElfW(Phdr) *ph, unsigned long long *tls, char *why, size_t n)
{
    const ElfW(Ehdr) *eh = &v->eh;
    v->ph = ph;
    size_t phbytes = eh->e_phnum * sizeof(ElfW(Phdr));
    const void *php = lz_elfview_at(v, eh->e_phoff, phbytes);
    if (php)
        memcpy(v->ph, php, phbytes);
    else if (lz_elfview_pread(v->fd, v->ph, phbytes, eh->e_phoff) != 0)
        return lz_elfview_fail(why, n, "truncated ELF: the program headers cannot be read");
    v->nph = eh->e_phnum;
    int loads = 0;
    /* The smallest page ld.so runs with (this code runs in the audit
     * module too, which has no libc): a kernel of larger pages refuses
     * more, and the dlopen of such a file then says so itself. */
    const unsigned long long page = 4096;
    unsigned long long mappable = (v->size + page - 1) & ~(page - 1);
    for (unsigned i = 0; i < v->nph; i++) {
        const ElfW(Phdr) *p = &v->ph[i];
        if (p->p_type == PT_DYNAMIC)
            v->dynamic = p;
        if (p->p_type == PT_TLS) /* as ld.so places it: the size rounded up to the alignment */
            *tls = lz_tls_block(p->p_memsz, p->p_align);
        if (p->p_type != PT_LOAD)
            continue;
        loads++;
        /* ld.so's words (dl-load.c): it maps each segment at its offset */
        if ((p->p_vaddr - p->p_offset) & (page - 1))
            return lz_elfview_fail(why, n, "ELF load command address/offset not page-aligned");
        /* what mmap would map a whole page past the end of the file: SIGBUS
         * on first touch (the rest of the last page reads as zeros) */
        if (p->p_offset > mappable || p->p_filesz > mappable - p->p_offset)
            return lz_elfview_fail(why, n, "truncated ELF: a loadable segment ends at byte %llu, the file has %llu",
                        (unsigned long long)p->p_offset + p->p_filesz, v->size);
        if (p->p_filesz > p->p_memsz)
            return lz_elfview_fail(why, n, "malformed ELF: a loadable segment is larger in the file than in memory");
    }
    if (!loads)
        return lz_elfview_fail(why, n, "malformed ELF: no loadable segment");
    if (!v->dynamic || v->dynamic->p_filesz < sizeof(ElfW(Dyn)))
        return lz_elfview_fail(why, n, "no dynamic segment (not a dynamically loadable object)");
    if (v->dynamic->p_offset > v->size || v->dynamic->p_filesz > v->size - v->dynamic->p_offset)
        return lz_elfview_fail(why, n, "truncated ELF: the dynamic segment ends past the end of the file");
    return 0;
}


size_t lz_elfview_dynamic(lz_elfview *v, ElfW(Dyn) *buf, size_t max)
{
    size_t len = v->dynamic->p_filesz;
    if (len > max * sizeof *buf)
        len = max * sizeof *buf;
    len -= len % sizeof *buf;
    if (lz_elfview_fill(v, buf, len, v->dynamic->p_offset) != 0)
        return 0;
    return len / sizeof *buf;
}

void lz_elfview_tags(const ElfW(Dyn) *dyn, size_t count, lz_elftags *t)
{
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < count && dyn[i].d_tag != DT_NULL; i++) {
        unsigned long long val = dyn[i].d_un.d_val;
        switch (dyn[i].d_tag) {
        case DT_STRTAB: t->strtab = val, t->has_strtab = 1; break;
        case DT_STRSZ: t->strsz = val; break;
        case DT_SYMTAB: t->symtab = val, t->has_symtab = 1; break;
        case DT_SYMENT: t->syment = val; break;
        case DT_HASH: t->hash = val; break;
        case DT_GNU_HASH: t->gnu_hash = val; break;
        case DT_VERNEED: t->verneed = val, t->has_verneed = 1; break;
        case DT_VERNEEDNUM: t->verneednum = val; break;
        case DT_SONAME: t->soname = val, t->has_soname = 1; break;
        default: break;
        }
    }
}

unsigned lz_elf_own_machine(void)
{
#if defined(__x86_64__)
    return EM_X86_64;
#elif defined(__aarch64__)
    return EM_AARCH64;
#elif defined(__i386__)
    return EM_386;
#elif defined(__powerpc64__)
    return EM_PPC64;
#elif defined(__s390x__)
    return EM_S390;
#elif defined(__riscv)
    return EM_RISCV;
#elif defined(__arm__)
    return EM_ARM;
#else
    return EM_NONE;
#endif
}
