/* SPDX-License-Identifier: MIT
 * On the GPU machine: cuBLAS, cuFFT and cuDNN through shims made
 * from spec files alone (tests/specs). One cublasSgemm, one cuFFT plan and
 * transform, one cuDNN handle; every result checked; what is mapped before
 * and after. Built by tests/gpu/proof.sh against gpu-bundle/. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <cufft.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../progs/maps.h"

static void show(const char *when)
{
    static const char *const stems[] = {"/libcublas.so", "/libcufft.so", "/libcudnn.so", NULL};
    lz_maps_print("real", when, stems);
}

int main(void)
{
    enum { N = 64, F = 256 };
    int ok = 1;
    show("start");
    /* C = A * B with A = 1, B = 2: every element 2 * N. */
    float *a = malloc(N * N * sizeof *a), *b = malloc(N * N * sizeof *b), *c = malloc(N * N * sizeof *c);
    for (int i = 0; i < N * N; i++)
        a[i] = 1.0f, b[i] = 2.0f;
    float *da, *db, *dc;
    cudaMalloc((void **)&da, N * N * sizeof *da);
    cudaMalloc((void **)&db, N * N * sizeof *db);
    cudaMalloc((void **)&dc, N * N * sizeof *dc);
    cudaMemcpy(da, a, N * N * sizeof *a, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, N * N * sizeof *b, cudaMemcpyHostToDevice);
    cublasHandle_t h;
    cublasStatus_t s = cublasCreate(&h);
    float one = 1.0f, zero = 0.0f;
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, da, N, db, N, &zero, dc, N);
    cudaMemcpy(c, dc, N * N * sizeof *c, cudaMemcpyDeviceToHost);
    int good = s == CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < N * N && good; i++)
        good = c[i] == 2.0f * N;
    printf("cublasSgemm %s (status %d, c[0] = %g)\n", good ? "right" : "WRONG", (int)s, c[0]);
    ok &= good;
    show("cublas");

    /* The FFT of a unit impulse is all ones. */
    cufftComplex *x, hx[F];
    memset(hx, 0, sizeof hx);
    hx[0].x = 1.0f;
    cudaMalloc((void **)&x, sizeof hx);
    cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice);
    cufftHandle plan;
    cufftResult r = cufftPlan1d(&plan, F, CUFFT_C2C, 1);
    if (r == CUFFT_SUCCESS)
        r = cufftExecC2C(plan, x, x, CUFFT_FORWARD);
    cudaMemcpy(hx, x, sizeof hx, cudaMemcpyDeviceToHost);
    good = r == CUFFT_SUCCESS;
    for (int i = 0; i < F && good; i++)
        good = fabsf(hx[i].x - 1.0f) < 1e-5f && fabsf(hx[i].y) < 1e-5f;
    printf("cufft plan+C2C %s (result %d)\n", good ? "right" : "WRONG", (int)r);
    ok &= good;
    show("cufft");

    cudnnHandle_t dh;
    cudnnStatus_t ds = cudnnCreate(&dh);
    printf("cudnnCreate %s (%s), version %zu\n", ds == CUDNN_STATUS_SUCCESS ? "right" : "WRONG",
           cudnnGetErrorString(ds), cudnnGetVersion());
    ok &= ds == CUDNN_STATUS_SUCCESS;
    if (ds == CUDNN_STATUS_SUCCESS)
        cudnnDestroy(dh);
    show("cudnn");
    printf("%s\n", ok ? "ALL RIGHT" : "FAILED");
    return ok ? 0 : 1;
}
