/* SPDX-License-Identifier: MIT
 * The site directories the loaded objects lie in (lz_objects_sites.c):
 * where a wheel of the library may be. */
#ifndef LZ_OBJECTS_SITES_H
#define LZ_OBJECTS_SITES_H

#include "process/lz_objects.h"

/* The site directories this process reaches through its loaded objects,
 * as the caller's site_of finds them (site_of(name): the length of the
 * name's prefix that is a site directory, 0 for none: the caller's policy,
 * lz_wheel.c). First self, with the path of the file holding this code
 * (made real where site_of finds a site directory in its name; not called
 * when unknown); then visit (NULL: the objects are not read), with each
 * loaded object's site directory (directory, "loaded"), as the dynamic
 * linker names the object, in load order, each directory once; until one
 * returns 1. The program counts when the name it was run by and the
 * kernel's name for it both hold one. The names may hold symbolic links. */
LZ_HIDDEN int lz_objects_sites(size_t (*site_of)(const char *path),
                               int (*self)(void *ctx, const char *path),
                               lz_strlist_visit_fn visit, void *ctx);

#endif
