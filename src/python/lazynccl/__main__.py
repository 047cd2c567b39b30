# SPDX-License-Identifier: MIT
"""python -m lazynccl run CMD... | python -m lazynccl info [OPTIONS]: the two
console scripts, for environments whose bin/ is not on PATH."""

import sys

from ._cli import info, run

USAGE = "usage: python -m lazynccl run [lazynccl-run options] CMD... | info [lazynccl-info options]"

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in ("run", "info"):
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    sys.exit(run(sys.argv[2:]) if sys.argv[1] == "run" else info(sys.argv[2:]))
