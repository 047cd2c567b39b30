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

/* Where the C library keeps the stack the process started with: argc,
 * argv, NULL, the environment's array, NULL (glibc sets it from ld.so's
 * start, and in a static program from its own). */
extern void *__libc_stack_end;

char *const *lz_start_argv(long *argc)
{
    const long *start = __libc_stack_end;
    if (!start || start[0] < 1 || start[0] > (1L << 20))
        return NULL;
    char *const *argv = (char *const *)(start + 1);
    if (argv[start[0]] != NULL)
        return NULL;
    *argc = start[0];
    return argv;
}
