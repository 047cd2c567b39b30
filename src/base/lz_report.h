/* SPDX-License-Identifier: MIT
 * The report (lz_report.c): a listener of a search's events. */
#ifndef LZ_REPORT_H
#define LZ_REPORT_H

#include "search/lz_search.h"

/* One search's report: its lines (in text, when given a buffer), and, on
 * failure, every place looked in, grouped by step. Each line it takes is
 * logged too, when logging is on. */
typedef struct lz_report {
    const lz_lib *lib;
    char *text;
    size_t size, len;
    size_t dropped;          /* lines that did not fit (lz_note) */
    int closing;             /* the closing lines may use the reserve */
    size_t places_len;
    const char *places_step;
    const char *self_step;   /* where this shim's own file was met (self_path) */
    int in_linker;           /* its lines logged to stderr only, never to the
                              * program's callback (lz_request.in_linker) */
    char places[2048];       /* places_len bytes */
    char self_path[PATH_MAX]; /* self_step's file; written when met */
} lz_report;

/* A report into text (size bytes, already holding len; NULL: the log's
 * lines alone). 0 when there is nothing to listen for: no text, and the
 * log off. */
LZ_HIDDEN int lz_report_init(lz_report *rep, const lz_lib *lib, char *text, size_t size,
                             size_t len);
/* The report's listener (lz_listen's heard, rep its ctx). */
LZ_HIDDEN void lz_report_heard(void *rep, const lz_event *ev);

#endif
