/* SPDX-License-Identifier: MIT
 * What a search says: each step emits events (a verdict, a note, a place
 * looked in), formatted once, and every listener hears each, newest first: the
 * report and the log (base/lz_report.c), a tool (lazynccl-info). No step
 * knows who listens, and a search nobody hears formats nothing
 * (lz_emit.h's macros make no call). */
#include "search/lz_emit.h"
#include "base/lz_text.h"

#include <stdarg.h>
#include <stdio.h>

/* A note names up to two paths beside its words. */
#define NOTE_MAX (2 * PATH_MAX + 1024)

int lz_listen(lz_search *w, lz_listener_fn heard, void *ctx)
{
    if (w->nlisteners == LZ_MAX_LISTENERS)
        return 0;
    w->listeners[w->nlisteners++] = (lz_listener){heard, ctx};
    return 1;
}

static void emit_tell(lz_search *w, const lz_event *ev)
{
    /* Newest first: the report, added after a tool's on_event, writes and
     * logs its line before the tool hears it (a tool may load and log). */
    for (int i = w->nlisteners; i-- > 0;)
        w->listeners[i].heard(w->listeners[i].ctx, ev);
}

void lz_emit_verdict(lz_search *w, const char *step, const char *path, int verdict,
                     const lz_probe *probe, const char *fmt, ...)
{
    char reason[1024] = "";
    if (verdict == LZ_SELF) {
        snprintf(reason, sizeof reason, "%s", LZ_SELF_REASON);
    } else if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(reason, sizeof reason, fmt, ap);
        va_end(ap);
    }
    w->said++;
    emit_tell(w, &(lz_event){.kind = LZ_EVENT_VERDICT, .step = step, .path = path ? path : "",
                        .verdict = verdict, .reason = reason, .probe = probe});
}

void lz_emit_note(lz_search *w, int kind, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    char *text = lz_text_vformat(small, sizeof small, NOTE_MAX, fmt, ap);
    va_end(ap);
    if (kind == LZ_EVENT_NOTE)
        w->said++;
    emit_tell(w, &(lz_event){.kind = kind, .reason = text});
    lz_text_free(text, small);
}

void lz_emit(lz_search *w, int kind, const char *step, const char *path)
{
    emit_tell(w, &(lz_event){.kind = kind, .step = step, .path = path});
}
