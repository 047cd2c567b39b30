/* SPDX-License-Identifier: MIT
 * Exported variables (lz_data.h). */
#include "lz_data.h"

#include "lz_api.h"
#include "lz_dl.h"
#include "lz_once.h"
#include "lz_objects.h"
#include "lz_report.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const lz_data *data_of(const lz_lib *lib, int hooks)
{
    return __atomic_load_n(&lib->st->data[hooks], __ATOMIC_ACQUIRE);
}

void lz_data_start(const lz_lib *lib, const lz_data *data)
{
    __atomic_store_n(&lib->st->data[data->hooks != 0], data, __ATOMIC_RELEASE);
    __atomic_store_n(&lib->st->on_load, lz_data_fill, __ATOMIC_RELEASE);
    if (!data->nstart)
        return;
    const char *self = lz_objects_self_soname();
    const char *who;
    if (!self || strcmp(self, data->soname) != 0) {
        /* The static shim's member, linked because the program uses one. The
         * library binds to the program's definitions only where the program
         * exports them (a program exports nothing it is not told to). */
        who = "the program links this code because it uses one";
        /* Each check is a pass over the loaded objects: made only to be said. */
        for (size_t i = 0; lz_logging(lib) && i < data->nstart; i++)
            if (!lz_objects_self_exports(data->loaded_at_start[i]))
                lz_log(lib, "%s is not exported by the program, so the library keeps its own "
                       "copy and does not see the program's writes: link with "
                       "-Wl,--export-dynamic-symbol=%s", data->loaded_at_start[i],
                       data->loaded_at_start[i]);
    } else if (!(who = lz_objects_import_any(data->soname, data->loaded_at_start, data->nstart)))
        return;
    lz_log(lib, "loading %s before main: its variables are used (%s)", lib->display, who);
    lz_ensure_loaded(lib, NULL);
}

static int untouched(const unsigned char *p, size_t size)
{
    for (size_t i = 0; i < size; i++)
        if (p[i])
            return 0;
    return 1;
}

/* The library's initial value into the variable. A program linked to the
 * real library holds its copy of a const variable in its RELRO segment,
 * read-only since relocation: writable for the copy, read-only again. */
static void copy(const lz_datum *d, const void *real)
{
    if (!lz_objects_relro(d->addr)) {
        memcpy(d->addr, real, d->size);
        return;
    }
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)d->addr & ~(page - 1);
    size_t len = ((uintptr_t)d->addr + d->size - start + page - 1) & ~(page - 1);
    if (mprotect((void *)start, len, PROT_READ | PROT_WRITE) != 0)
        return; /* it keeps the shim's zero: the library's own copy is unaffected */
    memcpy(d->addr, real, d->size);
    mprotect((void *)start, len, PROT_READ);
}

static void fill(const lz_data *data, void *handle)
{
    for (size_t i = 0; data && i < data->n; i++) {
        const lz_datum *d = &data->items[i];
        const void *real = lz_dlsym(handle, d->name);
        if (!real || real == d->addr)
            continue; /* the library's own definition is the one in use */
        if (d->tramp) {
            void *expect = (void *)d->tramp, *value;
            memcpy(&value, real, sizeof value);
            __atomic_compare_exchange_n((void **)d->addr, &expect, value, 0, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED);
        } else if (untouched(d->addr, d->size)) {
            copy(d, real);
        }
    }
}

void lz_data_fill(const lz_lib *lib, void *handle)
{
    fill(data_of(lib, 0), handle);
    fill(data_of(lib, 1), handle);
}

lz_fn lz_data_call(const lz_lib *lib, size_t i)
{
    const lz_datum *d = &data_of(lib, 1)->items[i];
    if (lz_ensure_loaded(lib, NULL) == LZ_LOADED) {
        /* The variable, or the library's own when the loading thread has not
         * filled it yet. */
        void *value = __atomic_load_n((void **)d->addr, __ATOMIC_ACQUIRE);
        const void *real;
        if (value == d->tramp && (real = lz_dlsym(lib->st->handle, d->name)))
            memcpy(&value, real, sizeof value);
        if (value && value != d->tramp)
            return (lz_fn)value;
    }
    if (!d->fail)
        lz_stop(lib, d->name);
    return d->fail;
}
