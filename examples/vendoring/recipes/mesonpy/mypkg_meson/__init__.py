# SPDX-License-Identifier: MIT
"""A package whose meson-built extension uses NCCL; importing it loads nothing."""
from ._nccl import loaded_path, loaded_step, unique_id, version  # noqa: F401
