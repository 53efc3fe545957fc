"""The search index's SQLite file: schema, opening, locking, damage; edge (files, SQLite).

Contract:

* ``index_path(vault)`` is ``<vault>/.vaultsync/search.db`` (mode 0600, WAL journal, so readers
  never wait for the writer and see the last committed state).
* ``open_writer(db)`` opens it for the one writer that ``only_writer(db)`` admits at a time
  (an ``flock`` on ``search.db.lock`` through ``core.fsio.file_lock``: a rebuild deletes files
  another writer could hold).
* ``prepare(conn)`` creates the schema inside the caller's transaction, so a new index appears
  complete or not at all; it raises ``ForeignIndex`` for a database of another schema.
* ``vectors`` holds the semantic index's chunk vectors (``vaultsync.search.vectors``); the
  text index never writes it, so a rebuild (a new file) starts it empty.
* ``is_corruption(err)`` tells damage (rebuild) from other SQLite errors (busy, locked).
* An index of the schema before (6) is brought forward in place (its notes' ``pkey``, the
  name key links resolve by, and its links' keys), so its vectors are kept; any other version
  is rebuilt.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from vaultsync.core import sqlitefile
from vaultsync.core.errors import VaultWriteError
from vaultsync.core.fsio import LockTimeout, file_lock
from vaultsync.core.sqlitefile import is_corruption, remove_database
from vaultsync.links.pathresolve import file_name_key, link_name_keys
from vaultsync.search.paths import DB_NAME, index_path

__all__ = [
    "BUSY_TIMEOUT",
    "DB_NAME",
    "SCHEMA_VERSION",
    "ForeignIndex",
    "count_notes",
    "index_path",
    "is_corruption",
    "only_writer",
    "open_writer",
    "prepare",
    "remove_database",
]

SCHEMA_VERSION = "7"
BUSY_TIMEOUT = 60.0

SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE notes(
  nid INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, id TEXT NOT NULL, claimed TEXT NOT NULL,
  engine INTEGER NOT NULL, title TEXT NOT NULL, kind TEXT NOT NULL, aliases TEXT NOT NULL,
  tags TEXT NOT NULL, sha256 TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
  inode INTEGER NOT NULL, checked_ns INTEGER NOT NULL, outdegree INTEGER NOT NULL,
  pkey TEXT NOT NULL DEFAULT '');
CREATE INDEX notes_id ON notes(id);
CREATE INDEX notes_pkey ON notes(pkey);
CREATE INDEX notes_kind ON notes(kind, path);
CREATE VIRTUAL TABLE fts USING fts5(
  title, aliases, tags, path, body, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');
CREATE VIRTUAL TABLE stems USING fts5(
  title, aliases, tags, path, body, content = 'fts',
  tokenize = 'porter unicode61 remove_diacritics 2');
CREATE TABLE links(
  src INTEGER NOT NULL, seq INTEGER NOT NULL, link_type TEXT NOT NULL, target TEXT NOT NULL,
  name_key TEXT NOT NULL, alt_key TEXT NOT NULL, context TEXT NOT NULL, dst INTEGER,
  PRIMARY KEY (src, seq)) WITHOUT ROWID;
CREATE INDEX links_dst ON links(dst) WHERE dst IS NOT NULL;
CREATE INDEX links_name ON links(name_key);
CREATE INDEX links_alt ON links(alt_key) WHERE alt_key != '';
CREATE TABLE names(key TEXT NOT NULL, nid INTEGER NOT NULL, PRIMARY KEY (key, nid)) WITHOUT ROWID;
CREATE INDEX names_nid ON names(nid);
CREATE TABLE vectors(
  model TEXT NOT NULL, sha256 TEXT NOT NULL, seq INTEGER NOT NULL, start INTEGER NOT NULL,
  vec BLOB NOT NULL, PRIMARY KEY (model, sha256, seq)) WITHOUT ROWID;
CREATE INDEX notes_sha256 ON notes(sha256);
CREATE TABLE pieces(
  model TEXT NOT NULL, piece TEXT NOT NULL, id INTEGER NOT NULL, score REAL NOT NULL,
  PRIMARY KEY (model, piece)) WITHOUT ROWID;
"""


class ForeignIndex(Exception):
    """The database is usable but not ours to update (another schema): start over."""


@contextlib.contextmanager
def open_writer(db: Path) -> Iterator[sqlite3.Connection]:
    """A connection in WAL mode to ``db`` (created 0600), in autocommit: ``BEGIN`` is explicit."""
    with sqlitefile.open_writer(db, timeout=BUSY_TIMEOUT) as conn:
        yield conn


def prepare(conn: sqlite3.Connection) -> bool:
    """Create the schema in a fresh database (True) or check an existing one's version.

    Runs inside the update's transaction, so a new index appears complete or not at all.
    """
    tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    if tables == 0:
        for statement in SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        return True
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    except sqlite3.OperationalError as err:  # no meta table: not our database
        raise ForeignIndex from err
    if row is not None and row[0] == _PREVIOUS_SCHEMA:
        _add_name_keys(conn)
    elif row is None or row[0] != SCHEMA_VERSION:
        raise ForeignIndex
    return False


_PREVIOUS_SCHEMA = "6"


def _add_name_keys(conn: sqlite3.Connection) -> None:
    """Schema 6 → 7: the name keys of notes and links, as ``links.pathresolve`` gives them.

    A note's ``pkey`` is its ``file_name_key``; a link's keys are taken where a relative
    target leads (``link_name_keys``).
    """
    conn.execute("ALTER TABLE notes ADD COLUMN pkey TEXT NOT NULL DEFAULT ''")
    rows = conn.execute("SELECT nid, path FROM notes").fetchall()
    conn.executemany(
        "UPDATE notes SET pkey = ? WHERE nid = ?", [(file_name_key(p), n) for n, p in rows]
    )
    conn.execute("CREATE INDEX notes_pkey ON notes(pkey)")
    links = conn.execute(
        "SELECT src, seq, target, path FROM links JOIN notes ON nid = src"
    ).fetchall()
    conn.executemany(
        "UPDATE links SET name_key = ?, alt_key = ? WHERE src = ? AND seq = ?",
        [(*link_name_keys(target, path), src, seq) for src, seq, target, path in links],
    )
    conn.execute("DELETE FROM meta WHERE key = 'manifest'")  # 6 kept its nodes, 7 their blob
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (SCHEMA_VERSION,))


@contextlib.contextmanager
def only_writer(db: Path) -> Iterator[None]:
    """Hold ``search.db.lock`` (``flock``): one writer at a time, rebuilds included.

    SQLite serialises transactions by itself, but a rebuild deletes the files another writer
    may have open; this lock keeps every writer (processes and threads) out meanwhile.

    Raises:
        VaultWriteError: another update held the lock for ``BUSY_TIMEOUT`` seconds.
        OSError: the lock file cannot be opened (a symlink in its place, say).
    """
    try:
        with file_lock(db.with_name(db.name + ".lock"), timeout=BUSY_TIMEOUT):
            yield
    except LockTimeout:
        raise VaultWriteError(f"{db}: another update holds the index") from None


def count_notes(vault: Path) -> int:
    """How many notes ``vault``'s index holds (0 when there is no readable index)."""
    db = index_path(vault)
    if not db.is_file():
        return 0
    try:
        with contextlib.closing(
            sqlite3.connect(f"{db.absolute().as_uri()}?mode=ro", uri=True)
        ) as conn:
            return int(conn.execute("SELECT count(*) FROM notes").fetchone()[0])
    except sqlite3.Error:
        return 0
