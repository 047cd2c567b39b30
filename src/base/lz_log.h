/* SPDX-License-Identifier: MIT
 * The log (lz_log.c), of both runtimes: silent unless asked. */
#ifndef LZ_LOG_H
#define LZ_LOG_H

#include "base/lz_runtime.h"

#include <stdarg.h>

/* Log a line when logging is on (the spec's debug variable, or a callback
 * set through <shim>_set_log_callback). */
LZ_HIDDEN void lz_log(const lz_lib *lib, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The same from a va_list; callback 0: never the program's callback (a
 * line from inside the dynamic linker), stderr only where asked. */
LZ_HIDDEN void lz_vlog(const lz_lib *lib, int callback, const char *fmt, va_list ap);

/* How many times the program's log callback has returned, in any thread:
 * code the runtime does not own ran (process/lz_ldlock.c asks the
 * thread's id again). */
LZ_DECL_DATA unsigned long lz_log_callbacks;

/* 1 when the library's log is on (a callback, or the debug variable). */
LZ_HIDDEN int lz_logging(const lz_lib *lib);

#endif
