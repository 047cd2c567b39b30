/* SPDX-License-Identifier: MIT
 * A library's companions (lz_companions.c): the files it opens by bare
 * name, which it would not find beside itself where it was found (a wheel,
 * conda, CUDA_HOME, an override). */
#ifndef LZ_COMPANIONS_H
#define LZ_COMPANIONS_H

#include "search/lz_search.h"

/* Record the companions of the file a search chose (path, probed as p or
 * NULL) in the search's result, where the library would not find them by
 * itself. For a library whose spec names companions. */
LZ_HIDDEN void lz_companions_record(lz_search *w, const char *step, const char *path,
                                    const lz_probe *p);
/* 1 when companions are left to load before the first call of name. */
LZ_HIDDEN int lz_companions_waiting(const lz_lib *lib, const char *name);
/* Before the first call of name: load the companions the chosen library
 * left for it, when name is one of lib->companions_for. */
LZ_HIDDEN void lz_companions_load(const lz_lib *lib, const char *name);

#endif
