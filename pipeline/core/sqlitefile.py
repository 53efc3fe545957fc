"""The one way vaultsync opens its SQLite files (the search index, the graph store); edge (files).

* :func:`open_writer` opens a file for writing in WAL mode (created ``0600``, never through a
  symlink), in autocommit, so ``BEGIN`` is explicit and readers never wait for the writer.
* :func:`is_corruption` tells damage (start over) from other SQLite errors (busy, locked).
* :func:`remove_database` deletes a file with its WAL, shared-memory and journal files.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path


def is_corruption(err: sqlite3.Error) -> bool:
    """Whether SQLite says the file is damaged or not a database (rather than busy, say)."""
    code = getattr(err, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


def remove_database(db: Path) -> None:
    """Delete the database and its WAL, shared-memory and journal files."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            (db.parent / (db.name + suffix)).unlink()


@contextlib.contextmanager
def open_writer(db: Path, *, timeout: float) -> Iterator[sqlite3.Connection]:
    """A connection in WAL mode to ``db`` (created 0600), in autocommit: ``BEGIN`` is explicit."""
    if not db.exists():
        os.close(os.open(db, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600))
    conn = sqlite3.connect(db, timeout=timeout, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        yield conn
    finally:
        conn.close()
