/* SPDX-License-Identifier: MIT
 * A loaded object's dynamic section, read in memory, bounds-checked
 * (lz_elfmem.h). */
#include "elf/lz_elfmem.h"
#include "elf/lz_gnuhash.h"

#include <elf.h>
#include <string.h>

/* [addr, addr + len) within a loadable segment: its memory, or, where
 * file_only, the bytes it takes from the file. */
static int within(uintptr_t base, const ElfW(Phdr) *ph, size_t phnum, uintptr_t addr, size_t len, int file_only)
{
    for (size_t i = 0; i < phnum; i++) {
        uintptr_t lo = base + ph[i].p_vaddr;
        size_t n = file_only && ph[i].p_filesz < ph[i].p_memsz ? ph[i].p_filesz : ph[i].p_memsz;
        if (ph[i].p_type == PT_LOAD && addr >= lo && len <= n && addr - lo <= n - len)
            return 1;
    }
    return 0;
}

int lz_elfmem_mapped(uintptr_t base, const ElfW(Phdr) *ph, size_t phnum, uintptr_t addr,
                     size_t len)
{
    return within(base, ph, phnum, addr, len, 0);
}

static int in(const lz_elfmem *v, uintptr_t addr, size_t len)
{
    return within(v->base, v->ph, v->phnum, addr, len, 0);
}

/* [addr, addr + len) within the bytes a loadable segment takes from the
 * file, where every linker puts the hash table, the symbols and their
 * versions: a hash chain followed through a segment's zero-filled rest (a
 * crafted file's gigabytes of it) would run for as long as that. */
static int in_file(const lz_elfmem *v, uintptr_t addr, size_t len)
{
    return within(v->base, v->ph, v->phnum, addr, len, 1);
}

/* glibc relocates these entries in place where the dynamic section is
 * writable (the architectures built here) and leaves them relative
 * elsewhere: a value below the load address is relative. */
static uintptr_t at(const lz_elfmem *v, ElfW(Addr) p)
{
    return p && p < v->base ? v->base + p : p;
}

int lz_elfmem_view(lz_elfmem *v, uintptr_t base, const ElfW(Phdr) *ph, size_t phnum)
{
    memset(v, 0, sizeof *v);
    v->base = base;
    v->ph = ph;
    v->phnum = phnum;
    for (size_t i = 0; i < phnum; i++)
        if (ph[i].p_type == PT_DYNAMIC) {
            v->dyn = (const ElfW(Dyn) *)(base + ph[i].p_vaddr);
            v->ndyn = ph[i].p_memsz / sizeof(ElfW(Dyn));
        }
    if (!v->dyn || !in(v, (uintptr_t)v->dyn, v->ndyn * sizeof(ElfW(Dyn))))
        return 0;
    uintptr_t strtab = 0, symtab = 0, hash = 0, gnu_hash = 0;
    for (size_t i = 0; i < v->ndyn && v->dyn[i].d_tag != DT_NULL; i++) {
        const ElfW(Dyn) *d = &v->dyn[i];
        switch (d->d_tag) {
        case DT_STRTAB: strtab = at(v, d->d_un.d_ptr); break;
        case DT_STRSZ: v->strsz = d->d_un.d_val; break;
        case DT_SYMTAB: symtab = at(v, d->d_un.d_ptr); break;
        case DT_HASH: hash = at(v, d->d_un.d_ptr); break;
        case DT_GNU_HASH: gnu_hash = at(v, d->d_un.d_ptr); break;
        case DT_VERSYM: v->versym = (const ElfW(Half) *)at(v, d->d_un.d_ptr); break;
        default: break;
        }
    }
    if (!strtab || !v->strsz || !in(v, strtab, v->strsz))
        return 0;
    v->strtab = (const char *)strtab;
    /* The symbol count: DT_HASH's nchain; with only DT_GNU_HASH, the
     * undefined symbols all come before symoffset (they are never hashed). */
    if (gnu_hash && in(v, gnu_hash, 16))
        v->gnu_hash = (const uint32_t *)gnu_hash;
    if (symtab && hash && in(v, hash, 8))
        v->nsyms = ((const uint32_t *)hash)[1];
    else if (symtab && v->gnu_hash)
        v->nsyms = v->gnu_hash[1];
    if (v->nsyms && in_file(v, symtab, v->nsyms * sizeof(ElfW(Sym))))
        v->symtab = (const ElfW(Sym) *)symtab;
    else
        v->nsyms = 0;
    if (symtab && !v->symtab && v->gnu_hash)
        v->symtab = (const ElfW(Sym) *)symtab; /* no undefined symbol: each lookup checks */
    return 1;
}

const char *lz_elfmem_str(const lz_elfmem *v, size_t off)
{
    for (size_t i = off; i < v->strsz; i++)
        if (!v->strtab[i])
            return v->strtab + off;
    return NULL;
}

