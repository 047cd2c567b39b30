/* SPDX-License-Identifier: MIT
 * The rtld-audit module lazynccl-run installs (LD_AUDIT; rtld-audit(7),
 * docs/concepts/the-same-job.md). It stands a drop-in in for a real library only until
 * that library is loaded, and maps a drop-in only when something asks for
 * its library, so a process that never does pays what any audit module
 * costs. The rule (lz_rule.h), for a request from any object other than a
 * lazynccl runtime's own (tests/model/load.pml models it):
 *
 *   request for soname S        nothing real loaded      a real S loaded
 *   by name   ("libnccl.so.2")  the drop-in of S         (ld.so matches the loaded
 *                                                         copy by SONAME itself)
 *   by path   (a file whose     the drop-in of S, told   that loaded copy: the same
 *             SONAME is S)      the path (it loads that  copy for everyone, tools
 *                               file at its first call)  that re-open it included
 *
 * Who asks decides which requests are a runtime's own: glibc passes
 * la_objsearch the cookie of the object whose dlopen (or DT_NEEDED) asks,
 * and that cookie starts as the object's link map. An object holding a
 * lazynccl runtime carries a .note.lazynccl listing the sonames it may load
 * (src/common/lz_note.h); its requests for those are never redirected.
 *
 * lazynccl-run names the drop-ins in LAZYNCCL_AUDIT_DROPINS (absolute
 * paths, ':'-separated, each file named by the SONAME it stands for). With
 * LAZYNCCL_CACHE, a request by name is answered from the job's resolution
 * cache where it holds the request (lz_cache.c), and what ld.so finds is
 * recorded; with LAZYNCCL_REPORT_DIR, each object mapped is reported
 * (lz_loadlog.c).
 * Everything here runs inside the dynamic linker, holding its lock, and
 * needs no C library (lz_sys.h says why): no allocation, no dlopen, no
 * la_symbind or la_pltenter (binding stays at PLT speed). Silent unless
 * LAZYNCCL_DEBUG is set. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lz_sys.h"

#include "common/lz_cachefile.h"
#include "common/lz_debug.h"
#include "common/lz_loadreport.h"
#include "common/lz_dropins.h"
#include "common/lz_ldsoargs.h"
#include "common/lz_ldsodirs.h"
#include "lz_cache.h"
#include "lz_loadlog.h"
#include "lz_remote.h"
#include "lz_memobj.h"
#include "lz_rule.h"
#include "lz_tlsfit.h"
#include "elf/lz_elfpeek.h"
#include "common/lz_note.h"
#include "common/lz_stepnames.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#define LZ_AUDIT_API __attribute__((visibility("default")))
/* The drop-ins a process names fit the module's one page of data with
 * their paths (a dozen paths of up to 150 bytes); a longer list gets
 * memory of its own. */
#define PAGE_TARGETS 24
#define PAGE_POOL 2048

typedef struct target {
    const char *soname; /* the drop-in's file name */
    const char *path;
    dev_t dev;          /* the drop-in file's id, once read: id_state 0 unread, 1 read, -1 absent */
    ino_t ino;
    struct link_map *dropin; /* the drop-in, once mapped */
    lz_asked_box *box;
    struct link_map *real;   /* the real copy, once loaded */
    unsigned short stem; /* length of "libnccl" in "libnccl.so.2": a by-path request is read only
                          * when its file name starts so */
    signed char id_state;
} target;

/* Every process writes the page of the module's dynamic section (ld.so
 * relocates it in place) and nothing else of the module's data: its state
 * lies in that page (src/audit/meson.build links without RELRO, and the
 * suite checks that the data ends within it), so an audited process maps
 * no memory for it and takes no fault of its own. */
static struct {
    target targets[PAGE_TARGETS];
    char pool[PAGE_POOL];
} tab;
static target *targets LZ_HOT_DATA;
static int ntargets LZ_HOT_DATA;
/* The program's link map (la_objopen reports it first). */
static struct link_map *main_map LZ_HOT_DATA;
/* Where ld.so is loaded: the object defining __libc_stack_end. */
static uintptr_t ldso_at LZ_HOT_DATA;
/* The step of the dynamic linker's latest candidate, for the cache. */
static const char *cache_step LZ_HOT_DATA;
/* For the cache: which object asked for each object mapped (glibc's
 * l_loader, which an audit module cannot read), while the cache is on. */
typedef struct loaded_by {
    const struct link_map *obj, *loader;
} loaded_by;
static loaded_by *loaders LZ_HOT_DATA;
static size_t nloaders LZ_HOT_DATA, loaders_cap LZ_HOT_DATA;
static const struct link_map *asking LZ_HOT_DATA; /* the current request's asker */
/* object_name's copy of the program's file name, made on first need. */
static const char *exe LZ_HOT_DATA;
/* A request redirected to a drop-in not mapped yet: the box is filled when
 * it is (la_objopen, in the same dlopen). The path and the asker's name
 * are copied (the caller's string, or an object's name, need not outlive
 * the request: a namespace of dlmopen's, an object closed meanwhile). */
typedef struct pending_request {
    target *t;
    const char *step;   /* a literal of lz_stepnames.h, or 0 (by path) */
    char path[PATH_MAX], by[PATH_MAX];
} pending_request;
static pending_request *pending LZ_HOT_DATA;
/* A by-name request for a drop-in's library, while the dynamic linker
 * searches for it (la_objsearch of each candidate path): the first
 * candidate it would open is the file the drop-in loads at its first call. */
