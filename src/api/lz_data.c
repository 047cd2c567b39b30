/* SPDX-License-Identifier: MIT
 * Exported variables (lz_data.h). */
#include "api/lz_data.h"

#include "api/lz_api.h"
#include "base/lz_dl.h"
#include "base/lz_env.h"
#include "elf/lz_elfimage.h"
#include "elf/lz_probe.h"
#include "load/lz_once.h"
#include "process/lz_holder.h"
#include "process/lz_objects.h"
#include "process/lz_objects_imports.h"
#include "base/lz_report.h"
#include "base/lz_log.h"
#include "base/lz_text.h"

#include <link.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const lz_data *data_of(const lz_lib *lib, int hooks)
{
    return __atomic_load_n(&lib->st->data[hooks], __ATOMIC_ACQUIRE);
}

static int untouched(const unsigned char *p, size_t size)
{
    for (size_t i = 0; i < size; i++)
        if (p[i])
            return 0;
    return 1;
}

/* What a resolver's fill records of the bytes it wrote (FNV-1a, never 0):
 * the load takes them for not written where they still hash so. */
static unsigned long long fill_mark(const unsigned char *p, size_t size)
{
    unsigned long long h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h | 1;
}

/* Still zero, or still what a resolver filled it with: nobody wrote it. */
static int unwritten(const lz_datum *d, const unsigned long long *mark)
{
    unsigned long long m = mark ? __atomic_load_n(mark, __ATOMIC_ACQUIRE) : 0;
    return m ? fill_mark(d->addr, d->size) == m : untouched(d->addr, d->size);
}

/* The library's initial value into the variable. A program linked to the
 * real library holds its copy of a const variable in its RELRO segment,
 * read-only since relocation: writable for the copy, read-only again. */
static void copy(const lz_datum *d, const void *real, int relro)
{
    if (!relro) {
        memcpy(d->addr, real, d->size);
        return;
    }
    uintptr_t page = (uintptr_t)getpagesize();
    uintptr_t start = (uintptr_t)d->addr & ~(page - 1);
    size_t len = ((uintptr_t)d->addr + d->size - start + page - 1) & ~(page - 1);
    if (mprotect((void *)start, len, PROT_READ | PROT_WRITE) != 0)
        return; /* it keeps the shim's zero: the library's own copy is unaffected */
    memcpy(d->addr, real, d->size);
    mprotect((void *)start, len, PROT_READ);
}

/* The filling of one library's variables from the library just loaded:
 * prepared by each search that opened it (the look-ups call into the
 * dynamic linker: outside the runtime's lock), committed by the one that
 * publishes it, under the lock, before the status says loaded (lz_once.c).
 * Each item's decision is kept in the plan, so that a commit run again (a
 * child forked half-way through one) copies what the first decided and
 * nothing twice. */
enum { UNDECIDED, COPY, SKIP };

typedef struct fill_item {
    const lz_datum *d;
    const void *real;      /* the library's definition */
    const unsigned long long *mark; /* its resolver's fill (lz_data.filled), or NULL */
    unsigned char relro;   /* the variable is in a RELRO segment */
    unsigned char state;   /* UNDECIDED, COPY or SKIP */
} fill_item;

typedef struct fill_plan {
    size_t n;
    fill_item items[];
} fill_plan;

static void *prepare(const lz_lib *lib, void *handle)
{
    const lz_data *tables[2] = {data_of(lib, 0), data_of(lib, 1)};
    size_t n = (tables[0] ? tables[0]->n : 0) + (tables[1] ? tables[1]->n : 0);
    fill_plan *plan = calloc(1, sizeof *plan + n * sizeof plan->items[0]);
    if (!plan)
        return NULL;
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; tables[t] && i < tables[t]->n; i++) {
            const lz_datum *d = &tables[t]->items[i];
            const void *real = lz_dlsym(handle, d->name);
            if (!real || real == d->addr)
                continue; /* the library's own definition is the one in use */
            plan->items[plan->n++] = (fill_item){d, real,
                                                 tables[t]->filled ? &tables[t]->filled[i] : NULL,
                                                 !d->tramp && lz_holder_relro(d->addr),
                                                 UNDECIDED};
        }
    return plan;
}

static void commit(const lz_lib *lib, void *p)
{
    (void)lib;
    fill_plan *plan = p;
    for (size_t i = 0; i < plan->n; i++) {
        fill_item *it = &plan->items[i];
        const lz_datum *d = it->d;
        if (d->tramp) {
            /* Still the trampoline: the function the library put there. A
             * compare-and-swap, so it is done once and never over a write. */
            void *expect = (void *)d->tramp, *value;
            memcpy(&value, it->real, sizeof value);
            __atomic_compare_exchange_n((void **)d->addr, &expect, value, 0, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED);
            continue;
        }
        if (it->state == UNDECIDED)
            it->state = unwritten(d, it->mark) ? COPY : SKIP;
        if (it->state == COPY)
            copy(d, it->real, it->relro);
    }
}

static const lz_ready fill_ready = {prepare, commit, free};

