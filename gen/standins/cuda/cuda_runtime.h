/* SPDX-License-Identifier: MIT
 * Stand-in: the CUDA runtime's types as library headers use them in their
 * signatures (nccl.h, curand.h, ...). The generated code is compiled against
 * the real cuda_runtime.h, which checks them. */
#include <_lz_base.h>
#include <library_types.h>
#define CUDART_VERSION 13000
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
typedef enum cudaError { cudaSuccess = 0 } cudaError_t;
typedef struct dim3 { unsigned int x, y, z; } dim3;
