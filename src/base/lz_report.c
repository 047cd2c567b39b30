/* SPDX-License-Identifier: MIT
 * The report: it listens to a search (lz_emit.c's events) and writes its
 * lines, each of which the log (lz_log.c) gets too. */
#include "base/lz_report.h"
#include "base/lz_log.h"
#include "base/lz_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A line of the log from a report: never the callback inside the linker. */
static void report_log(const lz_report *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report_log(const lz_report *rep, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lz_vlog(rep->lib, !rep->in_linker, fmt, ap);
    va_end(ap);
}

/* Room kept at the end of a report for its closing lines (the count of
 * lines left out, "... so nothing else was tried", the places searched). */
#define REPORT_RESERVE 3072

int lz_report_init(lz_report *rep, const lz_lib *lib, char *text, size_t size, size_t len)
{
    if (!text && !lz_logging(lib))
        return 0;
    if (text && len < size)
        text[len] = '\0'; /* a string before any line, however small the buffer */
    rep->lib = lib;
    rep->text = text;
    rep->size = size;
    rep->len = len;
    rep->dropped = 0;
    rep->closing = 0;
    rep->places_len = 0;
    rep->places_step = NULL;
    rep->self_step = NULL;
    rep->in_linker = 0;
    return 1;
}

/* A line of the report text alone. */
static void report_line(lz_report *rep, const char *line)
{
    size_t limit = rep->closing || rep->size < 2 * REPORT_RESERVE ? rep->size
                                                                  : rep->size - REPORT_RESERVE;
    if (rep->text && rep->len + 1 < limit) {
        size_t room = limit - rep->len;
        char *at = rep->text + rep->len;
        int n = snprintf(at, room, "  %s\n", line);
        if (n >= 0 && (size_t)n < room) { /* the whole line, or none of it */
            rep->len += (size_t)n;
        } else {
            *at = '\0';
            rep->dropped++;
        }
    } else if (rep->text) {
        rep->dropped++;
    }
}

/* A line of the report, and of the log. */
static void report_say(lz_report *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report_say(lz_report *rep, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    char *line = lz_text_vformat(small, sizeof small, sizeof rep->places + 256, fmt, ap);
    va_end(ap);
    report_line(rep, line);
    report_log(rep, "%s", line);
    lz_text_free(line, small);
}

static void report_verdict(lz_report *rep, const lz_event *ev)
{
    static const char *const words[] = {"chosen", "rejected", "kept", "not reached"};
    const char *shown = *ev->path ? ev->path : "empty entry";
    if (ev->verdict == LZ_SELF) {
        /* The shim's own file (a drop-in on the path it stands in on): told
         * to the log now, but last in the report, so that the report's
         * first line is a real library and why it was refused. */
        report_log(rep, "[%s] %s: rejected: %s", ev->step, shown, ev->reason);
        if (rep->text && !rep->self_step) {
            rep->self_step = ev->step;
            snprintf(rep->self_path, sizeof rep->self_path, "%s", shown);
        }
    } else if (ev->verdict == LZ_KEPT) {
        report_say(rep, "[%s] %s: %s", ev->step, shown, ev->reason);
    } else if (ev->reason[0]) {
        report_say(rep, "[%s] %s: %s: %s", ev->step, shown, words[ev->verdict], ev->reason);
    } else {
        report_say(rep, "[%s] %s: %s", ev->step, shown, words[ev->verdict]);
    }
}

/* Places are grouped by step, in the order looked at: "[step] a, b". */
static void report_looked(lz_report *rep, const char *step, const char *place)
{
    size_t room = sizeof rep->places - rep->places_len;
    if (room < 2 || !rep->text)
        return; /* only the failure report lists them */
    int same = rep->places_step && strcmp(rep->places_step, step) == 0;
    int n = same ? snprintf(rep->places + rep->places_len, room, ", %s", place)
                 : snprintf(rep->places + rep->places_len, room, "%s    [%s] %s",
                            rep->places_len ? "\n" : "", step, place);
    if (n < 0 || (size_t)n >= room) {
        /* Out of room: end with a mark that the list is cut short. */
        size_t end = sizeof rep->places - 5;
        if (rep->places_len > end)
            rep->places_len = end;
        memcpy(rep->places + end, " ...", 5);
        rep->places_len = sizeof rep->places - 1;
        return;
    }
    rep->places_len += (size_t)n;
    rep->places_step = step;
}

static void report_closing(lz_report *rep)
{
    if (rep->closing)
        return;
    rep->closing = 1;
    if (rep->self_step) {
        char small[256];
        char *line = lz_text_format(small, sizeof small, PATH_MAX + 256, "[%s] %s: rejected: %s",
                                    rep->self_step, rep->self_path, LZ_SELF_REASON);
        report_line(rep, line);
        lz_text_free(line, small);
    }
    if (rep->dropped)
        report_say(rep, "... %zu more line%s left out (a report holds %d bytes)", rep->dropped,
            rep->dropped == 1 ? "" : "s", LZ_MESSAGE_MAX);
}

void lz_report_heard(void *ctx, const lz_event *ev)
{
    lz_report *rep = ctx;
    switch (ev->kind) {
    case LZ_EVENT_VERDICT:
        report_verdict(rep, ev);
        break;
    case LZ_EVENT_NOTE:
        report_line(rep, ev->reason);
        report_log(rep, "%s", ev->reason);
        break;
    case LZ_EVENT_ASIDE:
        report_log(rep, "%s", ev->reason);
        break;
    case LZ_EVENT_LOOKED:
        report_looked(rep, ev->step, ev->path);
        break;
    case LZ_EVENT_CLOSING:
        report_closing(rep);
        break;
    case LZ_EVENT_PLACES:
        report_closing(rep);
        if (rep->places_len)
            report_say(rep, "places searched, in order:\n%s", rep->places);
        break;
    }
}
