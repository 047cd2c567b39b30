# SPDX-License-Identifier: MIT
"""A package whose CMake-built extension uses NCCL; importing it loads nothing."""
from ._nccl import loaded_path, loaded_step, unique_id, version  # noqa: F401
