/* SPDX-License-Identifier: MIT
 * Linked into a test program beside its main: counts the program's opens
 * and readlinks of paths under /proc (the definitions in the program come
 * before the C library's in every object's lookup, the shim's included) and
 * prints "proc_accesses=N" at exit. Each access under /proc is a path walk
 * the kernel makes on every first call of every process (15-80 us on a
 * virtual machine, docs/concepts/performance.md), so the tests pin where one is
 * made. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static int proc_accesses;

static void note(const char *path)
{
    if (path && strncmp(path, "/proc/", 6) == 0)
        __atomic_add_fetch(&proc_accesses, 1, __ATOMIC_RELAXED);
}

typedef int (*open_fn)(const char *, int, ...);

static int forward_open(const char *name, const char *path, int flags, va_list ap)
{
    mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
    note(path);
    open_fn real = (open_fn)dlsym(RTLD_NEXT, name);
    return real ? real(path, flags, mode) : -1;
}

/* open and open64: the shim's calls go to either, as the headers decide */
#define FORWARDED_OPEN(fn) \
    int fn(const char *path, int flags, ...) \
    { \
        va_list ap; \
        va_start(ap, flags); \
        int fd = forward_open(#fn, path, flags, ap); \
        va_end(ap); \
        return fd; \
    }
FORWARDED_OPEN(open)
FORWARDED_OPEN(open64)

ssize_t readlink(const char *path, char *buf, size_t size)
{
    note(path);
    ssize_t (*real)(const char *, char *, size_t) =
        (ssize_t(*)(const char *, char *, size_t))dlsym(RTLD_NEXT, "readlink");
    return real ? real(path, buf, size) : -1;
}

__attribute__((destructor)) static void report(void)
{
    printf("proc_accesses=%d\n", __atomic_load_n(&proc_accesses, __ATOMIC_RELAXED));
    fflush(stdout);
}
