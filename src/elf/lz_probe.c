/* SPDX-License-Identifier: MIT
 * The candidate probe: read what the dynamic linker would read of a file
 * (lz_elffile.c) and decide whether it can serve, without loading it
 * (loading runs constructors and maps hundreds of megabytes). libelf, reached
 * through the lazy internal shim generated from stubs/libelf.toml (lz_elf_*
 * functions), reads sections where a section is wanted: a version string in
 * .rodata, for lazynccl-info and a companion's name. */
#include "elf/lz_probe.h"

#include "elf/lz_elffile.h"
#include "elf/lz_version.h"
#include "common/lz_note.h"

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
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names a lean probe of lib asks, in ask (the required ones, the
 * extra ones, then the marker): how many come before the marker, or -1
 * when they do not fit (the probe then reads every name). */
static int lean_questions(const lz_lib *lib, const char *const *extra, const char **ask, size_t cap,
                          char *marker, size_t msize)
{
    size_t n = 0;
    for (const char *const *r = lib->required; *r; r++)
        if (n + 2 < cap)
            ask[n++] = *r;
        else
            return -1;
    for (const char *const *r = extra; r && *r; r++)
        if (n + 2 < cap)
            ask[n++] = *r;
        else
            return -1;
    ask[n] = lz_shim_marker(lib->shim, marker, msize);
    ask[n + 1] = NULL;
    return (int)n;
}

int lz_probe_exports(const lz_probe *p, const char *name)
{
    if (p->lean) {
        const char *ask[LZ_PROBE_ASK_MAX];
        char marker[128];
        int n = lean_questions(p->lean, p->extra, ask, LZ_PROBE_ASK_MAX, marker, sizeof marker);
        for (int i = 0; i <= n; i++)
            if (strcmp(ask[i], name) == 0)
                return (p->elf.answers >> i) & 1;
        return 0;
    }
    if (!p->elf.names)
        return 0;
    if (p->sorted)
        return bsearch(&name, p->elf.names, p->elf.nnames, sizeof *p->elf.names, by_name) != NULL;
    for (size_t i = 0; i < p->elf.nnames; i++)
        if (p->elf.names[i][0] == name[0] && strcmp(p->elf.names[i], name) == 0)
            return 1;
    return 0;
}

/* 1 when lib has versioned names: a probe for it is asked about many. */
static int many_questions(const lz_lib *lib)
{
    for (size_t i = 0; lib && i < lib->nsyms; i++)
        if (lib->syms[i].family)
            return 1;
    return !lib;
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

const char *lz_shim_marker(const char *shim, char *buf, size_t size)
{
    size_t n = strlen(shim);
    if (n + sizeof LZ_MARKER_SUFFIX > size) { /* never with the callers' buffers */
        if (size)
            buf[0] = '\0';
        return buf;
    }
    memcpy(buf, shim, n);
    memcpy(buf + n, LZ_MARKER_SUFFIX, sizeof LZ_MARKER_SUFFIX);
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
    lz_elffile_free(&p->elf);
}

/* Class and machine: what any reader of the file can be told. */
static int native(lz_probe *p)
{
    int want = sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32;
    if (p->elf.elf_class != want)
        return reject(p, "ELF class %s, this process is %s",
                      p->elf.elf_class == ELFCLASS32 ? "32-bit"
                      : p->elf.elf_class == ELFCLASS64 ? "64-bit" : "invalid",
                      want == ELFCLASS64 ? "64-bit" : "32-bit");
    unsigned mine = lz_elf_own_machine();
    if (p->elf.machine != mine)
        return reject(p, "ELF machine %u (%s), this process is %u (%s)", p->elf.machine,
                      lz_machine_name(p->elf.machine), mine, lz_machine_name(mine));
    return LZ_PROBE_OK;
}

/* Out of line: its words, inlined into probe, would be on the stack while
 * the file is read, the deepest point of a first call's search. */
__attribute__((noinline)) static int judge(const lz_lib *lib, lz_probe *p)
{
    if (!p->elf.soname[0])
        return reject(p, "no SONAME (want %s)", lib->sonames[0]);
    int known = 0;
    for (const char *const *s = lib->sonames; *s; s++)
        known |= strcmp(*s, p->elf.soname) == 0;
    for (const lz_unsupported *u = lib->unsupported; !known && u && u->soname; u++)
        if (strcmp(u->soname, p->elf.soname) == 0)
            return reject(p, "%s, not supported by this shim (SONAME %s)", u->what, p->elf.soname);
    if (!known) {
        char names[512];
        lz_soname_list(lib, names, sizeof names);
        return reject(p, "SONAME %s is not %s", p->elf.soname, names);
    }
    const char *have = gnu_get_libc_version();
    if (p->elf.glibc[0] && lz_version_cmp(p->elf.glibc, have) > 0)
        return reject(p, "needs GLIBC_%s, this process has %s", p->elf.glibc, have);
    if (p->shim)
        return reject(p, "a lazynccl shim (drop-in), not the real library");
    for (const char *const *r = lib->required; *r; r++)
        if (!lz_probe_exports(p, *r))
            return reject(p, "does not export %s", *r);
    return LZ_PROBE_OK;
}

/* Open path for reading; LZ_PROBE_OK with *fd and *size set. */
static int open_file(const char *path, lz_probe *p, int *fd, off_t *size)
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
    /* No fstat of the descriptor: the identity and size are the stat's.
     * A file swapped in between fails closed: a FIFO or device gives no
     * pread (ESPIPE, or a short read), another regular file is read within
     * the size stat gave and judged under the first one's identity, which
     * the path no longer has when open_chosen (lz_open.c) stats it after the
     * dlopen, so it is refused there and the next attempt judges it afresh.
     * One system call fewer in every probe. */
    *fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (*fd < 0)
        return reject(p, "%s", strerror(errno));
    *size = sb.st_size;
    p->dev = sb.st_dev;
    p->ino = sb.st_ino;
    return LZ_PROBE_OK;
}

