# SPDX-License-Identifier: MIT
# Recipe: setuptools hands the extension to CMake (the scikit-build way).
import os
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        out = os.path.abspath(os.path.dirname(self.get_ext_fullpath(ext.name)))
        tmp = os.path.abspath(self.build_temp)
        src = os.path.abspath(os.path.dirname(__file__))
        subprocess.run(["cmake", "-S", src, "-B", tmp, f"-DCMAKE_LIBRARY_OUTPUT_DIRECTORY={out}",
                        f"-DPython3_EXECUTABLE={sys.executable}", "-DCMAKE_BUILD_TYPE=Release",
                        f"-DNCCL_INCLUDE={os.environ.get('NCCL_INCLUDE', '/usr/local/cuda/include')}"],
                       check=True)
        subprocess.run(["cmake", "--build", tmp], check=True)


setup(packages=["mypkg_cm"], package_dir={"": "src"},
      ext_modules=[CMakeExtension("mypkg_cm._nccl")], cmdclass={"build_ext": CMakeBuild})
