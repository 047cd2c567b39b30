/* SPDX-License-Identifier: MIT
 * lazynccl: the control API of the lazy shims (lazynccl_load(),
 * lazynvrtc_loaded_path(), ...). The declarations, with what each costs, are
 * generated from gen/control_api.py and the specs into lazynccl_api.h,
 * installed beside this file; docs/reference/api.md describes them. */
#ifndef LAZYNCCL_H
#define LAZYNCCL_H

#include "lazynccl_api.h"

#endif
