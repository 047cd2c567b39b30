/* SPDX-License-Identifier: MIT
 * The small runtime: the static shim of a library that uses nothing but
 * the dynamic linker's search (gen/emit_stubs.py, small_runtime) takes it
 * instead of the full runtime, and adds a tenth of what that one does to a program
 * (docs/reference/search-order.md, "The small runtime").
 *
 * Why it can leave the search to the dynamic linker: a static shim is
 * compiled into the object that would have needed the library (the
 * program, or an extension that vendors it), and dlopen by name from
 * code in an object is the search the dynamic linker makes for that
 * object's DT_NEEDED (glibc's _dl_map_object, with the caller's link map
 * as the loader: its DT_RPATH and its loaders', LD_LIBRARY_PATH, its
 * DT_RUNPATH, ld.so.cache, the system directories, NODEFLIB, hwcaps). So
 * the full runtime's model of that search, its reader of ELF files and
 * its probe have nothing to do here. Before it come the steps a program
 * sets (adopted, LAZY<ID>_LIBPATH, the chooser, the search list) and a
 * copy already loaded; after it, the spec's roots and default
 * directories.
 *
 * No lock: every thread that finds the library untried searches, dlopen
 * hands each the same object, and the first to publish it wins (a
 * compare-and-swap of the handle). Nothing here can be held across fork.
 * Strings a search may read (the search list, the required names, the
 * adopted file) are replaced whole and never freed. */
#include "small/lz_small.h"
#include "base/lz_env.h"
#include "base/lz_log.h"
#include "base/lz_msg.h"
#include "base/lz_stop.h"
#include "common/lz_stepnames.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef lz_small_report report;

/* Room kept at the end of a report for its closing lines. */
enum { REPORT_RESERVE = 512 };

/* An indented line of the report, and of the log. */
static void line(report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!r->started) {
        r->started = 1;
        r->text = malloc(LZ_MESSAGE_MAX);
        if (r->text)
            r->len = (size_t)snprintf(r->text, LZ_MESSAGE_MAX, "%s: %s could not be loaded; "
                                      "candidates tried:\n", r->lib->prefix, r->lib->display);
    }
    size_t limit = LZ_MESSAGE_MAX - (r->closing ? 0 : REPORT_RESERVE);
    if (r->text && r->len + 4 < limit) {
        va_list copy;
        va_copy(copy, ap);
        size_t room = limit - r->len - 3;
        int n = vsnprintf(r->text + r->len + 2, room, fmt, copy);
        va_end(copy);
        if (n > 0 && (size_t)n < room) { /* the whole line, or none of it */
            memcpy(r->text + r->len, "  ", 2);
            memcpy(r->text + r->len + 2 + n, "\n", 2);
            r->len += (size_t)n + 3;
        } else {
            r->dropped++;
        }
        r->text[r->len] = '\0';
    } else if (r->text) {
        r->dropped++;
    }
    lz_vlog(r->lib, 1, fmt, ap);
    va_end(ap);
}

void lz_small_refused(report *r, const char *step, const char *path, const char *why)
{
    line(r, "[%s] %s: rejected: %s", step, *path ? path : "empty entry", why);
}

char *lz_small_joined(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *p = malloc(la + lb + 2);
    if (p) {
        memcpy(p, a, la);
        p[la] = '/';
        memcpy(p + la + 1, b, lb + 1);
    }
    return p;
}

/* ThreadSanitizer's, where it runs. The dynamic linker's memory (its
 * link maps) is ordered by its lock, which TSan does not see: what this
 * runtime does inside the dynamic linker, or reads of its memory, is left
 * out of TSan's view, as its own dlopen interceptor leaves out the call.
 * Weak: absent everywhere else. */
extern void __tsan_ignore_thread_begin(void) __attribute__((weak));
extern void __tsan_ignore_thread_end(void) __attribute__((weak));

