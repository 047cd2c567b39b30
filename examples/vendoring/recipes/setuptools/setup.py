# SPDX-License-Identifier: MIT
# Recipe: the extension mypkg_st._nccl = your code + the vendored amalgamation.
# NCCL_INCLUDE names the directory holding nccl.h (default /usr/local/cuda/include).
import os

from setuptools import Extension, setup

setup(
    packages=["mypkg_st"],
    package_dir={"": "src"},
    ext_modules=[Extension(
        "mypkg_st._nccl",
        sources=["src/mypkg_st/_nccl.c", "vendor/lazynccl_amalg.c"],
        include_dirs=["vendor", os.environ.get("NCCL_INCLUDE", "/usr/local/cuda/include")],
        define_macros=[("MODNAME", "_nccl"), ("PREFIX", "mypkg_lazynccl_"),
                       ("AMALG_H", "<lazynccl_amalg.h>")],
        extra_compile_args=["-fvisibility=hidden"],
        # glibc < 2.34 keeps dlopen in libdl: the amalgamation binds to the
        # old symbol versions (manylinux_2_17), these make them resolvable.
        libraries=["dl", "pthread"],
    )],
)
