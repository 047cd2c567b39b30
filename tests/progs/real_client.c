/* SPDX-License-Identifier: MIT
 * One program for the real-library scenarios (tests/test_debian.py), built
 * against CUDA 13's headers and linked to a shim, a drop-in or a real
 * library. Each argument is one step, run in order:
 *   rtc-version        nvrtcVersion           -> nvrtc=M.m
 *   rtc-ptx            compile a kernel       -> ptx .version X.Y (or the error and log)
 *   jit-version        nvJitLinkVersion       -> nvjitlink=M.m
 *   jit-link           link a PTX to sm_90 through the __nvJitLink*_<JIT_SUFFIX>
 *                      names (-DJIT_SUFFIX=12_4, 12_9, 13_2...) -> cubin=N
 *   nccl-version       ncclGetVersion         -> nccl=N
 *   nccl-new           ncclCommWindowRegister, a 2.28 function
 *                      -> rc=R last_error=ncclGetLastError(NULL)
 * and then which library each shim loaded, when a shim is in the process. */
#define NVJITLINK_NO_INLINE
#include <nccl.h>
#include <nvJitLink.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef JIT_SUFFIX
#define JIT_SUFFIX 13_0
#endif
#define JIT_CAT2(a, b) a##b
#define JIT_CAT(a, b) JIT_CAT2(a, b)
#define JIT(name) JIT_CAT(__nvJitLink##name##_, JIT_SUFFIX)
#define STR2(x) #x
#define STR(x) STR2(x)

extern nvJitLinkResult JIT(Create)(nvJitLinkHandle *, uint32_t, const char *const *);
extern nvJitLinkResult JIT(AddData)(nvJitLinkHandle, nvJitLinkInputType, const void *, size_t,
                                    const char *);
extern nvJitLinkResult JIT(Complete)(nvJitLinkHandle);
extern nvJitLinkResult JIT(GetLinkedCubinSize)(nvJitLinkHandle, size_t *);
extern nvJitLinkResult JIT(GetErrorLogSize)(nvJitLinkHandle, size_t *);
extern nvJitLinkResult JIT(GetErrorLog)(nvJitLinkHandle, char *);
extern nvJitLinkResult JIT(Destroy)(nvJitLinkHandle *);

/* Present when a shim or a drop-in is in the process. */
__attribute__((weak)) const char *lazynvrtc_loaded_path(void);
__attribute__((weak)) const char *lazynvjitlink_loaded_path(void);
__attribute__((weak)) const char *lazynccl_loaded_path(void);

/* PTX 8.4 (CUDA 12.4) so that every nvJitLink from 12.4 on accepts it. */
static const char ptx[] =
    ".version 8.4\n.target sm_90\n.address_size 64\n"
    ".visible .entry noop()\n{\n\tret;\n}\n";

static const char kernel[] =
    "extern \"C\" __global__ void scale(float *x, float a, int n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }\n";

static int rtc_ptx(void)
{
    nvrtcProgram prog;
    const char *opts[] = {"--gpu-architecture=compute_80"};
    nvrtcResult r = nvrtcCreateProgram(&prog, kernel, "scale.cu", 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        printf("nvrtcCreateProgram: %d %s\n", (int)r, nvrtcGetErrorString(r));
        return 1;
    }
    r = nvrtcCompileProgram(prog, 1, opts);
    if (r != NVRTC_SUCCESS) {
        size_t n = 0;
        nvrtcGetProgramLogSize(prog, &n);
        char *log = calloc(1, n + 1);
        nvrtcGetProgramLog(prog, log);
        printf("nvrtcCompileProgram: %d %s\nlog: %s\n", (int)r, nvrtcGetErrorString(r), log);
        free(log);
        return 1;
    }
    size_t size = 0;
    nvrtcGetPTXSize(prog, &size);
    char *text = calloc(1, size + 1);
    nvrtcGetPTX(prog, text);
    const char *v = strstr(text, ".version ");
    printf("ptx %.*s\n", v ? (int)strcspn(v, "\n") : 4, v ? v : "none");
    free(text);
    nvrtcDestroyProgram(&prog);
    return 0;
}

static int jit_link(void)
{
    nvJitLinkHandle h = NULL;
    const char *opts[] = {"-arch=sm_90"};
    size_t cubin = 0;
    nvJitLinkResult j = JIT(Create)(&h, 1, opts);
    if (j == NVJITLINK_SUCCESS)
        j = JIT(AddData)(h, NVJITLINK_INPUT_PTX, ptx, sizeof ptx - 1, "noop.ptx");
    if (j == NVJITLINK_SUCCESS)
        j = JIT(Complete)(h);
    if (j == NVJITLINK_SUCCESS)
        j = JIT(GetLinkedCubinSize)(h, &cubin);
    if (j != NVJITLINK_SUCCESS) {
        size_t n = 0;
        char log[4096] = "";
        if (h && JIT(GetErrorLogSize)(h, &n) == NVJITLINK_SUCCESS && n < sizeof log)
            JIT(GetErrorLog)(h, log);
        printf("nvJitLink (%s) failed: %d %s\n", STR(JIT_SUFFIX), (int)j, log);
        return 1;
    }
    JIT(Destroy)(&h);
    printf("cubin=%zu\n", cubin);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = 0;
    for (int a = 1; a < argc; a++) {
        const char *s = argv[a];
        if (strcmp(s, "rtc-version") == 0) {
            int major = -1, minor = -1;
            nvrtcResult r = nvrtcVersion(&major, &minor);
            printf("nvrtc=%d.%d rc=%d\n", major, minor, (int)r);
        } else if (strcmp(s, "rtc-ptx") == 0) {
            rc |= rtc_ptx();
        } else if (strcmp(s, "jit-version") == 0) {
            unsigned major = 0, minor = 0;
            nvJitLinkResult r = nvJitLinkVersion(&major, &minor);
            printf("nvjitlink=%u.%u rc=%d\n", major, minor, (int)r);
        } else if (strcmp(s, "jit-link") == 0) {
            rc |= jit_link();
        } else if (strcmp(s, "nccl-version") == 0) {
            int v = -1;
            ncclResult_t r = ncclGetVersion(&v);
            printf("nccl=%d rc=%d\n", v, (int)r);
#if NCCL_VERSION_CODE >= 22800 /* built against an older nccl.h: no such step */
        } else if (strcmp(s, "nccl-new") == 0) {
            ncclWindow_t win = NULL;
            ncclResult_t r = ncclCommWindowRegister(NULL, NULL, 0, &win, 0);
            printf("ncclCommWindowRegister rc=%d last_error=%s\n", (int)r, ncclGetLastError(NULL));
#endif
        } else {
            fprintf(stderr, "unknown step %s\n", s);
            return 2;
        }
    }
    if (lazynvrtc_loaded_path)
        printf("nvrtc loaded=%s\n", lazynvrtc_loaded_path() ? lazynvrtc_loaded_path() : "-");
    if (lazynvjitlink_loaded_path)
        printf("nvjitlink loaded=%s\n",
               lazynvjitlink_loaded_path() ? lazynvjitlink_loaded_path() : "-");
    if (lazynccl_loaded_path)
        printf("nccl loaded=%s\n", lazynccl_loaded_path() ? lazynccl_loaded_path() : "-");
    return rc;
}
