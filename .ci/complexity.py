"""Fail when a function's cyclomatic complexity, as radon counts it, is above ``--max``.

ruff's C901 counts fewer branches than radon (boolean operators, comprehensions), so the
rule is checked with radon itself: ``python .ci/complexity.py --max 15 DIR...``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Function


def main() -> int:
    """Print every function over the limit; exit 1 when there is one."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=15)
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args()
    over = []
    for folder in args.folders:
        for path in sorted(folder.rglob("*.py")):
            for block in cc_visit(path.read_text(encoding="utf-8")):
                if isinstance(block, Function) and block.complexity > args.max:
                    name, score = block.fullname, block.complexity
                    over.append(f"{path}:{block.lineno}: {name} has complexity {score}")
    for line in over:
        print(line)
    if over:
        print(f"{len(over)} functions above complexity {args.max} (radon cc)", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
