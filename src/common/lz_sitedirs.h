/* SPDX-License-Identifier: MIT
 * The names of Python's site directories, in preference order, defined once
 * for the runtime's wheel step (search/lz_wheel.c) and the launcher, which
 * finds its wheel's drop-ins (run/run_find.c): a path's site directory is
 * its first site-packages component, else its first dist-packages one
 * (Debian's Python). */
#ifndef LZ_SITEDIRS_H
#define LZ_SITEDIRS_H

#define LZ_SITE_DIRS {"site-packages", "dist-packages"}
#define LZ_NSITE_DIRS 2

#endif