static void unseen(int begin)
{
    if (begin && __tsan_ignore_thread_begin)
        __tsan_ignore_thread_begin();
    else if (!begin && __tsan_ignore_thread_end)
        __tsan_ignore_thread_end();
}

/* dlclose of a handle this runtime opened: the object may have been
 * mapped by another thread's dlopen. */
static void unload(void *h)
{
    unseen(1);
    dlclose(h);
    unseen(0);
}

/* The object of handle h (NULL: none; RTLD_DEFAULT and RTLD_NEXT are no
 * objects, and dlinfo would read them as one). */
static struct link_map *map_of(void *h)
{
    struct link_map *lm = NULL;
    if (!h || h == RTLD_NEXT || h == RTLD_DEFAULT || dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0) {
        dlerror(); /* cleared: the program's next dlerror is its own */
        return NULL;
    }
    return lm;
}

/* The dynamic linker's own name of the object of handle h, where it is
 * absolute (NULL: a relative name, or no object). */
static const char *linker_name(void *h)
{
    struct link_map *lm = map_of(h);
    unseen(1);
    const char *name = lm && lm->l_name && lm->l_name[0] == '/' ? lm->l_name : NULL;
    unseen(0);
    return name;
}

/* The file the dynamic linker loaded for handle h, absolute, copied (NULL:
 * none, the program itself included). A name found through a relative
 * entry of LD_LIBRARY_PATH ("./libz.so.1") is made absolute from the
 * object's origin, as the full runtime names it. */
char *lz_small_file_of(void *h)
{
    const char *name = linker_name(h);
    if (name)
        return strdup(name);
    struct link_map *lm = map_of(h);
    char *path = NULL;
    unseen(1);
    if (lm && lm->l_name && lm->l_name[0]) {
        char *origin = malloc(PATH_MAX);
        const char *base = strrchr(lm->l_name, '/');
        if (origin && dlinfo(h, RTLD_DI_ORIGIN, origin) == 0)
            path = lz_small_joined(origin, base ? base + 1 : lm->l_name);
        dlerror();
        free(origin);
        path = path ? path : strdup(lm->l_name);
    }
    unseen(0);
    return path;
}

typedef void *(*dlopen_fn)(const char *file, int mode);

/* What one walk of the loaded objects (dl_iterate_phdr) tells: how many
 * the dynamic linker has loaded, and whether the object holding address
 * fn (where set) is the C library, the one that holds
 * gnu_get_libc_version (glibc's own: no wrapper of dlopen defines it). */
typedef struct {
    unsigned long long loads;
    ElfW(Addr) fn, libc;
    int at, fn_at, libc_at; /* objects walked; where fn and libc lie (0: not yet) */
} walk;

extern const char *gnu_get_libc_version(void) __attribute__((weak));

/* 1 when the object of info holds address a. */
static int holds(const struct dl_phdr_info *info, ElfW(Addr) a)
{
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        ElfW(Addr) start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && a >= start && a - start < ph->p_memsz)
            return 1;
    }
    return 0;
}

static int walk_one(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    walk *w = data;
    w->loads = info->dlpi_adds;
    w->at++;
    if (!w->fn || !w->libc)
        return 1; /* the count alone: one object tells it */
    if (!w->fn_at && holds(info, w->fn))
        w->fn_at = w->at;
    if (!w->libc_at && holds(info, w->libc))
        w->libc_at = w->at;
    return w->fn_at && w->libc_at;
}

/* One walk: loads, and with fn, whether fn is the C library's (owner). */
static walk walked(ElfW(Addr) fn, int *owner)
{
    walk w = {.fn = fn, .libc = (ElfW(Addr))gnu_get_libc_version};
    dl_iterate_phdr(walk_one, &w);
    if (owner)
        *owner = w.fn_at && w.fn_at == w.libc_at;
    return w;
}

/* The C library's own dlopen (NULL: not found; a static program has
 * none), looked up in the scope of libc.so.6 (glibc 2.34 on) or libdl.so.2
 * (before), where no preloaded object comes first. */
