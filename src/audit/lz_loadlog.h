/* SPDX-License-Identifier: MIT
 * The audit module's side of the load report (lz_loadlog.c; the file,
 * common/lz_loadreport.h): each object the process maps, appended to the
 * process's own file at the end of the start and of each dlopen. */
#ifndef LZ_LOADLOG_H
#define LZ_LOADLOG_H

/* Report into the directory dir (LAZYNCCL_REPORT_DIR); an empty or
 * relative one is ignored. */
void lz_loadlog_open(const char *dir);
/* An object mapped: its file and SONAME (or NULL). */
void lz_loadlog_object(const char *path, const char *soname);
/* What was noted, appended to the file. */
void lz_loadlog_flush(void);

#endif
