/* SPDX-License-Identifier: MIT
 * The log: the spec's debug variable (LAZYNCCL_DEBUG=1) prints its lines
 * to stderr, a callback set through <shim>_set_log_callback receives them
 * instead. */
#include "base/lz_log.h"
#include "base/lz_env.h"
#include "common/lz_debug.h"

#include <stdio.h>
#include <string.h>

static int to_stderr(const lz_lib *lib)
{
    return lz_debug_wanted(lz_getenv(lib->debug_env));
}

int lz_logging(const lz_lib *lib)
{
    return __atomic_load_n(&lib->st->log_fn, __ATOMIC_ACQUIRE) || to_stderr(lib);
}

LZ_DEF_DATA unsigned long lz_log_callbacks;

void lz_vlog(const lz_lib *lib, int callback, const char *fmt, va_list ap)
{
    lz_log_fn fn = callback ? __atomic_load_n(&lib->st->log_fn, __ATOMIC_ACQUIRE) : NULL;
    if (!fn && !to_stderr(lib))
        return;
    char line[1024 + 1]; /* and the newline */
    int n = snprintf(line, sizeof line - 1, "%s: ", lib->prefix);
    vsnprintf(line + n, sizeof line - 1 - (size_t)n, fmt, ap);
    if (fn) {
        fn(lib->st->log_user, line);
        __atomic_fetch_add(&lz_log_callbacks, 1, __ATOMIC_RELAXED);
        return;
    }
    /* One fwrite of the line and its newline: fprintf to an unbuffered
     * stderr formats through a buffer of BUFSIZ on the stack, more than a
     * thread's smallest stack leaves a first call. */
    size_t len = strlen(line);
    line[len] = '\n';
    fwrite(line, 1, len + 1, stderr);
}

void lz_log(const lz_lib *lib, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lz_vlog(lib, 1, fmt, ap);
    va_end(ap);
}
