#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Symbol lists of the NVIDIA libraries PyTorch's wheels bring that this
# project has no usable C header for: cuSPARSELt, NVSHMEM's host
# library, cuFile. Run on the GPU machine from the source tree; writes
# $OUT/<soname>.symbols (lazygen symbols) and what PyTorch imports of each.
set -u
PY=/opt/torch/.venv/bin/python
SP=$(ls -d /opt/torch/.venv/lib/python3*/site-packages)
for name in libcusparseLt.so.0 libnvshmem_host.so.3 libcufile.so.0; do
    lib=$(find "$SP/nvidia" -name "$name" | head -1)
    echo "== $name: ${lib:-not found}"
    [ -n "$lib" ] || continue
    $PY gen/lazygen.py symbols "$lib" --out "$OUT/$name.symbols" || echo "lazygen symbols failed"
    readelf -W --dyn-syms "$lib" | awk '$7 != "UND" && $4 == "OBJECT" {print "  variable", $3, $8}'
    for f in "$SP"/torch/lib/*.so*; do
        objdump -p "$f" 2>/dev/null | grep -q "NEEDED *$name" && echo "  needed by $f"
    done
done
for f in "$SP"/torch/lib/*.so*; do
    nm -D --undefined-only "$f" 2>/dev/null | awk -v f="$(basename "$f")" '{print f, $NF}'
done | grep -E " (cusparseLt|nvshmem|cuFile)" | sort > "$OUT/torch_imports.txt"
wc -l "$OUT/torch_imports.txt"
cut -d' ' -f1 "$OUT/torch_imports.txt" | uniq -c
grep -h -E "CU_FILE_DRIVER_NOT_INITIALIZED|CUFILEOP_BASE_ERR " -r "$SP/nvidia" --include=cufile.h | head -5
$PY -c "import torch, sys; print(torch.__version__, sys.version.split()[0])"
