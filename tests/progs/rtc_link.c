/* SPDX-License-Identifier: MIT
 * NVRTC + nvJitLink pipeline for the tests: compile a kernel to PTX, link
 * the PTX into an sm_90 cubin, write both. Built against the real headers
 * and linked either with the shims or (with -DDIRECT) the real libraries.
 *   rtc_link PTX_OUT CUBIN_OUT  ->  ptx=N cubin=M */
#include <nvJitLink.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>

static const char kernel[] =
    "extern \"C\" __global__ void scale(float *x, float a, int n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }\n";

static int write_file(const char *path, const char *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size)
        return -1;
    return fclose(f);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: rtc_link PTX_OUT CUBIN_OUT\n");
        return 2;
    }
    nvrtcProgram prog;
    const char *opts[] = {"--gpu-architecture=compute_90"};
    size_t ptx_size = 0, cubin_size = 0;
    nvrtcResult r = nvrtcCreateProgram(&prog, kernel, "scale.cu", 0, NULL, NULL);
    if (r == NVRTC_SUCCESS)
        r = nvrtcCompileProgram(prog, 1, opts);
    if (r == NVRTC_SUCCESS)
        r = nvrtcGetPTXSize(prog, &ptx_size);
    char *ptx = malloc(ptx_size ? ptx_size : 1);
    if (r == NVRTC_SUCCESS)
        r = nvrtcGetPTX(prog, ptx);
    if (r != NVRTC_SUCCESS) {
        printf("nvrtc failed: %d %s\n", (int)r, nvrtcGetErrorString(r));
        return 1;
    }
    nvrtcDestroyProgram(&prog);

    nvJitLinkHandle h;
    const char *lopts[] = {"-arch=sm_90"};
    nvJitLinkResult j = nvJitLinkCreate(&h, 1, lopts);
    if (j == NVJITLINK_SUCCESS)
        j = nvJitLinkAddData(h, NVJITLINK_INPUT_PTX, ptx, ptx_size, "scale.ptx");
    if (j == NVJITLINK_SUCCESS)
        j = nvJitLinkComplete(h);
    if (j == NVJITLINK_SUCCESS)
        j = nvJitLinkGetLinkedCubinSize(h, &cubin_size);
    char *cubin = malloc(cubin_size ? cubin_size : 1);
    if (j == NVJITLINK_SUCCESS)
        j = nvJitLinkGetLinkedCubin(h, cubin);
    if (j != NVJITLINK_SUCCESS) {
        printf("nvJitLink failed: %d\n", (int)j);
        return 1;
    }
    nvJitLinkDestroy(&h);
    if (write_file(argv[1], ptx, ptx_size) || write_file(argv[2], cubin, cubin_size)) {
        perror("write");
        return 1;
    }
    printf("ptx=%zu cubin=%zu\n", ptx_size, cubin_size);
    free(ptx);
    free(cubin);
    return 0;
}
