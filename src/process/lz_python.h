/* SPDX-License-Identifier: MIT
 * The running Python's sys.path, for the wheel step (lz_python.c). */
#ifndef LZ_PYTHON_H
#define LZ_PYTHON_H

#include "base/lz_runtime.h"

/* Each sys.path entry of the Python interpreter in this process, passed to
 * visit(ctx, entry) until it returns 1 (then 1). Only when the calling
 * thread holds the GIL (PyGILState_Check): reading Python's objects without
 * it is unsafe, and waiting for it could deadlock with the thread holding
 * it. *why says why nothing was read (GIL not held, sys.path not a list);
 * NULL when there is nothing to say (no interpreter, or it was read). */
LZ_HIDDEN int lz_python_path(int (*visit)(void *ctx, const char *entry), void *ctx,
                             const char **why);

#endif
