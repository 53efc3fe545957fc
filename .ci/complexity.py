"""Fail when a function's cyclomatic complexity, as radon counts it, is above ``--max``.

ruff's C901 counts fewer branches than radon (boolean operators, comprehensions), so the
rule is checked with radon itself: ``python .ci/complexity.py --max 15 DIR...``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Class, Function


def _functions(blocks: Iterable[Function | Class], *, nested: bool = False) -> Iterator[Function]:
    """Every function and method, with the closures and nested classes radon lists apart.

    ``cc_visit`` lists top-level functions, classes and their methods, but neither closures
    nor the methods of a class defined inside a class: those are walked here.
    """
    for block in blocks:
        if isinstance(block, Class):
            inner = [*block.methods] if nested else []
            yield from _functions([*inner, *block.inner_classes], nested=True)
        else:
            yield block
            yield from _functions(block.closures)


def _sources(folders: list[Path]) -> list[Path]:
    """The project's Python files in ``folders``, as git lists them.

    Ignored output (the venvs ``make bench`` leaves in ``bench/out``) is not ours to judge.
    """
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *map(str, folders)],
        capture_output=True, text=True, check=True,
    ).stdout.split("\n")  # fmt: skip
    return sorted(Path(name) for name in listed if name.endswith(".py") and Path(name).is_file())


def main() -> int:
    """Print every function over the limit; exit 1 when there is one."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=15)
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args()
    over = []
    for path in _sources(args.folders):
        for block in _functions(cc_visit(path.read_text(encoding="utf-8"))):
            if block.complexity > args.max:
                name, score = block.fullname, block.complexity
                over.append(f"{path}:{block.lineno}: {name} has complexity {score}")
    for line in over:
        print(line)
    if over:
        print(f"{len(over)} functions above complexity {args.max} (radon cc)", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
