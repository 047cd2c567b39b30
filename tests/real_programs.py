# SPDX-License-Identifier: MIT
"""One call per wrapped library that works without a GPU, as C a program
linked against the real library makes it (tests/test_symvers.py,
tests/test_stack.py): no test cases here."""

# id: (SONAME, headers, the C statements that print the answer). Each
# program is linked against the real library, as a user's program is.
PROGRAMS = {
    "nccl": ("libnccl.so.2", ["nccl.h"],
             'int v = 0; int r = ncclGetVersion(&v); printf("%d %d\\n", r, v);', "ncclGetVersion"),
    "nvrtc": ("libnvrtc.so.13", ["nvrtc.h"],
              'int a = 0, b = 0; int r = nvrtcVersion(&a, &b); printf("%d %d.%d\\n", r, a, b);',
              "nvrtcVersion"),
    "nvjitlink": ("libnvJitLink.so.13", ["nvJitLink.h"],
                  'unsigned a = 0, b = 0; int r = nvJitLinkVersion(&a, &b); '
                  'printf("%d %u.%u\\n", r, a, b);', "nvJitLinkVersion"),
    "cublas": ("libcublas.so.13", ["cublas_v2.h"],
               'int v = 0; int r = cublasGetProperty(MAJOR_VERSION, &v); printf("%d %d\\n", r, v);',
               "cublasGetProperty"),
    "cublaslt": ("libcublasLt.so.13", ["cublasLt.h"], 'printf("%zu\\n", cublasLtGetVersion());',
                 "cublasLtGetVersion"),
    "cufft": ("libcufft.so.12", ["cufft.h"],
              'int v = 0; int r = cufftGetVersion(&v); printf("%d %d\\n", r, v);', "cufftGetVersion"),
    "cusparse": ("libcusparse.so.12", ["cusparse.h"],
                 'int v = 0; int r = cusparseGetProperty(MAJOR_VERSION, &v); printf("%d %d\\n", r, v);',
                 "cusparseGetProperty"),
    "cusolver": ("libcusolver.so.12", ["cusolverDn.h"],
                 'int v = 0; int r = cusolverGetProperty(MAJOR_VERSION, &v); printf("%d %d\\n", r, v);',
                 "cusolverGetProperty"),
    "cudnn": ("libcudnn.so.9", ["cudnn.h"],
              'printf("%zu %s\\n", cudnnGetVersion(), cudnnGetErrorString(CUDNN_STATUS_SUCCESS));',
              "cudnnGetVersion"),
    "cupti": ("libcupti.so.13", ["cupti.h"],
              'uint32_t v = 0; int r = cuptiGetVersion(&v); printf("%d %u\\n", r, v);', "cuptiGetVersion"),
    "curand": ("libcurand.so.10", ["curand.h"],
               'int v = 0; int r = curandGetVersion(&v); printf("%d %d\\n", r, v);', "curandGetVersion"),
    "cuda": ("libcuda.so.1", ["cuda.h"],
             'int v = 0; int r = cuDriverGetVersion(&v); printf("%d %d\\n", r, v);', "cuDriverGetVersion"),
    "zlib": ("libz.so.1", ["zlib.h"],
             'printf("%s %lu\\n", zlibVersion(), crc32(0, (const unsigned char *)"abc", 3));',
             "zlibVersion"),
    "lzma": ("liblzma.so.5", ["lzma.h"],
             'printf("%u %d\\n", lzma_version_number(), lzma_cputhreads() > 0);', "lzma_version_number"),
    "curl": ("libcurl.so.4", ["curl/curl.h"],
             'printf("%s\\n", curl_version()); CURL *c = curl_easy_init(); '
             'printf("%d\\n", c != NULL); curl_easy_cleanup(c);', "curl_version"),
}

