# SPDX-License-Identifier: MIT
"""The PEP 517 build backend of lazynccl (pyproject.toml: build-backend,
backend-path = ["gen"]): meson-python's, with the wheel it writes tagged
for the glibc its binaries need (gen/retag_wheel.py), so that `pip wheel .`
and `pip install .` give lazynccl-<v>-py3-none-manylinux_2_17_<arch>.whl
and no separate step. meson-python tags it py3-none-any (everything is in
the package directory, which it reads as pure): an any wheel would install
on any platform and fail there.

An sdist and the hooks that do not write a wheel are meson-python's own.
"""
import os

import retag_wheel

try:
    import mesonpy as _mesonpy
    _missing = None
except ImportError as e:  # said when a hook is called, naming the fix
    _mesonpy, _missing = None, e


def _backend():
    if _mesonpy is None:
        raise RuntimeError(
            f"lazynccl is built by meson-python, which cannot be imported here ({_missing}): "
            "install it (pip install meson-python; Debian: apt-get install python3-mesonpy) "
            "or let pip fetch it (drop --no-build-isolation)")
    return _mesonpy


def get_requires_for_build_wheel(config_settings=None):
    return _backend().get_requires_for_build_wheel(config_settings)


def get_requires_for_build_sdist(config_settings=None):
    return _backend().get_requires_for_build_sdist(config_settings)


def build_sdist(sdist_directory, config_settings=None):
    return _backend().build_sdist(sdist_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """The wheel, its binaries stripped: `-C debug-dir=DIR` writes their
    debug sections to DIR first (gen/strip_elf.py), `-C strip=false`
    keeps everything."""
    settings = dict(config_settings or {})
    debug_dir = settings.pop("debug-dir", None)
    strip = settings.pop("strip", "true").lower() not in ("false", "0", "no")
    name = _backend().build_wheel(wheel_directory, settings or None, metadata_directory)
    path = os.path.join(wheel_directory, name)
    out = retag_wheel.retag(path, strip=strip, debug_dir=debug_dir)
    if os.path.abspath(out) != os.path.abspath(path):
        os.remove(path)
    return os.path.basename(out)
