/* SPDX-License-Identifier: MIT
 * The arguments and the dynamic linker's variables as the process started
 * with them (lz_startenv.h): what ld.so read, whatever the program has
 * set since. */
#include "base/lz_startenv.h"
#include "base/lz_env.h"

#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

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

/* setenv and putenv replace the environment's entries, never the strings
 * the kernel laid out above the stack: the arguments', then the
 * environment's, then the file name the process was started by
 * (AT_EXECFN). ld.so read its variables there at start, the last
 * assignment winning; so does this. */
/* The n-th GLIBC_TUNABLES entry of the environment (glibc's copy of it,
 * whole), or NULL. */
static const char *nth_tunables(int n)
{
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, "GLIBC_TUNABLES=", 15) == 0 && n-- == 0)
            return *e;
    return NULL;
}

const char *lz_start_getenv(const char *name)
{
    if (lz_secure()) /* ld.so ignored these, and took them out of the environment */
        return NULL;
    long argc;
    char *const *argv = lz_start_argv(&argc);
    if (!argv)
        return getenv(name);
    /* The arguments' strings end where the environment's begin: past the
     * last of them in memory (getopt reorders the array, not the strings;
     * ld.so run as a command drops its own, which lie lower). */
    const char *from = NULL;
    for (long i = 0; i < argc; i++)
        if (argv[i] && argv[i] > (const char *)argv && (!from || argv[i] + strlen(argv[i]) + 1 > from))
            from = argv[i] + strlen(argv[i]) + 1;
    /* They end at the file name, or, where ld.so run as a command named the
     * program there instead (AT_EXECFN below them), at the first string
     * that assigns nothing: that file name, or the end's zero word. */
    const char *top = (const char *)getauxval(AT_EXECFN);
    if (!from || (top && top >= from && top - from > (16L << 20)))
        return getenv(name);
    size_t len = strlen(name);
    const char *found = NULL;
    int intact = 0, tunables = 0;
    /* Each string's first byte is compared before the rest: the
     * environment holds dozens of strings, and this runs in first calls. */
    for (const char *p = from; top && top >= from ? p < top : *p && strchr(p, '='); p += strlen(p) + 1) {
        if (!intact)
            intact = strchr(p, '=') != NULL;
        if (p[0] == name[0] && strncmp(p, name, len) == 0 && p[len] == '=')
            found = p + len + 1;
        /* glibc's start-up cut each GLIBC_TUNABLES string here after every
         * setting it knows (a NUL for each ':'), and points the environment
         * at a copy of its own: what followed in the string is no variable
         * ("...check=0:LD_LIBRARY_PATH=/x"). Skipped by the copy's length,
         * the whole string's: p is left on its last NUL, which the loop
         * steps past. */
        if (p[0] == 'G' && strncmp(p, "GLIBC_TUNABLES=", 15) == 0) {
            const char *copy = nth_tunables(tunables++);
            if (copy && copy != p && strncmp(copy, p, strlen(p)) == 0)
                p += strlen(copy);
        }
    }
    /* A program that set its process title over these strings
     * (setproctitle) moved its environment first: read it there. */
    return intact ? found : getenv(name);
}
