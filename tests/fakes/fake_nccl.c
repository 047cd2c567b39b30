/* A fake NCCL for the tests: plain C types, recognisable answers.
 * Its constructor logs its loading (fake_ctor.h). */
#include <string.h>

#include "fake_ctor.h"

#ifndef FAKE_VERSION
#define FAKE_VERSION 99999
#endif

#ifndef OMIT_ncclGetVersion
int ncclGetVersion(int *version) { *version = FAKE_VERSION; return 0; }
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
