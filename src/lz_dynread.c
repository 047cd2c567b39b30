/* SPDX-License-Identifier: MIT
 * The candidate's facts as the dynamic linker reads them. Why not libelf:
 * libelf reads sections, which a loadable file need not have (ld.so never
 * reads them), and loading libelf (and libz) costs a first call more than the
 * whole 10 % it may add to the dlopen it guards (docs/performance.md). The
 * few structures read here are the ones ld.so itself trusts; every offset and
 * length is checked against the file before it is used. */
#include "lz_dynread.h"
#include "lz_tls.h"

#include <elf.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    DR_MAX_PHDRS = 128,
    DR_MAX_DYN = 4096,                 /* dynamic entries read (64 KiB) */
    DR_MAX_TABLE = 256 << 20,          /* strings or symbols: a hostile file costs no more */
    DR_RUN_PATH_MAX = 1 << 20,         /* a DT_RPATH or DT_RUNPATH read alone */
    /* Bytes cached per read. Not more: a larger window saves system calls
     * (a 24 KiB one holds the whole head of NCCL, NVRTC and nvJitLink: one
     * pread for five) but writes more fresh heap pages than the dlopen after
     * a search reuses (measured: 4-5 more page faults per first call, where
     * the four reads saved cost about 15 us on this virtual machine). */
    DR_WINDOW = 4096,
    /* Windows kept: a probe's reads go back and forth between the hash
     * table (beside the header), the symbols and the strings; with one
     * window each return was a pread (ten for NCCL; seven with two
     * windows). A probe asks every name the process needs from the
     * library, whose symbols span two windows of NCCL's: with five windows
     * NCCL is read in five preads (eight with three). Each refill takes
     * the window filled longest ago. The price: a fresh heap page per
     * window in the first call, which on the machine measured cost about
     * what a pread saved does (docs/data/firstcall-2026-11-25-6e7f8b1.txt). */
    DR_WINDOWS = 5,
    DR_MAX_SYMS = 1 << 22,          /* the largest real libraries have < 300,000 */
};

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define DR_NATIVE_DATA ELFDATA2LSB
#else
#define DR_NATIVE_DATA ELFDATA2MSB
#endif
#define DR_NATIVE_CLASS (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)

/* The file's head, its loadable segments and its dynamic segment. */
typedef struct dr_view {
    int fd;
    unsigned long long size;
    ElfW(Ehdr) eh;
    unsigned nph;
    const ElfW(Phdr) *dynamic;
    /* a cache of file bytes for the scattered reads (hash, symbols,
     * strings, versions): DR_WINDOWS windows of win_cap bytes at win */
    unsigned char *win;
    size_t win_cap;
    unsigned long long win_off[DR_WINDOWS];
    size_t win_len[DR_WINDOWS];
    unsigned nwin;  /* windows at win (at most DR_WINDOWS) */
    unsigned next; /* the window the next refill takes */
    /* the program headers, e_phnum of them: storage the caller gives
     * (dr_read_phdrs), sized to the file, so that a probe's heap holds no
     * unused array (each fresh page of it a page fault) */
    ElfW(Phdr) *ph;
} dr_view;

/* src into out, cut to fit (no stdio on a probe that succeeds). */
static void dr_copy_string(char *out, size_t size, const char *src)
{
    size_t n = strnlen(src, size - 1);
    memcpy(out, src, n);
    out[n] = '\0';
}

