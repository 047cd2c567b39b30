/* SPDX-License-Identifier: MIT
 * Paths as the launcher builds and tests them (run_path.c): a path cut
 * short is no path, so each formatting says whether it fit. */
#ifndef RUN_PATH_H
#define RUN_PATH_H

#include <stddef.h>

/* snprintf into out: 1 when it fit, 0 when cut short. */
__attribute__((format(printf, 3, 4))) int run_path_fmt(char *out, size_t size, const char *f, ...);
/* 1 when path is a directory, a regular file (through links). */
int run_path_is_dir(const char *path);
int run_path_is_file(const char *path);
/* path with its "dir/.." and "." components taken out, in place, without
 * a lookup. */
void run_path_drop_dotdot(char *path);

#endif
