/* SPDX-License-Identifier: MIT
 * What a library that cannot be had says: the one line a spec may ask
 * for, and the stop that ends a process as the dynamic linker would have
 * at start. Written with write(2) alone: the caller may hold stdio's locks,
 * or be a thread with the smallest stack. */
#include "base/lz_stop.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

LZ_DEF_DATA __attribute__((unused)) const char lz_stop_part = 1;

void lz_say_unavailable(const lz_lib *lib, const char *m)
{
    size_t n = strcspn(m, "\n");
    const char *next = m[n] ? m + n + 1 : "";
    next += strspn(next, " ");
    size_t n2 = strcspn(next, "\n");
    int more = next[n2] && next[n2 + 1];
    char line[1024];
    int k = snprintf(line, sizeof line, "%.*s%s%.*s%s%s%s\n", (int)n, m, n2 ? " " : "", (int)n2,
                     next, more ? " (the whole report: " : "", more ? lib->debug_env : "",
                     more ? "=1)" : "");
    if (k > 0 && write(2, line, (size_t)k < sizeof line ? (size_t)k : sizeof line - 1) < 0)
        return; /* nowhere to say it */
}

void lz_stop_with(const char *m, const char *head, int k, size_t size)
{
    size_t len = strlen(m);
    if (k > 0 && write(2, head, (size_t)k < size ? (size_t)k : size - 1) >= 0 &&
        write(2, m, len) >= 0 && (!len || m[len - 1] != '\n'))
        (void)!write(2, "\n", 1);
    _exit(127);
}

void lz_stop_uncalled(const lz_lib *lib, const char *name, const char *m)
{
    char head[768];
    int k = snprintf(head, sizeof head, "%s: %s was called, and no failure value is known for it "
                     "(its API has none, the spec's [failure] names none for it, or no header "
                     "declares it): stopping, as the dynamic "
                     "linker would have at start (error while loading shared libraries: %s)\n",
                     lib->prefix, name, lib->sonames[0]);
    lz_stop_with(m, head, k, sizeof head);
}
