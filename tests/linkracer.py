"""Worker for the two-process race in ``test_linkstore.py``: draws links as fast as it can.

Usage: ``python tests/linkracer.py STATE_DIR NAME COUNT START_FILE``.  The worker waits until
``START_FILE`` exists (so both workers start together), then draws ``COUNT`` links
``topic:<NAME>-<i>`` → ``project:race``, each through a fresh ``LinkStore`` so that nothing
but the file lock keeps another process's links.
"""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from vaultsync.drawn.store import LinkStore


def main(argv: list[str]) -> int:
    """Wait for the start file, then draw the links; exit 0 when all were added."""
    state, name, count, start = Path(argv[0]), argv[1], int(argv[2]), Path(argv[3])
    deadline = time.monotonic() + 30
    while not start.exists():
        if time.monotonic() > deadline:
            print("start file never appeared", file=sys.stderr)
            return 2
        time.sleep(0.001)
    for i in range(count):
        result = LinkStore(state, lock_timeout=60).add(
            f"topic:{name}-{i:04d}",
            "project:race",
            "related",
            f"drawn by {name}",
            now=datetime.now(UTC),
        )
        if result.status != "added":
            print(f"link {i}: {result.status}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
