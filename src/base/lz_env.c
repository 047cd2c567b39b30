/* SPDX-License-Identifier: MIT
 * The environment, ignored in secure execution (lz_env.h). */
#include "base/lz_env.h"

#include <stdlib.h>
#include <sys/auxv.h>

int lz_secure(void)
{
    return getauxval(AT_SECURE) != 0;
}

const char *lz_getenv(const char *name)
{
    return lz_secure() ? NULL : getenv(name);
}

int lz_override_set(const char *name)
{
    const char *v = lz_getenv(name);
    return v && *v;
}
