/* SPDX-License-Identifier: MIT
 * The candidate's facts as the dynamic linker reads them. Why not libelf:
 * libelf reads sections, which a loadable file need not have (ld.so never
 * reads them), and loading libelf (and libz) costs a first call more than the
 * whole 10 % it may add to the dlopen it guards (docs/concepts/performance.md). The
 * few structures read here are the ones ld.so itself trusts; every offset and
 * length is checked against the file before it is used. */
#include "elf/lz_elffile.h"
#include "elf/lz_elfview.h"
#include "elf/lz_gnuhash.h"
#include "elf/lz_version.h"

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>


/* src into out, cut to fit (no stdio on a probe that succeeds). */
static void copy_string(char *out, size_t size, const char *src)
{
    size_t n = strnlen(src, size - 1);
    memcpy(out, src, n);
    out[n] = '\0';
}

/* The 32-bit word at file offset off (of a table already placed in the file). */
static int read_word(lz_elfview *v, unsigned long long off, uint32_t *out)
{
    const void *p = lz_elfview_at(v, off, 4);
    if (!p)
        return -1;
    memcpy(out, p, 4);
    return 0;
}

/* How many dynamic symbols there are: the hash table knows (DT_HASH's
 * nchain, or the end of the last GNU hash chain), as it does for ld.so. */
static long long symbol_count(lz_elfview *v, const lz_elftags *t)
{
    uint32_t w, head[4];
    if (t->hash) /* nbucket, nchain */
        return lz_elfview_copy(v, t->hash, head, 8) == 0 ? (long long)head[1] : -1;
    if (!t->gnu_hash)
        return 0;
    if (lz_elfview_copy(v, t->gnu_hash, head, sizeof head))
        return -1;
    uint32_t nbuckets = head[0], symoffset = head[1], bloom = head[2];
    if (nbuckets == 0 || nbuckets > (1u << 24) || bloom > (1u << 24))
        return -1;
    unsigned long long buckets = t->gnu_hash + 16 + (unsigned long long)bloom * sizeof(ElfW(Addr));
    unsigned long long boff = lz_elfview_offset(v, buckets, 4ull * nbuckets);
    if (boff == (unsigned long long)-1)
        return -1;
    /* The buckets a window's worth at a time, not a word each: a library
     * of a thousand names has hundreds. */
    uint32_t last = 0;
    size_t per = v->win_cap / 4;
    for (uint32_t b = 0; b < nbuckets;) {
        size_t n = nbuckets - b < per ? nbuckets - b : per;
        const unsigned char *p = lz_elfview_at(v, boff + 4ull * b, 4 * n);
        if (!p)
            return -1;
        for (size_t k = 0; k < n; k++) {
            memcpy(&w, p + 4 * k, 4);
            if (w > last)
                last = w;
        }
        b += (uint32_t)n;
    }
    if (last < symoffset)
        return symoffset;
    /* the chain that starts last runs to the end of the table; bounded, so a
     * hostile chain without its end bit costs at most a few million reads */
    unsigned long long chains = buckets + 4ull * nbuckets;
    unsigned long long coff = lz_elfview_offset(v, chains + 4ull * (last - symoffset), 4);
    for (unsigned long long i = last; coff != (unsigned long long)-1 && i < LZ_ELF_MAX_SYMS; i++) {
        if (read_word(v, coff + 4ull * (i - last), &w))
            return -1;
        if (w & 1)
            return (long long)i + 1;
    }
    return -1;
}

/* The string at index at of the dynamic string table: in strings where the
 * table was copied, else read through the window into buf (cut to size - 1
 * bytes, as a copy of the table would be cut by its reader). */
static const char *read_str(lz_elfview *v, const lz_elftags *t, unsigned long long soff, const char *strings,
                          unsigned long long at, char *buf, size_t size)
{
    if (at >= t->strsz)
        return "";
    if (strings)
        return strings + at;
    size_t len = size - 1;
    if (len > t->strsz - at)
        len = (size_t)(t->strsz - at);
    const void *p = lz_elfview_at(v, soff + at, len);
    if (!p)
        return "";
    memcpy(buf, p, len);
    buf[len] = '\0';
    return buf;
}

