/* SPDX-License-Identifier: MIT
 * The probe against dlopen, each in a fresh process: "probe PATH" reads the
 * file with the runtime's probe twice (the first is cold: its code, the C
 * library's and the heap are first touched) and prints both times; "dlopen
 * PATH" prints the time of a dlopen. Linked with the static shims, whose runtime is hidden but linkable. */
#include "elf/lz_probe.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "measure.h"

extern const lz_lib lz_lib_nccl, lz_lib_nvrtc, lz_lib_nvjitlink;

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    const char *path = argv[2];
    if (strcmp(argv[1], "dlopen") == 0) {
        double t0 = now();
        void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
        printf("%.0f\n", now() - t0);
        return h == NULL;
    }
    const lz_lib *lib = strstr(path, "nvrtc")       ? &lz_lib_nvrtc
                        : strstr(path, "nvJitLink") ? &lz_lib_nvjitlink
                                                    : &lz_lib_nccl;
    double t[2];
    int rc = 0;
    for (int i = 0; i < 2; i++) {
        lz_probe p;
        double t0 = now();
        rc |= lz_probe_file(lib, path, NULL, &p);
        t[i] = now() - t0;
        if (rc == LZ_PROBE_OK)
            lz_probe_free(&p);
    }
    printf("%.0f %.0f\n", t[0], t[1]);
    return rc;
}
