"""The semantic index: note chunks → vectors in ``search.db``, and the nearest notes; edge.

Contract:

* ``chunk_note(title, body)`` (pure) cuts a note into chunks of about ``CHUNK_CHARS``
  characters at paragraph (else word) boundaries, at most ``MAX_CHUNKS``, each prefixed with
  the title, so a long document is found by any of its parts.
* Vectors live in the ``vectors`` table of ``search.db`` beside the full-text index, one float32
  blob per chunk, keyed by ``(model, sha256 of the note's bytes, chunk)``: a note is embedded
  again only when its bytes change, a renamed note keeps its vectors, and another model's
  vectors are never mixed in.  Rows of hashes no note has any more are dropped.
* ``embed_pending(vault, embedder)`` embeds every note the index holds without vectors, in
  batches; only the short insert of each batch holds the index's writer lock, so text searches
  and index updates never wait for the embedding.  One embedder runs at a time
  (``search.db.embed.lock``); a second returns at once with ``busy`` set.
* ``coverage(conn, model)`` is ``(embedded, total)`` distinct note contents;
  ``nearest(conn, model, vector, where, params, limit)`` ranks notes by their best chunk's
  cosine (a float32 matrix searched with numpy), ties by path.
* ``start_background(vault)`` starts ``python -P -m vaultsync.search.embedjob <vault>``
  detached when the installed model's vectors are missing for some note, no embedder is running
  (checked without loading the model) and the job is allowed (``VAULTSYNC_EMBED_BACKGROUND=0``
  forbids it); the search, sync or ``watch`` that calls it does not wait.  How the job ended
  is kept beside the index (:mod:`vaultsync.search.embedjob`).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import sqlite3
import time
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultsync.core.fsio import LockTimeout, file_lock
from vaultsync.search.database import SCHEMA_VERSION, index_path, only_writer, open_writer

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from vaultsync.search.embed import TextEmbedder

__all__ = [
    "BATCH",
    "CHUNK_CHARS",
    "MAX_CHUNKS",
    "Chunk",
    "EmbedReport",
    "chunk_note",
    "coverage",
    "embed_pending",
    "nearest",
    "start_background",
]

CHUNK_CHARS = 1000
MAX_CHUNKS = 32
BATCH = 128
"""Notes embedded between two inserts."""

_PARAGRAPH = re.compile(r"\n\s*\n")
_PAGE = 100
"""Contents whose notes one query of ``nearest`` reads."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Chunk:
    """A part of a note: its number, where it starts in the body, and the text embedded."""

    seq: int
    start: int
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbedReport:
    """What one ``embed_pending`` run did."""

    notes: int = 0
    chunks: int = 0
    remaining: int = 0
    busy: bool = False
    """Another embedder was running: this one did nothing."""
    seconds: float = 0.0


