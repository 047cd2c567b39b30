/* SPDX-License-Identifier: MIT
 * The drop-ins a launch serves (run_dropins.c), from the directory
 * run_find.h found: each family's newest, or those --only names, with what
 * they need, checked before the command runs. */
#ifndef RUN_DROPINS_H
#define RUN_DROPINS_H

#include "run_find.h"

#include <stddef.h>

/* The drop-ins to serve: only (a comma-separated list of families and
 * drop-in file names), or NULL for every family whose drop-in is here, and
 * with them every drop-in here that one of them needs (DT_NEEDED). 0, or -1
 * with the reason. */
int run_dropins_choose(run_parts *p, const char *only, char *why, size_t whysize);
/* 1 when the drop-ins' directory lies on a filesystem mounted noexec: the
 * dynamic linker cannot map them, so none may stand in. */
int run_dropins_unmappable(const run_parts *p);
/* Every drop-in found is an ELF library of this machine, and so is the
 * audit module found (if any): 0, or -1 with why naming the file. A broken
 * installation is refused before the command runs, rather than failing
 * every process of the job. A directory with a manifest is the build's
 * word: only a module the user named is checked (the audit module still
 * never stands a broken drop-in in). */
int run_dropins_check(const run_parts *p, char *why, size_t whysize);

#endif
