/* Stand-in: only what nccl.h uses from the CUDA runtime. */
#include <_lz_base.h>
#define CUDART_VERSION 13000
typedef struct CUstream_st *cudaStream_t;
