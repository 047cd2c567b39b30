/* SPDX-License-Identifier: MIT
 * The object that needs the real library by SONAME (DT_NEEDED), as
 * libtorch_cuda.so needs libnccl.so.2: built once per library with -DNEED_*
 * and linked to the real library (bypath_consumer.c). */
#include <string.h>

#ifdef NEED_NCCL
#include <nccl.h>
int nccl_version(void)
{
    int v = -1;
    return ncclGetVersion(&v) == ncclSuccess ? v : -1;
}
#endif

#ifdef NEED_NVRTC
#include <nvrtc.h>
/* A real compile (the builtins must be found): the PTX size. */
int nvrtc_compile(void)
{
    const char *src = "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }";
    nvrtcProgram p;
    if (nvrtcCreateProgram(&p, src, "k.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
        return -1;
    const char *opts[] = {"--gpu-architecture=compute_90"};
    size_t size = 0;
    int ok = nvrtcCompileProgram(p, 1, opts) == NVRTC_SUCCESS &&
             nvrtcGetPTXSize(p, &size) == NVRTC_SUCCESS;
    nvrtcDestroyProgram(&p);
    return ok ? (int)size : -2;
}
#endif

#ifdef NEED_NVJITLINK
#include <nvJitLink.h>
/* A real link of a small PTX module: the cubin's size. */
int jit_link(void)
{
    static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                              ".visible .entry k()\n{\n\tret;\n}\n";
    nvJitLinkHandle h;
    const char *opts[] = {"-arch=sm_90"};
    if (nvJitLinkCreate(&h, 1, opts) != NVJITLINK_SUCCESS)
        return -1;
    size_t size = 0;
    int ok = nvJitLinkAddData(h, NVJITLINK_INPUT_PTX, ptx, strlen(ptx), "k.ptx") ==
                 NVJITLINK_SUCCESS &&
             nvJitLinkComplete(h) == NVJITLINK_SUCCESS &&
             nvJitLinkGetLinkedCubinSize(h, &size) == NVJITLINK_SUCCESS;
    nvJitLinkDestroy(&h);
    return ok ? (int)size : -2;
}
#endif
