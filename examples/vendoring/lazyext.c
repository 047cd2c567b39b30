/* SPDX-License-Identifier: MIT
 * A CPython extension that vendors the amalgamated NCCL shim, as a package
 * like CuPy would: importing it loads nothing; version() and unique_id()
 * load NCCL on first use. Built with -DMODNAME=<module> -DPREFIX=<prefix>
 * (the amalgamation's control API prefix) and -DAMALG_H="<its .h>". */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <nccl.h>

#include AMALG_H

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define API(name) CAT(PREFIX, name)
#define STR2(x) #x
#define STR(x) STR2(x)

static PyObject *fail(ncclResult_t r)
{
    PyErr_Format(PyExc_RuntimeError, "%s", ncclGetErrorString(r));
    return NULL;
}

static PyObject *version(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    int v = 0;
    ncclResult_t r = ncclGetVersion(&v);
    return r == ncclSuccess ? PyLong_FromLong(v) : fail(r);
}

static PyObject *unique_id(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    ncclUniqueId id;
    ncclResult_t r = ncclGetUniqueId(&id);
    return r == ncclSuccess ? PyBytes_FromStringAndSize(id.internal, sizeof id.internal) : fail(r);
}

static PyObject *text(const char *s)
{
    if (s)
        return PyUnicode_FromString(s);
    Py_RETURN_NONE;
}

static PyObject *loaded_path(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    return text(API(loaded_path)());
}

static PyObject *loaded_step(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    return text(API(loaded_step)());
}

static PyMethodDef methods[] = {
    {"version", version, METH_NOARGS, "ncclGetVersion()"},
    {"unique_id", unique_id, METH_NOARGS, "ncclGetUniqueId(), as bytes"},
    {"loaded_path", loaded_path, METH_NOARGS, "the NCCL file the shim loaded, or None"},
    {"loaded_step", loaded_step, METH_NOARGS, "the search step that found it, or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, STR(MODNAME), NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC CAT(PyInit_, MODNAME)(void)
{
    return PyModule_Create(&module);
}
