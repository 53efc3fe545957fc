"""The one way vaultsync opens its SQLite files (the search index, the graph store); edge (files).

* :func:`open_writer` opens a file for writing in WAL mode (created ``0600``, never through a
  symlink), in autocommit, so ``BEGIN`` is explicit and readers never wait for the writer.
* :func:`is_corruption` tells damage (start over) from other SQLite errors (busy, locked).
* :func:`remove_database` deletes a file with its WAL, shared-memory and journal files.
* :func:`save_cache_db` runs one write transaction on a cache database (``graph.db``,
  ``parsed-texts.db``): a file that cannot be written is ``False``, a damaged one removed;
  :func:`read_cache_db` reads one in a snapshot, ``None`` when it cannot; :func:`read_meta`
  and :func:`recreate` read its ``meta`` table and start it anew.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


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


def save_cache_db(
    db: Path, write: Callable[[sqlite3.Connection], None], *, timeout: float, replaced: str = ""
) -> bool:
    """``write`` in one transaction on the cache database ``db``; ``False`` when it cannot be.

    Its folder is made (0700); ``replaced``, a file of that folder that kept the cache before,
    is deleted.  A damaged file is removed, so the next save starts a new one.
    """
    try:
        db.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if replaced:
            (db.parent / replaced).unlink(missing_ok=True)
        with open_writer(db, timeout=timeout) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                write(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
    except sqlite3.Error as err:
        if is_corruption(err):
            remove_database(db)
        return False
    except OSError:
        return False
    return True


def read_cache_db(db: Path, read: Callable[[sqlite3.Connection], T | None]) -> T | None:
    """``read`` of the cache database ``db``, read-only, in one snapshot (never fails).

    ``None`` when the file is missing or unreadable, or ``read`` meets rows it cannot take.
    """
    if not db.is_file():
        return None
    try:
        conn = sqlite3.connect(f"{db.absolute().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        with contextlib.closing(conn):
            conn.execute("BEGIN")  # one snapshot: the meta and the rows of one save
            return read(conn)
    except (sqlite3.Error, KeyError, ValueError, TypeError):
        return None


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    """The ``meta`` table of a cache database (empty: a new file, or not ours)."""
    try:
        return dict(conn.execute("SELECT key, value FROM meta"))
    except sqlite3.OperationalError:  # no meta table
        return {}


def recreate(conn: sqlite3.Connection, schema: Iterable[str]) -> None:
    """Drop every table of the database and create ``schema``'s (a cache of another version)."""
    listed = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'"
    )
    for table in [row[0] for row in listed]:
        conn.execute(f'DROP TABLE "{table}"')
    for statement in schema:
        conn.execute(statement)
