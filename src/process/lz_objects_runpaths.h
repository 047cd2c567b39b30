/* SPDX-License-Identifier: MIT
 * The run paths of the loaded objects (lz_objects_runpaths.c): where the
 * dynamic linker looks for a library an object asks for by name. */
#ifndef LZ_OBJECTS_RUNPATHS_H
#define LZ_OBJECTS_RUNPATHS_H

#include "base/lz_strlist.h"

/* The DT_RPATH (runpath 0; only of objects without DT_RUNPATH, as ld.so) or
 * DT_RUNPATH (runpath 1) directories of the loaded objects that need one of
 * sonames (DT_NEEDED) or that need or are the object holding this code, in
 * load order, read as ld.so reads them (lz_path.c); passed to visit
 * (directory, "") until it returns 1. Entries that cannot be followed (a
 * token other than $ORIGIN, $ORIGIN in a secure-execution process, a
 * relative entry) are passed with a NULL directory and the reason in why
 * ("RPATH of OBJ: ...").
 * nodeflib (or NULL): set to whether the first of those objects, the one
 * ld.so loads the library for, has DF_1_NODEFLIB. The object holding this
 * code counts as one of them for its own run paths, and for the program's
 * DT_RPATH and DF_1_NODEFLIB only where no other object needs the library. */
LZ_HIDDEN int lz_objects_runpaths(const char *const *sonames, int runpath,
                                  lz_strlist_visit_fn visit, void *ctx, int *nodeflib);

/* Both kinds at once, as lz_objects_runpaths reads them, in one pass over
 * the loaded objects (the linker step of a first call takes both, and
 * each pass reads every object's dynamic section): the DT_RPATH list, the
 * DT_RUNPATH list, and nodeflib. Given back with lz_runpaths_free. */
typedef struct lz_runpaths {
    lz_strlist rpath, runpath;
    /* The run paths of the objects needing the library after the
     * requester (each one's DT_RPATH and its loaders', then its
     * DT_RUNPATH, in load order): ld.so never searches them, as it loads
     * the library for the requester; searched only where ld.so's own
     * search finds nothing, where it would have refused the requester. */
    lz_strlist later;
    int nodeflib;
} lz_runpaths;
LZ_HIDDEN void lz_objects_runpaths_read(const char *const *sonames, lz_runpaths *out);
LZ_HIDDEN void lz_runpaths_free(lz_runpaths *r);

#endif
