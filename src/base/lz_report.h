/* SPDX-License-Identifier: MIT
 * Reports and logging (lz_report.c). */
#ifndef LZ_REPORT_H
#define LZ_REPORT_H

#include "search/lz_search.h"

/* Append one line to the search's report and to the log (lz_report.c). */
LZ_HIDDEN void lz_note(lz_search *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Record a verdict on a candidate: a report line, a log line, an event. */
LZ_HIDDEN void lz_verdict(lz_search *w, const char *step, const char *path, int verdict,
                          const lz_probe *probe, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Record a place the search looked in, for the failure report's last lines. */
LZ_HIDDEN void lz_looked(lz_search *w, const char *step, const char *place);
/* Append the places looked in to the report (when nothing was found). */
LZ_HIDDEN void lz_report_places(lz_search *w);
/* The report's closing lines follow: they may use the room kept for them,
 * led by how many lines did not fit. */
LZ_HIDDEN void lz_report_close(lz_search *w);
/* Log a line when logging is on (LAZYNCCL_DEBUG or a callback). */
LZ_HIDDEN void lz_log(const lz_lib *lib, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* 1 when the library's log is on (a callback, or the debug variable). */
LZ_HIDDEN int lz_logging(const lz_lib *lib);

#endif