/* No object loaded at start uses a variable, so the library waits for a
 * call: the variables' later references go through their resolvers. */
static void defer(const lz_lib *lib, const lz_data *data)
{
    lz_indirect *syms = calloc(data->n ? data->n : 1, sizeof *syms);
    size_t n = 0;
    for (size_t i = 0; syms && i < data->n; i++)
        if (data->items[i].resolve)
            syms[n++] = (lz_indirect){data->items[i].name, data->items[i].addr, data->items[i].resolve};
    n = syms ? lz_objects_self_indirect(syms, n) : 0;
    free(syms);
    lz_log(lib, "%zu of %s's %zu variables take, when an object loaded later uses one, the value "
           "of a copy of the library loaded by then", n, lib->display, data->n);
}

static int any_copy(void *ctx, const char *path, const char *why)
{
    (void)path, (void)why;
    *(int *)ctx = 1;
    return 1;
}

/* A dry search's file, kept for the variables bound after it while the
 * same objects are loaded (dl_iterate_phdr's counts of loads and unloads)
 * and the override reads the same: a plugin binding several variables
 * searches once, where each searched again before. Published whole
 * (atomic) and never freed: a resolver that dlsym runs, outside the
 * dynamic linker's lock, may read one while another thread publishes the
 * next. Each keeps the one before it reachable, and LZ_DRY_KEPT bounds
 * them (past it, every binding searches, as before). */
struct lz_dry {
    unsigned long long adds, subs;
    const struct lz_dry *prev;
    unsigned depth;
    const char *override;    /* NULL: unset */
    const char *path;
    char text[];
};
enum { LZ_DRY_KEPT = 32 };

/* The set of loaded objects, as dl_iterate_phdr counts its changes; known
 * 0 where this glibc gives no counts. */
typedef struct objects_gen {
    unsigned long long adds, subs;
    int known;
} objects_gen;

static int read_gen(struct dl_phdr_info *info, size_t size, void *data)
{
    objects_gen *g = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        *g = (objects_gen){info->dlpi_adds, info->dlpi_subs, 1};
    return 1;
}

static const struct lz_dry *dry_kept(const lz_lib *lib, const objects_gen *g, const char *override)
{
    const struct lz_dry *d = __atomic_load_n(&lib->st->dry, __ATOMIC_ACQUIRE);
    if (!d || !g->known || d->adds != g->adds || d->subs != g->subs || !d->override != !override ||
        (override && strcmp(override, d->override) != 0))
        return NULL;
    return d;
}

