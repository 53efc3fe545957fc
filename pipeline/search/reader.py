"""Read the search index: the registry, a note, a search, a note's links; edge (SQLite, read-only).

Contract: an :class:`IndexReader` opens ``<vault>/.vaultsync/search.db`` read-only and answers
every question from **one snapshot** (each method runs in its own read transaction), so it
never sees half of an update and never waits for one (WAL).  It never reads the vault's files:
a note's text comes from the index, as of the last complete update.  When the database is
replaced (a rebuild), the next call reopens it.

Raises :class:`IndexNotReady` when there is no index yet, or it is being rebuilt; SQLite's
corruption errors pass through (see ``index.is_corruption``) so the caller can rebuild.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from vaultsync.core.errors import (
    NoteReferenceError,
    SemanticUnavailable,
    UsageError,
    VaultsyncError,
)
from vaultsync.links.names import normalize_name
from vaultsync.search.database import SCHEMA_VERSION, index_path, is_corruption
from vaultsync.search.embed import ENABLE_HINT
from vaultsync.search.embedjob import index_notice
from vaultsync.search.fusion import fuse
from vaultsync.search.index import update_index
from vaultsync.search.model import (
    Direction,
    Document,
    Hit,
    LinkedNote,
    NoteLink,
    NoteLinks,
    SearchQuery,
    SearchResult,
)
from vaultsync.search.pieces import query_vector
from vaultsync.search.query import (
    BACKLINKS_CONSIDERED,
    STOP_WORDS,
    TOP_FOR_LINKED,
    Edge,
    filter_sql,
    loose_sql,
    parse_query,
    rank_linked,
    search_sql,
)
from vaultsync.search.snippets import cut_snippet
from vaultsync.search.vectors import coverage, nearest

if TYPE_CHECKING:
    from vaultsync.search.embed import TextEmbedder

__all__ = ["IndexDamaged", "IndexNotReady", "IndexReader", "NoteNotFound", "read_repairing"]

T = TypeVar("T")

POOL = 50
"""Candidates each ranking lends to a hybrid (or semantic) search before the cut to its limit."""
HYBRID_WEIGHTS = (1.5, 1.5, 1.0)
"""Weights of the all-words, the any-word and the semantic ranking in the fusion, measured on
``bench/search_queries.json`` with the bundled static model (paraphrase recall@5): any-word
notes appended to the all-words ranking 0.68; matching word forms (``stems``) 0.78; the
any-word ranking fused on its own at 1.5, 0.80 (at 1.0: 0.74).  The all-words weight moves
nothing between 1 and 3; at 1.5 no exact query loses its first hit."""

_EXACT = "SELECT nid FROM names WHERE key = ?"
_DOC_COLUMNS = "n.nid, n.id, n.path, n.title, n.kind, n.aliases, n.tags, n.sha256, n.size, n.engine"


class IndexNotReady(VaultsyncError):
    """There is no search index yet, or it is being rebuilt."""

    exit_code = 1


class IndexDamaged(IndexNotReady):
    """The index holds tables but not this schema's marker: damaged, or of another version."""


class NoteNotFound(NoteReferenceError):
    """No note of the index has this id or path."""


def _document(row: Sequence[Any]) -> Document:
    return Document(
        id=row[1],
        path=row[2],
        title=row[3],
        kind=row[4],
        aliases=tuple(json.loads(row[5])),
        tags=tuple(json.loads(row[6])),
        content_hash=row[7],
        size=row[8],
        engine=bool(row[9]),
    )


