/* SPDX-License-Identifier: MIT
 * An empty shared object (one function, no relocations, no constructor):
 * what the dynamic linker's work on one more object costs at start-up, the
 * floor under a shared shim's (bench/startup.c, variant (e)). With
 * WITH_ATFORK it also registers fork handlers at load as a shim does
 * (variant (f)). */
#ifdef WITH_ATFORK
#include "register_at_load.h"
#endif

int EMPTY_NAME(void);

int EMPTY_NAME(void)
{
#ifdef WITH_ATFORK
    return (int)bench_owner;
#else
    return 0;
#endif
}