static struct {
    target *t;
    const char *by;
    /* Asked by a drop-in that stands for a file asked for by path (ld.so
     * named it by the drop-in's own path): that drop-in, and the file. */
    const target *for_path;
    /* Its neighbour of the name, read when the request began (beside_first):
     * it would map and needs nothing more; and it is the drop-in itself. */
    unsigned char beside_read, beside_same;
} byname LZ_HOT_DATA;
/* What a request is judged with, off the stack of the thread that asked
 * (it may have the smallest stack a thread can: ld.so calls the module on
 * it): made the first time, one, used under ld.so's lock as every audit
 * call. */
typedef struct room {
    lz_elfpeek_room peek;
    char beside[PATH_MAX], caps[PATH_MAX];
} room;
static room *judging LZ_HOT_DATA;
/* LD_LIBRARY_PATH named a directory when the process started (its last
 * entry, as ld.so reads it then: the program may change its environment
 * later). */
static unsigned char llp_at_start LZ_HOT_DATA;

/* LAZYNCCL_AUDIT_DROPINS (lz_dropins.h) into targets: the list copied once
 * (the environment's own strings may be overwritten by the program:
 * setproctitle), then read in place, each entry's separator made its NUL.
 * Every audited process runs this, so the list is measured, copied and
 * split a word at a time (lz_sys.c), each file name read back from its
 * entry's end: read a byte at a time, it was a large share of an audited
 * /bin/true's instructions (docs/concepts/performance.md). */
static void read_targets(const char *list)
{
    if (!list)
        return;
    char *pool = tab.pool;
    size_t len = strlen(list);
    if (len >= PAGE_POOL && !(pool = lz_sys_alloc(len + 1))) {
        lz_say("cannot allocate memory for the drop-ins ", list, ": none will stand in");
        return;
    }
    memcpy(pool, list, len + 1);
    targets = tab.targets;
    int cap = PAGE_TARGETS;
    const char *rest = pool;
    lz_dropin_item it;
    while (lz_dropins_next(&rest, &it)) {
        if (ntargets == cap) {
            /* More than a page holds: room for every entry left, once. */
            int more = 1;
            for (const char *q = it.path; *q; q++)
                more += *q == LZ_DROPINS_SEP[0];
            target *bigger = lz_sys_alloc((size_t)(cap + more) * sizeof *bigger);
            if (!bigger) {
                lz_say("cannot allocate memory for the drop-ins ", list, ": the rest will not stand in");
                return;
            }
            for (int i = 0; i < ntargets; i++)
                bigger[i] = targets[i];
            targets = bigger;
            cap += more;
        }
        char *path = (char *)it.path;
        path[it.len] = '\0';
        target *t = &targets[ntargets++];
        t->path = path;
        t->soname = it.name;
        t->stem = (unsigned short)it.stem;
    }
}

LZ_AUDIT_API unsigned int la_version(unsigned int version)
{
    return version < LAV_CURRENT ? version : LAV_CURRENT;
}

/* Whether ld.so, run as a command (the kernel started it: AT_BASE is 0),
 * was asked to list or verify the program's libraries (`ld.so --list`,
 * ldd's `--verify`) rather than run it: its options come before the
 * program's name; those that take a value are skipped with it. */
LZ_COLD static int ldso_listing(void)
{
    char **argv = lz_sys_cmdline();
    for (int i = 1; argv && argv[i] && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
        const char *o = argv[i] + 2;
        if (lz_sys_same(o, "list") || lz_sys_same(o, "verify"))
            return 1;
        if (lz_ldsoargs_takes_value(o))
            i++;
        if (!argv[i] || !o[0]) /* "--" ends ld.so's options */
            break;
    }
    return 0;
}

/* Read the environment once the start-up stack is known (la_objopen of
 * ld.so, which glibc reports before any search). A secure-execution process
 * keeps what it had: glibc already refuses LD_AUDIT paths there; the module
 * stays idle for a trusted install too. */
/* ldso: ld.so's object, where the cache's node id reads its CPU record. */
static void configure(void *stack_end, lz_mem_obj *ldso)
{
    lz_sys_set_stack_end(stack_end);
    if (lz_sys_getauxval(AT_SECURE))
        return;
    /* ldd (LD_TRACE_LOADED_OBJECTS) and `ld.so --list`: the module stands
     * aside, so that the list is the libraries the program would load, with
     * their own dependencies, not drop-ins and theirs. */
    const char *trace = lz_sys_getenv("LD_TRACE_LOADED_OBJECTS");
    if ((trace && *trace) || (!lz_sys_getauxval(AT_BASE) && ldso_listing())) {
        lz_tlsfit_done(); /* nothing is relocated: no TLS to fit either */
        return;
    }
    lz_sys_set_debug(lz_debug_wanted(lz_sys_getenv(LZ_DEBUG_ENV)));
    lz_remote_name_installed();
    const char *llp = lz_sys_getenv_last("LD_LIBRARY_PATH");
    llp_at_start = llp && *llp;
    read_targets(lz_sys_getenv(LZ_DROPINS_ENV));
    const char *cache = lz_sys_getenv(LZ_CACHE_ENV);
    if (cache && *cache)
        lz_cache_open(cache, lz_mem_defined(ldso, "_dl_x86_get_cpu_features"));
    lz_loadlog_open(lz_sys_getenv(LZ_REPORT_ENV));
}

/* The asking object's file; the main program's from /proc/self/exe (the
 * kernel's word, not argv[0]). Read only to say who asked. */
LZ_COLD static const char *object_name(const struct link_map *map)
{
    if (map && map->l_name && map->l_name[0])
        return map->l_name;
    if (!exe) {
        char *buf = lz_sys_alloc(PATH_MAX);
        long n = buf ? lz_sys_readlink("/proc/self/exe", buf, PATH_MAX - 1) : -1;
        if (n > 0)
            buf[n] = '\0';
        exe = n > 0 ? buf : "the program";
    }
    return exe;
}

