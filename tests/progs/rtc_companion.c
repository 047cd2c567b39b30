/* SPDX-License-Identifier: MIT
 * when NVRTC's builtins are loaded. Prints the builtins files
 * mapped after nvrtcVersion, then after a compile ("builtins after X: ..."),
 * and the compile's result. */
#include <nvrtc.h>
#include <stdio.h>

#include "maps.h"

static void show(const char *when)
{
    static const char *const stems[] = {"/libnvrtc-builtins.so", NULL};
    lz_maps_print("builtins", when, stems);
}

int main(void)
{
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
        return 1;
    show("version");
    nvrtcProgram p;
    const char *src = "extern \"C\" __global__ void k(float *x) { x[0] = 1.0f; }";
    const char *opts[] = {"--gpu-architecture=compute_80"};
    size_t size = 0;
    int ok = nvrtcCreateProgram(&p, src, "k.cu", 0, NULL, NULL) == NVRTC_SUCCESS &&
             nvrtcCompileProgram(p, 1, opts) == NVRTC_SUCCESS &&
             nvrtcGetPTXSize(p, &size) == NVRTC_SUCCESS;
    printf("compile %s\n", ok ? "ok" : "failed");
    show("compile");
    return ok ? 0 : 1;
}