static dlopen_fn libc_dlopen(void)
{
    static const char *const owners[] = {"libc.so.6", "libdl.so.2"};
    dlopen_fn f = NULL;
    for (size_t i = 0; !f && i < sizeof owners / sizeof owners[0]; i++) {
        void *h = dlopen(owners[i], RTLD_LAZY | RTLD_NOLOAD);
        f = h ? (dlopen_fn)dlsym(h, "dlopen") : NULL;
        if (h)
            unload(h);
    }
    dlerror();
    return f;
}

/* dlopen of a bare name, searched for on behalf of the object holding the
 * shim. glibc searches for the object its dlopen was called from; where
 * a preloaded object wraps dlopen (a sanitizer, a profiler), that is the
 * wrapper (ASan: its own run path, not the program's), so the C library's
 * own is called. Whether the dlopen this object binds is the C library's
 * comes from the walk that counts the loaded objects, which is made
 * anyway; only where it is not is the C library's looked up. */
static void *open_by_name(const char *name, int mode, int own)
{
    static dlopen_fn found;
    dlopen_fn f = own ? dlopen : __atomic_load_n(&found, __ATOMIC_ACQUIRE);
    if (!f) {
        f = libc_dlopen();
        f = f ? f : dlopen;
        __atomic_store_n(&found, f, __ATOMIC_RELEASE);
    }
    if (f == dlopen)
        return dlopen(name, mode);
    unseen(1);
    void *h = f(name, mode);
    unseen(0);
    return h;
}

/* Why the object of handle h, given by path, is not the library (NULL:
 * it is; why is written otherwise), judged once it is loaded (the full
 * runtime reads the file first): the dynamic linker must answer one of
 * the sonames with it, which an object of another SONAME or none (one
 * that needs the library, this shim, the program) never is, nor a second
 * copy while another is loaded; and it must export the names the spec
 * says every copy exports. What the dynamic linker found by the name is
 * taken as it is (named), as plain takes it. */
const char *lz_small_misjudged(const lz_lib *lib, void *h, int named, char *why, size_t size)
{
    void *other = NULL;
    for (const char *const *s = lib->sonames; !named && *s; s++) {
        void *g = dlopen(*s, RTLD_LAZY | RTLD_NOLOAD);
        named = g && g == h;
        if (!g)
            dlerror();
        else if (!named && !other)
            other = g;
        else
            unload(g);
    }
    if (!named) {
        char *at = other ? lz_small_file_of(other) : NULL;
        if (other) /* which of the two needs the file's own SONAME, unread here */
            snprintf(why, size, "the dynamic linker answers its soname with another object (%s): "
                     "a second copy, or not this library", at ? at : "?");
        else
            snprintf(why, size, "the dynamic linker does not answer its soname with it (another "
                     "SONAME, or none: not this library)");
        free(at);
        if (other)
            unload(other);
        return why;
    }
    for (const char *const *q = lib->required; q && *q; q++)
        if (!dlsym(h, *q)) {
            dlerror();
            snprintf(why, size, "it does not export %s, which the spec's 'required' lists", *q);
            return why;
        }
    return NULL;
}

/* 1 when name holds a '/' (a path, which dlopen does not search for).
 * Not strchr: a first call binds no C library function it can do
 * without (each costs a lookup in every object of the process). */
static int has_slash(const char *name)
{
    while (*name && *name != '/')
        name++;
    return *name == '/';
}

void *lz_small_open(report *r, const char *step, const char *name, int more)
{
    int mode = RTLD_LAZY | RTLD_LOCAL | r->lib->dlopen_flags | more;
    int path = has_slash(name);
    void *h = path ? dlopen(name, mode) : open_by_name(name, mode, r->own);
    char text[PATH_MAX / 8];
    const char *why = h ? lz_small_misjudged(r->lib, h, !path, text, sizeof text) : NULL;
    if (why) {
        lz_small_refused(r, step, name, why);
        unload(h);
        return NULL;
    }
    if (h) {
        if (r->log)
            lz_log(r->lib, "[%s] %s: chosen", step, name);
        return h;
    }
    const char *e = dlerror();
    size_t n = strlen(name);
    if (e && strncmp(e, name, n) == 0 && e[n] == ':' && e[n + 1] == ' ')
        e += n + 2;
    if (!(more & RTLD_NOLOAD))
        lz_small_refused(r, step, name, e ? e : "not loaded");
    return NULL;
}

