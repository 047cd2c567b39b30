/* SPDX-License-Identifier: MIT
 * lazynccl-demo: shows lazy loading on this machine.
 *
 * Linked only with the three shims. Before the first call no NCCL, NVRTC
 * or nvJitLink is mapped; then it asks NCCL its version, compiles a kernel
 * with NVRTC, links it with nvJitLink, and says what was loaded from where. */
#include <lazynccl.h>
#include <nccl.h>
#include <nvJitLink.h>
#include <nvrtc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const watched[] = {"libnccl.so", "libnvrtc.so", "libnvJitLink.so"};

static void show_maps(const char *when)
{
    char line[4096], seen[3][PATH_MAX] = {{0}};
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        const char *path = strchr(line, '/');
        for (int i = 0; path && i < 3; i++)
            if (strstr(path, watched[i]) && !strstr(path, "liblazy"))
                snprintf(seen[i], sizeof seen[i], "%.*s", (int)strcspn(path, "\n"), path);
    }
    fclose(f);
    printf("%s:\n", when);
    for (int i = 0; i < 3; i++)
        printf("  %-16s %s\n", watched[i], seen[i][0] ? seen[i] : "not mapped");
}

static void show_loaded(const char *name, const char *path, const char *step)
{
    printf("  %-10s %s (found by: %s)\n", name, path ? path : "-", step ? step : "-");
}

static const char kernel[] =
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n";

int main(void)
{
    int failures = 0;
    show_maps("before the first call");

    int version = 0;
    ncclResult_t nr = ncclGetVersion(&version);
    if (nr == ncclSuccess)
        printf("\nncclGetVersion: %d\n", version);
    else
        printf("\nncclGetVersion failed: %s\n", ncclGetErrorString(nr)), failures++;

    nvrtcProgram prog;
    size_t ptx_size = 0;
    char *ptx = NULL;
    nvrtcResult rr = nvrtcCreateProgram(&prog, kernel, "saxpy.cu", 0, NULL, NULL);
    if (rr == NVRTC_SUCCESS) {
        const char *opts[] = {"--gpu-architecture=compute_90"};
        rr = nvrtcCompileProgram(prog, 1, opts);
        if (rr == NVRTC_SUCCESS && nvrtcGetPTXSize(prog, &ptx_size) == NVRTC_SUCCESS &&
            (ptx = malloc(ptx_size)) && nvrtcGetPTX(prog, ptx) == NVRTC_SUCCESS)
            printf("NVRTC: compiled saxpy to %zu bytes of PTX\n", ptx_size);
        nvrtcDestroyProgram(&prog);
    }
    if (rr != NVRTC_SUCCESS || !ptx)
        printf("NVRTC failed: %s\n", nvrtcGetErrorString(rr)), failures++;

    if (ptx) {
        nvJitLinkHandle h;
        const char *lopts[] = {"-arch=sm_90"};
        size_t cubin_size = 0;
        nvJitLinkResult jr = nvJitLinkCreate(&h, 1, lopts);
        if (jr == NVJITLINK_SUCCESS) {
            jr = nvJitLinkAddData(h, NVJITLINK_INPUT_PTX, ptx, ptx_size, "saxpy.ptx");
            if (jr == NVJITLINK_SUCCESS)
                jr = nvJitLinkComplete(h);
            if (jr == NVJITLINK_SUCCESS)
                jr = nvJitLinkGetLinkedCubinSize(h, &cubin_size);
            nvJitLinkDestroy(&h);
        }
        if (jr == NVJITLINK_SUCCESS)
            printf("nvJitLink: linked it into a %zu-byte sm_90 cubin\n", cubin_size);
        else
            printf("nvJitLink failed (error %d)\n%s\n", (int)jr,
                   lazynvjitlink_last_error() ? lazynvjitlink_last_error() : ""), failures++;
        free(ptx);
    }

    printf("\nloaded by the shims:\n");
    show_loaded("NCCL", lazynccl_loaded_path(), lazynccl_loaded_step());
    show_loaded("NVRTC", lazynvrtc_loaded_path(), lazynvrtc_loaded_step());
    show_loaded("nvJitLink", lazynvjitlink_loaded_path(), lazynvjitlink_loaded_step());
    printf("\n");
    show_maps("after");
    return failures ? 1 : 0;
}
