/* SPDX-License-Identifier: MIT
 * Start-up cost of linking: the same program linked to nothing, to the real
 * libraries, or to the three shims. It never calls them (the references in a
 * branch never taken keep the DT_NEEDED entries). With "stats" it prints
 * VmSize, VmRSS (kB) and the number of mappings at main. */
#include <stdio.h>
#include <string.h>

#ifdef WITH_LIBS
#include <nccl.h>
#include <nvJitLink.h>
#include <nvrtc.h>
#endif

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
    printf("%ld %ld %d\n", size, rss, maps);
}

int main(int argc, char **argv)
{
#ifdef WITH_LIBS
    if (argc > 100) { /* never: keeps the references */
        int v;
        ncclGetVersion(&v);
        nvrtcVersion(&v, &v);
        unsigned a, b;
        nvJitLinkVersion(&a, &b);
    }
#endif
    if (argc > 1 && strcmp(argv[1], "stats") == 0)
        stats();
    return 0;
}