/* 1 when [p, p+len) is mapped (an object's first page holds its headers
 * with every common linker; the check keeps an odd layout from crashing). */
static int mapped(const void *p, size_t len)
{
    const uintptr_t page = 4096; /* mincore wants an aligned start; any page size divides it */
    uintptr_t start = (uintptr_t)p & ~(page - 1);
    unsigned char vec[64];
    size_t span = (uintptr_t)p + len - start;
    return span <= 16 * page && lz_sys_mincore((void *)start, span, vec) == 0;
}

/* A link map as lz_memobj reads objects. The main program's headers come
 * from the auxiliary vector; another object's are checked to be mapped
 * first (an object's first page holds its headers with every common
 * linker; the check keeps an odd layout from crashing), with one mincore
 * where they lie in one span, as they do with every common linker: 0 when
 * unreadable. */
static int from_map(const struct link_map *map, lz_mem_obj *o)
{
    o->base = map->l_addr;
    o->dyn = map->l_ld;
    o->viewed = 0;
    if (!map->l_name || !map->l_name[0]) {
        o->ph = (const ElfW(Phdr) *)lz_sys_getauxval(AT_PHDR);
        o->phnum = lz_sys_getauxval(AT_PHNUM);
        return o->ph != 0;
    }
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)map->l_addr;
    /* The kernel maps the vDSO and ld.so whole, headers first: no system
     * call in every process for the two objects it always has. */
    int known = map->l_addr == lz_sys_getauxval(AT_SYSINFO_EHDR) || map->l_addr == lz_sys_getauxval(AT_BASE);
    if (!map->l_addr || (!known && !mapped(eh, 4096 - (map->l_addr & 4095))) ||
        memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
        return 0;
    o->ph = (const ElfW(Phdr) *)(map->l_addr + eh->e_phoff);
    o->phnum = eh->e_phnum;
    size_t end = eh->e_phoff + o->phnum * sizeof *o->ph;
    return end <= 4096 - (map->l_addr & 4095) || mapped(o->ph, o->phnum * sizeof *o->ph);
}

static target *by_soname(const char *soname)
{
    for (int i = 0; soname && i < ntargets; i++)
        if (lz_sys_same(targets[i].soname, soname))
            return &targets[i];
    return 0;
}

/* Remember a redirected request until its drop-in is mapped: 0 when out of
 * memory (the request is then left to the dynamic linker, as plain). */
LZ_COLD static int remember(target *t, const char *path, const char *by, const char *step)
{
    if (!pending && !(pending = lz_sys_alloc(sizeof *pending)))
        return 0;
    size_t i = 0;
    if (path[0] != '/') {
        /* ld.so's candidate from a relative or empty LD_LIBRARY_PATH entry
         * names a file of this directory: made absolute now, as ld.so
         * opens it now (the program may chdir before its first call). */
        long n = lz_sys_getcwd(pending->path, sizeof pending->path - 1);
        if (n <= 1)
            return 0;
        i = (size_t)n - 1;
        if (pending->path[i - 1] != '/')
            pending->path[i++] = '/';
    }
    for (const char *p = path; *p && i + 1 < sizeof pending->path; p++)
        pending->path[i++] = *p;
    pending->path[i] = '\0';
    for (i = 0; by[i] && i + 1 < sizeof pending->by; i++)
        pending->by[i] = by[i];
    pending->by[i] = '\0';
    pending->step = step;
    pending->t = t;
    return 1;
}

LZ_COLD static void fill_box(target *t, const char *path, const char *by, const char *step)
{
    /* By name the dynamic linker's candidate, by path the program's own. */
    const char *how = step ? " (the dynamic linker's candidate) for " : "\") by ";
    if (lz_asked_box_put(t->box, path, by, step))
        lz_say(step ? "" : "dlopen(\"", path, how, by, ": the drop-in ", t->path,
               " will load that file at its first call");
    else
        lz_say(step ? "" : "dlopen(\"", path, how, by, ": the drop-in ", t->path,
               " keeps the path asked for earlier");
}

/* The object a redirected request mapped in a namespace of dlmopen's: when
 * it is the drop-in, its own box is told the request. */
LZ_COLD static void namespace_box(struct link_map *map, pending_request *p)
{
    lz_mem_obj o;
    lz_asked_box *box = map->l_name && map->l_name[0] && from_map(map, &o)
                            ? lz_mem_dropin_box(&o, p->t->soname) : 0;
    if (box && lz_asked_box_put(box, p->path, p->by, p->step))
        lz_say("a namespace of dlmopen's: the drop-in ", map->l_name, " will load ", p->path);
    p->t = 0;
}

/* map was mapped for loader's request: kept for the cache's keys. */
LZ_COLD static void note_loader(const struct link_map *map, const struct link_map *loader)
{
    if (nloaders == loaders_cap) {
        size_t cap = loaders_cap ? 2 * loaders_cap : 256;
        loaded_by *bigger = lz_sys_alloc(cap * sizeof *bigger);
        if (!bigger)
            return;
        for (size_t i = 0; i < nloaders; i++)
            bigger[i] = loaders[i];
        if (loaders)
            lz_sys_free(loaders, loaders_cap * sizeof *loaders);
        loaders = bigger, loaders_cap = cap;
    }
    loaders[nloaders].obj = map;
    loaders[nloaders++].loader = loader;
}

static const struct link_map *loader_of(const struct link_map *obj)
{
    for (size_t i = nloaders; i-- > 0;)
        if (loaders[i].obj == obj)
            return loaders[i].loader;
    return 0;
}