/* Each soname in directory dir, in the spec's order. */
void *lz_small_open_in(report *r, const char *step, const char *dir)
{
    void *h = NULL;
    for (const char *const *s = r->lib->sonames; *s && !h; s++) {
        char *path = lz_small_joined(dir, *s);
        if (path)
            h = lz_small_open(r, step, path, 0);
        else
            lz_small_refused(r, step, dir, "out of memory");
        free(path);
    }
    return h;
}

/* One entry of a list the program or the environment gives: an absolute
 * file, or a directory holding one of the sonames. */
static void *open_entry(report *r, const char *step, const char *entry)
{
    struct stat sb;
    if (entry[0] != '/') {
        lz_small_refused(r, step, entry, "not an absolute path");
        return NULL;
    }
    if (stat(entry, &sb) != 0) {
        lz_small_refused(r, step, entry, strerror(errno));
        return NULL;
    }
    return S_ISDIR(sb.st_mode) ? lz_small_open_in(r, step, entry) : lz_small_open(r, step, entry, 0);
}

/* A ':'-separated list, authoritative: when it finds nothing, nothing
 * else is tried. */
void *lz_small_open_list(report *r, const char *step, const char *list)
{
    char *copy = strdup(list);
    void *h = NULL;
    for (char *entry = copy, *end; entry && !h; entry = end ? end + 1 : NULL) {
        end = strchr(entry, ':');
        if (end)
            *end = '\0';
        h = open_entry(r, step, entry);
    }
    if (!copy)
        lz_small_refused(r, step, list, "out of memory");
    free(copy);
    if (!h) {
        r->closing = 1;
        line(r, "%s is set, so nothing else was tried", step);
    }
    return h;
}

/* The report's closing line: it may use the room kept for it. */
void lz_small_last_line(report *r, const char *text)
{
    r->closing = 1;
    line(r, "%s", text);
}

int lz_small_is_object(void *h)
{
    return map_of(h) != NULL;
}

void *lz_small_override(report *r, const char **step, int *decided)
{
    const char *env = lz_getenv(r->lib->env_var);
    *decided = env && *env;
    if (!*decided)
        return NULL;
    *step = r->lib->env_var;
    return lz_small_open_list(r, *step, env);
}

/* The parts a library or a program may not need (small/lz_small.h), as
 * they are where their members are not linked: the override alone, no
 * roots. Within one build the stop is linked wherever it can be called
 * (every function without a failure value names it); this one only says
 * the report and stops. */
__attribute__((weak)) void *lz_small_program_steps(report *r, const char **step, int *decided)
{
    return lz_small_override(r, step, decided);
}

__attribute__((weak)) void *lz_small_roots(report *r, const char **step, int after)
{
    (void)r;
    (void)step;
    (void)after;
    return NULL;
}

__attribute__((weak)) void lz_stop_uncalled(const lz_lib *lib, const char *name, const char *m)
{
    (void)lib;
    (void)name;
    if (write(2, m, strlen(m)) >= 0)
        (void)!write(2, "\n", 1);
    _exit(127);
}

__attribute__((weak)) void lz_say_unavailable(const lz_lib *lib, const char *m)
{
    (void)lib;
    (void)m;
}

/* The search, in order (docs/reference/search-order.md, "The small
 * runtime"): the library's handle and the step that found it, or NULL
 * with every candidate in the report. */
