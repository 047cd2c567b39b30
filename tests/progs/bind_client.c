/* SPDX-License-Identifier: MIT
 * Where this program's own calls of NCCL are bound (tests/test_real.py,
 * tests/test_debian.py; src/api/lz_bind.h). Linked to a shim with lazy
 * binding; each argument is one step, run in order:
 *   version       ncclGetVersion                  -> version=N
 *   errstr        ncclGetErrorString(ncclSuccess) -> errstr=TEXT
 *   lasterr       ncclGetLastError(NULL)          -> lasterr=TEXT
 *   count         ncclCommCount(NULL, &n)         -> count=RC
 *   missing       ncclCommWindowRegister (2.28)   -> missing=RC
 *   got:NAME      the file that this program's PLT slot for NAME points
 *                 into, as ld.so left it            -> got:NAME=FILE
 * A slot is read from the program's own relocations (DT_JMPREL), the
 * address found with dladdr: what the program's next call jumps to. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <nccl.h>
#include <stdio.h>
#include <string.h>

static ElfW(Addr) program_base;

static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    program_base = info->dlpi_addr;
    return 1;
}

/* A dynamic entry's address: ld.so rewrites some in place (x86-64), not all. */
static ElfW(Addr) dyn_addr(ElfW(Addr) v)
{
    return v < program_base ? v + program_base : v;
}

static const char *slot_file(const char *name)
{
    ElfW(Addr) jmprel = 0, symtab = 0, strtab = 0;
    size_t pltrelsz = 0;
    for (const ElfW(Dyn) *d = _DYNAMIC; d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_JMPREL)
            jmprel = dyn_addr(d->d_un.d_ptr);
        else if (d->d_tag == DT_PLTRELSZ)
            pltrelsz = d->d_un.d_val;
        else if (d->d_tag == DT_SYMTAB)
            symtab = dyn_addr(d->d_un.d_ptr);
        else if (d->d_tag == DT_STRTAB)
            strtab = dyn_addr(d->d_un.d_ptr);
    }
    const ElfW(Rela) *r = (const ElfW(Rela) *)jmprel;
    const ElfW(Sym) *syms = (const ElfW(Sym) *)symtab;
    for (size_t k = 0; jmprel && k < pltrelsz / sizeof *r; k++) {
        const char *sym = (const char *)strtab + syms[r[k].r_info >> 32].st_name;
        if (strcmp(sym, name) != 0)
            continue;
        void *target = *(void **)(program_base + r[k].r_offset);
        Dl_info di;
        return dladdr(target, &di) && di.dli_fname ? di.dli_fname : "(none)";
    }
    return "(no slot)";
}

int main(int argc, char **argv)
{
    dl_iterate_phdr(first_object, NULL);
    for (int a = 1; a < argc; a++) {
        const char *s = argv[a];
        if (strcmp(s, "version") == 0) {
            int v = 0;
            ncclResult_t rc = ncclGetVersion(&v);
            printf("version=%d rc=%d\n", v, (int)rc);
        } else if (strcmp(s, "errstr") == 0) {
            printf("errstr=%s\n", ncclGetErrorString(ncclSuccess));
        } else if (strcmp(s, "lasterr") == 0) {
            printf("lasterr=%s\n", ncclGetLastError(NULL));
        } else if (strcmp(s, "count") == 0) {
            int n = 0;
            printf("count=%d\n", (int)ncclCommCount(NULL, &n));
        } else if (strcmp(s, "missing") == 0) {
            ncclWindow_t w;
            printf("missing=%d\n", (int)ncclCommWindowRegister(NULL, NULL, 0, &w, 0));
        } else if (strncmp(s, "got:", 4) == 0) {
            printf("%s=%s\n", s, slot_file(s + 4));
        } else {
            fprintf(stderr, "unknown step %s\n", s);
            return 2;
        }
    }
    return 0;
}
