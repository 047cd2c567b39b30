/* SPDX-License-Identifier: MIT
 * An empty shared object (one function, no relocations, no constructor):
 * what the dynamic linker's work on one more object costs at start-up, the
 * floor under a shared shim's (bench/startup.c, variant (e)). */
int EMPTY_NAME(void);

int EMPTY_NAME(void)
{
    return 0;
}
