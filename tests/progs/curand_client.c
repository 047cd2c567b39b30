/* SPDX-License-Identifier: MIT
 * curandGetVersion through the shim generated from tests/specs/curand.toml
 * (or through -lcurand). Prints what is mapped before and after. */
#include <curand.h>

#include <stdio.h>
#include <string.h>

static int mapped(void)
{
    char line[4096];
    int n = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, "/libcurand.so") != NULL;
    if (f)
        fclose(f);
    return n;
}

int main(void)
{
    printf("before: libcurand mappings %d\n", mapped());
    int v = -1;
    curandStatus_t rc = curandGetVersion(&v);
    printf("curandGetVersion: rc=%d version=%d\n", (int)rc, v);
    printf("after: libcurand mappings %d\n", mapped() > 0);
    return 0;
}
