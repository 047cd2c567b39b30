/* SPDX-License-Identifier: MIT
 * The search order (docs/reference/search-order.md): one table of steps, walked in
 * turn; the first candidate accepted, or an authoritative step, ends the
 * search. A new step is a row here and its function in lz_steps.c.
 * lazynccl-info --steps and the docs' table list the same rows. */
#include "search/lz_order.h"
#include "common/lz_stepnames.h"
#include "search/lz_candidate.h"
#include "search/lz_emit.h"
#include "search/lz_linker.h"
#include "search/lz_steps.h"
#include "search/lz_wheel.h"

#include <stddef.h>

/* Whether a step has anything to try for a library, asked here so that a
 * step that has nothing is not entered: a drop-in's box of the path asked
 * for, the spec's wheel directories. NULL: every library's. */
static int asked_box(const lz_lib *lib)
{
    return lib->st && lib->st->asked;
}

static int wheel_dirs(const lz_lib *lib)
{
    return lib->wheel_dirs && lib->wheel_dirs[0];
}

static const struct order_row {
    const char *name; /* as the report names it (three the spec names: LAZY<ID>_LIBPATH,
                       * the variables of search_roots_before and _after) */
    const char *what;
    int (*run)(lz_search *w);
    int helper; /* taken for the runtime's own helper (libelf) too */
    int (*applies)(const lz_lib *lib);
} order_rows[] = {
    {LZ_STEP_ADOPTED, "the file of a handle the program adopted; nothing else is tried", lz_step_adopted, 1, NULL},
    {"LAZY<ID>_LIBPATH", "each entry, a file or a directory; when set, nothing else is tried",
     lz_step_variable, 1, NULL},
    {LZ_STEP_CHOSEN, "the file or handle the program's chooser answered; nothing else is tried",
     lz_step_chooser, 1, NULL},
    {LZ_STEP_SEARCH_LIST, "each entry of the list the program set; when set, nothing else is tried",
     lz_step_search_list, 1, NULL},
    {LZ_STEP_ASKED, "under lazynccl-run, the file the program asked for; nothing else is tried",
     lz_step_asked, 0, asked_box},
    {LZ_STEP_LOADED, "an object in the process with one of the sonames", lz_step_loaded, 1, NULL},
    {LZ_STEP_RELEASE, "the directory of a library of the same release already loaded", lz_step_release, 0, NULL},
    {LZ_STEP_WHEEL, "the spec's wheel directories below each site-packages", lz_step_wheel, 0, wheel_dirs},
    {"search_roots_before", "below the prefixes the spec names (CONDA_PREFIX)", lz_step_roots_before, 0, NULL},
    {NULL, NULL, lz_step_linker, 1, NULL}, /* the dynamic linker's steps (lz_linker.c) */
    {"search_roots_after", "below the prefixes the spec names (CUDA_HOME, CUDA_PATH, NCCL_HOME)", lz_step_roots_after, 0, NULL},
    {LZ_STEP_DEFAULT_DIRS, "the spec's default directories", lz_step_default, 0, NULL},
};
enum { ORDER_ROWS = sizeof order_rows / sizeof order_rows[0] };

void lz_order(lz_search *w)
{
    size_t start = w->said;
    w->res.fallback_score = LZ_NO_FALLBACK;
    /* The runtime's own helper (libelf) comes only from places the caller
     * cannot plant a file in (docs/reference/search-order.md). */
    for (size_t i = 0; i < ORDER_ROWS; i++) {
        const struct order_row *row = &order_rows[i];
        if ((row->helper || !w->lib->system_only) && (!row->applies || row->applies(w->lib)) &&
            row->run(w))
            break;
    }
    if (!w->res.found)
        lz_take_fallback(w);
    if (!w->res.found) {
        lz_closing(w);
        if (w->said == start)
            lz_note(w, LZ_NOTE_NOTHING_FOUND);
        lz_places(w);
    }
}

struct numbered {
    lz_order_row_fn fn;
    void *ctx;
    int number;
};

static void linker_row(void *ctx, const char *name, const char *what)
{
    struct numbered *n = ctx;
    n->fn(n->ctx, ++n->number, name, what);
}

void lz_order_each(lz_order_row_fn fn, void *ctx)
{
    struct numbered n = {fn, ctx, 0};
    for (size_t i = 0; i < ORDER_ROWS; i++) {
        if (order_rows[i].name)
            fn(ctx, ++n.number, order_rows[i].name, order_rows[i].what);
        else
            lz_linker_each(linker_row, &n);
    }
}
