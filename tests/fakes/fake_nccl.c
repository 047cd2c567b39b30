/* A fake NCCL for the tests: plain C types, recognisable answers.
 * Its constructor appends FAKE_NAME to $LZ_CTOR_LOG, so a test can tell
 * which fakes were loaded (and that rejected ones never were). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FAKE_VERSION
#define FAKE_VERSION 99999
#endif
#ifndef FAKE_NAME
#define FAKE_NAME "fake"
#endif

__attribute__((constructor)) static void fake_loaded(void)
{
    const char *log = getenv("LZ_CTOR_LOG");
    if (!log)
        return;
    int fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0)
        return;
    (void)!write(fd, FAKE_NAME "\n", strlen(FAKE_NAME) + 1);
    close(fd);
}

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
