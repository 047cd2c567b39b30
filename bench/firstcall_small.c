/* SPDX-License-Identifier: MIT
 * First call of a small library (zlib, liblzma, SQLite, ncurses: the
 * suite's specs), against a bare dlopen of the same file.
 *   firstcall_small_LIB           the first call through LIB's shared shim
 *   firstcall_small_dlopen PATH SYMBOL
 *                                 a bare dlopen + dlsym + call of PATH
 * Each call takes no argument and returns non-zero. Prints ns, then the
 * page faults the call took. */
#include <dlfcn.h>
#include <stdio.h>

#include "measure.h"

#ifdef CALL
#include HEADER
#endif

int main(int argc, char **argv)
{
#ifdef CALL
    (void)argc, (void)argv;
    long f0 = faults();
    double t0 = now();
    volatile long r = (long)(CALL);
    double t1 = now();
#else
    if (argc < 3)
        return 2;
    long f0 = faults();
    double t0 = now();
    void *h = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL);
    long (*f)(void) = h ? (long (*)(void))dlsym(h, argv[2]) : 0;
    volatile long r = f ? f() : 0;
    double t1 = now();
#endif
    printf("%.0f %ld\n", t1 - t0, faults() - f0);
    return r == 0;
}
