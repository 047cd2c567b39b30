#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cuDNN and its sub-libraries, one release (docs/reference/search-order.md,
# "Companions"): the wheel's libcudnn.so.9 opens its sub-libraries by bare
# name through its own run path. With another copy of them first on
# LD_LIBRARY_PATH, cuDNN loaded plainly mixes the two; through the shim it
# maps its own. With nothing in the way the shim loads nothing early.
#   tests/gpu/cudnn_release.sh BUNDLE OUT
. "$(dirname "$0")/bundle_env.sh"
W=$SITE/nvidia/cudnn/lib
OTHER=$OUT/other-cudnn
R=$OUT/cudnn-release.txt
rm -rf "$OTHER" && mkdir -p "$OTHER"
# Another copy: the same release in other files (what ld.so and the shim
# tell apart), as a second install would be.
cp "$W"/libcudnn*.so.9 "$OTHER"/
probe() { "$PY" "$SRC/tests/gpu/cudnn_probe.py" "$1" 2>"$OUT/stderr-$2.txt" | sed "s|$W|WHEEL|g; s|$OTHER|OTHER|g"; }
{
    echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); WHEEL=$W"
    echo "# libcudnn.so.9: $(readelf -d "$W/libcudnn.so.9" | grep -E 'RUNPATH|RPATH' | sed 's/.*\[/[/')"
    echo "plain, nothing in the way:       $(probe "$W/libcudnn.so.9" plain)"
    echo "plain, OTHER on LD_LIBRARY_PATH: $(LD_LIBRARY_PATH=$OTHER probe "$W/libcudnn.so.9" plain-llp)"
    export LAZYCUDNN_LIBPATH=$W/libcudnn.so.9 LAZYNCCL_DEBUG=1
    echo "shim, nothing in the way:        $(probe "$B/liblazycudnn.so.0" shim)"
    echo "shim, OTHER on LD_LIBRARY_PATH:  $(LD_LIBRARY_PATH=$OTHER probe "$B/liblazycudnn.so.0" shim-llp)"
    echo "# the shim's log, nothing in the way:"
    grep -c "finds it by name (left to it)" "$OUT/stderr-shim.txt"
    echo "# the shim's log, OTHER on LD_LIBRARY_PATH:"
    grep "companion" "$OUT/stderr-shim-llp.txt" | sed "s|$W|WHEEL|g; s|$OTHER|OTHER|g"
} > "$R" 2>&1
rm -rf "$OTHER"
cat "$R"
