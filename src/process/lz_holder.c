/* SPDX-License-Identifier: MIT
 * The loaded object holding an address, and what it says (lz_holder.h). */
#include "process/lz_holder.h"
#include "base/lz_dl.h"
#include "elf/lz_elfmem.h"
#include "process/lz_objects.h"

#include <link.h>
#include <stdint.h>
#include <string.h>

/* --- every name defined ----------------------------------------------------- */

struct defines_all {
    uintptr_t inside;
    const char *(*name)(const void *ctx, size_t i);
    const void *ctx;
    size_t n;
    int all;
};

static int defines_all_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct defines_all *q = data;
    lz_objview v;
    if (!lz_objects_mapped(info, q->inside, 1))
        return 0;
    q->all = lz_objects_view(info, &v) && v.m.gnu_hash;
    for (size_t i = 0; q->all && i < q->n; i++)
        q->all = lz_elfmem_defines(&v.m, q->name(q->ctx, i));
    return 1;
}

int lz_holder_defines_all(const void *inside, const char *(*name)(const void *ctx, size_t i),
                           const void *ctx, size_t n)
{
    struct defines_all q = {(uintptr_t)inside, name, ctx, n, 0};
    lz_dl_iterate_phdr(defines_all_cb, &q);
    return q.all;
}

struct lookup {
    uintptr_t addr;
    const char *name;
    void *found;
};

static int lookup_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct lookup *q = data;
    if (!lz_objects_mapped(info, q->addr, 1))
        return 0;
    lz_objview v;
    const ElfW(Sym) *s;
    if (lz_objects_view(info, &v) && (s = lz_elfmem_lookup_default(&v.m, q->name)) &&
        s->st_shndx != SHN_UNDEF &&
        (ELF64_ST_TYPE(s->st_info) == STT_FUNC || ELF64_ST_TYPE(s->st_info) == STT_OBJECT))
        q->found = (void *)(info->dlpi_addr + s->st_value);
    return 1;
}

void *lz_holder_lookup(const void *inside, const char *name)
{
    struct lookup q = {(uintptr_t)inside, name, NULL};
    lz_dl_iterate_phdr(lookup_cb, &q);
    return q.found;
}

/* --- the object holding an address ------------------------------------------ */

struct holder {
    uintptr_t addr;
    int outside; /* in a loaded object other than the C library and ld.so */
};

static int holder_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct holder *h = data;
    if (!lz_objects_mapped(info, h->addr, 1))
        return 0;
    const char *n = info->dlpi_name ? info->dlpi_name : "";
    h->outside = !strstr(n, "/libc.so") && !strstr(n, "/libdl.so") && !strstr(n, "/ld-linux") &&
                 !strstr(n, "/ld64.so");
    return 1;
}

int lz_holder_outside_c_library(const void *addr)
{
    struct holder h = {(uintptr_t)addr, 0};
    lz_dl_iterate_phdr(holder_cb, &h);
    return h.outside;
}

/* --- read-only after relocation ---------------------------------------------- */

struct relro {
    uintptr_t addr;
    int found;
};

static int relro_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct relro *q = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_GNU_RELRO && q->addr >= lo && q->addr - lo < ph->p_memsz)
            return q->found = 1;
    }
    return 0;
}

int lz_holder_relro(const void *addr)
{
    struct relro q = {.addr = (uintptr_t)addr};
    lz_dl_iterate_phdr(relro_cb, &q);
    return q.found;
}

