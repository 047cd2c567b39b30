/* SPDX-License-Identifier: MIT
 * The values this process's dynamic linker gives the dynamic string tokens
 * $PLATFORM and $LIB (lz_dst.c): what a run path or LD_LIBRARY_PATH entry
 * naming them stands for. ($ORIGIN is each object's own: lz_objects.) */
#ifndef LZ_DST_H
#define LZ_DST_H

#include "base/lz_runtime.h"

/* $PLATFORM: ld.so's platform name (the kernel's AT_PLATFORM, or glibc's
 * own name for the CPU: "haswell", "xeon_phi" before glibc 2.37), read from
 * ld.so's record; NULL where that record cannot be read as glibc lays it
 * out. Read once. */
LZ_HIDDEN const char *lz_dst_platform(void);

/* $LIB: the library directory compiled into ld.so ("lib64" upstream,
 * "lib/x86_64-linux-gnu" on Debian and Ubuntu), found among the names its
 * system directories suggest as a string of ld.so's own; NULL where none
 * is. Read once. */
LZ_HIDDEN const char *lz_dst_lib(void);

#endif
