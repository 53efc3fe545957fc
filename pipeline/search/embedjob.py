"""``python -m vaultsync.search.embedjob VAULT``: embed what the semantic index lacks, then exit.

Started detached by ``vectors.start_background`` (a search, a sync or ``watch``), so the
command that started it never waits for the embedding.  Prints nothing; a missing extra or
model, or a vault without an index, ends it with exit 3 or 0 and nothing written.
"""

from __future__ import annotations

import sys
from pathlib import Path

from vaultsync.core.errors import VaultsyncError
from vaultsync.search.embed import load_embedder
from vaultsync.search.vectors import embed_pending


def main(argv: list[str]) -> int:
    """Embed the pending notes of the vault ``argv[0]``; the exit status."""
    if len(argv) != 1:
        return 2
    try:
        embed_pending(Path(argv[0]), load_embedder())
    except VaultsyncError as err:
        return err.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
