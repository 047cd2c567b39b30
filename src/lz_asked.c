/* SPDX-License-Identifier: MIT */
/* The path asked for by a redirected load (lz_asked.h). */
#include "lz_asked.h"


static void copy_bounded(char *dst, const char *src, size_t size)
{
    size_t i = 0;
    for (; src && src[i] && i + 1 < size; i++)
        dst[i] = src[i];
    dst[i] = '\0';
}

int lz_asked_record(const lz_lib *lib, const char *path, const char *by)
{
    lz_state *st = lib->st;
    int none = 0;
    if (!st->asked) /* not a drop-in: the audit module never asks */
        return 1;
    if (!path || !__atomic_compare_exchange_n(&st->asked_state, &none, 1, 0, __ATOMIC_ACQUIRE,
                                              __ATOMIC_RELAXED))
        return 1;
    copy_bounded(st->asked, path, PATH_MAX);
    copy_bounded(st->asked_by, by, PATH_MAX);
    __atomic_store_n(&st->asked_state, 2, __ATOMIC_RELEASE);
    return 0;
}

int lz_asked(const lz_lib *lib, const char **path, const char **by)
{
    const lz_state *st = lib->st;
    if (__atomic_load_n(&st->asked_state, __ATOMIC_ACQUIRE) != 2)
        return 0;
    *path = st->asked;
    *by = st->asked_by;
    return 1;
}

const char *lz_asked_path(const lz_lib *lib)
{
    const char *path, *by;
    return lz_asked(lib, &path, &by) ? path : NULL;
}