class IndexReader:
    """Read-only questions to one vault's index; safe to share between threads."""

    def __init__(self, vault: Path) -> None:
        self.db = index_path(vault.absolute())
        self._local = threading.local()

    def _connection(self) -> sqlite3.Connection:
        try:
            inode = self.db.stat().st_ino
        except FileNotFoundError:
            raise IndexNotReady(
                f"{self.db}: no search index yet", hint="run `vaultsync search` once"
            ) from None
        held: tuple[int, sqlite3.Connection] | None = getattr(self._local, "conn", None)
        if held is not None and held[0] == inode:
            return held[1]
        if held is not None:
            held[1].close()
        conn = sqlite3.connect(f"{self.db.as_uri()}?mode=ro", uri=True, isolation_level=None)
        self._local.conn = (inode, conn)
        return conn

    @contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        conn = self._connection()
        conn.execute("BEGIN")
        try:
            tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if tables == 0:  # a new file whose first update has not committed yet
                raise IndexNotReady(f"{self.db}: the search index is being built")
            try:
                row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            except sqlite3.OperationalError as err:
                raise IndexDamaged(f"{self.db}: not a search index of this version") from err
            if row is None or row[0] != SCHEMA_VERSION:
                raise IndexDamaged(f"{self.db}: not a search index of this version")
            yield conn
        finally:
            conn.execute("COMMIT")

    def close(self) -> None:
        """Close this thread's connection."""
        held = getattr(self._local, "conn", None)
        if held is not None:
            held[1].close()
            self._local.conn = None

    # -- the registry -------------------------------------------------------------------------

    def documents(
        self, *, kinds: Sequence[str] = (), folder: str = "", limit: int = 20, offset: int = 0
    ) -> tuple[tuple[Document, ...], int]:
        """One page of the registry sorted by path, and how many notes pass the filters."""
        where, params = filter_sql(kinds, folder)
        with self._snapshot() as conn:
            total = conn.execute(
                f"SELECT count(*) FROM notes AS n WHERE 1{where}",  # noqa: S608 - ? marks only
                params,
            ).fetchone()[0]
            rows = conn.execute(
                f"SELECT {_DOC_COLUMNS} FROM notes AS n WHERE 1{where}"  # noqa: S608
                " ORDER BY n.path LIMIT ? OFFSET ?",
                (*params, limit, offset),
            ).fetchall()
        return tuple(_document(row) for row in rows), int(total)

    def kinds(self) -> frozenset[str]:
        """The kinds the indexed notes have (a user note's ``kind`` may be any word)."""
        with self._snapshot() as conn:
            return frozenset(str(row[0]) for row in conn.execute("SELECT DISTINCT kind FROM notes"))

    def _find(self, conn: sqlite3.Connection, ref: str) -> tuple[int, Document]:
        row = conn.execute(
            f"SELECT {_DOC_COLUMNS} FROM notes AS n WHERE n.id = ?",  # noqa: S608
            (ref,),
        ).fetchone()
        path = ref.strip().lstrip("/")
        for candidate in (path, path + ".md"):
            if row is None:
                row = conn.execute(
                    f"SELECT {_DOC_COLUMNS} FROM notes AS n WHERE n.path = ?",  # noqa: S608
                    (candidate,),
                ).fetchone()
        if row is None:
            raise NoteNotFound(f"no note has the id or path {ref!r}")
        return int(row[0]), _document(row)

    def document(self, ref: str) -> tuple[Document, str]:
        """The note with id (or vault path) ``ref`` and its text after the front matter."""
        with self._snapshot() as conn:
            nid, doc = self._find(conn, ref)
            body = conn.execute("SELECT body FROM fts WHERE rowid = ?", (nid,)).fetchone()[0]
        return doc, str(body)

    # -- links --------------------------------------------------------------------------------

    def _links(self, conn: sqlite3.Connection, nid: int, *, incoming: bool) -> tuple[NoteLink, ...]:
        near, far = ("dst", "src") if incoming else ("src", "dst")
        rows = conn.execute(
            f"SELECT {_DOC_COLUMNS}, l.link_type, l.context FROM links AS l"  # noqa: S608
            f" JOIN notes AS n ON n.nid = l.{far}"
            f" WHERE l.{near} = ? AND l.{far} != l.{near} ORDER BY n.path, l.src, l.seq",
            (nid,),
        ).fetchall()
        seen: set[tuple[int, str]] = set()
        links: list[NoteLink] = []
        for row in rows:
            key = (int(row[0]), str(row[10]))
            if key not in seen:  # one link per (note, type): the first occurrence's context
                seen.add(key)
                links.append(NoteLink(other=_document(row), link_type=row[10], context=row[11]))
        return tuple(links)

    def links(self, ref: str) -> NoteLinks:
        """The outgoing links and backlinks of the note with id (or path) ``ref``."""
        with self._snapshot() as conn:
            nid, doc = self._find(conn, ref)
            return NoteLinks(
                document=doc,
                outlinks=self._links(conn, nid, incoming=False),
                backlinks=self._links(conn, nid, incoming=True),
            )

    # -- search -------------------------------------------------------------------------------

    def search(self, query: SearchQuery, embedder: TextEmbedder | None = None) -> SearchResult:
        """The hits for ``query`` in rank order, then the linked notes of the best ones.

        ``semantic`` and ``hybrid`` modes need ``embedder`` (``embed.load_embedder()``); hybrid
        fuses the text and semantic rankings (``fusion.fuse``) of a pool of ``POOL`` each.
        """
        pool = query.limit if query.mode == "text" else max(query.limit, POOL)
        with self._snapshot() as conn:
            text: list[tuple[int, float]] = []
            loose: list[int] = []
            if query.mode != "semantic":
                text, loose = _text_rankings(conn, replace(query, limit=pool))
            near: list[tuple[int, float, int]] = []
            notice = ""
            if query.mode != "text":
                near, notice = self._semantic(conn, query, embedder, pool)
            exact: set[int] = set()
            if query.mode == "hybrid":
                key = normalize_name(query.text)
                exact = {int(row[0]) for row in conn.execute(_EXACT, (key,))}
            paths = self._paths(conn, [*text, *((nid, 0.0) for nid in loose)], near)
            ranked, starts = _combine(query, (text, loose), near, paths, exact)
            nids = [nid for nid, _ in ranked]
            docs = self._documents(conn, nids)
            words = _words(query.text)
            snippets = {
                nid: cut_snippet(str(body)[starts.get(nid, 0) :], words)
                for nid, body in self._bodies(conn, nids)
            }
            hits = tuple(
                Hit(document=docs[nid], score=score, snippet=snippets.get(nid, ""))
                for nid, score in ranked
            )
            return SearchResult(
                hits=hits, linked=self._linked(conn, nids), mode=query.mode, notice=notice
            )

    def _semantic(
        self,
        conn: sqlite3.Connection,
        query: SearchQuery,
        embedder: TextEmbedder | None,
        pool: int,
    ) -> tuple[list[tuple[int, float, int]], str]:
        if embedder is None:
            raise SemanticUnavailable("semantic search is not installed", hint=ENABLE_HINT)
        vector = query_vector(conn, embedder, query.text)
        where = filter_sql(query.kinds, query.folder)
        # A query of words the model does not know means nothing: no note is near it.
        near = nearest(conn, embedder.name, vector, where=where, limit=pool) if vector.any() else []
        done, total = coverage(conn, embedder.name)
        return near, index_notice(self.db, done, total)

    def _paths(
        self,
        conn: sqlite3.Connection,
        text: Sequence[tuple[int, float]],
        near: Sequence[tuple[int, float, int]],
    ) -> dict[int, str]:
        nids = sorted({nid for nid, _ in text} | {nid for nid, _, _ in near})
        return {nid: doc.path for nid, doc in self._documents(conn, nids).items()}

    def _bodies(self, conn: sqlite3.Connection, nids: Sequence[int]) -> list[tuple[int, str]]:
        if not nids:
            return []
        marks = ",".join("?" * len(nids))
        return conn.execute(
            f"SELECT rowid, body FROM fts WHERE rowid IN ({marks})",  # noqa: S608 - ? marks
            tuple(nids),
        ).fetchall()

    def _documents(self, conn: sqlite3.Connection, nids: Sequence[int]) -> dict[int, Document]:
        if not nids:
            return {}
        marks = ",".join("?" * len(nids))
        rows = conn.execute(
            f"SELECT {_DOC_COLUMNS} FROM notes AS n WHERE n.nid IN ({marks})",  # noqa: S608
            tuple(nids),
        )
        return {int(row[0]): _document(row) for row in rows}

    def _linked(self, conn: sqlite3.Connection, nids: Sequence[int]) -> tuple[LinkedNote, ...]:
        edges: list[Edge] = []
        info: dict[int, tuple[int, str]] = {}
        for rank, nid in enumerate(nids[:TOP_FOR_LINKED]):
            outgoing = conn.execute(
                "SELECT l.dst, l.link_type, n.outdegree, n.path FROM links AS l"
                " JOIN notes AS n ON n.nid = l.dst WHERE l.src = ? ORDER BY l.seq",
                (nid,),
            ).fetchall()
            incoming = conn.execute(  # hubs have thousands: the least list-like ones count most
                "SELECT l.src, l.link_type, n.outdegree, n.path FROM links AS l"
                " JOIN notes AS n ON n.nid = l.src WHERE l.dst = ?"
                " ORDER BY n.outdegree, n.path, l.seq LIMIT ?",
                (nid, BACKLINKS_CONSIDERED),
            ).fetchall()
            ways: tuple[tuple[Direction, list[Any]], ...] = (
                ("linked_from", outgoing),
                ("links_to", incoming),
            )
            for way, rows in ways:
                for other, link_type, outdegree, path in rows:
                    info[other] = (outdegree, path)
                    edges.append(Edge(rank=rank, other=other, direction=way, link_type=link_type))
        picks = rank_linked(
            edges,
            nids,
            {nid: degree for nid, (degree, _) in info.items()},
            {nid: path for nid, (_, path) in info.items()},
        )
        docs = self._documents(conn, [pick.nid for pick in picks] + list(nids[:TOP_FOR_LINKED]))
        direction: dict[int, Direction] = {pick.nid: pick.direction for pick in picks}
        return tuple(
            LinkedNote(
                document=docs[pick.nid],
                direction=direction[pick.nid],
                via=docs[nids[pick.rank]].path,
                link_type=pick.link_type,
            )
            for pick in picks
        )


