/* SPDX-License-Identifier: MIT
 * Stand-in: what library headers take from unistd.h (zconf.h: off_t and
 * whether 64-bit file offsets exist, as glibc says they do). */
#include <_lz_base.h>
#define _LFS64_LARGEFILE 1
#define SEEK_SET 0
#define SEEK_CUR 1
#define SEEK_END 2
