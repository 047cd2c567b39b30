/* SPDX-License-Identifier: MIT
 * The candidate probe: read a few pages of a file with libelf and decide
 * whether it can serve, without loading it (loading runs constructors and
 * maps hundreds of megabytes). libelf itself is reached through the lazy
 * internal shim generated from stubs/libelf.toml (lz_elf_* functions). */
#include "lz_probe.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef LZ_HAVE_LIBELF
#include "libelf_shim.h"
#endif

static int reject(lz_probe *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int reject(lz_probe *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->reason, sizeof p->reason, fmt, ap);
    va_end(ap);
    return LZ_PROBE_REJECTED;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int lz_probe_exports(const lz_probe *p, const char *name)
{
    return p->names && bsearch(&name, p->names, p->nnames, sizeof *p->names, by_name) != NULL;
}

const char *lz_machine_name(unsigned m)
{
    switch (m) {
    case EM_X86_64: return "x86-64";
    case EM_386: return "i386";
    case EM_AARCH64: return "AArch64";
    case EM_ARM: return "ARM";
    case EM_PPC64: return "PowerPC64";
    case EM_S390: return "s390";
    case EM_RISCV: return "RISC-V";
    default: return "unknown";
    }
}

const char *lz_shim_marker(const lz_lib *lib, char *buf, size_t size)
{
    snprintf(buf, size, "%s_load", lib->shim);
    return buf;
}

void lz_soname_list(const lz_lib *lib, char *out, size_t size)
{
    size_t o = 0;
    out[0] = '\0';
    for (const char *const *s = lib->sonames; *s && o < size; s++)
        o += (size_t)snprintf(out + o, size - o, "%s%s", s == lib->sonames ? "" : " or ", *s);
}

void lz_probe_free(lz_probe *p)
{
    for (size_t i = 0; i < p->nnames; i++)
        free(p->names[i]);
    free(p->names);
    p->names = NULL;
    p->nnames = 0;
}

#ifdef LZ_HAVE_LIBELF
/* This process's machine, as compiled (not dladdr: it takes the dynamic
 * linker's lock, which a search must never wait for outside lz_ld.c). */
static unsigned own_machine(void)
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

static int add_name(lz_probe *p, size_t *cap, const char *name)
{
    if (p->nnames == *cap) {
        size_t n = *cap ? *cap * 2 : 256;
        char **grown = realloc(p->names, n * sizeof *grown);
        if (!grown)
            return -1;
        p->names = grown;
        *cap = n;
    }
    size_t len = strcspn(name, "@");
    char *copy = strndup(name, len);
    if (!copy)
        return -1;
    p->names[p->nnames++] = copy;
    return 0;
}

/* "2.38" < "2.41": compare dotted version numbers. */
static int version_cmp(const char *a, const char *b)
{
    while (*a || *b) {
        char *ea, *eb;
        unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
        if (x != y)
            return x < y ? -1 : 1;
        a = *ea == '.' ? ea + 1 : ea;
        b = *eb == '.' ? eb + 1 : eb;
        if (ea == a && eb == b)
            break;
    }
    return 0;
}

/* Keep the newest GLIBC_x.y version the file needs (DT_VERNEED). */
static void read_verneed(Elf *e, const GElf_Shdr *sh, Elf_Data *data, lz_probe *p)
{
    size_t off = 0;
    for (size_t i = 0; i < sh->sh_info && off < data->d_size; i++) {
        GElf_Verneed vn;
        if (!lz_gelf_getverneed(data, (int)off, &vn))
            return;
        size_t aoff = off + vn.vn_aux;
        for (unsigned k = 0; k < vn.vn_cnt && aoff < data->d_size; k++) {
            GElf_Vernaux aux;
            if (!lz_gelf_getvernaux(data, (int)aoff, &aux))
                return;
            const char *name = lz_elf_strptr(e, sh->sh_link, aux.vna_name);
            if (name && strncmp(name, "GLIBC_", 6) == 0 && name[6] >= '0' && name[6] <= '9' &&
                strlen(name + 6) < sizeof p->glibc && version_cmp(name + 6, p->glibc) > 0)
                snprintf(p->glibc, sizeof p->glibc, "%s", name + 6);
            if (!aux.vna_next)
                break;
            aoff += aux.vna_next;
        }
        if (!vn.vn_next)
            return;
        off += vn.vn_next;
    }
}

/* Collect SONAME and defined dynamic symbols from the section table. */
static int read_dynamic(Elf *e, lz_probe *p)
{
    size_t cap = 0;
    for (Elf_Scn *scn = lz_elf_nextscn(e, NULL); scn; scn = lz_elf_nextscn(e, scn)) {
        GElf_Shdr sh;
        if (!lz_gelf_getshdr(scn, &sh))
            return reject(p, "malformed ELF section header: %s", lz_elf_errmsg(-1));
        if (sh.sh_type != SHT_DYNAMIC && sh.sh_type != SHT_DYNSYM &&
            sh.sh_type != SHT_GNU_verneed)
            continue;
        Elf_Data *data = lz_elf_getdata(scn, NULL);
        if (data && sh.sh_type == SHT_GNU_verneed) {
            read_verneed(e, &sh, data, p);
            continue;
        }
        if (!data)
            return reject(p, "malformed ELF (%s section): %s",
                          sh.sh_type == SHT_DYNSYM ? "dynamic symbol" : "dynamic",
                          lz_elf_errmsg(-1));
        size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < n; i++) {
            if (sh.sh_type == SHT_DYNAMIC) {
                GElf_Dyn dyn;
                if (!lz_gelf_getdyn(data, (int)i, &dyn))
                    break;
                if (dyn.d_tag == DT_SONAME) {
                    const char *s = lz_elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
                    snprintf(p->soname, sizeof p->soname, "%s", s ? s : "");
                }
            } else {
                GElf_Sym sym;
                if (!lz_gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
                    continue;
                const char *s = lz_elf_strptr(e, sh.sh_link, sym.st_name);
                if (s && *s && add_name(p, &cap, s) != 0)
                    return reject(p, "out of memory");
            }
        }
    }
    if (p->names)
        qsort(p->names, p->nnames, sizeof *p->names, by_name);
    return LZ_PROBE_OK;
}

/* Read the facts of an open ELF: class, machine, SONAME, exports. */
static int read_elf(Elf *e, off_t size, lz_probe *p)
{
    if (lz_elf_kind(e) != ELF_K_ELF)
        return reject(p, "not an ELF file");
    p->elf_class = lz_gelf_getclass(e);
    GElf_Ehdr eh;
    if (!lz_gelf_getehdr(e, &eh))
        return reject(p, "malformed ELF header: %s", lz_elf_errmsg(-1));
    p->machine = eh.e_machine;
    if (eh.e_type != ET_DYN)
        return reject(p, "not a shared object (ELF type %u)", (unsigned)eh.e_type);
    unsigned long long end = eh.e_shoff + (unsigned long long)eh.e_shnum * eh.e_shentsize;
    if (eh.e_shoff == 0 || end > (unsigned long long)size)
        return reject(p, "truncated or stripped ELF: section headers end at byte %llu, "
                         "the file has %lld", end, (long long)size);
    return read_dynamic(e, p);
}

static int judge(const lz_lib *lib, lz_probe *p)
{
    int want = sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32;
    if (p->elf_class != want)
        return reject(p, "ELF class %s, this process is %s",
                      p->elf_class == ELFCLASS32 ? "32-bit"
                      : p->elf_class == ELFCLASS64 ? "64-bit" : "invalid",
                      want == ELFCLASS64 ? "64-bit" : "32-bit");
    unsigned mine = own_machine();
    if (p->machine != mine)
        return reject(p, "ELF machine %u (%s), this process is %u (%s)", p->machine,
                      lz_machine_name(p->machine), mine, lz_machine_name(mine));
    if (!p->soname[0])
        return reject(p, "no SONAME (want %s)", lib->sonames[0]);
    int known = 0;
    for (const char *const *s = lib->sonames; *s; s++)
        known |= strcmp(*s, p->soname) == 0;
    for (const lz_unsupported *u = lib->unsupported; !known && u && u->soname; u++)
        if (strcmp(u->soname, p->soname) == 0)
            return reject(p, "%s, not supported by this shim (SONAME %s)", u->what, p->soname);
    if (!known) {
        char names[512];
        lz_soname_list(lib, names, sizeof names);
        return reject(p, "SONAME %s is not %s", p->soname, names);
    }
    const char *have = gnu_get_libc_version();
    if (p->glibc[0] && version_cmp(p->glibc, have) > 0)
        return reject(p, "needs GLIBC_%s, this process has %s", p->glibc, have);
    char marker[128];
    if (lz_probe_exports(p, lz_shim_marker(lib, marker, sizeof marker)))
        return reject(p, "a lazynccl shim (drop-in), not the real library");
    for (const char *const *r = lib->required; *r; r++)
        if (!lz_probe_exports(p, *r))
            return reject(p, "does not export %s", *r);
    return LZ_PROBE_OK;
}
#endif

/* Open path for reading as ELF; LZ_PROBE_OK with *fd and *size set. */
#ifdef LZ_HAVE_LIBELF
/* Why libelf could not be had: its published failure report, read from its
 * state. The probe never calls into the loader (the loader calls the probe). */
static const char *libelf_failure(void)
{
    const lz_msg *m = __atomic_load_n(&lz_lib_libelf.st->fail_msg, __ATOMIC_ACQUIRE);
    return m ? m->text : "libelf could not be loaded";
}
#endif

static int open_elf(const char *path, lz_probe *p, int *fd, off_t *size)
{
    memset(p, 0, sizeof *p);
    if (strlen(path) >= PATH_MAX)
        return reject(p, "path longer than PATH_MAX (%d)", PATH_MAX);
    /* stat first and open without blocking: a FIFO named like the library
     * must be rejected, not waited on. */
    struct stat sb;
    if (stat(path, &sb) != 0) {
        int err = errno;
        if (err == ENOENT && lstat(path, &sb) == 0)
            return reject(p, "a dangling symbolic link");
        return reject(p, "%s", strerror(err));
    }
    if (!S_ISREG(sb.st_mode))
        return reject(p, S_ISDIR(sb.st_mode) ? "is a directory" : "not a regular file");
    *fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (*fd < 0)
        return reject(p, "%s", strerror(errno));
    if (fstat(*fd, &sb) != 0) {
        int err = errno;
        close(*fd);
        return reject(p, "%s", strerror(err));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(*fd);
        return reject(p, S_ISDIR(sb.st_mode) ? "is a directory" : "not a regular file");
    }
    *size = sb.st_size;
    p->dev = sb.st_dev;
    p->ino = sb.st_ino;
#ifdef LZ_HAVE_LIBELF
    if (lz_elf_version(EV_CURRENT) == EV_NONE) {
        close(*fd);
        snprintf(p->reason, sizeof p->reason, "libelf unavailable, so loaded to check: %.400s",
                 libelf_failure());
        return LZ_PROBE_UNAVAILABLE;
    }
    return LZ_PROBE_OK;
#else
    close(*fd);
    snprintf(p->reason, sizeof p->reason, "built without libelf, so loaded to check");
    return LZ_PROBE_UNAVAILABLE;
#endif
}

static int probe(const lz_lib *lib, const char *path, lz_probe *p)
{
    int fd = -1;
    off_t size = 0;
    int rc = open_elf(path, p, &fd, &size);
    if (rc != LZ_PROBE_OK)
        return rc;
#ifdef LZ_HAVE_LIBELF
    /* ELF_C_READ, not _MMAP: a truncated file must give an error, not SIGBUS. */
    Elf *e = lz_elf_begin(fd, ELF_C_READ, NULL);
    if (!e)
        rc = reject(p, "not readable as ELF: %s", lz_elf_errmsg(-1));
    else {
        rc = read_elf(e, size, p);
        if (rc == LZ_PROBE_OK && lib)
            rc = judge(lib, p);
        lz_elf_end(e);
    }
#else
    (void)lib;
#endif
    close(fd);
    if (rc != LZ_PROBE_OK)
        lz_probe_free(p);
    return rc;
}

int lz_probe_file(const lz_lib *lib, const char *path, lz_probe *p)
{
    return probe(lib, path, p);
}

int lz_probe_read(const char *path, lz_probe *p)
{
    return probe(NULL, path, p);
}

int lz_probe_rodata_string(const char *path, const char *marker, char *out, size_t size)
{
    int found = 0;
#ifdef LZ_HAVE_LIBELF
    lz_probe p;
    int fd = -1;
    off_t fsize = 0;
    if (open_elf(path, &p, &fd, &fsize) != LZ_PROBE_OK)
        return 0;
    Elf *e = lz_elf_begin(fd, ELF_C_READ, NULL);
    size_t shstrndx = 0;
    GElf_Ehdr eh;
    if (e && lz_gelf_getehdr(e, &eh))
        shstrndx = eh.e_shstrndx;
    for (Elf_Scn *scn = e ? lz_elf_nextscn(e, NULL) : NULL; scn && !found;
         scn = lz_elf_nextscn(e, scn)) {
        GElf_Shdr sh;
        const char *name;
        if (!lz_gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
            !(name = lz_elf_strptr(e, shstrndx, sh.sh_name)) || strcmp(name, ".rodata") != 0)
            continue;
        Elf_Data *d = lz_elf_getdata(scn, NULL);
        size_t mlen = strlen(marker);
        const char *buf = d ? d->d_buf : NULL, *end = buf ? buf + d->d_size : NULL;
        /* The marker followed by a version: a digit, then no space to the NUL
         * (messages that mention the marker are skipped). */
        for (const char *hit = buf; hit && (hit = memmem(hit, (size_t)(end - hit), marker, mlen));
             hit += mlen) {
            size_t room = (size_t)(end - hit), len = strnlen(hit, room);
            if (len == room || len <= mlen || hit[mlen] < '0' || hit[mlen] > '9' ||
                memchr(hit + mlen, ' ', len - mlen) || len >= size)
                continue;
            memcpy(out, hit, len + 1);
            found = 1;
            break;
        }
    }
    if (e)
        lz_elf_end(e);
    close(fd);
#else
    (void)path, (void)marker, (void)out, (void)size;
#endif
    return found;
}
