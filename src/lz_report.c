/* Reports and logging. Silent unless asked: LAZYNCCL_DEBUG=1 prints to
 * stderr, a callback set through <shim>_set_log_callback receives lines. */
#include "lz_search.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

int lz_secure(void)
{
    return getauxval(AT_SECURE) != 0;
}

const char *lz_getenv(const char *name)
{
    return lz_secure() ? NULL : getenv(name);
}

static void lz_vlog(const lz_lib *lib, const char *fmt, va_list ap)
{
    lz_log_fn fn = __atomic_load_n(&lib->st->log_fn, __ATOMIC_ACQUIRE);
    const char *debug = lz_getenv("LAZYNCCL_DEBUG");
    int to_stderr = debug && *debug && strcmp(debug, "0") != 0;
    if (!fn && !to_stderr)
        return;
    char line[1024];
    int n = snprintf(line, sizeof line, "%s: ", lib->shim);
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

void lz_note(lz_walk *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (w->report && w->report_len + 1 < w->report_size) {
        va_list copy;
        va_copy(copy, ap);
        size_t room = w->report_size - w->report_len;
        int n = snprintf(w->report + w->report_len, room, "  ");
        if (n > 0 && (size_t)n < room) {
            int m = vsnprintf(w->report + w->report_len + n, room - (size_t)n, fmt, copy);
            size_t used = (size_t)n + (m > 0 ? (size_t)m : 0);
            if (used + 1 < room) {
                w->report[w->report_len + used] = '\n';
                w->report[w->report_len + used + 1] = '\0';
                used++;
            }
            w->report_len += used < room ? used : room - 1;
        }
        va_end(copy);
    }
    lz_vlog(w->lib, fmt, ap);
    va_end(ap);
}

void lz_verdict(lz_walk *w, const char *step, const char *path, int verdict,
                const lz_probe *probe, const char *fmt, ...)
{
    static const char *const words[] = {"chosen", "rejected", "kept", "not reached"};
    char reason[1024] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(reason, sizeof reason, fmt, ap);
        va_end(ap);
    }
    const char *shown = path && *path ? path : "empty entry";
    if (verdict == LZ_KEPT)
        lz_note(w, "[%s] %s: %s", step, shown, reason);
    else if (reason[0])
        lz_note(w, "[%s] %s: %s: %s", step, shown, words[verdict], reason);
    else
        lz_note(w, "[%s] %s: %s", step, shown, words[verdict]);
    if (w->on_event) {
        lz_event ev = {step, path ? path : "", verdict, reason, probe};
        w->on_event(w->ctx, &ev);
    }
}

/* Places are grouped by step, in the order looked at: "[step] a, b". */
void lz_looked(lz_walk *w, const char *step, const char *place)
{
    size_t room = sizeof w->places - w->places_len;
    if (room < 2)
        return;
    int same = w->places_step && strcmp(w->places_step, step) == 0;
    int n = same ? snprintf(w->places + w->places_len, room, ", %s", place)
                 : snprintf(w->places + w->places_len, room, "%s    [%s] %s",
                            w->places_len ? "\n" : "", step, place);
    if (n < 0 || (size_t)n >= room) {
        /* Out of room: end with a mark that the list is cut short. */
        size_t end = sizeof w->places - 5;
        if (w->places_len > end)
            w->places_len = end;
        memcpy(w->places + end, " ...", 5);
        w->places_len = sizeof w->places - 1;
        return;
    }
    w->places_len += (size_t)n;
    w->places_step = step;
}

void lz_report_places(lz_walk *w)
{
    if (w->places_len)
        lz_note(w, "places searched, in order:\n%s", w->places);
}
