/* SPDX-License-Identifier: MIT
 * Start-up cost of linking: the same program linked to nothing, to the real
 * libraries, to the three shims, or to three empty shared objects (the
 * floor: bench/empty.c). It never calls them (the references in a branch
 * never taken keep the DT_NEEDED entries). With "stats" it prints VmSize,
 * VmRSS (kB), the number of mappings and the page faults taken before main. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#ifdef WITH_LIBS
#include <nccl.h>
#include <nvJitLink.h>
#include <nvrtc.h>
#endif
#ifdef WITH_EMPTY
int lz_bench_empty1(void);
int lz_bench_empty2(void);
int lz_bench_empty3(void);
#endif

static long faults_at_main;

static void stats(void)
{
    char line[512];
    long size = 0, rss = 0;
    int maps = 0;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f)) {
        sscanf(line, "VmSize: %ld", &size);
        sscanf(line, "VmRSS: %ld", &rss);
    }
    if (f)
        fclose(f);
    f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f))
        maps += line[strlen(line) - 1] == '\n';
    if (f)
        fclose(f);
    printf("%ld %ld %d %ld\n", size, rss, maps, faults_at_main);
}

int main(int argc, char **argv)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    faults_at_main = ru.ru_minflt + ru.ru_majflt;
#ifdef WITH_LIBS
    if (argc > 100) { /* never: keeps the references */
        int v;
        ncclGetVersion(&v);
        nvrtcVersion(&v, &v);
        unsigned a, b;
        nvJitLinkVersion(&a, &b);
    }
#endif
#ifdef WITH_EMPTY
    if (argc > 100) /* never */
        return lz_bench_empty1() + lz_bench_empty2() + lz_bench_empty3();
#endif
    if (argc > 1 && strcmp(argv[1], "stats") == 0)
        stats();
    return 0;
}