LZ_AUDIT_API unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
    (void)cookie; /* glibc starts it as the map: la_objsearch reads it so */
    static int configured LZ_HOT_DATA;
    /* The vDSO holds no TLS and stands for no library. */
    if (lmid != LM_ID_BASE) {
        /* A namespace of dlmopen's: a request redirected there is the
         * drop-in mapped there, told the request; none is left pending for
         * the base namespace's (the module's state follows the base
         * namespace only). */
        if (pending && pending->t)
            namespace_box(map, pending);
        byname.t = 0;
        return 0;
    }
    if (!map->l_name || !map->l_name[0]) {
        if (!main_map)
            main_map = map; /* the program, reported first */
        return 0;
    }
    if (map->l_addr == lz_sys_getauxval(AT_SYSINFO_EHDR))
        return 0;
    lz_mem_obj o;
    if (!from_map(map, &o))
        return 0;
    if (!configured) {
        void **stack_end = lz_mem_defined(&o, "__libc_stack_end");
        if (!stack_end)
            return 0;
        configured = 1;
        ldso_at = map->l_addr;
        configure(*stack_end, &o);
    }
    const char *soname = lz_mem_soname(&o);
    lz_tlsfit_object(&o, soname);
    target *t = ntargets ? by_soname(soname) : 0;
    if (lz_cache_on() && asking)
        note_loader(map, asking);
    lz_asked_box *box = t ? lz_mem_dropin_box(&o, t->soname) : 0;
    if (!box) {
        /* The object ld.so mapped for a request the cache did not hold. */
        if (lz_cache_waiting())
            lz_cache_learn(map->l_name, cache_step);
        lz_loadlog_object(map->l_name, soname);
    } else {
        lz_cache_forget();
    }
    if (!t)
        return 0;
    if ((t->box = box)) {
        t->dropin = map;
        lz_say("drop-in ", t->path, " (named ", map->l_name, ") stands for ", t->soname,
               " until it is loaded");
        if (pending && pending->t == t)
            fill_box(t, pending->path, pending->by, pending->step);
        if (pending)
            pending->t = 0;
    } else if (!t->real) {
        t->real = map;
        lz_say(t->soname, " loaded from ", map->l_name, ": every later request for it gets that copy");
    }
    return 0;
}

/* The first consistent state is the start's end: its objects are mapped.
 * la_preinit (before main) ends it too, whatever a glibc reports: a process
 * is never restarted once anything of it has run. */
LZ_AUDIT_API void la_activity(uintptr_t *cookie, unsigned int flag)
{
    (void)cookie;
    if (flag == LA_ACT_CONSISTENT) {
        lz_tlsfit_done();
        lz_cache_flush();
        lz_loadlog_flush();
    }
}

LZ_AUDIT_API void la_preinit(uintptr_t *cookie)
{
    (void)cookie;
    lz_tlsfit_done();
}

LZ_AUDIT_API unsigned int la_objclose(uintptr_t *cookie)
{
    for (size_t i = 0; i < nloaders;)
        if ((uintptr_t)loaders[i].obj == *cookie)
            loaders[i] = loaders[--nloaders];
        else
            i++;
    for (int i = 0; i < ntargets; i++) {
        if ((uintptr_t)targets[i].real == *cookie)
            targets[i].real = 0;
        if ((uintptr_t)targets[i].dropin == *cookie)
            targets[i].dropin = 0, targets[i].box = 0;
    }
    return 0;
}

static int same_file(const struct stat *a, const target *t)
{
    return a->st_dev == t->dev && a->st_ino == t->ino;
}

/* The file at path opened for reading, when it is a regular file (*st its
 * id): else -1 (ld.so will say why it cannot be had). */
LZ_COLD static int open_regular(const char *path, struct stat *st)
{
    int fd = lz_sys_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd >= 0 && (fstat(fd, st) != 0 || !S_ISREG(st->st_mode))) {
        lz_sys_close(fd);
        fd = -1;
    }
    return fd;
}

/* The room to judge in; 0 when none can be had (nothing is then read). */
LZ_COLD static room *the_room(void)
{
    if (!judging)
        judging = lz_sys_alloc(sizeof *judging);
    return judging;
}

/* The SONAME of the regular file at path, with its id: 1 when read. */
LZ_COLD static int file_soname(const char *path, struct stat *st, char *soname, size_t size)
{
    room *r = the_room();
    int fd = r ? open_regular(path, st) : -1;
    int ok = fd >= 0 && lz_elfpeek_soname(&r->peek, fd, soname, size);
    if (fd >= 0)
        lz_sys_close(fd);
    return ok;
}

/* Whether the drop-in of t can stand in: its file is there, an ELF object
 * of this process's kind whose SONAME is t's (read once). A drop-in that is
 * missing, unreadable or broken never stands in: the process behaves as
 * plain. */
LZ_COLD static int usable(target *t)
{
    if (t->id_state == 0 && !the_room()) {
        /* Not a verdict on the drop-in: the next request tries again. */
        lz_say("cannot allocate memory to read the drop-in ", t->path, ": it does not stand in "
               "for ", t->soname, " in this request");
        return 0;
    }
    if (t->id_state == 0) {
        struct stat st = {0};
        char soname[256];
        int ok = file_soname(t->path, &st, soname, sizeof soname) &&
                 lz_sys_same(soname, t->soname);
        t->id_state = ok ? 1 : -1;
        t->dev = st.st_dev, t->ino = st.st_ino;
        if (!ok)
            lz_say("drop-in ", t->path, " is missing or not a library of this process's kind: "
                   "it will not stand in for ", t->soname);
    }
    return t->id_state == 1;
}