def _text_rankings(
    conn: sqlite3.Connection, query: SearchQuery
) -> tuple[list[tuple[int, float]], list[int]]:
    """The text rankings: ``(nid, BM25)`` of the notes with every word, and the notes with any.

    In hybrid mode only, the first goes on with the notes holding every word in some form
    (``restarting`` for ``restarts``), and the second is filled (``query.loose_sql``).
    """
    ranked = [(int(nid), -float(score)) for nid, score in conn.execute(*search_sql(query))]
    if query.mode != "hybrid":
        return ranked, []
    held = {nid for nid, _ in ranked}
    stemmed = conn.execute(*search_sql(query, stems=True))
    ranked += [(int(nid), -float(score)) for nid, score in stemmed if int(nid) not in held]
    loose = loose_sql(query)
    anyword = [] if loose is None else [int(row[0]) for row in conn.execute(*loose)]
    return ranked[: query.limit], anyword


def _words(text: str) -> tuple[tuple[str, bool], ...]:
    """The words to mark in snippets (stop words only if nothing else); none if no word."""
    try:
        words = parse_query(text).words()
    except UsageError:
        return ()
    rare = tuple(word for word in words if word[0].lower() not in STOP_WORDS)
    return rare or words


def _combine(
    query: SearchQuery,
    texts: tuple[Sequence[tuple[int, float]], Sequence[int]],
    near: Sequence[tuple[int, float, int]],
    paths: Mapping[int, str],
    exact: set[int],
) -> tuple[list[tuple[int, float]], dict[int, int]]:
    """The ranked ``(nid, score)`` for ``query.mode``, and where each note's snippet starts.

    A semantic hit's snippet starts at its best chunk, unless the text ranking has the note
    too (its words are marked wherever they are).
    """
    text, loose = texts
    in_text = {nid for nid, _ in text}
    starts = {nid: start for nid, _, start in near if nid not in in_text}
    if query.mode == "text":
        return list(text), {}
    if query.mode == "semantic":
        return [(nid, score) for nid, score, _ in near[: query.limit]], starts
    fused = fuse(
        [[nid for nid, _ in text], loose, [nid for nid, _, _ in near]],
        HYBRID_WEIGHTS,
        paths,
        limit=query.limit,
        first={nid for nid, _ in text} & exact,
    )
    return list(fused), starts


def read_repairing(vault: Path, reader: IndexReader, question: Callable[[IndexReader], T]) -> T:
    """``question(reader)``; if the index is corrupt (or foreign), rebuild it and ask once more."""
    try:
        return question(reader)
    except IndexDamaged:
        pass
    except sqlite3.DatabaseError as err:
        if not is_corruption(err):
            raise
    reader.close()
    update_index(vault, rebuild=True)
    return question(reader)
