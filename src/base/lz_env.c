/* SPDX-License-Identifier: MIT
 * The environment, ignored in secure execution (lz_env.h). */
#include "base/lz_env.h"

#include <stdlib.h>
#include <sys/auxv.h>

int lz_secure(void)
{
    return getauxval(AT_SECURE) != 0;
}

/* secure_getenv asks the same (glibc's and musl's answer from AT_SECURE),
 * in one function of the C library where a first call binds two. */
const char *lz_getenv(const char *name)
{
    return secure_getenv(name);
}

int lz_override_set(const char *name)
{
    const char *v = lz_getenv(name);
    return v && *v;
}