const char *lz_elfmem_dynstr(const lz_elfmem *v, long tag)
{
    for (size_t i = 0; i < v->ndyn && v->dyn[i].d_tag != DT_NULL; i++)
        if (v->dyn[i].d_tag == tag)
            return lz_elfmem_str(v, v->dyn[i].d_un.d_val);
    return NULL;
}

unsigned long lz_elfmem_dynval(const lz_elfmem *v, long tag)
{
    for (size_t i = 0; i < v->ndyn && v->dyn[i].d_tag != DT_NULL; i++)
        if (v->dyn[i].d_tag == tag)
            return (unsigned long)v->dyn[i].d_un.d_val;
    return 0;
}

const char *lz_elfmem_needed_version(const lz_elfmem *v, size_t i)
{
    if (!v->versym || !in(v, (uintptr_t)&v->versym[i], sizeof v->versym[i]))
        return NULL;
    ElfW(Half) index = v->versym[i] & 0x7fff;
    uintptr_t need = 0;
    size_t count = 0;
    for (size_t k = 0; k < v->ndyn && v->dyn[k].d_tag != DT_NULL; k++) {
        if (v->dyn[k].d_tag == DT_VERNEED)
            need = at(v, v->dyn[k].d_un.d_ptr);
        else if (v->dyn[k].d_tag == DT_VERNEEDNUM)
            count = v->dyn[k].d_un.d_val;
    }
    /* 0 and 1 are no version and the base version: nothing asked. */
    for (size_t n = 0; index > 1 && need && n < count && in(v, need, sizeof(ElfW(Verneed))); n++) {
        const ElfW(Verneed) *vn = (const ElfW(Verneed) *)need;
        uintptr_t aux = need + vn->vn_aux;
        for (size_t a = 0; a < vn->vn_cnt && in(v, aux, sizeof(ElfW(Vernaux))); a++) {
            const ElfW(Vernaux) *va = (const ElfW(Vernaux) *)aux;
            if (va->vna_other == index)
                return lz_elfmem_str(v, va->vna_name);
            if (!va->vna_next)
                break;
            aux += va->vna_next;
        }
        if (!vn->vn_next)
            break;
        need += vn->vn_next;
    }
    return NULL;
}

const char *lz_elfmem_soname(const lz_elfmem *v)
{
    return lz_elfmem_dynstr(v, DT_SONAME);
}

