"""Where a vault's search index lives: apart from the database code, so asking costs no SQLite.

``status`` looks for the semantic index's background job beside the index file; importing
``sqlite3`` for a path would cost it ~3 ms at every run.
"""

from __future__ import annotations

from pathlib import Path

from vaultsync.vault.manifest import CONTROL_DIR

DB_NAME = "search.db"


def index_path(vault: Path) -> Path:
    """Where the index of ``vault`` lives."""
    return vault / CONTROL_DIR / DB_NAME
