/* SPDX-License-Identifier: MIT
 * curandGetVersion through the shim generated from tests/specs/curand.toml
 * (or through -lcurand). Prints what is mapped before and after. */
#include <curand.h>

#include <stdio.h>

#include "maps.h"

int main(void)
{
    printf("before: libcurand mappings %d\n", count_mapped("/libcurand.so"));
    int v = -1;
    curandStatus_t rc = curandGetVersion(&v);
    printf("curandGetVersion: rc=%d version=%d\n", (int)rc, v);
    printf("after: libcurand mappings %d\n", count_mapped("/libcurand.so") > 0);
    return 0;
}
