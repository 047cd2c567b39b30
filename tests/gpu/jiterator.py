# SPDX-License-Identifier: MIT
"""NVRTC through PyTorch: a jiterator kernel compiled at run time (NVRTC and
its builtins) gives the eager result (to rounding: the compiled kernel may fuse the
multiply-add); prints which builtins files are
mapped after import torch and after the compile (drop-ins apart)."""
import json
import torch


def builtins():
    return sorted({l.split()[-1] for l in open("/proc/self/maps") if "nvrtc-builtins" in l})


after_import = builtins()
fn = torch.cuda.jiterator._create_jit_fn("template <typename T> T fused(T x, T y) { return 5 * x + y; }")
a = torch.rand(1024, device="cuda")
b = torch.rand(1024, device="cuda")
print(json.dumps({"close": bool(torch.allclose(fn(a, b), 5 * a + b)), "after_import": after_import,
                  "after_compile": builtins()}))
