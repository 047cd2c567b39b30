/* SPDX-License-Identifier: MIT
 * The file a program asked for by path, which lazynccl-run's audit module
 * redirected to a drop-in (lz_asked.c; the box's format: lz_note.h). */
#ifndef LZ_ASKED_H
#define LZ_ASKED_H

#include "base/lz_runtime.h"

/* The recorded request (never changed once recorded, so the strings stay
 * valid): 1 when there is one. *step is the search step to name it by:
 * the dynamic linker's that would have found it, for a request by name;
 * LZ_STEP_ASKED for one by path. */
LZ_HIDDEN int lz_asked(const lz_lib *lib, const char **path, const char **by, const char **step);
/* The recorded path (stays valid), or NULL. */
LZ_HIDDEN const char *lz_asked_path(const lz_lib *lib);

#endif
