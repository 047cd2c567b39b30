#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On the GPU machine: PyTorch and CuPy with and without lazynccl-run.
#   tests/gpu/consumers.sh BUNDLE_DIR OUT_DIR     (bundle from tests/gpu/bundle.sh)
# Writes OUT_DIR/consumers.jsonl (one JSON object per step) and prints it.
# ONLY_ABSENT=1: only the NCCL-absent step; PATCHED_TORCH=1: only torch with
# NCCL taken out of its preload list (what PyTorch would have to change).
. "$(dirname "$0")/bundle_env.sh"
P=$SRC/tests/gpu/consumer_probe.py
jsonl consumers
echo "{\"run\": \"env\", \"python\": \"$PY\", \"site\": \"$SITE\", \"gpus\": \"$(nvidia-smi -L | tr '\n' ';')\"}" >> "$J"
if [ "${ONLY_ABSENT:-0}" != 1 ] && [ "${PATCHED_TORCH:-0}" != 1 ]; then
for i in 1 2 3 4 5; do
    $PY "$P" import 2>>"$OUT/err.log" | tag "plain import $i"
    "$RUN" $PY "$P" import 2>>"$OUT/err.log" | tag "lazynccl-run import $i"
done
$PY "$P" dist 2>>"$OUT/err.log" | tag "plain dist"
"$RUN" $PY "$P" dist 2>>"$OUT/err.log" | tag "lazynccl-run dist"
LAZYNCCL_LIBPATH=/lib/x86_64-linux-gnu/libnccl.so.2 "$RUN" $PY "$P" dist 2>>"$OUT/err.log" | tag "lazynccl-run dist system-nccl"
$PY "$P" cupy 2>>"$OUT/err.log" | tag "plain cupy"
"$RUN" $PY "$P" cupy 2>>"$OUT/err.log" | tag "lazynccl-run cupy"
"$RUN" --only nvrtc $PY "$P" cupy-rtc 2>>"$OUT/err.log" | tag "lazynccl-run --only nvrtc cupy-rtc"
fi
# NCCL absent: the wheel's nvidia/nccl moved aside (this machine is thrown away).
if [ -d "$SITE/nvidia/nccl" ] && [ "${PATCHED_TORCH:-0}" != 1 ]; then
    mv "$SITE/nvidia/nccl" /tmp/nccl-aside
    mkdir -p /tmp/hide && for f in /lib/x86_64-linux-gnu/libnccl.so*; do mv "$f" /tmp/hide/ 2>/dev/null; done
    ldconfig 2>/dev/null
    $PY "$P" absent 2>>"$OUT/err.log" | tag "plain absent"
    "$RUN" $PY "$P" absent 2>>"$OUT/err.log" | tag "lazynccl-run absent"
    mv /tmp/nccl-aside "$SITE/nvidia/nccl"; mv /tmp/hide/* /lib/x86_64-linux-gnu/ 2>/dev/null; ldconfig 2>/dev/null
fi
# What PyTorch would have to change, tried: its preload list without NCCL
# (one line of torch/__init__.py; this machine is thrown away afterwards).
# Then import maps no real NCCL and the drop-in loads the wheel's at the
# first collective.
if [ "${PATCHED_TORCH:-0}" = 1 ]; then
    INIT=$SITE/torch/__init__.py
    cp "$INIT" /tmp/torch_init.orig
    sed -i '/("nccl", "libnccl.so.\*\[0-9\]"),/d' "$INIT"
    diff /tmp/torch_init.orig "$INIT" > "$OUT/torch_patch.diff"
    for i in 1 2 3 4 5; do
        $PY "$P" import 2>>"$OUT/err.log" | tag "patched plain import $i"
        "$RUN" $PY "$P" import 2>>"$OUT/err.log" | tag "patched lazynccl-run import $i"
    done
    "$RUN" $PY "$P" dist 2>>"$OUT/err.log" | tag "patched lazynccl-run dist"
    cp /tmp/torch_init.orig "$INIT"
fi
# Who maps the real NCCL at "import torch" under lazynccl-run (ld.so's view).
LD_DEBUG=files "$RUN" $PY -c 'import torch' 2>&1 | grep -E "libnccl|file=.*nccl" | head -20 > "$OUT/ld_debug_import.txt"
grep -n "nccl" "$SITE/torch/__init__.py" | head -40 > "$OUT/torch_init_nccl.txt"
cat "$J"
tail -20 "$OUT/err.log"
