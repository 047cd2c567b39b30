/* SPDX-License-Identifier: MIT
 * Stand-in: CUDA's library_types.h (property and data-type enumerations). */
#ifndef LZ_STANDIN_LIBRARY_TYPES_H
#define LZ_STANDIN_LIBRARY_TYPES_H
typedef enum libraryPropertyType_t { MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL } libraryPropertyType;
typedef enum cudaDataType_t { CUDA_R_32F = 0 } cudaDataType;
#endif