/* a and b equal, read no further than the first NUL of either. */
static int same(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

int lz_elfmem_needs(const lz_elfmem *v, const char *soname)
{
    for (size_t i = 0; i < v->ndyn && v->dyn[i].d_tag != DT_NULL; i++) {
        const char *n;
        if (v->dyn[i].d_tag == DT_NEEDED && (n = lz_elfmem_str(v, v->dyn[i].d_un.d_val)) &&
            same(n, soname))
            return 1;
    }
    return 0;
}

/* A lookup through the GNU hash table (lz_gnuhash.h), every word and
 * symbol checked to lie in the object's segments before it is read. */
struct mem_chain {
    const lz_elfmem *v;
    const char *name;
    int (*want)(const lz_elfmem *v, uint32_t i);
    const uint32_t *words; /* past the Bloom filter */
    uintptr_t at;          /* its address (base + st_value); 0: any */
};

/* A chain word is read only where its symbol lies in the segments too:
 * the chain ends at the first symbol that does not, whatever its hash. */
static int mem_chain_word(void *ctx, unsigned long long k, uint32_t *out)
{
    const struct mem_chain *c = ctx;
    const uint32_t *w = c->words + k;
    uint32_t nbuckets = c->v->gnu_hash[0], symoffset = c->v->gnu_hash[1];
    if (!in_file(c->v, (uintptr_t)w, 4) ||
        (k >= nbuckets && !in_file(c->v, (uintptr_t)&c->v->symtab[symoffset + (k - nbuckets)], sizeof(ElfW(Sym)))))
        return -1;
    *out = *w;
    return 0;
}

static int mem_chain_is(void *ctx, unsigned long long i)
{
    const struct mem_chain *c = ctx;
    const ElfW(Sym) *s = &c->v->symtab[i];
    const char *n;
    return in_file(c->v, (uintptr_t)s, sizeof *s) && s->st_shndx != SHN_UNDEF && s->st_name &&
           (n = lz_elfmem_str(c->v, s->st_name)) && same(n, c->name) &&
           (!c->at || c->v->base + s->st_value == c->at) && (!c->want || c->want(c->v, (uint32_t)i));
}

/* The first symbol named name in its hash chain that want accepts (NULL:
 * every one), or NULL. */
static const ElfW(Sym) *chain_find_at(const lz_elfmem *v, const char *name,
                                      int (*want)(const lz_elfmem *v, uint32_t i), uintptr_t at)
{
    const uint32_t *h = v->gnu_hash;
    if (!h || !v->symtab)
        return NULL;
    struct mem_chain c = {v, name, want, (const uint32_t *)((uintptr_t)(h + 4) + (uintptr_t)h[2] * sizeof(ElfW(Addr))), at};
    if (!h[0] || !in_file(v, (uintptr_t)c.words, (size_t)h[0] * 4)) /* every bucket in the segments */
        return NULL;
    long long i = lz_gnuhash_find(h[0], h[1], name, mem_chain_word, mem_chain_is, &c, 1ull << 32);
    return i < 0 ? NULL : &v->symtab[i];
}

static const ElfW(Sym) *chain_find(const lz_elfmem *v, const char *name,
                                   int (*want)(const lz_elfmem *v, uint32_t i))
{
    return chain_find_at(v, name, want, 0);
}

const ElfW(Sym) *lz_elfmem_lookup_at(const lz_elfmem *v, const char *name, uintptr_t at)
{
    return chain_find_at(v, name, NULL, at);
}

const ElfW(Sym) *lz_elfmem_lookup(const lz_elfmem *v, const char *name)
{
    return chain_find(v, name, NULL);
}

static int not_hidden(const lz_elfmem *v, uint32_t i);

const ElfW(Sym) *lz_elfmem_lookup_default(const lz_elfmem *v, const char *name)
{
    return chain_find(v, name, not_hidden);
}

/* Symbol i is unversioned or at a version not hidden (an unreadable
 * version entry counts as hidden). */
static int not_hidden(const lz_elfmem *v, uint32_t i)
{
    const ElfW(Half) *e = v->versym ? v->versym + i : NULL;
    return !e || (in_file(v, (uintptr_t)e, sizeof *e) && !(*e & 0x8000));
}

int lz_elfmem_defines(const lz_elfmem *v, const char *name)
{
    return chain_find(v, name, not_hidden) != NULL;
}

/* 1 when a relocation of the object writes into [start, start + size), or
 * its tables cannot be read: there the bytes may hold an address, which
 * points into the object (a relative relocation) or names a symbol; only
 * bytes no relocation writes are the file's own, whatever becomes of the
 * object. Every kind counts: RELA, REL, the PLT's, packed relative (RELR,
 * decoded as ld.so decodes it). */
int lz_elfmem_relocated(const lz_elfmem *m, uintptr_t start, size_t size)
{
    const size_t w = sizeof(ElfW(Addr));
#define LZ_HITS(where) ((where) + w > start && (where) < start + size)
    static const long tables[][3] = {{DT_RELA, DT_RELASZ, sizeof(ElfW(Rela))},
                                     {DT_REL, DT_RELSZ, sizeof(ElfW(Rel))},
                                     {DT_JMPREL, DT_PLTRELSZ, 0},
                                     {DT_RELR, DT_RELRSZ, 0}};
    for (size_t t = 0; t < sizeof tables / sizeof *tables; t++) {
        uintptr_t p = lz_elfmem_dynval(m, tables[t][0]);
        size_t len = lz_elfmem_dynval(m, tables[t][1]), ent = (size_t)tables[t][2];
        p = at(m, p);
        if (!p || !len)
            continue;
        if (!in(m, p, len))
            return 1;
        if (tables[t][0] == DT_JMPREL)
            ent = lz_elfmem_dynval(m, DT_PLTREL) == DT_REL ? sizeof(ElfW(Rel)) : sizeof(ElfW(Rela));
        if (tables[t][0] == DT_RELR) {
            const ElfW(Addr) *e = (const ElfW(Addr) *)p;
            uintptr_t where = 0;
            for (size_t i = 0; i < len / w; i++) {
                if (!(e[i] & 1)) {
                    where = m->base + e[i];
                    if (LZ_HITS(where))
                        return 1;
                    where += w;
                    continue;
                }
                size_t k = 0;
                for (ElfW(Addr) bits = e[i] >> 1; bits; bits >>= 1, k++)
                    if ((bits & 1) && LZ_HITS(where + k * w))
                        return 1;
                where += (8 * w - 1) * w;
            }
            continue;
        }
        /* r_offset leads both Rel and Rela. */
        for (size_t off = 0; off + ent <= len; off += ent) {
            uintptr_t where = m->base + ((const ElfW(Rel) *)(p + off))->r_offset;
            if (LZ_HITS(where))
                return 1;
        }
    }
#undef LZ_HITS
    return 0;
}

const void *lz_elfmem_plain_value(const lz_elfmem *m, const char *name, size_t size)
{
    const ElfW(Sym) *sym = lz_elfmem_lookup_default(m, name);
    if (!sym || ELF64_ST_TYPE(sym->st_info) != STT_OBJECT || sym->st_size != size)
        return NULL;
    uintptr_t where = m->base + sym->st_value;
    return in(m, where, size) && !lz_elfmem_relocated(m, where, size) ? (const void *)where : NULL;
}