def _pieces(body: str) -> Iterator[tuple[int, str]]:
    """``(start, text)`` of the paragraphs, long ones cut at spaces near ``CHUNK_CHARS``."""
    position = 0
    for paragraph in _PARAGRAPH.split(body):
        start = body.find(paragraph, position)
        position = start + len(paragraph)
        rest = paragraph
        while len(rest) > CHUNK_CHARS:
            cut = rest.rfind(" ", CHUNK_CHARS // 2, CHUNK_CHARS)
            cut = CHUNK_CHARS if cut < 0 else cut
            yield start, rest[:cut]
            start, rest = start + cut, rest[cut:]
        if rest.strip():
            yield start, rest


def chunk_note(title: str, body: str) -> tuple[Chunk, ...]:
    """The chunks of one note (see the module docstring); one chunk at least."""
    groups: list[tuple[int, str]] = []
    for start, text in _pieces(body):
        if groups and len(groups[-1][1]) + len(text) < CHUNK_CHARS:
            groups[-1] = (groups[-1][0], groups[-1][1] + "\n\n" + text)
        else:
            groups.append((start, text))
    if not groups:
        groups = [(0, "")]
    return tuple(
        Chunk(seq=seq, start=start, text=f"{title}\n{text.strip()}".strip())
        for seq, (start, text) in enumerate(groups[:MAX_CHUNKS])
    )


def coverage(conn: sqlite3.Connection, model: str) -> tuple[int, int]:
    """``(embedded, total)``: distinct note contents with vectors of ``model``, and all."""
    total = conn.execute("SELECT count(DISTINCT sha256) FROM notes").fetchone()[0]
    done = conn.execute(  # every embedded content has a chunk 0: one key lookup per content
        "SELECT count(*) FROM (SELECT DISTINCT sha256 FROM notes) AS n WHERE EXISTS"
        " (SELECT 1 FROM vectors AS v WHERE v.model = ? AND v.sha256 = n.sha256 AND v.seq = 0)",
        (model,),
    ).fetchone()[0]
    return int(done), int(total)


def _pending(conn: sqlite3.Connection, model: str, limit: int) -> list[tuple[str, str, str]]:
    """Up to ``limit`` ``(sha256, title, body)`` of contents without vectors, by hash."""
    return conn.execute(
        "SELECT n.sha256, n.title, f.body FROM notes AS n JOIN fts AS f ON f.rowid = n.nid"
        " WHERE NOT EXISTS (SELECT 1 FROM vectors AS v WHERE v.model = ? AND v.sha256 = n.sha256)"
        " GROUP BY n.sha256 ORDER BY n.sha256 LIMIT ?",
        (model, limit),
    ).fetchall()


def _read_only(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{db.absolute().as_uri()}?mode=ro", uri=True, isolation_level=None)


def _ours(conn: sqlite3.Connection) -> bool:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    except sqlite3.OperationalError:
        return False
    return row is not None and row[0] == SCHEMA_VERSION


def _store(db: Path, model: str, rows: list[tuple[str, str, int, int, bytes]]) -> None:
    """Insert one batch's vectors (only of contents some note still has); drop stale ones."""
    with only_writer(db), open_writer(db) as conn:
        conn.execute("BEGIN IMMEDIATE")
        if not _ours(conn):
            conn.execute("ROLLBACK")
            return
        conn.executemany(
            "INSERT OR IGNORE INTO vectors SELECT ?, ?, ?, ?, ?"
            " WHERE EXISTS (SELECT 1 FROM notes WHERE sha256 = ?)",
            [(*row, row[1]) for row in rows],
        )
        conn.execute(
            "DELETE FROM vectors WHERE model != ? OR sha256 NOT IN (SELECT sha256 FROM notes)",
            (model,),
        )
        conn.execute("COMMIT")


def _store_pieces(db: Path, embedder: TextEmbedder) -> None:
    """Keep the model's tokenizer pieces in the index once, so a query need not load it."""
    from vaultsync.search.embed import Embedder  # noqa: PLC0415 - numpy is the extra's
    from vaultsync.search.pieces import light_pieces, store_pieces  # noqa: PLC0415

    if not isinstance(embedder, Embedder):
        return
    with contextlib.closing(_read_only(db)) as conn:
        if (
            not _ours(conn)
            or conn.execute(
                "SELECT 1 FROM pieces WHERE model = ? LIMIT 1", (embedder.name,)
            ).fetchone()
        ):
            return
    rows = light_pieces(json.loads(embedder.spec))
    with only_writer(db), open_writer(db) as conn:
        conn.execute("BEGIN IMMEDIATE")
        if _ours(conn):
            store_pieces(conn, embedder.name, rows)
        conn.execute("COMMIT")


def _embed_batch(
    embedder: TextEmbedder, notes: list[tuple[str, str, str]]
) -> list[tuple[str, str, int, int, bytes]]:
    chunks = [(sha, chunk) for sha, title, body in notes for chunk in chunk_note(title, body)]
    vectors = embedder.embed([chunk.text for _, chunk in chunks])
    return [
        (embedder.name, sha, chunk.seq, chunk.start, vectors[i].tobytes())
        for i, (sha, chunk) in enumerate(chunks)
    ]


def embed_pending(vault: Path, embedder: TextEmbedder, *, batch: int = BATCH) -> EmbedReport:
    """Embed what the index holds without vectors (see the module docstring)."""
    db = index_path(vault)
    if not db.is_file():
        return EmbedReport()
    started = time.perf_counter()
    notes = chunks = 0
    previous: list[tuple[str, str, str]] = []
    try:
        with file_lock(db.with_name(db.name + ".embed.lock"), timeout=0.0):
            _store_pieces(db, embedder)
            while True:
                with contextlib.closing(_read_only(db)) as conn:
                    if not _ours(conn):
                        break
                    todo = _pending(conn, embedder.name, batch)
                if not todo or todo == previous:  # done, or the last insert did not take
                    break
                previous = todo
                rows = _embed_batch(embedder, todo)
                _store(db, embedder.name, rows)
                notes, chunks = notes + len(todo), chunks + len(rows)
    except LockTimeout:
        return EmbedReport(busy=True)
    with contextlib.closing(_read_only(db)) as conn:
        done, total = coverage(conn, embedder.name) if _ours(conn) else (0, 0)
    return EmbedReport(
        notes=notes,
        chunks=chunks,
        remaining=total - done,
        seconds=time.perf_counter() - started,
    )


def nearest(
    conn: sqlite3.Connection,
    model: str,
    vector: npt.NDArray[np.float32],
    *,
    where: tuple[str, Sequence[object]],
    limit: int,
) -> list[tuple[int, float, int]]:
    """The ``limit`` notes nearest ``vector``: ``(nid, cosine, start of the best chunk)``.

    ``where`` is ``AND …`` conditions on ``n`` and their parameters (``query.filter_sql``).
    Every vector is scored (one matrix product); only the notes of the best contents are
    read, a page at a time, so the notes table is not scanned unless a filter needs it.
    """
    import numpy as np  # noqa: PLC0415 - the semantic extra

    where_sql, params = where
    rows: list[Any] = conn.execute(
        "SELECT sha256, start, vec FROM vectors WHERE model = ?", (model,)
    ).fetchall()
    if where_sql:  # only contents some note passing the filters has
        allowed = {
            sha
            for (sha,) in conn.execute(
                f"SELECT DISTINCT n.sha256 FROM notes AS n WHERE 1{where_sql}",  # noqa: S608
                tuple(params),
            )
        }
        rows = [row for row in rows if row[0] in allowed]
    if not rows:
        return []
    scores = (
        np.frombuffer(b"".join(row[2] for row in rows), dtype=np.float32).reshape(len(rows), -1)
        @ vector
    )
    return _notes_of(conn, _best_first(rows, scores), where, limit)


def _best_first(
    rows: list[Any], scores: npt.NDArray[np.float32]
) -> Iterator[tuple[str, tuple[float, int]]]:
    """Each content once, at its best chunk: ``(sha256, (score, start))``, best first."""
    import numpy as np  # noqa: PLC0415

    seen: set[str] = set()
    for index in np.argsort(-scores, kind="stable"):
        sha = rows[index][0]
        if sha not in seen:
            seen.add(sha)
            yield sha, (float(scores[index]), int(rows[index][1]))


def _notes_of(
    conn: sqlite3.Connection,
    contents: Iterator[tuple[str, tuple[float, int]]],
    where: tuple[str, Sequence[object]],
    limit: int,
) -> list[tuple[int, float, int]]:
    """The notes of ``contents`` (best first) until ``limit`` and every tie of the last."""
    where_sql, params = where
    best: dict[int, tuple[float, str, int]] = {}
    floor: float | None = None  # the limit-th note's score: notes tying it are kept too
    while chunk := list(itertools.islice(contents, _PAGE)):
        if floor is not None and chunk[0][1][0] < floor:
            break
        found: dict[str, list[tuple[int, str]]] = {}
        marks = ",".join("?" * len(chunk))
        for nid, path, sha in conn.execute(
            f"SELECT n.nid, n.path, n.sha256 FROM notes AS n"  # noqa: S608 - ? marks only
            f" WHERE n.sha256 IN ({marks}){where_sql}",
            (*(sha for sha, _ in chunk), *params),
        ):
            found.setdefault(sha, []).append((int(nid), str(path)))
        for sha, (score, start) in chunk:
            if floor is not None and score < floor:
                break
            for nid, path in found.get(sha, ()):
                best[nid] = (score, path, start)
            if floor is None and len(best) >= limit:
                floor = score
    ranked = sorted(best.items(), key=lambda item: (-item[1][0], item[1][1], item[0]))
    return [(nid, score, start) for nid, (score, _, start) in ranked[:limit]]


def _missing(db: Path, paths: Collection[str] | None = None) -> bool:
    """Whether the index lacks vectors of the installed model (False without the extra).

    ``paths``: only whether the notes at those paths lack them (what a sync just wrote).
    """
    from importlib.util import find_spec  # noqa: PLC0415

    from vaultsync.search.embed import model_folder, model_name  # noqa: PLC0415

    folder = model_folder()
    if not db.is_file() or folder is None:
        return False
    if find_spec("numpy") is None or find_spec("tokenizers") is None:
        return False  # found, not imported: a sync must not pay for loading them
    try:
        name = model_name(folder)
        with contextlib.closing(_read_only(db)) as conn:
            if not _ours(conn):
                return False
            if paths is not None:
                return _lacking(conn, name, paths)
            done, total = coverage(conn, name)
    except (OSError, sqlite3.Error):
        return False
    return done < total


def _lacking(conn: sqlite3.Connection, model: str, paths: Collection[str]) -> bool:
    """Whether a note at one of ``paths`` has a content without vectors of ``model``."""
    ordered = sorted(paths)
    for start in range(0, len(ordered), 500):
        chunk = ordered[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found = conn.execute(
            f"SELECT 1 FROM notes AS n WHERE n.path IN ({marks}) AND NOT EXISTS"  # noqa: S608
            " (SELECT 1 FROM vectors AS v WHERE v.model = ? AND v.sha256 = n.sha256"
            " AND v.seq = 0) LIMIT 1",
            (*chunk, model),
        ).fetchone()
        if found is not None:
            return True
    return False


def start_background(
    vault: Path, *, allowed: bool | None = None, paths: Collection[str] | None = None
) -> bool:
    """Start the embedder for ``vault`` in its own process, detached, if it has work to do.

    Nothing happens when ``allowed`` is false (None: ``embedjob.background_allowed()``),
    without the extra, without an index, when every note has its vectors (``paths``: every
    note at those paths, the ones a sync wrote), or while another embedder runs.  The job's
    outcome is kept beside the index (``embedjob.job_failure``).  Returns whether a process
    was started.
    """
    from vaultsync.search.embedjob import background_allowed  # noqa: PLC0415

    db = index_path(vault)
    if not (background_allowed() if allowed is None else allowed) or not _missing(db, paths):
        return False
    try:
        with file_lock(db.with_name(db.name + ".embed.lock"), timeout=0.0):
            pass
    except (LockTimeout, OSError):
        return False  # one is running (or the folder cannot hold the lock)
    return _spawn(vault.absolute(), db)


def _spawn(vault: Path, db: Path) -> bool:
    """Run the job detached (``core.background``), its outcome kept beside the index."""
    from vaultsync.core.background import spawn  # noqa: PLC0415
    from vaultsync.search.embedjob import job_files  # noqa: PLC0415

    return spawn(job_files(db), "vaultsync.search.embedjob", str(vault))