/* The target whose real library the file at name is, with the file's id. */
LZ_COLD static target *real_file(const char *name, struct stat *id)
{
    const char *base = lz_sys_base_name(name);
    int maybe = 0;
    for (int i = 0; i < ntargets && !maybe; i++)
        maybe = memcmp(base, targets[i].soname, targets[i].stem) == 0;
    if (!maybe)
        return 0;
    char soname[256];
    target *t = file_soname(name, id, soname, sizeof soname) ? by_soname(soname) : 0;
    return t && !(usable(t) && same_file(id, t)) ? t : 0;
}

/* Whether a drop-in is loading its real library in this thread (its box's
 * loading_tid): then every request is that load's own, left to ld.so. The
 * drop-in's own dlopen (through an interceptor of dlopen, under ASan or
 * TSan, the asker is not the drop-in) and the requests its library makes
 * while being loaded: cuBLAS's libcublasLt.so.13 comes from beside the
 * chosen libcublas, as it would without lazynccl-run (companions stay
 * untouched). */
static int loading_here(void)
{
    int tid = 0;
    for (int i = 0; i < ntargets; i++) {
        if (!targets[i].box)
            continue;
        if (!tid)
            tid = lz_sys_gettid();
        if (lz_asked_box_loading(targets[i].box, tid))
            return 1;
    }
    return 0;
}

/* Whether an object the dynamic linker holds answers a DT_NEEDED name as
 * ld.so matches one: its name, or its SONAME (read from its dynamic
 * section). With every 0, only objects whose file is so named are read
 * (the usual case: a string compare per object); else each is, for a name
 * that neither that nor the drop-in's own needs answer. (ld.so also
 * matches the names an object was asked for by: such a name counts as
 * unmet here, and the file is left to ld.so, which loads it as plain.) */
LZ_COLD static int loaded_as(const char *name, int every)
{
    for (const struct link_map *m = main_map; m; m = m->l_next) {
        lz_mem_obj o;
        const char *so;
        if (m->l_name && lz_sys_same(m->l_name, name))
            return 1;
        if ((every || (m->l_name && lz_sys_same(lz_sys_base_name(m->l_name), name))) && from_map(m, &o) &&
            (so = lz_mem_soname(&o)) && lz_sys_same(so, name))
            return 1;
    }
    return 0;
}

/* A file's DT_NEEDED names checked against what its drop-in can promise:
 * each must be answered by a loaded object or be one the drop-in needs
 * itself (the dynamic linker resolves the drop-in's own as it would the
 * file's). Read in passes one after another, never one inside another:
 * each read of a file holds a large buffer on the stack (lz_elfpeek.c),
 * and the module runs on the stack of whichever thread called dlopen. */
struct needs {
    char dropin[1024];  /* the drop-in's DT_NEEDED, NUL-separated */
    size_t dropin_len;
    char pending[512];  /* the file's names no loaded object's file is called */
    size_t pending_len;
    int overflow;       /* more than pending holds: the file is read again */
    char *unmet;        /* the first name unmet (cut to size) */
    size_t size;
};

static void dropin_needs(void *ctx, const char *name)
{
    struct needs *n = ctx;
    size_t len = name ? strlen(name) + 1 : 0;
    if (name && n->dropin_len + len <= sizeof n->dropin) {
        memcpy(n->dropin + n->dropin_len, name, len);
        n->dropin_len += len;
    }
}

/* A name pending (no loaded object's file is called so): unmet where the
 * drop-in does not need it and no loaded object's SONAME is it. */
static void unmet_needs(void *ctx, const char *name)
{
    struct needs *n = ctx;
    if (n->unmet[0])
        return;
    for (size_t i = 0; name && i < n->dropin_len; i += strlen(n->dropin + i) + 1)
        if (lz_sys_same(n->dropin + i, name))
            return;
    if (name && loaded_as(name, 1))
        return;
    const char *say = name ? name : "a name longer than 255 bytes";
    size_t len = strlen(say);
    if (len >= n->size)
        len = n->size - 1;
    memcpy(n->unmet, say, len);
    n->unmet[len] = '\0';
}

/* The first pass: the names no loaded object's file is called (the usual
 * case: none), kept; an unreadable one is unmet at once. */
static void pending_needs(void *ctx, const char *name)
{
    struct needs *n = ctx;
    size_t len = name ? strlen(name) + 1 : 0;
    if (name && loaded_as(name, 0))
        return;
    if (!name) {
        unmet_needs(n, NULL);
    } else if (n->pending_len + len <= sizeof n->pending) {
        memcpy(n->pending + n->pending_len, name, len);
        n->pending_len += len;
    } else {
        n->overflow = 1;
    }
}

/* The second pass, where the names overflowed: each name of the file. */
static void unmet_needs_all(void *ctx, const char *name)
{
    if (!name || !loaded_as(name, 0))
        unmet_needs(ctx, name);
}

/* 1 when the file open at fd needs nothing that t's drop-in cannot
 * promise; else 0, the name into unmet. Where it needs more, the drop-in
 * does not stand in: the dynamic linker maps the file itself, and loads
 * what it needs now or fails as it does plain. */
LZ_COLD static int needs_met(int fd, const target *t, char *unmet, size_t size)
{
    struct needs n = {.unmet = unmet, .size = size};
    room *r = the_room();
    unmet[0] = '\0';
    if (!r)
        return 1; /* as for a file whose names cannot be read */
    lz_elfpeek_needed(&r->peek, fd, pending_needs, &n);
    if (unmet[0] || (!n.pending_len && !n.overflow))
        return !unmet[0];
    struct stat st;
    int dfd = open_regular(t->path, &st);
    if (dfd >= 0) {
        lz_elfpeek_needed(&r->peek, dfd, dropin_needs, &n);
        lz_sys_close(dfd);
    }
    if (n.overflow)
        lz_elfpeek_needed(&r->peek, fd, unmet_needs_all, &n);
    for (size_t i = 0; !n.overflow && i < n.pending_len; i += strlen(n.pending + i) + 1)
        unmet_needs(&n, n.pending + i);
    return !unmet[0];
}

