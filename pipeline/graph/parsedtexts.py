"""Documents' parsed texts kept in SQLite by the digest of the text; edge (cache folder).

``parsed-texts.db`` in the state's cache folder (``core.cachefile.cache_dir``) keeps what
parsing each document's text gave (``graph.documents.ParsedText``: title, summary, links), one
row per text digest, and a ``meta`` row with the cache envelope (``core.cachefile.envelope``:
the schema and code version).  A full build (no patch state to patch from: caps changed, the
state lost) parses only the texts it has not seen.

Contract:

* :func:`save_parsed_texts` makes the rows exactly the build's texts in one transaction, by
  difference with the rows held: a document added or edited writes one row and deletes at
  most one, where the JSON file before rewrote all of them (13 MB at 100,000 notes).
* :func:`load_parsed_texts` answers every row, or ``{}`` when the file is missing, damaged, of
  another envelope, or held by a writer past the timeout (a cache: never trusted wrongly).
* It holds masked values only (documents are parsed downstream of ``core.scrub``).
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from vaultsync.core import cachefile
from vaultsync.core.digest import code_fingerprint
from vaultsync.core.sqlitefile import read_cache_db, read_meta, recreate, save_cache_db
from vaultsync.graph.documents import DocumentNote, ParsedText

DB_NAME = "parsed-texts.db"
DB_VERSION = 1
REPLACED = "graph-documents.json"
"""What kept the parsed texts before (one JSON file rewritten whole): deleted by every save."""
BUSY_TIMEOUT = 10.0

SCHEMA = (
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE texts(digest TEXT PRIMARY KEY, title TEXT NOT NULL, summary TEXT NOT NULL,"
    " dests TEXT NOT NULL, targets TEXT NOT NULL, heading INTEGER NOT NULL) WITHOUT ROWID",
)

Row = tuple[str, str, str, str, str, int]


def parsed_texts_path(state: Path) -> Path:
    """Where the parsed texts of ``state``'s documents are kept, in its cache folder."""
    return cachefile.cache_dir(state) / DB_NAME


def _envelope() -> str:
    return cachefile.envelope("parsed-texts", DB_VERSION, code_fingerprint()).decode().strip()


def load_parsed_texts(state: Path) -> dict[str, ParsedText]:
    """Texts parsed by earlier builds (``text_digest`` → result); ``{}`` when unusable."""
    return read_cache_db(parsed_texts_path(state), _read) or {}


def _read(conn: sqlite3.Connection) -> dict[str, ParsedText] | None:
    if read_meta(conn).get("envelope") != _envelope():
        return None
    return {row[0]: _parsed(row) for row in conn.execute("SELECT * FROM texts")}


def save_parsed_texts(
    state: Path, documents: Iterable[DocumentNote], known: Mapping[str, ParsedText]
) -> bool:
    """Keep the parsed texts of this build's documents, and only those; ``False`` if it cannot.

    ``known``: the texts the build started from; when they are this build's, nothing is done
    (a one-fact sync does not open the file).  The file never outgrows the stores.
    """
    texts = {doc.digest: doc.parsed for doc in documents if doc.digest}
    if texts.keys() == known.keys():
        return True
    write = functools.partial(_save, texts=texts)
    return save_cache_db(parsed_texts_path(state), write, timeout=BUSY_TIMEOUT, replaced=REPLACED)


def _save(conn: sqlite3.Connection, *, texts: Mapping[str, ParsedText]) -> None:
    if read_meta(conn).get("envelope") != _envelope():
        recreate(conn, SCHEMA)
        conn.execute("INSERT INTO meta VALUES ('envelope', ?)", (_envelope(),))
    held = {row[0] for row in conn.execute("SELECT digest FROM texts")}
    gone = sorted(held - texts.keys())
    conn.executemany("DELETE FROM texts WHERE digest = ?", ((digest,) for digest in gone))
    new = sorted(texts.keys() - held)
    conn.executemany("INSERT INTO texts VALUES (?, ?, ?, ?, ?, ?)", _rows(texts, new))


def _rows(texts: Mapping[str, ParsedText], digests: Iterable[str]) -> Iterator[Row]:
    for digest in digests:
        parsed = texts[digest]
        yield (
            digest,
            parsed.title,
            parsed.summary,
            json.dumps(parsed.link_dests, ensure_ascii=False),
            json.dumps(parsed.link_targets, ensure_ascii=False),
            int(parsed.heading_title),
        )


def _parsed(row: Row) -> ParsedText:
    _, title, summary, dests, targets, heading = row
    return ParsedText(
        title=title,
        summary=summary,
        link_dests=tuple(map(str, json.loads(dests))),
        link_targets=tuple(map(str, json.loads(targets))),
        heading_title=bool(heading),
    )
