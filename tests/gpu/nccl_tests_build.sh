#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# NVIDIA's nccl-tests, built twice from their source on the build machine
# (nvcc from /usr/local/cuda; Hopper only, sm_90, to keep it short):
#   tests/gpu/nccl_tests_build.sh SRC BUILD DEST
# SRC: an nccl-tests checkout (github.com/NVIDIA/nccl-tests); BUILD: our
# build directory (its src/liblazynccl.so); DEST gets direct/ (each
# *_perf linked -lnccl, the real library's soname in DT_NEEDED) and shim/
# (the same objects linked -llazynccl). cudart is linked statically, so the
# only NVIDIA library either needs is NCCL or its shim.
set -eu
src=$(realpath "${1:?nccl-tests source}")
build=$(realpath "${2:?our build directory}")
dest=$(mkdir -p "${3:?destination}" && realpath "$3")
cuda=${CUDA_HOME:-/usr/local/cuda}
home=$dest/home
rm -rf "$home" && mkdir -p "$home/direct/lib" "$home/shim/lib" "$home/cuda"
# cudart alone from CUDA's directory: nccl-tests puts -L$CUDA_LIB first,
# where CUDA's own libnccl.so would win over the shim's.
ln -s "$cuda/lib64/libcudart_static.a" "$home/cuda/"
ln -s "$cuda/include" "$home/direct/include"
ln -s "$cuda/include" "$home/shim/include"
ln -s "$cuda/lib64/libnccl.so" "$home/direct/lib/libnccl.so"
# -lnccl finds the shim: its SONAME, liblazynccl.so.0, is what DT_NEEDED records.
ln -s "$build/src/liblazynccl.so" "$home/shim/lib/libnccl.so"
common=(CUDARTLIB=cudart_static "CUDA_LIB=$home/cuda" "NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90")
make -C "$src/src" -j"$(nproc)" BUILDDIR="$dest/direct" NCCL_HOME="$home/direct" "${common[@]}"
# The shim's: the same objects (copied with their times, so make only
# links), linked to liblazynccl in place of libnccl.
rm -rf "$dest/shim" && cp -a "$dest/direct" "$dest/shim" && rm -f "$dest"/shim/*_perf
make -C "$src/src" -j"$(nproc)" BUILDDIR="$dest/shim" NCCL_HOME="$home/shim" "${common[@]}"
rm -rf "$dest"/direct/*.o "$dest"/shim/*.o "$dest"/direct/verifiable "$dest"/shim/verifiable "$dest"/direct/os "$dest"/shim/os "$home"
strip --strip-debug "$dest"/direct/*_perf "$dest"/shim/*_perf   # what travels to the GPU machine
for f in "$dest"/direct/all_reduce_perf "$dest"/shim/all_reduce_perf; do
    echo "$f: $(readelf -d "$f" | grep -o 'Shared library: \[[^]]*\]' | tr '\n' ' ')"
done
