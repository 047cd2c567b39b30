/* SPDX-License-Identifier: MIT
 * The few system calls and string functions the audit module needs,
 * without a C library (lz_sys.c). An audit module that needs libc.so.6 gets
 * a second C library loaded into its own namespace in every process of a
 * wrapped job (1.32x a tree of /bin/true, where an audit module needing
 * nothing costs 1.05x: docs/concepts/performance.md), so the module needs nothing
 * but the dynamic linker, which every namespace already holds. */
#ifndef LZ_SYS_H
#define LZ_SYS_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#define LZ_SYS_API __attribute__((visibility("hidden")))
/* Code run only in rare cases (a restart, a message, a load by path) is
 * kept apart from what every process runs, and small state that every
 * process writes shares the one data page written anyway: each page less
 * that a process touches is a page fault less in every process of a job
 * (docs/concepts/performance.md, "The launcher and every process"). */
#define LZ_COLD __attribute__((cold, noinline))
#define LZ_HOT_DATA __attribute__((section(".data")))

LZ_SYS_API int lz_sys_open(const char *path, int flags);
LZ_SYS_API int lz_sys_close(int fd);
/* stat(2) of a path: 0 on success (fstat keeps its C name, lz_sys.c). */
LZ_SYS_API int lz_sys_stat(const char *path, struct stat *st);
LZ_SYS_API long lz_sys_write(int fd, const void *buf, size_t len);
/* All of p[0..n) written: 1, or 0 when a write fails. */
LZ_SYS_API int lz_sys_write_all(int fd, const char *p, size_t n);
/* openat(2) with O_CREAT (and O_CLOEXEC) and a mode: the descriptor, or -1. */
LZ_SYS_API int lz_sys_create(const char *path, int flags, unsigned mode);
LZ_SYS_API int lz_sys_rename(const char *from, const char *to);
LZ_SYS_API int lz_sys_unlink(const char *path);
LZ_SYS_API int lz_sys_mkdir(const char *path, unsigned mode);
/* lstat(2); flock(2): 0, or a negative errno; a pause of ms milliseconds. */
LZ_SYS_API int lz_sys_lstat(const char *path, struct stat *st);
LZ_SYS_API long lz_sys_flock(int fd, int op);
LZ_SYS_API void lz_sys_pause_ms(long ms);
/* The host's name (uname(2)'s nodename) into buf: 0, or -1. */
LZ_SYS_API int lz_sys_nodename(char *buf, size_t size);
LZ_SYS_API long lz_sys_readlink(const char *path, char *buf, size_t size);
/* getcwd(2): the length written (with its NUL), or a negative errno. */
LZ_SYS_API long lz_sys_getcwd(char *buf, size_t size);
LZ_SYS_API int lz_sys_gettid(void);
LZ_SYS_API void *lz_sys_alloc(size_t len);
/* Memory of lz_sys_alloc's given back. */
LZ_SYS_API void lz_sys_free(void *p, size_t len);
LZ_SYS_API int lz_sys_mincore(void *start, size_t len, unsigned char *vec);
LZ_SYS_API int lz_sys_getpid(void);
/* execve(2): returns only on failure (a negative errno). */
LZ_SYS_API long lz_sys_execve(const char *path, char *const argv[], char *const envp[]);
/* execveat(2) of the file open at fd (fexecve): the same. */
LZ_SYS_API long lz_sys_fexecve(int fd, char *const argv[], char *const envp[]);
/* execveat(2) of name relative to the directory open at dirfd: the same. */
LZ_SYS_API long lz_sys_execveat(int dirfd, const char *name, char *const argv[], char *const envp[]);
/* dup3(2) onto to, close-on-exec: to, or a negative errno. */
LZ_SYS_API long lz_sys_dup_cloexec(int fd, int to);

/* The process's start: arguments, environment and auxiliary vector, as the
 * kernel laid them out, from the address of argc (ld.so's
 * __libc_stack_end, which the module looks up in ld.so's symbol table: a
 * DT_NEEDED on ld.so would make every process search for it). Until it is
 * set, there is no environment and every auxiliary value is 0. */
LZ_SYS_API void lz_sys_set_stack_end(void *argc);
/* The first c or the terminating NUL of s, read a word at a time. */
LZ_SYS_API const char *lz_sys_find(const char *s, char c);
/* 1 when a and b are the same string (the module has no strcmp). */
static inline int lz_sys_same(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}
/* The part of path after its last '/' (all of it where there is none). */
static inline const char *lz_sys_base_name(const char *path)
{
    const char *b = path;
    for (; *path; path++)
        if (*path == '/')
            b = path + 1;
    return b;
}
LZ_SYS_API const char *lz_sys_getenv(const char *name);
/* The value of name's last entry in the environment array, where
 * lz_sys_getenv takes the first: ld.so takes the last of its own
 * variables (NULL: none). */
LZ_SYS_API const char *lz_sys_getenv_last(const char *name);
/* The index of NAME=... in the environment array, or -1. */
LZ_SYS_API long lz_sys_env_index(const char *name);
/* The start's argument and environment arrays (NULL-terminated, the
 * process's own: editing the environment array edits environ). */
LZ_SYS_API char **lz_sys_argv(void);
LZ_SYS_API char **lz_sys_environ(void);
LZ_SYS_API unsigned long lz_sys_getauxval(unsigned long type);
/* The command as the kernel got it (/proc/self/cmdline), NULL-terminated:
 * ld.so run as a command has taken its own name and options (--preload,
 * --list) out of argv by the time it maps the libraries. NULL when it
 * cannot be read. */
LZ_SYS_API char **lz_sys_cmdline(void);

/* One line on stderr from its parts (NULL-terminated), prefixed
 * "lazynccl-audit: ", when LAZYNCCL_DEBUG asked for it (lz_sys_set_debug). */
LZ_SYS_API void lz_sys_set_debug(int on);
LZ_SYS_API void lz_sys_say(const char *const *parts);
#define lz_say(...) lz_sys_say((const char *const[]){"lazynccl-audit: ", __VA_ARGS__, "\n", 0})

#endif
