/* SPDX-License-Identifier: MIT
 * A fake NCCL net plugin: exports versioned plugin entry points, as real
 * plugins do (their values do not matter to lazynccl-info). */
#include "fake_ctor.h"

const int ncclNetPlugin_v9 = 9;
const int ncclNet_v8 = 8;
const int ncclCollNet_v8 = 8;
