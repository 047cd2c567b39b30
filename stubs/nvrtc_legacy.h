/* SPDX-License-Identifier: MIT
 * NVRTC functions that libnvrtc.so.12 (and 11.2) export but CUDA 13's nvrtc.h
 * no longer declares. A drop-in for libnvrtc.so.12 must export them, or a
 * program built against CUDA 12 fails to start. Declared as CUDA 12.4's
 * nvrtc.h declares them; where that header is the one in use, these are
 * compatible redeclarations. */
#ifndef LZ_NVRTC_LEGACY_H
#define LZ_NVRTC_LEGACY_H
#include <nvrtc.h>

nvrtcResult nvrtcGetNVVMSize(nvrtcProgram prog, size_t *nvvmSizeRet);
nvrtcResult nvrtcGetNVVM(nvrtcProgram prog, char *nvvm);

#endif
