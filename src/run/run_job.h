/* SPDX-License-Identifier: MIT
 * lazynccl-run's options for a whole job (run_job.c): --cache FILE, the
 * job's resolution cache (LAZYNCCL_CACHE, common/lz_cachefile.h), and
 * --report DIR, each process's load report (LAZYNCCL_REPORT_DIR,
 * common/lz_loadreport.h). Checked once here, where the user sees the
 * message; the audit module in every process ignores what it cannot use,
 * silently (it never prints unasked). */
#ifndef RUN_JOB_H
#define RUN_JOB_H

#include <stddef.h>

/* The absolute form of the cache file path into out, checked: a file that
 * exists must be one the audit module would read (the user's own, not
 * writable by others, a cache); one that does not must have a directory to
 * be written in. 0, or -1 with why. */
int run_job_cache(const char *path, char *out, size_t size, char *why, size_t whysize);
/* The absolute form of the report directory into out, checked: a
 * directory this user can write, or one its parent lets it make (the audit
 * module makes it). 0, or -1 with why. */
int run_job_report(const char *dir, char *out, size_t size, char *why, size_t whysize);

#endif