static int probe(const lz_lib *lib, const char *path, const char *const *extra, lz_probe *p)
{
    int fd = -1;
    off_t size = 0;
    int rc = open_file(path, p, &fd, &size);
    if (rc != LZ_PROBE_OK)
        return rc;
    const char *ask[LZ_PROBE_ASK_MAX];
    char marker[128];
    int many = many_questions(lib);
    int lean = !many ? lean_questions(lib, extra, ask, LZ_PROBE_ASK_MAX, marker, sizeof marker) : -1;
    if (lz_elffile_read(fd, size, lean >= 0 ? ask : NULL, &p->elf, p->reason, sizeof p->reason) != 0) {
        rc = LZ_PROBE_REJECTED;
    } else {
        if (p->elf.names && (many || lean < 0)) {
            qsort(p->elf.names, p->elf.nnames, sizeof *p->elf.names, by_name);
            p->sorted = 1;
        }
        p->lean = lean >= 0 ? lib : NULL;
        p->extra = extra;
        p->shim = lib && lz_probe_exports(p, lz_shim_marker(lib->shim, marker, sizeof marker));
        rc = native(p);
        if (rc == LZ_PROBE_OK && lib)
            rc = judge(lib, p);
    }
    close(fd);
    if (rc != LZ_PROBE_OK)
        lz_probe_free(p);
    return rc;
}

int lz_probe_file(const lz_lib *lib, const char *path, const char *const *extra, lz_probe *p)
{
    return probe(lib, path, extra, p);
}

int lz_probe_read(const char *path, lz_probe *p)
{
    return probe(NULL, path, NULL, p);
}

int lz_probe_rodata_string(const char *path, const char *marker, char *out, size_t size)
{
    int found = 0;
#ifdef LZ_HAVE_LIBELF
    /* The probe (for open_file's checks) on the heap: this may run in a
     * search nested in a first call's (libelf's shim), on a small stack. */
    lz_probe *p = malloc(sizeof *p);
    int fd = -1;
    off_t fsize = 0;
    int opened = p && open_file(path, p, &fd, &fsize) == LZ_PROBE_OK;
    free(p);
    if (!opened)
        return 0;
    if (lz_elf_version(EV_CURRENT) == EV_NONE) {
        close(fd);
        return 0;
    }
    /* ELF_C_READ, not _MMAP: a truncated file must give an error, not SIGBUS. */
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

int lz_probe_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}
