/* SPDX-License-Identifier: MIT
 * The file a program asked for by path, which lazynccl-run's audit module
 * redirected to a drop-in (lz_asked.c; src/audit/lz_audit.c). */
#ifndef LZ_ASKED_H
#define LZ_ASKED_H

#include "lz_runtime.h"

/* Record path and who asked (the first request is kept): 0 recorded, 1 an
 * earlier one is kept. No lock, no allocation, no library call: it runs
 * inside the dynamic linker. */
LZ_HIDDEN int lz_asked_record(const lz_lib *lib, const char *path, const char *by);
/* The recorded request (never changed once recorded, so the strings stay
 * valid): 1 when there is one. */
LZ_HIDDEN int lz_asked(const lz_lib *lib, const char **path, const char **by);
/* The recorded path (stays valid), or NULL. */
LZ_HIDDEN const char *lz_asked_path(const lz_lib *lib);

#endif
