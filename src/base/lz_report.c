/* SPDX-License-Identifier: MIT
 * Reports and logging. Silent unless asked: the spec's debug variable
 * (LAZYNCCL_DEBUG=1) prints to stderr, a callback set through
 * <shim>_set_log_callback receives lines. */
#include "base/lz_report.h"
#include "common/lz_debug.h"
#include "base/lz_env.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int to_stderr(const lz_lib *lib)
{
    return lz_debug_wanted(lz_getenv(lib->debug_env));
}

int lz_logging(const lz_lib *lib)
{
    return __atomic_load_n(&lib->st->log_fn, __ATOMIC_ACQUIRE) || to_stderr(lib);
}

static void lz_vlog(const lz_lib *lib, const char *fmt, va_list ap)
{
    lz_log_fn fn = __atomic_load_n(&lib->st->log_fn, __ATOMIC_ACQUIRE);
    if (!fn && !to_stderr(lib))
        return;
    char line[1024];
    int n = snprintf(line, sizeof line, "%s: ", lib->prefix);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    if (fn)
        fn(lib->st->log_user, line);
    else
        fprintf(stderr, "%s\n", line);
}

void lz_log(const lz_lib *lib, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lz_vlog(lib, fmt, ap);
    va_end(ap);
}

/* Room kept at the end of a report for its closing lines (the count of
 * lines left out, "... so nothing else was tried", the places searched). */
#define REPORT_RESERVE 3072

/* A line of the report text alone (lz_note also logs it). */
static void report_line(lz_search *w, const char *fmt, va_list ap)
{
    size_t limit = w->rep.closing || w->rep.size < 2 * REPORT_RESERVE ? w->rep.size
                                                                      : w->rep.size - REPORT_RESERVE;
    if (w->rep.text && w->rep.len + 1 < limit) {
        va_list copy;
        va_copy(copy, ap);
        size_t room = limit - w->rep.len;
        char *at = w->rep.text + w->rep.len;
        int n = snprintf(at, room, "  ");
        int m = n > 0 && (size_t)n < room ? vsnprintf(at + n, room - (size_t)n, fmt, copy) : -1;
        size_t used = (size_t)n + (m > 0 ? (size_t)m : 0);
        if (m >= 0 && used + 1 < room) { /* the whole line, or none of it */
            at[used] = '\n';
            at[used + 1] = '\0';
            w->rep.len += used + 1;
        } else {
            *at = '\0';
            w->rep.dropped++;
        }
        va_end(copy);
    } else if (w->rep.text) {
        w->rep.dropped++;
    }
}

void lz_note(lz_search *w, const char *fmt, ...)
{
    if (w->silent)
        return;
    va_list ap;
    va_start(ap, fmt);
    report_line(w, fmt, ap);
    va_end(ap);
    va_start(ap, fmt);
    lz_vlog(w->lib, fmt, ap);
    va_end(ap);
}

static void report_add(lz_search *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report_line(w, fmt, ap);
    va_end(ap);
}

void lz_verdict(lz_search *w, const char *step, const char *path, int verdict,
                const lz_probe *probe, const char *fmt, ...)
{
    static const char *const words[] = {"chosen", "rejected", "kept", "not reached"};
    if (w->silent || (!w->rep.text && !w->req.on_event && !lz_logging(w->lib)))
        return; /* nothing is formatted (lz_search.h) */
    char reason[1024] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(reason, sizeof reason, fmt, ap);
        va_end(ap);
    }
    const char *shown = path && *path ? path : "empty entry";
    if (verdict == LZ_SELF) {
        /* The shim's own file (a drop-in on the path it stands in on): told
         * to the log and the tool now, but last in the report, so that the
         * report's first line is a real library and why it was refused. */
        lz_log(w->lib, "[%s] %s: rejected: %s", step, shown, LZ_SELF_REASON);
        if (w->rep.text && !w->rep.self_step) {
            w->rep.self_step = step;
            snprintf(w->self_path, sizeof w->self_path, "%s", shown);
        }
        if (w->req.on_event) {
            lz_event ev = {step, path ? path : "", LZ_REJECTED, LZ_SELF_REASON, probe};
            w->req.on_event(w->req.ctx, &ev);
        }
        return;
    }
    if (verdict == LZ_KEPT)
        lz_note(w, "[%s] %s: %s", step, shown, reason);
    else if (reason[0])
        lz_note(w, "[%s] %s: %s: %s", step, shown, words[verdict], reason);
    else
        lz_note(w, "[%s] %s: %s", step, shown, words[verdict]);
    if (w->req.on_event) {
        lz_event ev = {step, path ? path : "", verdict, reason, probe};
        w->req.on_event(w->req.ctx, &ev);
    }
}

/* Places are grouped by step, in the order looked at: "[step] a, b". */
void lz_looked(lz_search *w, const char *step, const char *place)
{
    size_t room = sizeof w->rep.places - w->rep.places_len;
    if (room < 2 || !w->rep.text)
        return; /* only the failure report lists them */
    int same = w->rep.places_step && strcmp(w->rep.places_step, step) == 0;
    int n = same ? snprintf(w->rep.places + w->rep.places_len, room, ", %s", place)
                 : snprintf(w->rep.places + w->rep.places_len, room, "%s    [%s] %s",
                            w->rep.places_len ? "\n" : "", step, place);
    if (n < 0 || (size_t)n >= room) {
        /* Out of room: end with a mark that the list is cut short. */
        size_t end = sizeof w->rep.places - 5;
        if (w->rep.places_len > end)
            w->rep.places_len = end;
        memcpy(w->rep.places + end, " ...", 5);
        w->rep.places_len = sizeof w->rep.places - 1;
        return;
    }
    w->rep.places_len += (size_t)n;
    w->rep.places_step = step;
}

void lz_report_close(lz_search *w)
{
    if (w->rep.closing)
        return;
    w->rep.closing = 1;
    if (w->rep.self_step)
        report_add(w, "[%s] %s: rejected: %s", w->rep.self_step, w->self_path, LZ_SELF_REASON);
    if (w->rep.dropped)
        lz_note(w, "... %zu more line%s left out (a report holds %d bytes)", w->rep.dropped,
                w->rep.dropped == 1 ? "" : "s", LZ_MESSAGE_MAX);
}

void lz_report_places(lz_search *w)
{
    lz_report_close(w);
    if (w->rep.places_len)
        lz_note(w, "places searched, in order:\n%s", w->rep.places);
}
