/* SPDX-License-Identifier: MIT */
/* A loaded object read in memory (lz_memobj.h). */
#include "lz_memobj.h"

#include <elf.h>
#include <string.h>

void lz_mem_from_phdr(lz_mem_obj *o, const struct dl_phdr_info *info)
{
    o->base = info->dlpi_addr;
    o->ph = info->dlpi_phdr;
    o->phnum = info->dlpi_phnum;
    o->dyn = 0;
    o->viewed = 0;
    for (size_t i = 0; i < o->phnum; i++)
        if (o->ph[i].p_type == PT_DYNAMIC)
            o->dyn = (const ElfW(Dyn) *)(o->base + o->ph[i].p_vaddr);
}

/* Calls fn(type, desc, size, ctx) for each lazynccl note; returns what fn
 * returned first non-zero. */
static int each_note(const lz_mem_obj *o, int (*fn)(unsigned, const char *, size_t, void *), void *ctx)
{
    for (size_t i = 0; o->ph && i < o->phnum; i++) {
        int rc = o->ph[i].p_type != PT_NOTE ? 0
               : lz_note_each((const char *)(o->base + o->ph[i].p_vaddr), o->ph[i].p_memsz,
                              o->ph[i].p_align, fn, ctx);
        if (rc)
            return rc;
    }
    return 0;
}

/* NUL-separated names in desc: 1 when soname is one of them. */
static int runtime_loads(unsigned type, const char *desc, size_t size, void *ctx)
{
    const char *soname = ctx;
    if (type != LZ_NOTE_RUNTIME)
        return 0;
    for (size_t o = 0; o < size && desc[o];) {
        size_t len = strnlen(desc + o, size - o);
        if (len == strlen(soname) && memcmp(desc + o, soname, len) == 0)
            return 1;
        o += len + 1;
    }
    return 0;
}

int lz_mem_runtime_loads(const lz_mem_obj *o, const char *soname)
{
    return each_note(o, runtime_loads, (void *)soname);
}

struct box_query {
    const char *soname;
    lz_asked_box *box;
};

static int dropin_box(unsigned type, const char *desc, size_t size, void *ctx)
{
    struct box_query *q = ctx;
    int32_t off;
    size_t len;
    const char *name = type == LZ_NOTE_DROPIN ? lz_note_dropin_soname(desc, size, &len) : 0;
    if (!name || len != strlen(q->soname) || memcmp(name, q->soname, len) != 0)
        return 0;
    memcpy(&off, desc, sizeof off);
    q->box = (lz_asked_box *)(uintptr_t)(desc + off);
    return 1;
}

lz_asked_box *lz_mem_dropin_box(const lz_mem_obj *o, const char *soname)
{
    struct box_query q = {soname, 0};
    return each_note(o, dropin_box, &q) ? q.box : 0;
}

static const lz_elfmem *view(lz_mem_obj *o)
{
    if (!o->viewed)
        o->viewed = lz_elfmem_view(&o->view, o->base, o->ph, o->phnum) ? 1 : -1;
    return o->viewed > 0 ? &o->view : 0;
}

const char *lz_mem_soname(lz_mem_obj *o)
{
    const lz_elfmem *v = view(o);
    return v ? lz_elfmem_soname(v) : 0;
}

const char *lz_mem_dynstr(lz_mem_obj *o, long tag)
{
    const lz_elfmem *v = view(o);
    return v ? lz_elfmem_dynstr(v, tag) : 0;
}

unsigned long lz_mem_dynval(lz_mem_obj *o, long tag)
{
    const lz_elfmem *v = view(o);
    return v ? lz_elfmem_dynval(v, tag) : 0;
}

void *lz_mem_defined(lz_mem_obj *o, const char *name)
{
    const lz_elfmem *v = view(o);
    const ElfW(Sym) *s = v ? lz_elfmem_lookup(v, name) : 0;
    return s ? (void *)(o->base + s->st_value) : 0;
}
