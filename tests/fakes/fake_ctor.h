/* SPDX-License-Identifier: MIT
 * Constructor of every fake library: appends FAKE_NAME to $LZ_CTOR_LOG, so a
 * test sees which fakes were loaded (and that rejected ones never were). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FAKE_NAME
#define FAKE_NAME "fake"
#endif

__attribute__((constructor)) static void fake_loaded(void)
{
    const char *sleep_ms = getenv("LZ_CTOR_SLEEP_MS"); /* a slow load, to race with */
    if (sleep_ms)
        usleep((useconds_t)atoi(sleep_ms) * 1000);
    const char *log = getenv("LZ_CTOR_LOG");
    if (!log)
        return;
    int fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0666);
    if (fd < 0)
        return;
    (void)!write(fd, FAKE_NAME "\n", strlen(FAKE_NAME) + 1);
    close(fd);
}
