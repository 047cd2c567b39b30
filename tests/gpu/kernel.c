/* SPDX-License-Identifier: MIT
 * NVRTC compiles a kernel and nvJitLink links it, through liblazynvrtc and
 * liblazynvjitlink; the CUDA driver loads the cubin and runs it on the GPU;
 * the output is checked. Prints "kernel ok (...)" or the failure. */
#include <cuda.h>
#include <lazynccl.h>
#include <nvJitLink.h>
#include <nvrtc.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define DRV(x) do { CUresult e_ = (x); if (e_ != CUDA_SUCCESS) { const char *s_; cuGetErrorString(e_, &s_); \
    fprintf(stderr, "%s: %s\n", #x, s_); return 2; } } while (0)

static const char source[] =
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n";

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    int major = 0, minor = 0;
    DRV(cuInit(0));
    DRV(cuDeviceGet(&dev, 0));
    DRV(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    DRV(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    DRV(cuCtxCreate(&ctx, NULL, 0, dev));

    char arch[64], sm[64];
    snprintf(arch, sizeof arch, "--gpu-architecture=compute_%d%d", major, minor);
    snprintf(sm, sizeof sm, "-arch=sm_%d%d", major, minor);
    nvrtcProgram prog;
    const char *opts[] = {arch};
    size_t ptx_size = 0, cubin_size = 0;
    if (nvrtcCreateProgram(&prog, source, "saxpy.cu", 0, NULL, NULL) != NVRTC_SUCCESS ||
        nvrtcCompileProgram(prog, 1, opts) != NVRTC_SUCCESS ||
        nvrtcGetPTXSize(prog, &ptx_size) != NVRTC_SUCCESS) {
        printf("kernel FAILED: NVRTC (%s)\n", lazynvrtc_last_error() ? lazynvrtc_last_error() : "");
        return 1;
    }
    char *ptx = malloc(ptx_size);
    nvrtcGetPTX(prog, ptx);
    nvrtcDestroyProgram(&prog);

    nvJitLinkHandle h;
    const char *lopts[] = {sm};
    if (nvJitLinkCreate(&h, 1, lopts) != NVJITLINK_SUCCESS ||
        nvJitLinkAddData(h, NVJITLINK_INPUT_PTX, ptx, ptx_size, "saxpy.ptx") != NVJITLINK_SUCCESS ||
        nvJitLinkComplete(h) != NVJITLINK_SUCCESS ||
        nvJitLinkGetLinkedCubinSize(h, &cubin_size) != NVJITLINK_SUCCESS) {
        printf("kernel FAILED: nvJitLink\n");
        return 1;
    }
    char *cubin = malloc(cubin_size);
    nvJitLinkGetLinkedCubin(h, cubin);
    nvJitLinkDestroy(&h);

    CUmodule mod;
    CUfunction fn;
    DRV(cuModuleLoadData(&mod, cubin));
    DRV(cuModuleGetFunction(&fn, mod, "saxpy"));
    int n = 1 << 20;
    float a = 2.5f, *hx = malloc(n * sizeof(float)), *hy = malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) {
        hx[i] = (float)(i % 1000) * 0.5f;
        hy[i] = (float)(i % 77) - 3.0f;
    }
    CUdeviceptr dx, dy;
    DRV(cuMemAlloc(&dx, n * sizeof(float)));
    DRV(cuMemAlloc(&dy, n * sizeof(float)));
    DRV(cuMemcpyHtoD(dx, hx, n * sizeof(float)));
    DRV(cuMemcpyHtoD(dy, hy, n * sizeof(float)));
    void *args[] = {&a, &dx, &dy, &n};
    DRV(cuLaunchKernel(fn, (n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    float *out = malloc(n * sizeof(float));
    DRV(cuMemcpyDtoH(out, dy, n * sizeof(float)));
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (fabsf(out[i] - (a * hx[i] + hy[i])) > 1e-3f)
            bad++;
    printf("kernel %s (sm_%d%d, %zu-byte PTX, %zu-byte cubin, %d of %d elements wrong)\n",
           bad ? "FAILED" : "ok", major, minor, ptx_size, cubin_size, bad, n);
    printf("nvrtc: %s\nnvjitlink: %s\n", lazynvrtc_loaded_path(), lazynvjitlink_loaded_path());
    return bad != 0;
}
