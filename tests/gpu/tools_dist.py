# SPDX-License-Identifier: MIT
"""One rank of tests/gpu/tools.sh's two-rank job (torchrun): an all_reduce
over NCCL, then the rank's real NCCL files and drop-ins mapped ("app ...")."""
import os

import torch
import torch.distributed as dist

from tools_app import dropins, real_nccl


def main():
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(rank)
    after_import = real_nccl()
    dist.init_process_group("nccl")
    x = torch.full((1 << 20,), float(rank + 1), device="cuda")
    dist.all_reduce(x)
    torch.cuda.synchronize()
    print(f"app rank {rank} sum {x[0].item()} after import {' '.join(after_import) or '-'} "
          f"after all_reduce {' '.join(real_nccl()) or '-'} drop-ins {dropins()}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
