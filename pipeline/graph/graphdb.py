"""The graph kept by note and by link source in SQLite, for the queries; edge (cache folder).

``graph.db`` in the state's cache folder (``core.cachefile.cache_dir``) holds the last build's
graph in three tables: ``nodes`` by id, ``links`` by (source, target, rel), and ``meta`` with
the cache envelope (``core.cachefile.envelope``: the schema and code version), the stores'
``fingerprint`` and the ``build`` id (``graph.patch.build_identity``) the rows are of.

Contract:

* :func:`save_graph` writes a build in one transaction, so the file holds one build's graph
  or the one before, never a mix.  When it holds the build this one was patched from (its
  ``build`` equals ``delta.base``), only the notes and the link sources of the build's
  ``GraphDelta`` are rewritten: a one-fact change rewrites a few rows, not the 300,000 links of
  a 100,000-note graph.  Otherwise every row is.
* :func:`load_graph` answers the graph when the file holds ``fingerprint``, else ``None``:
  nodes sorted by id and links by (from, to, rel), equal to the build's (links carry no
  ``note``: ``graph.load.current_graph`` adds the drawn links' notes).
* A cache, never trusted wrongly: a missing file, another envelope, a damaged file or one held
  by another writer past the timeout reads as nothing; a save that cannot write leaves the
  ``build`` it had, so the next save rewrites every row.  It holds masked values only (the
  graph is built downstream of ``core.scrub``).

``vaultsync graph export`` writes the graph as ``graph.json`` (``graph.cache.graph_to_json``)
from what :func:`load_graph` answers: the JSON form is written when asked, never per sync.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

from vaultsync.core import cachefile
from vaultsync.core.digest import code_fingerprint
from vaultsync.core.model import Graph, Kind, Link, Node, Origin
from vaultsync.core.process import paused_gc
from vaultsync.core.sqlitefile import read_cache_db, read_meta, recreate, save_cache_db
from vaultsync.graph.build import GraphDelta

DB_NAME = "graph.db"
DB_VERSION = 1
REPLACED = "graph.json"
"""What kept the graph in the cache folder before ``graph.db`` (60 MB at 100,000 notes):
deleted by every save, since nothing reads it any more."""
BUSY_TIMEOUT = 10.0

SCHEMA = (
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE nodes(id TEXT PRIMARY KEY, kind TEXT NOT NULL, title TEXT NOT NULL,"
    " aliases TEXT NOT NULL) WITHOUT ROWID",
    # weight has no declared type: an int weight comes back an int, as the build made it
    "CREATE TABLE links(source TEXT NOT NULL, target TEXT NOT NULL, rel TEXT NOT NULL,"
    " origin TEXT NOT NULL, weight NOT NULL, PRIMARY KEY (source, target, rel)) WITHOUT ROWID",
)


def graph_db_path(state: Path) -> Path:
    """Where the graph of ``state``'s stores is kept: ``graph.db`` in its cache folder."""
    return cachefile.cache_dir(state) / DB_NAME


def _envelope() -> str:
    return cachefile.envelope("graph-db", DB_VERSION, code_fingerprint()).decode().strip()


def save_graph(
    state: Path, graph: Graph, *, build_id: str = "", delta: GraphDelta | None = None
) -> bool:
    """Keep ``graph``; ``False`` when it cannot be kept.

    ``build_id`` and ``delta`` are the build's (``graph.build.Build``): the delta says how it
    differs from the build it was patched from.
    """
    write = functools.partial(_save, graph=graph, build_id=build_id, delta=delta)
    return save_cache_db(graph_db_path(state), write, timeout=BUSY_TIMEOUT, replaced=REPLACED)


def _save(
    conn: sqlite3.Connection, *, graph: Graph, build_id: str, delta: GraphDelta | None
) -> None:
    held = read_meta(conn)
    if held.get("envelope") != _envelope():
        recreate(conn, SCHEMA)
        held = {}
    if delta is not None and delta.base and held.get("build") == delta.base:
        _rewrite(conn, graph, delta.nodes, delta.sources)
    else:
        _rewrite_all(conn, graph)
    meta = {"envelope": _envelope(), "fingerprint": graph.fingerprint, "build": build_id}
    conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", sorted(meta.items()))


def _rewrite_all(conn: sqlite3.Connection, graph: Graph) -> None:
    conn.execute("DELETE FROM nodes")
    conn.execute("DELETE FROM links")
    conn.execute("DELETE FROM meta")
    conn.executemany("INSERT INTO nodes VALUES (?, ?, ?, ?)", _node_rows(graph.nodes))
    conn.executemany("INSERT INTO links VALUES (?, ?, ?, ?, ?)", _link_rows(graph.links))


def _rewrite(
    conn: sqlite3.Connection, graph: Graph, nodes: Iterable[str], sources: Iterable[str]
) -> None:
    """Only the rows of the notes and link sources that changed since the build held."""
    nodes, sources = sorted(nodes), sorted(sources)
    conn.executemany("DELETE FROM nodes WHERE id = ?", ((node,) for node in nodes))
    held = (graph.by_id[node] for node in nodes if node in graph.by_id)
    conn.executemany("INSERT INTO nodes VALUES (?, ?, ?, ?)", _node_rows(held))
    conn.executemany("DELETE FROM links WHERE source = ?", ((source,) for source in sources))
    links = (link for source in sources for link in graph.links_from(source))
    conn.executemany("INSERT INTO links VALUES (?, ?, ?, ?, ?)", _link_rows(links))


def _node_rows(nodes: Iterable[Node]) -> Iterator[tuple[str, str, str, str]]:
    for node in nodes:
        aliases = json.dumps(node.aliases, ensure_ascii=False) if node.aliases else "[]"
        yield node.id, node.kind.value, node.title, aliases


def _link_rows(links: Iterable[Link]) -> Iterator[tuple[str, str, str, str, float]]:
    for link in links:
        yield link.source, link.target, link.rel, link.origin.value, link.weight


_KINDS = {kind.value: kind for kind in Kind}
_ORIGINS = {origin.value: origin for origin in Origin}


def load_graph(state: Path, fingerprint: str) -> Graph | None:
    """The kept graph when it is of ``fingerprint``, else ``None`` (never fails)."""
    # Its nodes and links make no cycles: left on, the collector walked them again and again,
    # half of reading 295,000 links back at 100,000 notes.
    with paused_gc():
        return read_cache_db(
            graph_db_path(state), functools.partial(_read, fingerprint=fingerprint)
        )


def _read(conn: sqlite3.Connection, *, fingerprint: str) -> Graph | None:
    meta = read_meta(conn)
    if meta.get("envelope") != _envelope() or meta.get("fingerprint") != fingerprint:
        return None
    nodes = tuple(
        Node(id=id_, kind=_KINDS[kind], title=title, aliases=_aliases(aliases))
        for id_, kind, title, aliases in conn.execute("SELECT * FROM nodes ORDER BY id")
    )
    links = tuple(
        Link(source=source, target=target, rel=rel, origin=_ORIGINS[origin], weight=weight)
        for source, target, rel, origin, weight in conn.execute(
            "SELECT * FROM links ORDER BY source, target, rel"
        )
    )
    return Graph(nodes=nodes, links=links, fingerprint=fingerprint)


def _aliases(text: str) -> tuple[str, ...]:
    return () if text == "[]" else tuple(json.loads(text))
