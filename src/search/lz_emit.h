/* SPDX-License-Identifier: MIT
 * What a search says (lz_emit.c): its steps emit events, its listeners
 * hear them. */
#ifndef LZ_EMIT_H
#define LZ_EMIT_H

#include "search/lz_search.h"

/* Add a listener to the search: 0 when it has as many as it holds. */
LZ_HIDDEN int lz_listen(lz_search *w, lz_listener_fn heard, void *ctx);

/* 1 when anyone hears the search: what only a listener would read (a
 * place's name, a verdict's system calls) is not worked out otherwise. */
static inline int lz_heard(const lz_search *w)
{
    return w->nlisteners != 0;
}

LZ_HIDDEN void lz_emit_verdict(lz_search *w, const char *step, const char *path, int verdict,
                               const lz_probe *probe, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
LZ_HIDDEN void lz_emit_note(lz_search *w, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
LZ_HIDDEN void lz_emit(lz_search *w, int kind, const char *step, const char *path);

/* What the steps say. A search nobody hears makes no call: its steps
 * neither format nor leave their files to say anything. */
/* A verdict on a candidate: LZ_CHOSEN, LZ_REJECTED, LZ_KEPT, LZ_NOT_REACHED,
 * LZ_SELF (rejected, being this shim's own file); fmt says why, or NULL. */
#define lz_verdict(w, ...) (lz_heard(w) ? lz_emit_verdict((w), __VA_ARGS__) : (void)0)
/* A line of the report (and of the log). */
#define lz_note(w, ...) (lz_heard(w) ? lz_emit_note((w), LZ_EVENT_NOTE, __VA_ARGS__) : (void)0)
/* A line of the log alone. */
#define lz_aside(w, ...) (lz_heard(w) ? lz_emit_note((w), LZ_EVENT_ASIDE, __VA_ARGS__) : (void)0)
/* A place a step looked in, for the failure report's last lines. */
#define lz_looked(w, step, place) \
    (lz_heard(w) ? lz_emit((w), LZ_EVENT_LOOKED, (step), (place)) : (void)0)
/* The report's closing lines follow. */
#define lz_closing(w) (lz_heard(w) ? lz_emit((w), LZ_EVENT_CLOSING, NULL, NULL) : (void)0)
/* Nothing was found: the places looked in close the report. */
#define lz_places(w) (lz_heard(w) ? lz_emit((w), LZ_EVENT_PLACES, NULL, NULL) : (void)0)

#endif