/* The same, for the file at path. */
LZ_COLD static int path_needs_met(const char *path, const target *t, char *unmet, size_t size)
{
    struct stat st;
    int fd = open_regular(path, &st);
    int met = fd < 0 || needs_met(fd, t, unmet, size);
    if (fd >= 0)
        lz_sys_close(fd);
    return met;
}

/* Whether the dynamic linker, trying the file at path for a request by
 * name, would map it (*st its id): a regular file whose ELF header is a
 * shared object's of this process's kind (one of another class or machine
 * it skips; one that is not ELF, or not a shared object, fails the
 * request, as it does plain). With met, in the same open, whether t's
 * drop-in may stand in for the file (needs_met: the name unmet into
 * unmet); not asked of the drop-in itself. */
LZ_COLD static int would_map(const char *path, struct stat *st, const target *t, int *met,
                             char *unmet, size_t size)
{
    room *r = the_room();
    int fd = r ? open_regular(path, st) : -1;
    int ok = fd >= 0 && lz_elfpeek_native(&r->peek, fd);
    if (met)
        *met = !ok || same_file(st, t) || needs_met(fd, t, unmet, size);
    if (fd >= 0)
        lz_sys_close(fd);
    return ok;
}

/* 1 when path is dir followed by name alone. */
static int in_dir(const char *path, const char *dir, const char *name)
{
    while (*dir && *path == *dir)
        path++, dir++;
    return !*dir && lz_sys_same(path, name);
}

/* The rest of path below the directory that holds file, where path is a
 * name there or in its glibc-hwcaps subdirectories (ld.so's candidates of
 * a run path entry); else NULL. */
static const char *below_dir_of(const char *path, const char *file)
{
    const char *end = lz_sys_base_name(file);
    for (; file < end && *path == *file; path++, file++)
        ;
    if (file != end)
        return NULL;
    const char *slash = lz_sys_find(path, '/');
    if (!slash[0])
        return path;
    static const char caps[] = "glibc-hwcaps/";
    for (size_t i = 0; i < sizeof caps - 1; i++)
        if (path[i] != caps[i])
            return NULL;
    const char *sub_end = lz_sys_find(path + sizeof caps - 1, '/');
    return sub_end[0] && !lz_sys_find(sub_end + 1, '/')[0] ? path : NULL;
}

/* The directory of file followed by name, into out: 1 when it fits. */
static int beside_of(const char *file, const char *name, char *out, size_t size)
{
    size_t dir = (size_t)(lz_sys_base_name(file) - file), len = strlen(name);
    if (dir + len + 1 > size)
        return 0;
    memcpy(out, file, dir);
    memcpy(out + dir, name, len + 1);
    return 1;
}

/* Whether path is t's candidate in the last directory of the dynamic
 * linker's default search, the last of its system directories: a by-name
 * request none of whose candidates up to it would map is one the dynamic
 * linker cannot serve. The directories are read from ld.so itself
 * (lz_ldsodirs.h) at the first request that reaches the default search;
 * where they are not found there, glibc's usual last ones count. */
LZ_COLD static int last_default(const char *path, const target *t)
{
    static const char *last;
    static int looked;
    if (!looked) { /* under ld.so's lock, as every audit call */
        size_t n = 0;
        const char *p = lz_ldsodirs_find(ldso_at, &n);
        for (size_t i = 1; p && i < n; i++)
            p += strlen(p) + 1;
        last = p;
        looked = 1;
    }
    if (last)
        return in_dir(path, last, t->soname);
    /* Two calls, not a table of pointers: the module has no relocation. */
    return in_dir(path, "/usr/lib/", t->soname) || in_dir(path, "/usr/lib64/", t->soname);
}

/* The dynamic linker's search step, by the flag it gives a candidate. */
static const char *step_of(unsigned int flag)
{
    switch (flag) {
    case LA_SER_LIBPATH:
        return LZ_STEP_LD_LIBRARY_PATH;
    case LA_SER_RUNPATH:
        return LZ_STEP_RUN_PATH;
    case LA_SER_CONFIG:
        return LZ_STEP_LDCACHE;
    default:
        return LZ_STEP_SYSTEM_DIRS;
    }
}

/* A path returned to ld.so for it to open in place of the one it asked
 * about, which it opens before it asks again: one buffer, under its lock,
 * made the first time (the module's data stays in one page). 0 when none
 * can be had. */
LZ_COLD static char *handed(const char *path)
{
    static char *kept;
    size_t len = strlen(path) + 1;
    if (len > PATH_MAX || (!kept && !(kept = lz_sys_alloc(PATH_MAX))))
        return 0;
    memcpy(kept, path, len);
    return kept;
}

/* The run path's candidate ($ORIGIN) of a drop-in standing for a file
 * asked for by path: ld.so named that drop-in by its own path, so its
 * $ORIGIN is the drop-in directory where plain it is that file's (a
 * drop-in that needs another family's library has the run path $ORIGIN,
 * as NVIDIA's libraries do). rel: the candidate below that directory (the
 * name, or glibc-hwcaps/SUB/name). The file of that rel beside the asked
 * one, where it would map; else none (0: ld.so goes on to its next
 * candidate, as plain). The drop-in stands in for it even where it needs
 * what the drop-in does not (beside_first hands such a file to ld.so
 * where it can): a path handed back for a candidate keeps the candidate's
 * name, and with it the drop-in directory as the file's $ORIGIN. */
