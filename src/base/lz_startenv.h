/* SPDX-License-Identifier: MIT
 * The process's start (lz_startenv.c): its arguments and the dynamic
 * linker's variables as they were when it started. */
#ifndef LZ_STARTENV_H
#define LZ_STARTENV_H

#include "base/lz_runtime.h"

/* The arguments as the kernel laid them out when the process started, the
 * array ld.so reads too (argv[0] as the program may have set it since),
 * with their count in *argc; NULL where that layout is not found. */
LZ_HIDDEN char *const *lz_start_argv(long *argc);
/* A variable of the dynamic linker's (LD_LIBRARY_PATH, LD_PRELOAD,
 * LD_BIND_NOW) as ld.so took it when the process started, not as it is
 * now: a program that sets one for its children changes nothing for its
 * own loads, plain. NULL in secure execution; getenv's answer where the
 * start's layout is not found. */
LZ_HIDDEN const char *lz_start_getenv(const char *name);

#endif
