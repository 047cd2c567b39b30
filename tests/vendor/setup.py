# SPDX-License-Identifier: MIT
# Vendoring the NCCL amalgamation into a Python extension with setuptools:
# used by tests/test_vendor.py and docs/guides/vendoring.md.
import os

from setuptools import Extension, setup

amalg = os.environ["AMALG_DIR"]
setup(
    name="ext-setuptools",
    ext_modules=[Extension(
        "ext_setuptools",
        sources=["lazyext.c", os.path.join(amalg, "lazynccl_amalg.c")],
        include_dirs=[amalg, os.environ["NCCL_INCLUDE"]],
        define_macros=[("MODNAME", "ext_setuptools"), ("PREFIX", "lazynccl_"),
                       ("AMALG_H", "<lazynccl_amalg.h>")],
        extra_compile_args=["-fvisibility=hidden"],
    )],
)