static void *search(const lz_lib *lib, report *r, const char **step)
{
    int decided = 0;
    void *h = lz_small_program_steps(r, step, &decided);
    if (decided)
        return h;
    /* A copy already loaded: glibc's RTLD_NOLOAD still searches for a name
     * it has not loaded (and opens the file, to compare it with what is),
     * so it is asked only where a step comes before the dynamic linker's
     * (lz_small_roots); elsewhere the dlopen by name finds a loaded copy
     * first, and said so by loading nothing new. */
    *step = LZ_STEP_LOADED;
    h = lz_small_roots(r, step, 0);
    walk before = walked(h ? 0 : (ElfW(Addr))dlopen, &r->own);
    if (!h)
        *step = LZ_STEP_LINKER;
    for (const char *const *s = lib->sonames; *s && !h; s++)
        if ((h = lz_small_open(r, *step, *s, 0)) && walked(0, NULL).loads == before.loads)
            *step = LZ_STEP_LOADED;
    if (!h)
        h = lz_small_roots(r, step, 1);
    return h;
}

/* How many of the names the program said it needs (LAZY<ID>_REQUIRE,
 * <shim>_require) the loaded library h lacks; with say, _last_error says
 * which, in one message. The dynamic linker gave one file: there is no
 * other to prefer. */
int lz_small_required_missing(const lz_lib *lib, void *h, const char *path, int say)
{
    const char *lists[] = {lz_getenv(lib->require_env),
                           __atomic_load_n(&lib->st->required, __ATOMIC_ACQUIRE)};
    if (!lists[0] && !lists[1])
        return 0;
    size_t size = strlen(path) + strlen(lib->display) + 128, len = 0;
    for (size_t k = 0; k < 2; k++)
        size += lists[k] ? strlen(lists[k]) + 2 : 0;
    char *names = say ? malloc(size) : NULL;
    int n = 0;
    for (size_t k = 0; k < 2; k++) {
        char *copy = lists[k] ? strdup(lists[k]) : NULL, *save = NULL;
        for (char *name = copy ? strtok_r(copy, ",", &save) : NULL; name;
             name = strtok_r(NULL, ",", &save)) {
            if (dlsym(h, name))
                continue;
            dlerror();
            if (names)
                len += (size_t)snprintf(names + len, size - len, "%s%s", n ? ", " : "", name);
            n++;
        }
        free(copy);
    }
    if (names && n) {
        char *text = malloc(size + len);
        if (text) {
            snprintf(text, size + len, "%s: %s at %s lacks %d of the names the program declared "
                     "it needs: %s", lib->prefix, lib->display, path, n, names);
            lz_message_push(&lib->st->sym_msgs, text);
            lz_log(lib, "%s", text + strlen(lib->prefix) + 2);
        }
        free(text);
    }
    free(names);
    return n;
}

