/* SPDX-License-Identifier: MIT
 * What one static-TLS size for a whole job would cost each process
 * (docs/concepts/the-same-job.md, "Static TLS"): N threads (default stacks) parked on a
 * barrier, then VmSize and VmRSS, and whether a thread with a small stack
 * (64 KiB) still starts. Run it under GLIBC_TUNABLES with and without
 * glibc.rtld.optional_static_tls raised and compare; prints figures only.
 *   tls_threads [N]      (N: 1000) */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_barrier_t all;

static void *park(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&all);
    pthread_barrier_wait(&all);
    return NULL;
}

static void *nothing(void *arg)
{
    return arg;
}

static void status(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, strlen(key)) == 0)
            fputs(line, stdout);
    if (f)
        fclose(f);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    pthread_t *t = calloc((size_t)n, sizeof *t);
    if (!t || n < 1)
        return 2;
    pthread_barrier_init(&all, NULL, (unsigned)n + 1);
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, park, NULL) != 0) {
            printf("thread %d: cannot be created\n", i);
            return 1;
        }
    pthread_barrier_wait(&all);
    printf("threads %d\n", n);
    status("VmSize");
    status("VmRSS");
    pthread_barrier_wait(&all);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    pthread_attr_t small;
    pthread_attr_init(&small);
    pthread_attr_setstacksize(&small, 64 * 1024);
    pthread_t s;
    int rc = pthread_create(&s, &small, nothing, NULL);
    printf("a 64 KiB-stack thread: %s\n", rc ? strerror(rc) : "starts");
    if (!rc)
        pthread_join(s, NULL);
    return 0;
}