/* The newest GLIBC_x.y among the versions the file needs. */
static void read_verneed(lz_elfview *v, const lz_elftags *t, unsigned long long soff, const char *strings,
                            lz_elffile *d)
{
    unsigned long long addr = t->verneed;
    char buf[64];
    for (unsigned long long i = 0; i < t->verneednum && i < 256; i++) {
        ElfW(Verneed) vn;
        if (lz_elfview_copy(v, addr, &vn, sizeof vn))
            return;
        unsigned long long aux = addr + vn.vn_aux;
        for (unsigned k = 0; k < vn.vn_cnt && k < 256; k++) {
            ElfW(Vernaux) a;
            if (lz_elfview_copy(v, aux, &a, sizeof a))
                return;
            const char *name = read_str(v, t, soff, strings, a.vna_name, buf, sizeof buf);
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

/* The symbol table as read_symbols and answer read it. */
typedef struct file_symtab {
    unsigned long long off;  /* file offset of symbol 0 */
    long long count;
    unsigned long long soff; /* file offset of the string table */
} file_symtab;

/* Where the symbols lie, checked (count 0: none to read). */
static int locate_symbols(lz_elfview *v, const lz_elftags *t, file_symtab *st, char *why, size_t n)
{
    long long count = symbol_count(v, t);
    st->count = 0;
    if (count < 0)
        return lz_elfview_fail(why, n, "malformed ELF: the dynamic hash table is cut short");
    if (count == 0 || !t->has_symtab)
        return 0;
    if (count > LZ_ELF_MAX_SYMS)
        return lz_elfview_fail(why, n, "malformed ELF: %lld dynamic symbols (more than %d)", count, LZ_ELF_MAX_SYMS);
    if (t->syment && t->syment != sizeof(ElfW(Sym)))
        return lz_elfview_fail(why, n, "malformed ELF: dynamic symbols of %llu bytes", t->syment);
    unsigned long long bytes = (unsigned long long)count * sizeof(ElfW(Sym));
    st->off = lz_elfview_offset(v, t->symtab, bytes);
    if (bytes > LZ_ELF_MAX_TABLE || st->off == (unsigned long long)-1)
        return lz_elfview_fail(why, n, "malformed ELF: the dynamic symbols lie outside the file");
    st->count = count;
    return 0;
}

/* Symbol i, or -1 when it cannot be read. */
static int read_sym(lz_elfview *v, const file_symtab *st, long long i, ElfW(Sym) *sym)
{
    const void *sp = lz_elfview_at(v, st->off + (unsigned long long)i * sizeof *sym, sizeof *sym);
    if (!sp)
        return -1;
    memcpy(sym, sp, sizeof *sym);
    return 0;
}

static int read_symbols(lz_elfview *v, const lz_elftags *t, const file_symtab *st, lz_elffile *d, char *why,
                           size_t n)
{
    if (!st->count)
        return 0;
    d->names = malloc((size_t)st->count * sizeof *d->names);
    d->imports = malloc((size_t)st->count * sizeof *d->imports);
    if (!d->names || !d->imports)
        return lz_elfview_fail(why, n, "out of memory");
    /* through the window, a page of symbols at a time: no copy of the table */
    for (long long i = 0; i < st->count; i++) {
        ElfW(Sym) sym;
        if (read_sym(v, st, i, &sym))
            return lz_elfview_fail(why, n, "truncated ELF: the dynamic symbols cannot be read");
        if (sym.st_shndx != SHN_UNDEF && sym.st_name && sym.st_name < t->strsz)
            d->names[d->nnames++] = d->strings + sym.st_name;
        else if (sym.st_name && sym.st_name < t->strsz && ELF64_ST_BIND(sym.st_info) == STB_GLOBAL)
            d->imports[d->nimports++] = d->strings + sym.st_name;
    }
    return 0;
}

/* DT_NEEDED, DT_RPATH and DT_RUNPATH, as strings of the table read whole. */
static int read_paths(const ElfW(Dyn) *dyn, size_t count, unsigned long long strsz, lz_elffile *d,
                         char *why, size_t n)
{
    if (!(d->needed = malloc((count + 1) * sizeof *d->needed)))
        return lz_elfview_fail(why, n, "out of memory");
    for (size_t i = 0; i < count && dyn[i].d_tag != DT_NULL; i++) {
        unsigned long long off = dyn[i].d_un.d_val;
        if (dyn[i].d_tag == DT_FLAGS_1)
            d->flags_1 = dyn[i].d_un.d_val;
        const char *tag = dyn[i].d_tag == DT_NEEDED ? "DT_NEEDED" : dyn[i].d_tag == DT_RPATH ? "DT_RPATH"
                        : dyn[i].d_tag == DT_RUNPATH ? "DT_RUNPATH" : NULL;
        /* ld.so reads these strings at start: one outside the table is a
         * crash there, never a name to leave out. */
        if (tag && off >= strsz)
            return lz_elfview_fail(why, n, "%s points outside the dynamic string table (offset %llu, table "
                                           "%llu bytes): the dynamic linker cannot use this file", tag, off, strsz);
        if (!tag)
            continue;
        const char *s = d->strings + off;
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
static int symbol_is(lz_elfview *v, const lz_elftags *t, const file_symtab *st, long long i, const char *name,
                     size_t len)
{
    ElfW(Sym) sym;
    if (i >= st->count || read_sym(v, st, i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_name ||
        sym.st_name >= t->strsz || len > t->strsz - sym.st_name)
        return 0;
    size_t have = len < t->strsz - sym.st_name ? len + 1 : len;
    const unsigned char *s = lz_elfview_at(v, st->soff + sym.st_name, have);
    return s && memcmp(s, name, len) == 0 && (have == len || s[len] == '\0');
}

/* A GNU hash lookup (lz_gnuhash.h) in the file, through the view. */
struct file_chain {
    lz_elfview *v;
    const lz_elftags *t;
    const file_symtab *st;
    const char *name;
    size_t len;
    unsigned long long words; /* address past the Bloom filter */
};

static int file_chain_word(void *ctx, unsigned long long k, uint32_t *out)
{
    struct file_chain *c = ctx;
    return lz_elfview_copy(c->v, c->words + 4ull * k, out, 4);
}

static int file_chain_is(void *ctx, unsigned long long i)
{
    struct file_chain *c = ctx;
    return symbol_is(c->v, c->t, c->st, (long long)i, c->name, c->len);
}

/* 1 when the file defines the dynamic symbol name, found as ld.so finds a
 * name: through its hash table (DT_GNU_HASH, else DT_HASH), so a probe
 * asked two or three names reads a few words of the file for each, not
 * every name it exports. Every step is bounded by the symbol count. */
static int answer(lz_elfview *v, const lz_elftags *t, const file_symtab *st, const char *name)
{
    size_t len = strlen(name);
    uint32_t head[4], w;
    if (!st->count)
        return 0;
    if (t->gnu_hash) {
        if (lz_elfview_copy(v, t->gnu_hash, head, sizeof head))
            return 0;
        struct file_chain c = {v, t, st, name, len,
                          t->gnu_hash + 16 + (unsigned long long)head[2] * sizeof(ElfW(Addr))};
        return lz_gnuhash_find(head[0], head[1], name, file_chain_word, file_chain_is, &c,
                               (unsigned long long)st->count) >= 0;
    }
    if (lz_elfview_copy(v, t->hash, head, 8) || !head[0])
        return 0;
    unsigned long h = 0;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
        h = (h << 4) + *c;
        unsigned long g = h & 0xf0000000ul;
        h ^= g >> 24;
        h &= ~g;
    }
    unsigned long long buckets = t->hash + 8, chains = buckets + 4ull * head[0];
    if (lz_elfview_copy(v, buckets + 4ull * (h % head[0]), &w, 4))
        return 0;
    for (long long steps = 0; w != STN_UNDEF && steps < st->count; steps++) {
        if (symbol_is(v, t, st, w, name, len))
            return 1;
        if (w >= head[1] || lz_elfview_copy(v, chains + 4ull * w, &w, 4))
            return 0;
    }
    return 0;
}

int lz_elffile_read(int fd, off_t size, const char *const *ask, lz_elffile *d, char *why, size_t whysize)
{
    memset(d, 0, sizeof *d);
    /* On the heap and not zeroed: a first call pays for each fresh page it
     * writes, and freed heap pages are what the dlopen after it reuses. The
     * program headers get an allocation of their size (a few hundred
     * bytes), not an array of the most a file may have. */
    struct {
        unsigned char win[LZ_ELF_WINDOWS][LZ_ELF_WINDOW];
        lz_elfview v;
    } *pv = malloc(sizeof *pv);
    if (!pv)
        return lz_elfview_fail(why, whysize, "out of memory");
    lz_elfview *v = &pv->v;
    lz_elfview_init(v, fd, (unsigned long long)size, pv->win[0], LZ_ELF_WINDOW, LZ_ELF_WINDOWS);
    ElfW(Dyn) *dyn = NULL;
    ElfW(Phdr) *ph = NULL;
    int rc = -1;
    int head = lz_elfview_head(v, &d->elf_class, &d->machine, why, whysize);
    if (head != 0) {
        rc = head > 0 ? 0 : -1;
        goto out;
    }
    if (!(ph = malloc(v->eh.e_phnum * sizeof *ph))) {
        lz_elfview_fail(why, whysize, "out of memory");
        goto out;
    }
    if (lz_elfview_phdrs(v, ph, &d->tls, why, whysize) != 0)
        goto out;
    d->native = 1;
    size_t count = 0;
    size_t ndyn = v->dynamic->p_filesz / sizeof *dyn;
    if (ndyn > LZ_ELF_MAX_DYN)
        ndyn = LZ_ELF_MAX_DYN;
    if (!(dyn = malloc(ndyn * sizeof *dyn)) || !(count = lz_elfview_dynamic(v, dyn, ndyn))) {
        lz_elfview_fail(why, whysize, dyn ? "truncated ELF: the dynamic segment cannot be read" : "out of memory");
        goto out;
    }
    lz_elftags t;
    lz_elfview_tags(dyn, count, &t);
    if (!t.has_strtab) {
        lz_elfview_fail(why, whysize, "malformed ELF: no dynamic string table");
        goto out;
    }
    file_symtab st;
    st.soff = lz_elfview_offset(v, t.strtab, t.strsz);
    if (t.strsz == 0 || t.strsz > LZ_ELF_MAX_TABLE || st.soff == (unsigned long long)-1) {
        lz_elfview_fail(why, whysize, "malformed ELF: the dynamic string table lies outside the file");
        goto out;
    }
    /* A small table is read whole, once: the names asked about lie in it in
     * any order, and a window per name is a read and a fresh page each. */
    if (ask && t.strsz <= LZ_ELF_WINDOW)
        (void)lz_elfview_at(v, st.soff, t.strsz);
    if (!ask) { /* every name: the table copied, the names point into it */
        if (!(d->strings = malloc(t.strsz + 1))) {
            lz_elfview_fail(why, whysize, "out of memory");
            goto out;
        }
        if (lz_elfview_fill(v, d->strings, t.strsz, st.soff) != 0) {
            lz_elfview_fail(why, whysize, "truncated ELF: the dynamic string table cannot be read");
            goto out;
        }
        d->strings[t.strsz] = '\0';
    }
    if (t.has_soname && t.soname < t.strsz && d->strings)
        copy_string(d->soname, sizeof d->soname, d->strings + t.soname);
    else if (t.has_soname)
        read_str(v, &t, st.soff, NULL, t.soname, d->soname, sizeof d->soname);
    /* symbols before versions: the hash table usually lies in the window
     * the header was read through, and the versions past the symbols */
    rc = locate_symbols(v, &t, &st, why, whysize);
    if (rc == 0 && !ask)
        rc = read_symbols(v, &t, &st, d, why, whysize);
    if (rc == 0 && !ask)
        rc = read_paths(dyn, count, t.strsz, d, why, whysize);
    for (unsigned i = 0; rc == 0 && ask && ask[i] && i < 64; i++)
        if (answer(v, &t, &st, ask[i]))
            d->answers |= 1ull << i;
    if (rc == 0 && t.has_verneed)
        read_verneed(v, &t, st.soff, d->strings, d);
out:
    free(dyn);
    free(ph);
    free(pv);
    if (rc != 0)
        lz_elffile_free(d);
    return rc;
}

void lz_elffile_free(lz_elffile *d)
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