static int dr_fail(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int dr_fail(char *why, size_t n, const char *fmt, ...)
{
#ifdef LZ_DYN_SONAME_ONLY /* the audit module: no C library, no reasons asked for */
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

static int dr_read_at(int fd, void *buf, size_t len, unsigned long long off)
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
static const unsigned char *dr_cached(const dr_view *v, unsigned long long off, size_t len)
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
static const void *dr_at(dr_view *v, unsigned long long off, size_t len)
{
    if (len > v->win_cap || off > v->size || len > v->size - off)
        return NULL;
    const unsigned char *cached = dr_cached(v, off, len);
    if (cached)
        return cached;
    size_t want = v->win_cap;
    if (want > v->size - off)
        want = (size_t)(v->size - off);
    unsigned i = v->next;
    unsigned char *win = v->win + (size_t)i * v->win_cap;
    v->win_len[i] = 0;
    if (dr_read_at(v->fd, win, want, off) != 0)
        return NULL;
    v->win_off[i] = off;
    v->win_len[i] = want;
    v->next = (i + 1) % v->nwin;
    return win;
}

/* len bytes at off into out: from the window when it holds them, else
 * read. */
static int dr_fill(dr_view *v, void *out, size_t len, unsigned long long off)
{
    const unsigned char *cached = dr_cached(v, off, len);
    if (!cached)
        return dr_read_at(v->fd, out, len, off);
    memcpy(out, cached, len);
    return 0;
}

/* The file offset of len bytes at address addr: inside one loadable
 * segment's file image, or (unsigned long long)-1. */
static unsigned long long dr_offset_of(const dr_view *v, unsigned long long addr, unsigned long long len)
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
static int dr_copy_at(dr_view *v, unsigned long long addr, void *out, size_t len)
{
    unsigned long long off = dr_offset_of(v, addr, len);
    const void *p = off == (unsigned long long)-1 ? NULL : dr_at(v, off, len);
    if (!p)
        return -1;
    memcpy(out, p, len);
    return 0;
}

/* Start a view of fd: only these fields are read before they are written
 * (the header, the program headers and the windows are filled as read).
 * win holds nwin windows (1 to DR_WINDOWS) of win_cap bytes. */
static void dr_view_init(dr_view *v, int fd, unsigned long long size, unsigned char *win,
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

/* The ELF header, checked; 1 for a file of another class or byte order
 * (d->elf_class and d->machine set), 0 for this process's, -1 rejected. */
static int dr_read_head(dr_view *v, lz_dyn *d, char *why, size_t n)
{
    const unsigned char *id = dr_at(v, 0, EI_NIDENT + 4);
    if (!id || memcmp(id, ELFMAG, SELFMAG) != 0)
        return dr_fail(why, n, "not an ELF file");
    d->elf_class = id[EI_CLASS];
    int big = id[EI_DATA] == ELFDATA2MSB;
    const unsigned char *h = id + EI_NIDENT; /* e_type, e_machine: same place in both classes */
    unsigned type = big ? (unsigned)h[0] << 8 | h[1] : (unsigned)h[1] << 8 | h[0];
    unsigned machine = big ? (unsigned)h[2] << 8 | h[3] : (unsigned)h[3] << 8 | h[2];
    d->machine = machine;
    if (d->elf_class != DR_NATIVE_CLASS || id[EI_DATA] != DR_NATIVE_DATA)
        return 1;
    if (type != ET_DYN)
        return dr_fail(why, n, "not a shared object (ELF type %u)", type);
    const void *ehp = dr_at(v, 0, sizeof v->eh);
    if (!ehp)
        return dr_fail(why, n, "truncated ELF: the header is cut short");
    memcpy(&v->eh, ehp, sizeof v->eh);
    const ElfW(Ehdr) *eh = &v->eh;
    if (eh->e_phnum == 0 || eh->e_phentsize != sizeof(ElfW(Phdr)))
        return dr_fail(why, n, "malformed ELF: no program headers");
    if (eh->e_phnum > DR_MAX_PHDRS)
        return dr_fail(why, n, "malformed ELF: %u program headers (more than %d)",
                    (unsigned)eh->e_phnum, DR_MAX_PHDRS);
    unsigned long long end = eh->e_phoff + (unsigned long long)eh->e_phnum * sizeof(ElfW(Phdr));
    if (eh->e_phoff > v->size || end > v->size)
        return dr_fail(why, n, "truncated ELF: program headers end at byte %llu, the file has %llu",
                    end, v->size);
    return 0;
}

/* The program headers into ph (e_phnum of them, as dr_read_head checked):
 * 0, or -1 with the reason. */
static int dr_read_phdrs(dr_view *v, ElfW(Phdr) *ph, lz_dyn *d, char *why, size_t n)
{
    const ElfW(Ehdr) *eh = &v->eh;
    v->ph = ph;
    size_t phbytes = eh->e_phnum * sizeof(ElfW(Phdr));
    const void *php = dr_at(v, eh->e_phoff, phbytes);
    if (php)
        memcpy(v->ph, php, phbytes);
    else if (dr_read_at(v->fd, v->ph, phbytes, eh->e_phoff) != 0)
        return dr_fail(why, n, "truncated ELF: the program headers cannot be read");
    v->nph = eh->e_phnum;
    int loads = 0;
    for (unsigned i = 0; i < v->nph; i++) {
        const ElfW(Phdr) *p = &v->ph[i];
        if (p->p_type == PT_DYNAMIC)
            v->dynamic = p;
        if (p->p_type == PT_TLS) /* as ld.so places it: the size rounded up to the alignment */
            d->tls = lz_tls_block(p->p_memsz, p->p_align);
        if (p->p_type != PT_LOAD)
            continue;
        loads++;
        /* what mmap would map past the end of the file: SIGBUS on first touch */
        if (p->p_offset > v->size || p->p_filesz > v->size - p->p_offset)
            return dr_fail(why, n, "truncated ELF: a loadable segment ends at byte %llu, the file has %llu",
                        (unsigned long long)p->p_offset + p->p_filesz, v->size);
        if (p->p_filesz > p->p_memsz)
            return dr_fail(why, n, "malformed ELF: a loadable segment is larger in the file than in memory");
    }
    if (!loads)
        return dr_fail(why, n, "malformed ELF: no loadable segment");
    if (!v->dynamic || v->dynamic->p_filesz < sizeof(ElfW(Dyn)))
        return dr_fail(why, n, "no dynamic segment (not a dynamically loadable object)");
    if (v->dynamic->p_offset > v->size || v->dynamic->p_filesz > v->size - v->dynamic->p_offset)
        return dr_fail(why, n, "truncated ELF: the dynamic segment ends past the end of the file");
    return 0;
}

/* The dynamic entries ld.so reads to name, bind and version an object. */
typedef struct dr_tags {
    unsigned long long strtab, strsz, symtab, syment, hash, gnu_hash, verneed, verneednum;
    unsigned long long soname;
    int has_strtab, has_soname, has_symtab, has_verneed;
} dr_tags;

static size_t dr_read_dynamic(dr_view *v, ElfW(Dyn) *buf, size_t max)
{
    size_t len = v->dynamic->p_filesz;
    if (len > max * sizeof *buf)
        len = max * sizeof *buf;
    len -= len % sizeof *buf;
    if (dr_fill(v, buf, len, v->dynamic->p_offset) != 0)
        return 0;
    return len / sizeof *buf;
}

static void dr_scan_tags(const ElfW(Dyn) *dyn, size_t count, dr_tags *t)
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

/* The 32-bit word at file offset off (of a table already placed in the file). */
static int dr_word(dr_view *v, unsigned long long off, uint32_t *out)
{
    const void *p = dr_at(v, off, 4);
    if (!p)
        return -1;
    memcpy(out, p, 4);
    return 0;
}

/* How many dynamic symbols there are: the hash table knows (DT_HASH's
 * nchain, or the end of the last GNU hash chain), as it does for ld.so. */
static long long dr_symbol_count(dr_view *v, const dr_tags *t)
{
    uint32_t w, head[4];
    if (t->hash) /* nbucket, nchain */
        return dr_copy_at(v, t->hash, head, 8) == 0 ? (long long)head[1] : -1;
    if (!t->gnu_hash)
        return 0;
    if (dr_copy_at(v, t->gnu_hash, head, sizeof head))
        return -1;
    uint32_t nbuckets = head[0], symoffset = head[1], bloom = head[2];
    if (nbuckets == 0 || nbuckets > (1u << 24) || bloom > (1u << 24))
        return -1;
    unsigned long long buckets = t->gnu_hash + 16 + (unsigned long long)bloom * sizeof(ElfW(Addr));
    unsigned long long boff = dr_offset_of(v, buckets, 4ull * nbuckets);
    if (boff == (unsigned long long)-1)
        return -1;
    uint32_t last = 0;
    for (uint32_t b = 0; b < nbuckets; b++) {
        if (dr_word(v, boff + 4ull * b, &w))
            return -1;
        if (w > last)
            last = w;
    }
    if (last < symoffset)
        return symoffset;
    /* the chain that starts last runs to the end of the table; bounded, so a
     * hostile chain without its end bit costs at most a few million reads */
    unsigned long long chains = buckets + 4ull * nbuckets;
    unsigned long long coff = dr_offset_of(v, chains + 4ull * (last - symoffset), 4);
    for (unsigned long long i = last; coff != (unsigned long long)-1 && i < DR_MAX_SYMS; i++) {
        if (dr_word(v, coff + 4ull * (i - last), &w))
            return -1;
        if (w & 1)
            return (long long)i + 1;
    }
    return -1;
}

/* The string at index at of the dynamic string table: in strings where the
 * table was copied, else read through the window into buf (cut to size - 1
 * bytes, as a copy of the table would be cut by its reader). */
static const char *dr_str(dr_view *v, const dr_tags *t, unsigned long long soff, const char *strings,
                          unsigned long long at, char *buf, size_t size)
{
    if (at >= t->strsz)
        return "";
    if (strings)
        return strings + at;
    size_t len = size - 1;
    if (len > t->strsz - at)
        len = (size_t)(t->strsz - at);
    const void *p = dr_at(v, soff + at, len);
    if (!p)
        return "";
    memcpy(buf, p, len);
    buf[len] = '\0';
    return buf;
}

/* The newest GLIBC_x.y among the versions the file needs. */
static void dr_read_verneed(dr_view *v, const dr_tags *t, unsigned long long soff, const char *strings,
                            lz_dyn *d)
{
    unsigned long long addr = t->verneed;
    char buf[64];
    for (unsigned long long i = 0; i < t->verneednum && i < 256; i++) {
        ElfW(Verneed) vn;
        if (dr_copy_at(v, addr, &vn, sizeof vn))
            return;
        unsigned long long aux = addr + vn.vn_aux;
        for (unsigned k = 0; k < vn.vn_cnt && k < 256; k++) {
            ElfW(Vernaux) a;
            if (dr_copy_at(v, aux, &a, sizeof a))
                return;
            const char *name = dr_str(v, t, soff, strings, a.vna_name, buf, sizeof buf);
            if (strncmp(name, "GLIBC_", 6) == 0 && name[6] >= '0' && name[6] <= '9' &&
                strlen(name + 6) < sizeof d->glibc && lz_version_cmp(name + 6, d->glibc) > 0)
                memcpy(d->glibc, name + 6, strlen(name + 6) + 1); /* fits: checked above */
            if (!a.vna_next)
                break;
            aux += a.vna_next;
        }
        if (!vn.vn_next)
            return;
        addr += vn.vn_next;
    }
}

/* The symbol table as dr_read_symbols and dr_answer read it. */
typedef struct dr_symtab {
    unsigned long long off;  /* file offset of symbol 0 */
    long long count;
    unsigned long long soff; /* file offset of the string table */
} dr_symtab;

/* Where the symbols lie, checked (count 0: none to read). */
static int dr_locate_symbols(dr_view *v, const dr_tags *t, dr_symtab *st, char *why, size_t n)
{
    long long count = dr_symbol_count(v, t);
    st->count = 0;
    if (count < 0)
        return dr_fail(why, n, "malformed ELF: the dynamic hash table is cut short");
    if (count == 0 || !t->has_symtab)
        return 0;
    if (count > DR_MAX_SYMS)
        return dr_fail(why, n, "malformed ELF: %lld dynamic symbols (more than %d)", count, DR_MAX_SYMS);
    if (t->syment && t->syment != sizeof(ElfW(Sym)))
        return dr_fail(why, n, "malformed ELF: dynamic symbols of %llu bytes", t->syment);
    unsigned long long bytes = (unsigned long long)count * sizeof(ElfW(Sym));
    st->off = dr_offset_of(v, t->symtab, bytes);
    if (bytes > DR_MAX_TABLE || st->off == (unsigned long long)-1)
        return dr_fail(why, n, "malformed ELF: the dynamic symbols lie outside the file");
    st->count = count;
    return 0;
}

/* Symbol i, or -1 when it cannot be read. */
static int dr_sym(dr_view *v, const dr_symtab *st, long long i, ElfW(Sym) *sym)
{
    const void *sp = dr_at(v, st->off + (unsigned long long)i * sizeof *sym, sizeof *sym);
    if (!sp)
        return -1;
    memcpy(sym, sp, sizeof *sym);
    return 0;
}

static int dr_read_symbols(dr_view *v, const dr_tags *t, const dr_symtab *st, lz_dyn *d, char *why,
                           size_t n)
{
    if (!st->count)
        return 0;
    d->names = malloc((size_t)st->count * sizeof *d->names);
    d->imports = malloc((size_t)st->count * sizeof *d->imports);
    if (!d->names || !d->imports)
        return dr_fail(why, n, "out of memory");
    /* through the window, a page of symbols at a time: no copy of the table */
    for (long long i = 0; i < st->count; i++) {
        ElfW(Sym) sym;
        if (dr_sym(v, st, i, &sym))
            return dr_fail(why, n, "truncated ELF: the dynamic symbols cannot be read");
        if (sym.st_shndx != SHN_UNDEF && sym.st_name && sym.st_name < t->strsz)
            d->names[d->nnames++] = d->strings + sym.st_name;
        else if (sym.st_name && sym.st_name < t->strsz && ELF64_ST_BIND(sym.st_info) == STB_GLOBAL)
            d->imports[d->nimports++] = d->strings + sym.st_name;
    }
    return 0;
}

/* DT_NEEDED, DT_RPATH and DT_RUNPATH, as strings of the table read whole. */
static int dr_read_paths(const ElfW(Dyn) *dyn, size_t count, unsigned long long strsz, lz_dyn *d,
                         char *why, size_t n)
{
    if (!(d->needed = malloc((count + 1) * sizeof *d->needed)))
        return dr_fail(why, n, "out of memory");
    for (size_t i = 0; i < count && dyn[i].d_tag != DT_NULL; i++) {
        unsigned long long off = dyn[i].d_un.d_val;
        const char *s = off < strsz ? d->strings + off : NULL;
        if (!s)
            continue;
        if (dyn[i].d_tag == DT_NEEDED)
            d->needed[d->nneeded++] = s;
        else if (dyn[i].d_tag == DT_RPATH)
            d->rpath = s;
        else if (dyn[i].d_tag == DT_RUNPATH)
            d->runpath = s;
    }
    return 0;
}

/* 1 when symbol i is defined and named name (len bytes), read as a copy of
 * the table would read it: the table's end counts as its last NUL. */
static int dr_sym_is(dr_view *v, const dr_tags *t, const dr_symtab *st, long long i, const char *name,
                     size_t len)
{
    ElfW(Sym) sym;
    if (i >= st->count || dr_sym(v, st, i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_name ||
        sym.st_name >= t->strsz || len > t->strsz - sym.st_name)
        return 0;
    size_t have = len < t->strsz - sym.st_name ? len + 1 : len;
    const unsigned char *s = dr_at(v, st->soff + sym.st_name, have);
    return s && memcmp(s, name, len) == 0 && (have == len || s[len] == '\0');
}

/* 1 when the file defines the dynamic symbol name, found as ld.so finds a
 * name: through its hash table (DT_GNU_HASH, else DT_HASH), so a probe
 * asked two or three names reads a few words of the file for each, not
 * every name it exports. Every step is bounded by the symbol count. */
static int dr_answer(dr_view *v, const dr_tags *t, const dr_symtab *st, const char *name)
{
    size_t len = strlen(name);
    uint32_t head[4], w;
    if (!st->count)
        return 0;
    if (t->gnu_hash) {
        if (dr_copy_at(v, t->gnu_hash, head, sizeof head))
            return 0;
        uint32_t nbuckets = head[0], symoffset = head[1], h = 5381;
        for (const unsigned char *c = (const unsigned char *)name; *c; c++)
            h = h * 33 + *c;
        unsigned long long buckets = t->gnu_hash + 16 + (unsigned long long)head[2] * sizeof(ElfW(Addr));
        unsigned long long chains = buckets + 4ull * nbuckets;
        if (!nbuckets || dr_copy_at(v, buckets + 4ull * (h % nbuckets), &w, 4) || w < symoffset)
            return 0;
        for (long long i = w; i < st->count; i++) {
            if (dr_copy_at(v, chains + 4ull * (unsigned long long)(i - symoffset), &w, 4))
                return 0;
            if ((w | 1) == (h | 1) && dr_sym_is(v, t, st, i, name, len))
                return 1;
            if (w & 1)
                return 0;
        }
        return 0;
    }
    if (dr_copy_at(v, t->hash, head, 8) || !head[0])
        return 0;
    unsigned long h = 0;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
        h = (h << 4) + *c;
        unsigned long g = h & 0xf0000000ul;
        h ^= g >> 24;
        h &= ~g;
    }
    unsigned long long buckets = t->hash + 8, chains = buckets + 4ull * head[0];
    if (dr_copy_at(v, buckets + 4ull * (h % head[0]), &w, 4))
        return 0;
    for (long long steps = 0; w != STN_UNDEF && steps < st->count; steps++) {
        if (dr_sym_is(v, t, st, w, name, len))
            return 1;
        if (w >= head[1] || dr_copy_at(v, chains + 4ull * w, &w, 4))
            return 0;
    }
    return 0;
}

int lz_dyn_read(int fd, off_t size, const char *const *ask, lz_dyn *d, char *why, size_t whysize)
{
    memset(d, 0, sizeof *d);
    /* On the heap and not zeroed: a first call pays for each fresh page it
     * writes, and freed heap pages are what the dlopen after it reuses. The
     * program headers get an allocation of their size (a few hundred
     * bytes), not an array of the most a file may have. */
    struct {
        unsigned char win[DR_WINDOWS][DR_WINDOW];
        dr_view v;
    } *pv = malloc(sizeof *pv);
    if (!pv)
        return dr_fail(why, whysize, "out of memory");
    dr_view *v = &pv->v;
    dr_view_init(v, fd, (unsigned long long)size, pv->win[0], DR_WINDOW, DR_WINDOWS);
    ElfW(Dyn) *dyn = NULL;
    ElfW(Phdr) *ph = NULL;
    int rc = -1;
    int head = dr_read_head(v, d, why, whysize);
    if (head != 0) {
        rc = head > 0 ? 0 : -1;
        goto out;
    }
    if (!(ph = malloc(v->eh.e_phnum * sizeof *ph))) {
        dr_fail(why, whysize, "out of memory");
        goto out;
    }
    if (dr_read_phdrs(v, ph, d, why, whysize) != 0)
        goto out;
    d->native = 1;
    size_t count = 0;
    size_t ndyn = v->dynamic->p_filesz / sizeof *dyn;
    if (ndyn > DR_MAX_DYN)
        ndyn = DR_MAX_DYN;
    if (!(dyn = malloc(ndyn * sizeof *dyn)) || !(count = dr_read_dynamic(v, dyn, ndyn))) {
        dr_fail(why, whysize, dyn ? "truncated ELF: the dynamic segment cannot be read" : "out of memory");
        goto out;
    }
    dr_tags t;
    dr_scan_tags(dyn, count, &t);
    if (!t.has_strtab) {
        dr_fail(why, whysize, "malformed ELF: no dynamic string table");
        goto out;
    }
    dr_symtab st;
    st.soff = dr_offset_of(v, t.strtab, t.strsz);
    if (t.strsz == 0 || t.strsz > DR_MAX_TABLE || st.soff == (unsigned long long)-1) {
        dr_fail(why, whysize, "malformed ELF: the dynamic string table lies outside the file");
        goto out;
    }
    if (!ask) { /* every name: the table copied, the names point into it */
        if (!(d->strings = malloc(t.strsz + 1))) {
            dr_fail(why, whysize, "out of memory");
            goto out;
        }
        if (dr_fill(v, d->strings, t.strsz, st.soff) != 0) {
            dr_fail(why, whysize, "truncated ELF: the dynamic string table cannot be read");
            goto out;
        }
        d->strings[t.strsz] = '\0';
    }
    if (t.has_soname && t.soname < t.strsz && d->strings)
        dr_copy_string(d->soname, sizeof d->soname, d->strings + t.soname);
    else if (t.has_soname)
        dr_str(v, &t, st.soff, NULL, t.soname, d->soname, sizeof d->soname);
    /* symbols before versions: the hash table usually lies in the window
     * the header was read through, and the versions past the symbols */
    rc = dr_locate_symbols(v, &t, &st, why, whysize);
    if (rc == 0 && !ask)
        rc = dr_read_symbols(v, &t, &st, d, why, whysize);
    if (rc == 0 && !ask)
        rc = dr_read_paths(dyn, count, t.strsz, d, why, whysize);
    for (unsigned i = 0; rc == 0 && ask && ask[i] && i < 64; i++)
        if (dr_answer(v, &t, &st, ask[i]))
            d->answers |= 1ull << i;
    if (rc == 0 && t.has_verneed)
        dr_read_verneed(v, &t, st.soff, d->strings, d);
out:
    free(dyn);
    free(ph);
    free(pv);
    if (rc != 0)
        lz_dyn_free(d);
    return rc;
}

void lz_dyn_free(lz_dyn *d)
{
    free(d->names);
    free(d->imports);
    free(d->needed);
    free(d->strings);
    d->names = d->imports = d->needed = NULL;
    d->strings = NULL;
    d->rpath = d->runpath = NULL;
    d->nnames = d->nimports = d->nneeded = 0;
}

/* The dynamic segment of an open file of this process's class, byte order
 * and machine, read onto the caller's stack (no malloc: the audit module
 * runs inside the dynamic linker): the number of entries, 0 when none. */
typedef struct dr_small {
    dr_view v;
    unsigned char win[DR_WINDOW]; /* one: its reads go forward */
    ElfW(Phdr) ph[DR_MAX_PHDRS];
    ElfW(Dyn) dyn[DR_MAX_DYN];
} dr_small;

static size_t dr_small_read(int fd, dr_small *s, dr_tags *t)
{
    lz_dyn d;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || sb.st_size <= 0)
        return 0;
    dr_view_init(&s->v, fd, (unsigned long long)sb.st_size, s->win, DR_WINDOW, 1);
    if (dr_read_head(&s->v, &d, NULL, 0) != 0 || d.machine != lz_dyn_own_machine() ||
        dr_read_phdrs(&s->v, s->ph, &d, NULL, 0) != 0)
        return 0;
    size_t count = dr_read_dynamic(&s->v, s->dyn, DR_MAX_DYN);
    dr_scan_tags(s->dyn, count, t);
    return t->has_strtab ? count : 0;
}

/* The string at offset at of the dynamic string table into out: 1 when it
 * fits whole. */
static int dr_small_string(int fd, dr_small *s, const dr_tags *t, unsigned long long at, char *out,
                           size_t size)
{
    if (at >= t->strsz || size < 2)
        return 0;
    size_t want = size - 1;
    if (want > t->strsz - at)
        want = (size_t)(t->strsz - at);
    unsigned long long off = dr_offset_of(&s->v, t->strtab + at, want);
    if (off == (unsigned long long)-1 || dr_read_at(fd, out, want, off) != 0)
        return 0;
    out[want] = '\0';
    return strnlen(out, want) < want || want == t->strsz - at;
}

int lz_dyn_soname(int fd, char *out, size_t size)
{
    dr_small s; /* on the stack: ~80 KiB */
    dr_tags t;
    return dr_small_read(fd, &s, &t) && t.has_soname && dr_small_string(fd, &s, &t, t.soname, out, size);
}

int lz_dyn_needed(int fd, void (*each)(void *ctx, const char *name), void *ctx)
{
    dr_small s;
    dr_tags t;
    size_t count = dr_small_read(fd, &s, &t);
    int n = 0;
    char name[256];
    for (size_t i = 0; i < count && s.dyn[i].d_tag != DT_NULL; i++)
        if (s.dyn[i].d_tag == DT_NEEDED &&
            dr_small_string(fd, &s, &t, s.dyn[i].d_un.d_val, name, sizeof name))
            each(ctx, name), n++;
    return n;
}

int lz_dyn_run_paths(int fd, char **rpath, char **runpath)
{
    /* On the heap: a first call's thread may have a small stack. */
    dr_small *s = malloc(sizeof *s);
    dr_tags t;
    size_t count = s ? dr_small_read(fd, s, &t) : 0;
    *rpath = *runpath = NULL;
    int ok = count > 0;
    for (size_t i = 0; i < count && s->dyn[i].d_tag != DT_NULL; i++) {
        char **out = s->dyn[i].d_tag == DT_RPATH ? rpath : s->dyn[i].d_tag == DT_RUNPATH ? runpath : NULL;
        unsigned long long at = s->dyn[i].d_un.d_val;
        if (!out || *out)
            continue;
        /* As long as the string table allows, within a bound a hostile
         * file cannot push past. */
        size_t size = at < t.strsz ? (size_t)(t.strsz - at) + 1 : 0;
        if (size > DR_RUN_PATH_MAX)
            size = DR_RUN_PATH_MAX;
        if (!size || !(*out = malloc(size)) || !dr_small_string(fd, s, &t, at, *out, size)) {
            free(*out);
            *out = NULL;
            ok = 0;
        }
    }
    free(s);
    if (!ok) {
        free(*rpath);
        free(*runpath);
        *rpath = *runpath = NULL;
    }
    return ok;
}

unsigned lz_dyn_own_machine(void)
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

int lz_dyn_native(int fd)
{
    ElfW(Ehdr) eh;
    return dr_read_at(fd, &eh, sizeof eh, 0) == 0 && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
           eh.e_ident[EI_CLASS] == DR_NATIVE_CLASS && eh.e_ident[EI_DATA] == DR_NATIVE_DATA &&
           eh.e_type == ET_DYN && eh.e_machine == lz_dyn_own_machine();
}

/* The decimal number at s (no locale tables: a first call touches as few
 * pages as it can); *end past it. */
static unsigned long dr_number(const char *s, const char **end)
{
    unsigned long v = 0;
    while (*s >= '0' && *s <= '9' && v < (~0UL - 9) / 10)
        v = v * 10 + (unsigned long)(*s++ - '0');
    while (*s >= '0' && *s <= '9')
        s++;
    *end = s;
    return v;
}

int lz_version_cmp(const char *a, const char *b)
{
    while (*a || *b) {
        const char *ea, *eb;
        unsigned long x = dr_number(a, &ea), y = dr_number(b, &eb);
        if (x != y)
            return x < y ? -1 : 1;
        a = *ea == '.' ? ea + 1 : ea;
        b = *eb == '.' ? eb + 1 : eb;
        if (ea == a && eb == b)
            break;
    }
    return 0;
}