LZ_COLD static char *beside_asked(target *t, const char *rel)
{
    room *r = the_room();
    struct stat st;
    int met;
    char unmet[256];
    /* Read when the request began: not again. */
    int known = byname.beside_read && lz_sys_same(rel, t->soname);
    met = 1;
    if (!r)
        return 0;
    char *beside = r->beside;
    if (!beside_of(byname.for_path->box->path, rel, beside, sizeof r->beside))
        return 0;
    if (!known && !would_map(beside, &st, t, &met, unmet, sizeof unmet))
        /* One of another class or machine ld.so skips; one it cannot use
         * otherwise (not ELF, a directory, an executable) fails the
         * request, in its words, naming that file: it opens it. */
        return lz_sys_stat(beside, &st) == 0 ? handed(beside) : 0;
    byname.t = 0;
    if ((known ? byname.beside_same : same_file(&st, t)) ||
        !remember(t, beside, byname.by, step_of(LA_SER_RUNPATH)))
        return (char *)t->path;
    lz_say(t->soname, " needed by ", byname.by, ": the dynamic linker would map ", beside,
           " (beside the file its drop-in stands for); the drop-in ", t->path,
           " stands in and will load that file");
    if (!met)
        lz_say(t->soname, ": that file needs ", unmet, " (not loaded, not needed by its drop-in), "
               "which is loaded at the drop-in's first call, not now");
    return (char *)t->path;
}

/* The request, by name, of a drop-in standing for a file asked for by
 * path, whose first candidate plain is that file's neighbour of the name
 * (its run path's $ORIGIN, with no LD_LIBRARY_PATH before it and no
 * glibc-hwcaps subdirectory there): where that neighbour needs what its
 * drop-in does not, its own path, so that ld.so maps it now under its own
 * name and $ORIGIN, and loads what it needs or fails as plain. Else 0 (the
 * search goes on; beside_asked serves the candidate). */
LZ_COLD static char *beside_first(target *t, const char *soname)
{
    if (llp_at_start || !lz_sys_getauxval(AT_BASE)) /* or ld.so's own --library-path */
        return 0;
    const char *asked = byname.for_path->box->path;
    room *r = the_room();
    char unmet[256];
    struct stat st;
    int met = 1;
    if (!r)
        return 0;
    char *beside = r->beside, *caps = r->caps;
    if (!beside_of(asked, soname, beside, sizeof r->beside) ||
        !would_map(beside, &st, t, &met, unmet, sizeof unmet))
        return 0;
    byname.beside_read = (unsigned char)met;
    byname.beside_same = (unsigned char)same_file(&st, t);
    if (met || !beside_of(asked, "glibc-hwcaps", caps, sizeof r->caps) || lz_sys_stat(caps, &st) == 0)
        return 0;
    lz_say(t->soname, " needed by ", byname.by, ": the dynamic linker would map ", beside,
           " (beside the file its drop-in stands for), which needs ", unmet, " (not loaded, not "
           "needed by its drop-in): it maps that file itself, as without lazynccl-run");
    char *kept = handed(beside);
    if (kept)
        byname.t = 0;
    return kept;
}

/* A candidate path of the by-name request being searched: where the
 * dynamic linker would map it, the drop-in stands in, told that path (it
 * loads exactly that file at its first call); where the dynamic linker
 * would find nothing, the drop-in stands in untold (its own search order
 * then applies: wheels, conda, CUDA_HOME). ld.so names the object it maps
 * by the candidate path. */
LZ_COLD static char *candidate(const char *name, unsigned int flag)
{
    target *t = byname.t;
    const char *base = lz_sys_base_name(name);
    if (!lz_sys_same(base, t->soname))
        return (char *)name;
    const char *rel;
    if (flag == LA_SER_RUNPATH && byname.for_path && (rel = below_dir_of(name, byname.for_path->path)))
        return beside_asked(t, rel);
    struct stat st;
    int met;
    char unmet[256];
    if (would_map(name, &st, t, &met, unmet, sizeof unmet)) {
        byname.t = 0;
        if (same_file(&st, t))
            return (char *)name; /* the drop-in itself, on the search path */
        lz_cache_learn(name, step_of(flag));
        if (!met) {
            lz_say(t->soname, " needed by ", byname.by, ": the dynamic linker would map ", name,
                   ", which needs ", unmet, " (not loaded, not needed by its drop-in): it maps that "
                   "file itself, as without lazynccl-run");
            return (char *)name;
        }
        if (!remember(t, name, byname.by, step_of(flag)))
            return (char *)name;
        lz_say(t->soname, " needed by ", byname.by, ": the dynamic linker would map ", name,
               "; the drop-in ", t->path, " stands in and will load that file");
        return (char *)t->path;
    }
    if (flag == LA_SER_DEFAULT && last_default(name, t)) {
        byname.t = 0;
        lz_say(t->soname, " needed by ", byname.by, ": the dynamic linker finds none; the drop-in ",
               t->path, " stands in and will search its own order");
        return (char *)t->path;
    }
    return (char *)name;
}

/* The target whose drop-in asker is, when that drop-in stands for a file
 * asked for by path (its box holds the path, no search step): ld.so named
 * the drop-in by its own path, so $ORIGIN in its run path is the drop-in
 * directory where plain it is that file's. */
static const target *standing_for_path(const struct link_map *asker)
{
    for (int i = 0; asker && i < ntargets; i++)
        if (targets[i].dropin == asker && targets[i].box &&
            __atomic_load_n(&targets[i].box->state, __ATOMIC_ACQUIRE) == LZ_ASKED_SET &&
            !targets[i].box->step[0] && lz_sys_same(asker->l_name, targets[i].path))
            return &targets[i];
    return 0;
}