static void dry_keep(const lz_lib *lib, const objects_gen *g, const char *override, const char *path)
{
    const struct lz_dry *before = __atomic_load_n(&lib->st->dry, __ATOMIC_ACQUIRE);
    unsigned depth = before ? before->depth + 1 : 1;
    size_t no = override ? strlen(override) + 1 : 0, np = strlen(path) + 1;
    struct lz_dry *d = g->known && depth <= LZ_DRY_KEPT ? malloc(sizeof *d + no + np) : NULL;
    if (!d)
        return;
    *d = (struct lz_dry){g->adds, g->subs, before, depth, override ? d->text : NULL, d->text + no};
    if (override)
        memcpy(d->text, override, no);
    memcpy(d->text + no, path, np);
    const struct lz_dry *kept = d;
    if (!__atomic_compare_exchange_n(&lib->st->dry, &before, kept, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        free(d); /* another thread kept its own: as good */
}

/* No copy of the library mapped gave a later object's variable its
 * value: the file the first call would load gives it (its bytes no
 * relocation writes, read without loading it: a resolver cannot dlopen)
 * into out, 1. Where none can be loaded (a search that loads nothing
 * finds no file), that object would read a value the library never gave
 * it: the process stops, as ld.so would have at start (and as
 * lz_data_start stops where an object loaded at start uses one), the
 * search's report said. Where a copy is mapped already (its value a
 * relocation writes, or being relocated now: its own references come
 * here too), or the file's value is an address, the variable waits for
 * the load: 0. Runs inside the dynamic linker (a resolver, ld.so's lock
 * held), so its search calls no program code (the chooser, the log
 * callback), which may wait for a thread that waits for that lock; and
 * where the chooser would have answered (set, the override not), it does
 * not search at all. */
static int file_value_or_stop(const lz_lib *lib, const lz_datum *d, const char *mark, void *out)
{
    /* LAZY<ID>_LIBPATH, set, comes before the chooser and ends the search:
     * the search below never reaches the chooser then. */
    if (lz_status(lib) == LZ_LOADED ||
        (__atomic_load_n(&lib->st->chooser, __ATOMIC_ACQUIRE) && !lz_override_set(lib->env_var)))
        return 0;
    int mapped = 0;
    for (const char *const *s = lib->sonames; *s && !mapped; s++)
        lz_objects_real_with_soname(*s, mark, any_copy, &mapped);
    if (mapped)
        return 0;
    objects_gen g = {0};
    lz_dl_iterate_phdr(read_gen, &g);
    const char *override = lz_getenv(lib->env_var);
    const struct lz_dry *kept = dry_kept(lib, &g, override);
    /* The kept file, unless it is no longer there to read (replaced by
     * something else, gone): then the search again, which says so. */
    int got = kept ? lz_elfimage_value(kept->path, d->name, out, d->size) : -1;
    if (got >= 0)
        return got;
    lz_request req = {.in_linker = 1};
    lz_result *res = malloc(sizeof *res);
    char *report = malloc(LZ_MESSAGE_MAX);
    int found = !res || !report || lz_inspect_search(lib, &req, res, report, LZ_MESSAGE_MAX);
    if (found) { /* or not known: out of memory */
        if (res && res->found)
            dry_keep(lib, &g, override, res->path);
        int filled = res && res->found && lz_elfimage_value(res->path, d->name, out, d->size) == 1;
        free(res);
        free(report);
        return filled;
    }
    free(res);
    char small[160];
    char *who = lz_text_format(small, sizeof small, 512, "%s, bound after start: by an object "
                               "loaded later, or dlsym", d->name);
    lz_stop_variables(lib, who, report);
    return 0;
}

void *lz_data_bind(const lz_lib *lib, size_t i)
{
    const lz_data *data = data_of(lib, 0);
    const lz_datum *d = &data->items[i];
    /* Filled by the load, or by a resolver before, or written: as it is.
     * Nor while this thread dlopens a file (a candidate, which the search
     * may yet refuse, and whose values are not the chosen file's). */
    if (__atomic_load_n(&data->filled[i], __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&lib->st->handle, __ATOMIC_ACQUIRE) || lz_dl_opening() ||
        !untouched(d->addr, d->size))
        return d->addr;
    /* Still zero, the library not loaded by the shim: a copy loaded by
     * another object's dependency (a plugin's) gives its value, else the
     * file the first call would load (file_value_or_stop). Never that
     * copy's address, nor bytes of it a relocation writes (an address into
     * it): its dlclose could unmap them, and the library the shim loads
     * later would not share them. */
    unsigned char *value = malloc(d->size ? d->size : 1);
    char marker[160];
    const char *mark = lz_shim_marker(lib->shim, marker, sizeof marker);
    int found = 0;
    for (const char *const *s = lib->sonames; value && *s && !found; s++)
        found = lz_objects_real_value(*s, mark, d->name, value, d->size);
    if (value && !found)
        found = file_value_or_stop(lib, d, mark, value);
    if (found && !untouched(value, d->size) && untouched(d->addr, d->size)) {
        copy(d, value, lz_holder_relro(d->addr));
        __atomic_store_n(&data->filled[i], fill_mark(d->addr, d->size), __ATOMIC_RELEASE);
    }
    free(value);
    return d->addr;
}

void lz_data_start(const lz_lib *lib, const lz_data *data)
{
    __atomic_store_n(&lib->st->data[data->hooks != 0], data, __ATOMIC_RELEASE);
    __atomic_store_n(&lib->st->ready, &fill_ready, __ATOMIC_RELEASE);
    if (!data->nstart)
        return;
    const char *self = lz_objects_self_soname();
    const char *who;
    if (!self || strcmp(self, data->soname) != 0) {
        /* The static shim's member, linked because the program uses one. The
         * library binds to the program's definitions only where the program
         * exports them (a program exports nothing it is not told to). */
        who = "the object this code is linked into uses one";
        /* Each check is a pass over the loaded objects: made only to be said. */
        for (size_t i = 0; lz_logging(lib) && i < data->nstart; i++)
            if (!lz_objects_self_exports(data->loaded_at_start[i]))
                lz_log(lib, "%s is not exported by the program, so the library keeps its own "
                       "copy and does not see the program's writes: link with "
                       "-Wl,--export-dynamic-symbol=%s", data->loaded_at_start[i],
                       data->loaded_at_start[i]);
    } else if (!(who = lz_objects_import_any(data->soname, data->loaded_at_start, data->nstart))) {
        defer(lib, data);
        return;
    }
    lz_log(lib, "loading %s before main: its variables are used (%s)", lib->display, who);
    if (lz_ensure_loaded(lib, NULL) == LZ_FAILED)
        lz_stop_variables(lib, who, NULL);
}

lz_fn lz_data_call(const lz_lib *lib, size_t i)
{
    const lz_datum *d = &data_of(lib, 1)->items[i];
    int status = lz_ensure_loaded(lib, NULL);
    if (status == LZ_LOADED) {
        /* The variable, or the library's own where this table was registered
         * after the library was loaded (another table's constructor loaded
         * it before this one's ran), so the load did not fill it. */
        void *value = __atomic_load_n((void **)d->addr, __ATOMIC_ACQUIRE);
        const void *real;
        if (value == d->tramp && (real = lz_dlsym(lib->st->handle, d->name)))
            memcpy(&value, real, sizeof value);
        if (value && value != d->tramp)
            return (lz_fn)value;
    }
    if (!d->fail && status == LZ_BUSY)
        lz_stop_busy(lib, d->name);
    if (!d->fail)
        lz_stop(lib, d->name);
    return d->fail;
}
