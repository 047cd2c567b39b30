/* SPDX-License-Identifier: MIT */
/* The path asked for by a redirected load (lz_asked.h). */
#include "lz_asked.h"

#include "lz_note.h"

int lz_asked(const lz_lib *lib, const char **path, const char **by)
{
    const lz_asked_box *box = lib->st->asked;
    if (!box || __atomic_load_n(&box->state, __ATOMIC_ACQUIRE) != LZ_ASKED_SET)
        return 0;
    *path = box->path;
    *by = box->by;
    return 1;
}

const char *lz_asked_path(const lz_lib *lib)
{
    const char *path, *by;
    return lz_asked(lib, &path, &by) ? path : NULL;
}
