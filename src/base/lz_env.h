/* SPDX-License-Identifier: MIT
 * The environment as the runtime reads it (lz_env.c): nothing of it in a
 * secure-execution process. A leaf: the loaded-object reader and the
 * dynamic linker's search need it without reporting. */
#ifndef LZ_ENV_H
#define LZ_ENV_H

#include "base/lz_runtime.h"

/* 1 in a secure-execution process (setuid, setcap): environment ignored. */
LZ_HIDDEN int lz_secure(void);
/* getenv, except in secure execution, where it is always NULL. */
LZ_HIDDEN const char *lz_getenv(const char *name);
/* 1 when the override variable name (LAZY<ID>_LIBPATH) is set and not
 * empty, outside secure execution: its search then tries nothing else,
 * not the program's chooser (an empty one counts as unset, as glibc takes
 * an empty LD_LIBRARY_PATH). */
LZ_HIDDEN int lz_override_set(const char *name);
#endif
