/* SPDX-License-Identifier: MIT
 * The oracle for LD_LIBRARY_PATH tests: linked with -lnccl (a fake) and no
 * run path, it prints the file the dynamic linker itself mapped for it. */
#include <stdio.h>
#include <string.h>

int ncclGetVersion(int *v);

int main(void)
{
    int v = 0;
    ncclGetVersion(&v);
    char line[4096];
    FILE *f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *path = strchr(line, '/');
        if (path && strstr(path, "/libnccl.so")) {
            printf("%s", path);
            break;
        }
    }
    return 0;
}
