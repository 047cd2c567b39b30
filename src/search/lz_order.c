/* SPDX-License-Identifier: MIT
 * The search order (docs/search-order.md): the steps (lz_steps.c,
 * lz_wheel.c) in turn; the first candidate accepted ends the search. */
#include "search/lz_order.h"
#include "search/lz_candidate.h"
#include "base/lz_report.h"
#include "search/lz_steps.h"
#include "search/lz_wheel.h"

void lz_order(lz_search *w)
{
    size_t start = w->rep.len;
    w->res.fallback_score = LZ_NO_FALLBACK;
    if (lz_step_override(w))
        ;
    else if (w->lib->system_only)
        /* The runtime's own helper (libelf): only from places the caller
         * cannot plant a file in (docs/search-order.md). */
        (void)(lz_step_loaded(w) || lz_step_linker(w));
    else
        (void)(lz_step_asked(w) || lz_step_loaded(w) || lz_step_release(w) || lz_step_wheel(w) || lz_step_roots(w, w->lib->roots_before) ||
               lz_step_linker(w) || lz_step_roots(w, w->lib->roots_after) || lz_step_default(w));
    if (!w->res.found)
        lz_take_fallback(w);
    if (!w->res.found)
        lz_report_close(w);
    if (!w->res.found && w->rep.len == start)
        lz_note(w, LZ_NOTE_NOTHING_FOUND);
    if (!w->res.found)
        lz_report_places(w);
}