/* The cache's answer to a request by name (lz_cache.h), or 0. */
LZ_COLD static const char *cached(const char *name, const struct link_map *asker, const char **step)
{
    lz_cache_asker a = {0};
    lz_mem_obj o, m;
    int asker_read = asker && from_map(asker, &o);
    /* A requester that keeps ld.so out of its default directories
     * (DF_1_NODEFLIB) is searched as ld.so searches, each time: the key
     * does not hold the flag. */
    if (asker_read && (lz_mem_dynval(&o, DT_FLAGS_1) & DF_1_NODEFLIB))
        return 0;
    if (asker_read) {
        a.runpath = lz_mem_dynstr(&o, DT_RUNPATH);
        a.rpath = a.runpath ? 0 : lz_mem_dynstr(&o, DT_RPATH);
        a.origin_of = asker->l_name ? asker->l_name : "";
    }
    if (!a.runpath && asker_read) {
        /* The loaders' DT_RPATH, up to the program: each one's own. */
        const struct link_map *l = asker;
        while ((l = loader_of(l)) && l != main_map) {
            lz_mem_obj lo;
            if (a.nchain == LZ_CACHE_CHAIN || !from_map(l, &lo))
                return 0; /* deeper than the key holds: ld.so's search */
            if (!lz_mem_dynstr(&lo, DT_RUNPATH) && lz_mem_dynstr(&lo, DT_RPATH)) {
                a.chain[a.nchain] = lz_mem_dynstr(&lo, DT_RPATH);
                a.chain_of[a.nchain++] = l->l_name ? l->l_name : "";
            }
        }
    }
    if (!a.runpath && main_map && asker != main_map && from_map(main_map, &m) &&
        !lz_mem_dynstr(&m, DT_RUNPATH))
        a.exe_rpath = lz_mem_dynstr(&m, DT_RPATH);
    if (!a.origin_of)
        a.origin_of = "";
    return lz_cache_lookup(name, &a, step);
}

/* The step's flag, for a recorded answer standing in for ld.so's. */
static unsigned int flag_of(const char *step)
{
    if (lz_sys_same(step, LZ_STEP_LD_LIBRARY_PATH))
        return LA_SER_LIBPATH;
    if (lz_sys_same(step, LZ_STEP_RUN_PATH))
        return LA_SER_RUNPATH;
    if (lz_sys_same(step, LZ_STEP_LDCACHE))
        return LA_SER_CONFIG;
    return LA_SER_DEFAULT;
}

LZ_AUDIT_API char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag)
{
    if (!name || (ntargets == 0 && !lz_cache_on()))
        return (char *)name;
    if (flag != LA_SER_ORIG) {
        cache_step = step_of(flag);
        if (lz_cache_on() && !lz_cache_candidate(name))
            return 0;
        return byname.t ? candidate(name, flag) : (char *)name;
    }
    /* A new request: nothing of an earlier one that mapped nothing (a
     * RTLD_NOLOAD probe, a failed load) is kept for it. */
    byname.t = 0;
    if (pending)
        pending->t = 0;
    lz_cache_request_ended();
    const struct link_map *asker = cookie ? (const struct link_map *)*cookie : 0;
    asking = asker;
    struct stat id;
    int by_path = 0;
    for (const char *p = name; *p && !by_path; p++)
        by_path = *p == '/';
    const char *recorded = 0, *recorded_step = 0;
    if (!by_path && lz_cache_on())
        recorded = cached(name, asker, &recorded_step);
    target *t = by_path ? real_file(name, &id) : by_soname(name);
    if (!t)
        return (char *)(recorded ? recorded : name);
    lz_rule_request q = {0};
#ifndef LZ_AUDIT_NAIVE /* the suite builds the naive module to show its failure */
    lz_mem_obj o;
    q.own = asker && from_map(asker, &o) && lz_mem_runtime_loads(&o, t->soname);
    q.loading = !q.own && loading_here();
#endif
    q.real_loaded = t->real != 0;
    const char *by = object_name(asker);
    switch (lz_rule(&q)) {
    case LZ_RULE_LEAVE:
        return (char *)(recorded ? recorded : name);
    case LZ_RULE_REAL:
        /* A tool that re-opens the library by path gets the copy in use,
         * whichever file it names. */
        if (by_path)
            lz_say("dlopen(\"", name, "\") by ", by, ": the copy already loaded, ", t->real->l_name);
        return t->real->l_name;
    case LZ_RULE_DROPIN:
        break;
    }
    if (!usable(t))
        return (char *)(recorded ? recorded : name);
    if (!by_path) {
        /* By name: the dynamic linker searches as it would plain; the
         * candidate it would map decides (candidate()). The cache's answer
         * is that candidate, found without the search. */
        byname.t = t, byname.by = by, byname.for_path = standing_for_path(asker);
        byname.beside_read = 0;
        if (byname.for_path && !recorded) {
            char *first = beside_first(t, name);
            if (first)
                return first;
        }
        if (recorded) {
            const char *to = candidate(recorded, flag_of(recorded_step));
            byname.t = 0;
            return (char *)to;
        }
        return (char *)name;
    }
    char unmet[256];
    if (!path_needs_met(name, t, unmet, sizeof unmet)) {
        lz_say("dlopen(\"", name, "\") by ", by, ": it needs ", unmet, " (not loaded, not needed by "
               "its drop-in): the dynamic linker maps that file itself, as without lazynccl-run");
        return (char *)name;
    }
    if (t->box)
        fill_box(t, name, by, 0);
    else if (!remember(t, name, by, 0))
        return (char *)name;
    return (char *)t->path;
}
