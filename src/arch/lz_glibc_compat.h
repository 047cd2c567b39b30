/* SPDX-License-Identifier: MIT
 * For wheels (manylinux_2_17, manylinux_2_28): the amalgamation binds to
 * symbol versions every glibc since 2.17 has, whatever glibc compiles it.
 * Included first by the amalgamation only; LAZYNCCL_NATIVE_GLIBC turns it off,
 * and so does a sanitizer (its runtime interposes dlopen, stat...: old-version
 * references to them make the linker write a broken PLT, and a sanitizer
 * build is no wheel).
 *
 * glibc 2.34 moved dlopen, dlsym, dlclose, dlerror and dlinfo into
 * libc with new versions; the old versions are still there (and, before
 * 2.34, in libdl and libpthread: link -ldl -lpthread for processes that do
 * not load those already; every CPython does). glibc 2.33 made stat, lstat,
 * fstat and fstatat real symbols; before, the header's wrappers called
 * __xstat, __lxstat, __fxstat and __fxstatat, which every glibc still
 * exports. */
#ifndef LZ_GLIBC_COMPAT_H
#define LZ_GLIBC_COMPAT_H

#include <features.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LAZYNCCL_NATIVE_GLIBC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define LAZYNCCL_NATIVE_GLIBC 1
#endif
#endif

#if defined(__GLIBC__) && !defined(LAZYNCCL_NATIVE_GLIBC)
#if defined(__x86_64__)
#define LZ_GLIBC_BASE "GLIBC_2.2.5"
#define LZ_GLIBC_DLINFO "GLIBC_2.3.3"
#define LZ_GLIBC_FXSTATAT "GLIBC_2.4"
#define LZ_STAT_VER 1
#elif defined(__aarch64__)
#define LZ_GLIBC_BASE "GLIBC_2.17"
#define LZ_GLIBC_DLINFO "GLIBC_2.17"
#define LZ_GLIBC_FXSTATAT "GLIBC_2.17"
#define LZ_STAT_VER 0
#endif
#endif

#ifdef LZ_GLIBC_BASE
#include <dlfcn.h>
#include <pthread.h>
#include <sys/stat.h>

__asm__(".symver dlopen,dlopen@" LZ_GLIBC_BASE);
__asm__(".symver dlsym,dlsym@" LZ_GLIBC_BASE);
__asm__(".symver dlvsym,dlvsym@" LZ_GLIBC_BASE);
__asm__(".symver dlclose,dlclose@" LZ_GLIBC_BASE);
__asm__(".symver dlerror,dlerror@" LZ_GLIBC_BASE);
__asm__(".symver dlinfo,dlinfo@" LZ_GLIBC_DLINFO);

extern int __xstat(int ver, const char *path, struct stat *buf);
extern int __lxstat(int ver, const char *path, struct stat *buf);
extern int __fxstat(int ver, int fd, struct stat *buf);
extern int __fxstatat(int ver, int fd, const char *path, struct stat *buf, int flags);
__asm__(".symver __xstat,__xstat@" LZ_GLIBC_BASE);
__asm__(".symver __lxstat,__lxstat@" LZ_GLIBC_BASE);
__asm__(".symver __fxstat,__fxstat@" LZ_GLIBC_BASE);
__asm__(".symver __fxstatat,__fxstatat@" LZ_GLIBC_FXSTATAT);

static inline int lz_compat_stat(const char *path, struct stat *buf)
{
    return __xstat(LZ_STAT_VER, path, buf);
}
static inline int lz_compat_lstat(const char *path, struct stat *buf)
{
    return __lxstat(LZ_STAT_VER, path, buf);
}
static inline int lz_compat_fstat(int fd, struct stat *buf)
{
    return __fxstat(LZ_STAT_VER, fd, buf);
}
static inline int lz_compat_fstatat(int fd, const char *path, struct stat *buf, int flags)
{
    return __fxstatat(LZ_STAT_VER, fd, path, buf, flags);
}
#define stat(path, buf) lz_compat_stat(path, buf)
#define lstat(path, buf) lz_compat_lstat(path, buf)
#define fstat(fd, buf) lz_compat_fstat(fd, buf)
#define fstatat(fd, path, buf, flags) lz_compat_fstatat(fd, path, buf, flags)
#endif

#endif
