/* SPDX-License-Identifier: MIT */
/* The path asked for by a redirected load (lz_asked.h). */
#include "base/lz_asked.h"

#include "common/lz_note.h"
#include "common/lz_stepnames.h"

int lz_asked(const lz_lib *lib, const char **path, const char **by, const char **step)
{
    const lz_asked_box *box = lib->st->asked;
    if (!box || __atomic_load_n(&box->state, __ATOMIC_ACQUIRE) != LZ_ASKED_SET)
        return 0;
    *path = box->path;
    *by = box->by;
    *step = box->step[0] ? box->step : LZ_STEP_ASKED;
    return 1;
}

const char *lz_asked_path(const lz_lib *lib)
{
    const char *path, *by, *step;
    return lz_asked(lib, &path, &by, &step) ? path : NULL;
}
