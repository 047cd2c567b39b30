/* SPDX-License-Identifier: MIT
 * The rtld-audit module lazynccl-run installs (LD_AUDIT; rtld-audit(7),
 * docs/consumers.md). It answers a program's load of a real library *by
 * path* (PyTorch's _preload_cuda_deps, ctypes.CDLL("/.../libnccl.so.2"),
 * cuda.pathfinder) with the drop-in preloaded for that SONAME, and hands the
 * drop-in the path that was asked for, which it then loads at its first
 * call. Loads by bare SONAME already reach the preloaded drop-in.
 *
 * Who asks decides. glibc passes la_objsearch the cookie of the object whose
 * dlopen (or DT_NEEDED) asks, and that cookie starts as the object's link
 * map. An object that holds a lazynccl runtime carries a .note.lazynccl
 * (owner "lazynccl", type 1) listing the sonames that runtime may load; a
 * request from such an object for one of those sonames is its own load
 * (a drop-in's, a shim's, an amalgamation's) and is never redirected. That
 * decision reads only the asking object's own memory: no state shared
 * between threads, nothing a fork can leave half-done (tests/model/load.pml,
 * -DAUDIT). Drop-ins carry a type-2 note naming their SONAME.
 *
 * Everything here runs inside the dynamic linker, holding its lock: no
 * dlopen (so the requested file's SONAME is read with a few preads, not
 * with libelf, which would have to be loaded), no la_symbind or la_pltenter
 * (binding stays at PLT speed). Silent unless LAZYNCCL_DEBUG is set. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lz_dynread.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define LZ_AUDIT_API __attribute__((visibility("default")))
#define LZ_NOTE_OWNER "lazynccl"
enum { LZ_NOTE_RUNTIME = 1, LZ_NOTE_DROPIN = 2 };
#define MAX_TARGETS 16


typedef int (*redirect_fn)(const char *path, const char *requester);

/* A preloaded drop-in: where redirected loads go. */
typedef struct target {
    char soname[256];
    char path[PATH_MAX];
    dev_t dev;
    ino_t ino;
    redirect_fn entry;
    /* The first request that came before the drop-in was relocated (a
     * DT_NEEDED by path at start-up), handed over at la_preinit. */
    char pending[PATH_MAX], pending_by[PATH_MAX];
} target;

static target targets[MAX_TARGETS];
static int ntargets;
static int started; /* la_preinit has run: preloaded drop-ins are relocated */
static int debug;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
    if (!debug)
        return;
    char buf[2 * PATH_MAX + 512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    (void)!write(2, buf, (size_t)n);
}

LZ_AUDIT_API unsigned int la_version(unsigned int version)
{
    /* A secure-execution process keeps what it had: glibc already refuses
     * LD_AUDIT paths there; this says so again for a trusted install. */
    if (getauxval(AT_SECURE))
        return 0;
    const char *d = getenv("LAZYNCCL_DEBUG");
    debug = d && *d && strcmp(d, "0") != 0;
    return version < LAV_CURRENT ? version : LAV_CURRENT;
}

/* The asking object's file; the main program's from /proc/self/exe (the
 * kernel's word, not argv[0]). */
static const char *object_name(const struct link_map *map)
{
    static char exe[PATH_MAX];
    if (map && map->l_name && map->l_name[0])
        return map->l_name;
    if (!exe[0]) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
            return "the program";
        exe[n] = '\0';
    }
    return exe;
}

/* 1 when [p, p+len) is mapped (an object's first page holds its headers
 * with every common linker; the check keeps an odd layout from crashing). */
static int mapped(const void *p, size_t len)
{
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)p & ~(uintptr_t)(page - 1);
    unsigned char vec[4];
    size_t span = (uintptr_t)p + len - start;
    if (span > 4 * (size_t)page)
        return 0;
    return mincore((void *)start, span, vec) == 0;
}

/* The .note.lazynccl of a loaded object: calls fn(type, desc, size) for
 * each; returns what fn returned first non-zero. */
