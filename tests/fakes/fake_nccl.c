/* SPDX-License-Identifier: MIT
 * A fake NCCL for the tests: plain C types, recognisable answers.
 * Its constructor logs its loading (fake_ctor.h). */
#include <string.h>

#include "fake_ctor.h"

#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

#ifdef FAKE_CTOR_SLEEP_MS
/* A slow constructor: a test forks while another thread is inside the load. */
__attribute__((constructor)) static void fake_slow(void) { usleep(FAKE_CTOR_SLEEP_MS * 1000); }
#endif

#ifdef FAKE_REENTER
/* A constructor that calls back into the shim (as TensorRT's did with
 * Implib.so): the shim's ncclGetVersion, found in the global scope. */
__attribute__((constructor)) static void fake_reenter(void)
{
    int (*shim_get_version)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "ncclGetVersion");
    int v = -1, rc = shim_get_version ? shim_get_version(&v) : -99;
    const char *log = getenv("LZ_CTOR_LOG");
    FILE *f = log ? fopen(log, "a") : NULL;
    if (f) {
        fprintf(f, "reentrant-call rc=%d version=%d\n", rc, v);
        fclose(f);
    }
}
#endif

#ifndef FAKE_VERSION
#define FAKE_VERSION 99999
#endif

#ifndef OMIT_ncclGetVersion
int ncclGetVersion(int *version) { *version = FAKE_VERSION; return 0; }
int pncclGetVersion(int *version) { *version = FAKE_VERSION; return 0; }
#endif
#ifdef WITH_LAST_ERROR
/* As the real one with nothing to report: an empty message. */
const char *ncclGetLastError(void *comm) { (void)comm; return ""; }
#endif
#ifndef OMIT_ncclGetErrorString
const char *ncclGetErrorString(int result) { (void)result; return "fake NCCL error string"; }
#endif
#ifndef OMIT_ncclGetUniqueId
int ncclGetUniqueId(char *id) { memset(id, 'F', 128); return 0; }
#endif
#ifndef OMIT_ncclCommCount
int ncclCommCount(void *comm, int *count) { (void)comm; *count = 42; return 0; }
#endif
#ifdef FAKE_VERSION_STRING
/* Where lazynccl-info reads a real NCCL's version: a string in .rodata. */
__attribute__((used)) const char fake_nccl_version[] = "NCCL version " FAKE_VERSION_STRING;
#endif
