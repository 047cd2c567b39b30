/* SPDX-License-Identifier: MIT
 * The preload redirector: what the audit module does for loads by path,
 * where no audit module can be used (lazynccl-run --preload, and on glibc
 * before 2.32 when the job's libraries hold more static TLS than an
 * audited process is given: docs/concepts/the-same-job.md, "Static TLS"). Preloaded
 * together with the drop-ins, it interposes dlopen and applies the audit
 * module's rule (lz_rule.h) to a request by path for a file
 * whose SONAME a preloaded drop-in stands for:
 *
 *   a lazynccl runtime's own load       left alone
 *   a real copy of that SONAME loaded   that copy (dlopen of its name)
 *   otherwise                           the drop-in, told the path asked for
 *
 * Loads by name already reach the preloaded drop-ins. Who asks is the
 * object holding dlopen's return address; everything else passes through
 * by a tail call, so that glibc's dlopen still sees the caller's return
 * address (its $ORIGIN, run paths and namespace): the suite checks that
 * the exported dlopen ends in a jump. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "common/lz_dropins.h"
#include "lz_memobj.h"
#include "lz_rule.h"
#include "lz_sys.h"
#include "elf/lz_elfpeek.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A wheel's copy runs on glibc back to 2.17: dlsym by its oldest version
 * (2.34 gave it a new one). */
#if defined(__x86_64__)
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");
#elif defined(__aarch64__)
__asm__(".symver dlsym,dlsym@GLIBC_2.17");
#endif

typedef void *(*dlopen_fn)(const char *file, int mode);
static dlopen_fn next_dlopen;

/* 1 when soname is the name of a drop-in LAZYNCCL_AUDIT_DROPINS names;
 * with prefix_only, when base starts as one of them does up to its first
 * '.' ("libnccl" of "libnccl.so.2"). */
static int served(const char *base, int prefix_only)
{
    const char *list = getenv(LZ_DROPINS_ENV);
    lz_dropin_item it;
    while (lz_dropins_next(&list, &it))
        if (prefix_only ? strncmp(base, it.name, it.stem) == 0
                        : strlen(base) == it.name_len && strncmp(base, it.name, it.name_len) == 0)
            return 1;
    return 0;
}

/* What the loaded objects say about a request for soname from caller. */
struct scan {
    const char *soname;
    const void *caller;
    const char *real, *dropin, *by;
    lz_asked_box *box;
    int own;
};

static int holds(const struct dl_phdr_info *info, const void *addr)
{
    for (size_t i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (uintptr_t)addr >= start && (uintptr_t)addr < start + ph->p_memsz)
            return 1;
    }
    return 0;
}

static int visit(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    struct scan *s = ctx;
    lz_mem_obj o;
    lz_mem_from_phdr(&o, info);
    if (holds(info, s->caller)) {
        s->by = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "the program";
        s->own |= lz_mem_runtime_loads(&o, s->soname);
    }
    const char *so = lz_mem_soname(&o);
    if (!so || strcmp(so, s->soname) != 0 || !info->dlpi_name || !info->dlpi_name[0])
        return 0;
    lz_asked_box *box = lz_mem_dropin_box(&o, s->soname);
    if (box && !s->box)
        s->box = box, s->dropin = info->dlpi_name;
    else if (!box && !s->real)
        s->real = info->dlpi_name;
    return 0;
}

/* The file dlopen should open for file, asked by the object at caller. */
static const char *redirect(const char *file, const void *caller)
{
    const char *base = file ? strrchr(file, '/') : NULL;
    if (!base || !served(base + 1, 1))
        return file;
    int fd = lz_sys_open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return file; /* dlopen will say why it cannot be had */
    struct stat sb;
    char soname[256];
    /* On the heap: the caller's thread may have a small stack. */
    lz_elfpeek_room *room = malloc(sizeof *room);
    int ok = room && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && lz_elfpeek_soname(room, fd, soname, sizeof soname);
    free(room);
    lz_sys_close(fd);
    if (!ok || !served(soname, 0))
        return file;
    struct scan s = {.soname = soname, .caller = caller, .by = "an unknown object"};
    dl_iterate_phdr(visit, &s);
    if (!s.box)
        return file; /* no drop-in stands for it */
    lz_rule_request q = {.own = s.own, .real_loaded = s.real != NULL};
    q.loading = !q.own && lz_asked_box_loading(s.box, lz_sys_gettid());
    switch (lz_rule(&q)) {
    case LZ_RULE_LEAVE:
        return file;
    case LZ_RULE_REAL:
        return s.real;
    case LZ_RULE_DROPIN:
        break;
    }
    lz_asked_box_put(s.box, file, s.by, 0);
    return s.dropin;
}

__attribute__((visibility("default"))) void *dlopen(const char *file, int mode);
void *dlopen(const char *file, int mode)
{
    const char *chosen = redirect(file, __builtin_return_address(0));
    dlopen_fn next = __atomic_load_n(&next_dlopen, __ATOMIC_ACQUIRE);
    if (!next) {
        next = (dlopen_fn)(uintptr_t)dlsym(RTLD_NEXT, "dlopen");
        if (!next)
            return NULL; /* no C library's dlopen after ours: nothing to call */
        __atomic_store_n(&next_dlopen, next, __ATOMIC_RELEASE);
    }
    return next(chosen, mode); /* a tail call: glibc reads the caller's return address */
}