/* Search and publish: the status that results. */
static int load(const lz_lib *lib)
{
    lz_state *st = lib->st;
    report r = {.lib = lib, .log = lz_logging(lib)};
    const char *step = NULL;
    void *h = search(lib, &r, &step);
    if (h) {
        /* The dynamic linker's own name of the object where it is
         * absolute: the library is never unloaded once published. */
        const char *name = linker_name(h);
        char *path = name ? NULL : lz_small_file_of(h);
        void *none = NULL;
        if (__atomic_compare_exchange_n(&st->handle, &none, h, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            st->step = step;
            st->path = name ? name : path ? path : lib->sonames[0];
            lz_small_required_missing(lib, h, st->path, 1);
            if (r.log)
                lz_log(lib, "loaded %s (found by: %s)", st->path, step);
            __atomic_store_n(&st->status, LZ_LOADED, __ATOMIC_RELEASE);
        } else {
            free(path); /* another thread published the same object first */
            while (lz_small_status(lib) != LZ_LOADED)
                sched_yield();
        }
        if (r.text) /* not free(NULL): a first call binds no function it can do without */
            free(r.text);
        return LZ_LOADED;
    }
    r.closing = 1;
    if (r.dropped)
        line(&r, "... %zu more line%s left out (a report holds %d bytes)", r.dropped,
             r.dropped == 1 ? "" : "s", LZ_MESSAGE_MAX);
    else if (!r.started) /* nothing was tried: the spec names no soname */
        line(&r, "no candidate");
    if (r.text)
        lz_message_push(&st->fail_msg, r.text);
    free(r.text);
    int untried = LZ_UNTRIED;
    __atomic_compare_exchange_n(&st->status, &untried, LZ_FAILED, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE);
    return lz_small_status(lib);
}

int lz_small_ensure_loaded(const lz_lib *lib)
{
    int s = lz_small_status(lib);
    return s == LZ_UNTRIED ? load(lib) : s;
}

const char *lz_small_state_message(const lz_lib *lib, int status)
{
    lz_msg *m = __atomic_load_n(status == LZ_FAILED   ? &lib->st->fail_msg
                                : status == LZ_LOADED ? &lib->st->sym_msgs
                                                      : &lib->st->refusals, __ATOMIC_ACQUIRE);
    return m ? m->text : status == LZ_FAILED ? "could not be loaded (out of memory for its report)"
                                             : NULL;
}

const char *lz_message(const lz_lib *lib)
{
    int status = lz_small_status(lib);
    const char *m = lz_small_state_message(lib, status);
    return m ? m : status == LZ_LOADED ? lib->no_error : lib->not_loaded;
}

void lz_failed_call(const lz_lib *lib)
{
    int none = 0;
    if (!__atomic_load_n(&lib->st->failed_calls, __ATOMIC_RELAXED) &&
        __atomic_compare_exchange_n(&lib->st->failed_calls, &none, 1, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST) &&
        lib->say_unavailable && lz_small_status(lib) == LZ_FAILED)
        lz_say_unavailable(lib, lz_message(lib));
}

/* What a call gets when its function cannot be had: its failure function,
 * or, where the API has none, the stop. */
static lz_fn failure(const lz_lib *lib, size_t i)
{
    lz_fn f = lz_fn_at(lib->fails, i);
    if (!f)
        lz_stop_uncalled(lib, lz_sym_name(lib, &lib->syms[i]), lz_message(lib));
    return f;
}

/* The first to publish export i wins; what the slot then holds. */
lz_fn lz_small_publish(const lz_lib *lib, size_t i, lz_fn f)
{
    lz_fn expect = lz_fn_at(lib->resolvers, i);
    if (!__atomic_compare_exchange_n(&lib->slots[i], &expect, f, 0, __ATOMIC_SEQ_CST,
                                     __ATOMIC_ACQUIRE))
        return expect;
    return f;
}

/* Export i in the loaded library, or NULL with why in the messages. */
static void *find(const lz_lib *lib, size_t i)
{
    const char *name = lz_sym_name(lib, &lib->syms[i]);
    void *p = dlsym(__atomic_load_n(&lib->st->handle, __ATOMIC_ACQUIRE), name);
    if (!p) {
        dlerror();
        char text[1024];
        snprintf(text, sizeof text, "%s: %s: not exported by %s", lib->prefix, name,
                 lib->st->path);
        lz_message_push(&lib->st->sym_msgs, text);
        lz_log(lib, "%s", text + strlen(lib->prefix) + 2);
    }
    return p;
}

/* errno left as the program left it (api/lz_resolve.c, lz_resolve_from). */
lz_fn lz_resolve_from(const lz_lib *lib, size_t i, const void *caller)
{
    (void)caller; /* the full runtime's, to name an importer: a static shim has none */
    int saved = errno;
    lz_fn f;
    if (lz_small_ensure_loaded(lib) != LZ_LOADED) {
        f = failure(lib, i); /* not published: a retry may load it */
    } else {
        void *p = find(lib, i);
        f = lz_small_publish(lib, i, p ? (lz_fn)p : failure(lib, i));
    }
    errno = saved;
    return f;
}

