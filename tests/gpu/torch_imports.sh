#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What PyTorch (the GPU image's /opt/torch/.venv) imports from each NVIDIA library and
# what its wheels hold: the drop-ins must export all of it. Writes to $OUT.
set -u
SP=$(ls -d /opt/torch/.venv/lib/python3*/site-packages)
echo "SP=$SP"
ls $SP/nvidia/ $SP/nvidia/*/ 2>&1 | head -80
for f in $SP/torch/lib/*.so*; do echo "== $f"; nm -D --undefined-only --with-symbol-versions $f 2>/dev/null | awk '{print $NF}'; done > $OUT/torch_undefined.txt
for f in $SP/torch/lib/*.so*; do echo "== $f"; objdump -p $f | grep -E "NEEDED|RUNPATH|RPATH"; done > $OUT/torch_needed.txt
find $SP/nvidia -name "*.so*" | while read f; do echo "== $f $(objdump -p $f | grep SONAME | awk '{print $2}')"; objdump -p $f | grep -E "NEEDED|RUNPATH"; done > $OUT/nvidia_libs.txt
mkdir -p $OUT/inc
for d in cusparselt cufile nvshmem cu13; do for inc in $(find $SP/nvidia/$d -maxdepth 2 -name include -type d 2>/dev/null); do mkdir -p $OUT/inc/$d; cp -r $inc/. $OUT/inc/$d/ 2>/dev/null; done; done
find $OUT/inc -maxdepth 2 | head -50
ls /usr/include/*cufile* /usr/local/cuda/include/*cufile* /usr/local/cuda/include/cusparseLt* 2>&1 | head
nvidia-smi --query-gpu=name,driver_version --format=csv
/opt/torch/.venv/bin/python -c "import torch; print(torch.__version__, torch.version.cuda)"
for f in /lib/x86_64-linux-gnu/libcuda.so.1; do objdump -p $f | sed -n '/Version defi/,/^$/p'; done
du -sh $OUT
