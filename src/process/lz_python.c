/* SPDX-License-Identifier: MIT */
/* sys.path of the running Python (lz_python.h): site.getsitepackages(), the
 * user site, `pip install --target` directories on PYTHONPATH, a venv's own
 * site-packages; what cuda.pathfinder searches, read through the
 * interpreter's C API found in the global scope (nothing is loaded). */
#include "process/lz_python.h"
#include "base/lz_dl.h"

#include <dlfcn.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct py_object py_object;

int lz_python_path(int (*visit)(void *ctx, const char *entry), void *ctx, const char **why)
{
    *why = NULL;
    /* One failed global lookup, not six, in a process without Python. */
    int (*gil_held)(void) = (int (*)(void))lz_dlsym(RTLD_DEFAULT, "PyGILState_Check");
    if (!gil_held)
        return 0;
    py_object *(*sys_get)(const char *) = (py_object * (*)(const char *))
        lz_dlsym(RTLD_DEFAULT, "PySys_GetObject");
    ssize_t (*list_size)(py_object *) = (ssize_t(*)(py_object *))lz_dlsym(RTLD_DEFAULT, "PyList_Size");
    py_object *(*list_item)(py_object *, ssize_t) = (py_object * (*)(py_object *, ssize_t))
        lz_dlsym(RTLD_DEFAULT, "PyList_GetItem");
    const char *(*utf8)(py_object *) = (const char *(*)(py_object *))
        lz_dlsym(RTLD_DEFAULT, "PyUnicode_AsUTF8");
    void (*clear)(void) = (void (*)(void))lz_dlsym(RTLD_DEFAULT, "PyErr_Clear");
    if (!gil_held || !sys_get || !list_size || !list_item || !utf8 || !clear)
        return 0; /* no Python interpreter in this process */
    if (!gil_held()) {
        *why = "the calling thread does not hold Python's GIL (a ctypes call releases it)";
        return 0;
    }
    py_object *path = sys_get("path"); /* borrowed */
    ssize_t n = path ? list_size(path) : -1;
    if (n < 0) {
        clear();
        *why = "sys.path is not a list";
        return 0;
    }
    for (ssize_t i = 0; i < n; i++) {
        py_object *item = list_item(path, i); /* borrowed */
        const char *entry = item ? utf8(item) : NULL;
        if (!entry) {
            clear(); /* not a str: Python skips it too */
            continue;
        }
        if (visit(ctx, entry))
            return 1;
    }
    return 0;
}
