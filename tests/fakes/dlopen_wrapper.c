/* SPDX-License-Identifier: MIT
 * A preloaded dlopen that calls the C library's: ld.so then sees this
 * object, not the program, asking for every library dlopened. */
#define _GNU_SOURCE
#include <dlfcn.h>
void *dlopen(const char *f, int m) { static void *(*r)(const char *, int); if (!r) r = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen"); return r(f, m); }