static int each_note(const struct link_map *map, int (*fn)(unsigned, const char *, size_t, void *),
                     void *ctx)
{
    const ElfW(Phdr) *ph;
    size_t n;
    if (!map->l_name || !map->l_name[0]) {
        ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
        n = getauxval(AT_PHNUM);
    } else {
        const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)map->l_addr;
        if (!map->l_addr || !mapped(eh, sizeof *eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
            return 0;
        ph = (const ElfW(Phdr) *)(map->l_addr + eh->e_phoff);
        n = eh->e_phnum;
        if (!mapped(ph, n * sizeof *ph))
            return 0;
    }
    for (size_t i = 0; ph && i < n; i++) {
        if (ph[i].p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(map->l_addr + ph[i].p_vaddr);
        const char *end = p + ph[i].p_memsz;
        /* Notes are padded to the segment's alignment: 8 for an 8-aligned
         * PT_NOTE (.note.gnu.property), else 4 (ours). */
        size_t pad = ph[i].p_align == 8 ? 7 : 3;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof *nh;
            const char *desc = name + ((nh->n_namesz + pad) & ~pad);
            const char *next = desc + ((nh->n_descsz + pad) & ~pad);
            if (next > end || next <= p)
                break;
            if (nh->n_namesz == sizeof LZ_NOTE_OWNER && memcmp(name, LZ_NOTE_OWNER, sizeof LZ_NOTE_OWNER) == 0) {
                int rc = fn(nh->n_type, desc, nh->n_descsz, ctx);
                if (rc)
                    return rc;
            }
            p = next;
        }
    }
    return 0;
}

/* NUL-separated names in desc: 1 when soname is one of them. */
static int lists(const char *desc, size_t size, const char *soname)
{
    for (size_t o = 0; o < size && desc[o];) {
        size_t len = strnlen(desc + o, size - o);
        if (strncmp(desc + o, soname, len) == 0 && soname[len] == '\0')
            return 1;
        o += len + 1;
    }
    return 0;
}

static int runtime_loads(unsigned type, const char *desc, size_t size, void *ctx)
{
    return type == LZ_NOTE_RUNTIME && lists(desc, size, ctx);
}

/* A drop-in's note: the offset of its entry point from the note's
 * description (4 bytes), then the SONAME it stands for. */
typedef struct dropin_note {
    char soname[256];
    redirect_fn entry;
} dropin_note;

static int dropin_soname(unsigned type, const char *desc, size_t size, void *ctx)
{
    dropin_note *d = ctx;
    int32_t off;
    if (type != LZ_NOTE_DROPIN || size <= sizeof off)
        return 0;
    const char *name = desc + sizeof off;
    size_t len = strnlen(name, size - sizeof off);
    if (len == 0 || len == size - sizeof off || len >= sizeof d->soname)
        return 0;
    memcpy(&off, desc, sizeof off);
    memcpy(d->soname, name, len + 1);
    d->entry = (redirect_fn)(uintptr_t)(desc + off);
    return 1;
}

LZ_AUDIT_API unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
    (void)cookie; /* glibc starts it as the map: la_objsearch reads it so */
    dropin_note note;
    struct stat sb;
    if (lmid != LM_ID_BASE || started || ntargets == MAX_TARGETS ||
        !each_note(map, dropin_soname, &note) || stat(map->l_name, &sb) != 0)
        return 0;
    /* Only drop-ins mapped at start-up (lazynccl-run preloads them): they
     * are relocated by the time a program can dlopen anything. */
    target *t = &targets[ntargets++];
    snprintf(t->soname, sizeof t->soname, "%s", note.soname);
    snprintf(t->path, sizeof t->path, "%s", map->l_name);
    t->dev = sb.st_dev;
    t->ino = sb.st_ino;
    t->entry = note.entry;
    logf_("lazynccl-audit: drop-in %s stands for %s", t->path, t->soname);
    return 0;
}

/* Tell the drop-in what was asked; its answer is only logged. */
static void hand_over(target *t, const char *path, const char *by)
{
    int rc = t->entry(path, by);
    static const char *const what[] = {"it will load that file at its first call",
                                       "it keeps the path asked for earlier",
                                       "it has loaded a library already"};
    logf_("lazynccl-audit: dlopen(\"%s\") by %s: redirected to the drop-in %s; %s", path, by,
          t->path, rc >= 0 && rc <= 2 ? what[rc] : "the drop-in did not answer");
}

LZ_AUDIT_API char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag)
{
    if (flag != LA_SER_ORIG || !name || !strchr(name, '/') || ntargets == 0)
        return (char *)name;
    int fd = open(name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return (char *)name; /* ld.so will say why it cannot be had */
    struct stat sb;
    char soname[256];
    int ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && lz_dyn_soname(fd, soname, sizeof soname);
    close(fd);
    if (!ok)
        return (char *)name;
    const struct link_map *asker = cookie ? (const struct link_map *)*cookie : NULL;
    for (int i = 0; i < ntargets; i++) {
        target *t = &targets[i];
        if (strcmp(t->soname, soname) != 0 || (sb.st_dev == t->dev && sb.st_ino == t->ino))
            continue;
#ifndef LZ_AUDIT_NAIVE /* the suite builds the naive module to show its failure */
        if (asker && each_note(asker, runtime_loads, soname)) {
            logf_("lazynccl-audit: dlopen(\"%s\") by %s: its own load, not redirected", name,
                  object_name(asker));
            return (char *)name;
        }
#endif
        if (started) {
            hand_over(t, name, object_name(asker));
        } else if (!t->pending[0]) {
            snprintf(t->pending, sizeof t->pending, "%s", name);
            snprintf(t->pending_by, sizeof t->pending_by, "%s", object_name(asker));
        }
        return t->path;
    }
    return (char *)name;
}

LZ_AUDIT_API void la_preinit(uintptr_t *cookie)
{
    (void)cookie;
    started = 1;
    for (int i = 0; i < ntargets; i++)
        if (targets[i].pending[0])
            hand_over(&targets[i], targets[i].pending, targets[i].pending_by);
}
