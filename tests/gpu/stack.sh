#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On the GPU machine: PyTorch workloads plain and under lazynccl-run
# (every family served), a fresh process each; import medians of 5; a cuDNN
# chosen at run time; JAX and PyTorch in one process.
#   tests/gpu/stack.sh BUNDLE_DIR OUT_DIR     (bundle from tests/gpu/bundle.sh)
# Writes OUT_DIR/stack.jsonl (one JSON object per run) and prints it.
. "$(dirname "$0")/bundle_env.sh"
P=$SRC/tests/gpu/stack_probe.py
jsonl stack
for w in ${WORKLOADS:-tensor matmul conv2d fft cholesky sparse profiler jiterator}; do
    $PY "$P" "$w" 2>>"$OUT/err.log" | tag "plain"
    "$RUN" $PY "$P" "$w" 2>>"$OUT/err.log" | tag "lazy"
done
for i in 1 2 3 4 5; do
    $PY "$P" import 2>>"$OUT/err.log" | tag "plain"
    "$RUN" $PY "$P" import 2>>"$OUT/err.log" | tag "lazy"
done
# A 2-rank all_reduce where there are two GPUs (the probe).
if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then
    $PY "$SRC/tests/gpu/consumer_probe.py" dist 2>>"$OUT/err.log" | tag "plain dist"
    "$RUN" $PY "$SRC/tests/gpu/consumer_probe.py" dist 2>>"$OUT/err.log" | tag "lazy dist"
fi
# A cuDNN chosen at run time: the wheel's copied elsewhere, named by the override.
if [ -d "$SITE/nvidia/cudnn/lib" ]; then
    mkdir -p /tmp/cudnn-chosen && cp "$SITE"/nvidia/cudnn/lib/libcudnn*.so.9 /tmp/cudnn-chosen/
    LAZYCUDNN_LIBPATH=/tmp/cudnn-chosen/libcudnn.so.9 "$RUN" $PY "$P" conv2d 2>>"$OUT/err.log" | tag "lazy chosen-cudnn"
fi
# JAX and PyTorch in one process: one cuBLAS, one cuDNN.
if [ -f "$SRC/tests/gpu/stack_jax.py" ]; then
    $PY "$SRC/tests/gpu/stack_jax.py" 2>>"$OUT/err.log" | tag "plain jax+torch"
    "$RUN" $PY "$SRC/tests/gpu/stack_jax.py" 2>>"$OUT/err.log" | tag "lazy jax+torch"
fi
cat "$J"
tail -20 "$OUT/err.log" 2>/dev/null
