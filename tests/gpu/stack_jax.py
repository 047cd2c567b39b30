# SPDX-License-Identifier: MIT
"""JAX and PyTorch in one process: a matmul and a convolution in
each; prints one JSON line with every NVIDIA library mapped (real files)
and the results. One copy each of cuBLAS and cuDNN is the point."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stack_probe import mapped  # noqa: E402

import torch  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

g = torch.Generator(device="cpu").manual_seed(0)
a = torch.randn(128, 128, generator=g)
x = torch.randn(1, 3, 16, 16, generator=g)
w = torch.randn(4, 3, 3, 3, generator=g)
t_mm = float((a.cuda() @ a.cuda()).double().sum().item())
t_conv = float(torch.nn.functional.conv2d(x.cuda(), w.cuda()).double().sum().item())
ja, jx, jw = jnp.asarray(a.numpy()), jnp.asarray(x.numpy()), jnp.asarray(w.numpy())
j_mm = float(jnp.sum((ja @ ja).astype(jnp.float32)))
j_conv = float(jnp.sum(jax.lax.conv(jx, jw, (1, 1), "VALID")))
print(json.dumps({"workload": "jax+torch", "devices": [str(d) for d in jax.devices()],
                  "after": mapped(), "result": [round(t_mm, 1), round(t_conv, 1),
                                                round(j_mm, 1), round(j_conv, 1)]}))
