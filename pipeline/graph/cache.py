"""Graph ⇄ ``memory/graph.json``, reused while the stores' fingerprint is unchanged; edge.

Beside it, ``memory/graph-documents.json`` keeps what parsing each document's text gave (title,
summary, links), by a digest of the text: a rebuild after a change in some other store, or in a
few documents, parses only the texts it has not seen (seed 002: "derived once per context
revision").

The file has exactly this shape, so other tools can read it::

    {"schema": 2, "fingerprint": "…",
     "nodes": [{"id", "kind", "title", "aliases": […]}, …],
     "links": [{"from", "to", "rel", "origin", "weight"}, …]}

nodes sorted by id, links by (from, to, rel).  A schema-1 file (ChatCLI's), a foreign, corrupt
or stale file is discarded and rebuilt.  The cache is an optimisation: when it cannot be
written (a read-only state directory), the graph is simply not cached.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from vaultsync.core.digest import code_fingerprint
from vaultsync.core.fsio import atomic_write, is_racy
from vaultsync.core.model import Graph, Kind, Link, Node, Origin
from vaultsync.core.settings import Caps
from vaultsync.extract import source_files, store_fingerprint
from vaultsync.graph.documents import DocumentNote, ParsedText

GRAPH_SCHEMA = 2
DOCUMENTS_SCHEMA = 1


def graph_path(state: Path) -> Path:
    """Where the graph cache lives: ``<state>/memory/graph.json``."""
    return state / "memory" / "graph.json"


def graph_fingerprint(state: Path, caps: Caps) -> str:
    """Digest of the stores' stat data, the caps and the code that builds the graph."""
    text = f"{code_fingerprint()}\n{caps.as_key()}\n{store_fingerprint(state)}"
    return hashlib.sha256(text.encode()).hexdigest()


def graph_to_json(graph: Graph) -> bytes:
    """The compact, byte-stable JSON form of a graph."""
    document = {
        "schema": GRAPH_SCHEMA,
        "fingerprint": graph.fingerprint,
        "nodes": [
            {"id": n.id, "kind": n.kind.value, "title": n.title, "aliases": list(n.aliases)}
            for n in graph.nodes
        ],
        "links": [
            {
                "from": link.source,
                "to": link.target,
                "rel": link.rel,
                "origin": link.origin.value,
                "weight": link.weight,
            }
            for link in graph.links
        ],
    }
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def graph_from_json(data: bytes) -> Graph | None:
    """Parse a cache file; ``None`` for anything that is not a schema-2 graph."""
    try:
        document = json.loads(data)
        if not isinstance(document, dict) or document.get("schema") != GRAPH_SCHEMA:
            return None
        nodes = tuple(_node(raw) for raw in document["nodes"])
        links = tuple(_link(raw) for raw in document["links"])
        return Graph(nodes=nodes, links=links, fingerprint=str(document["fingerprint"]))
    except (ValueError, KeyError, TypeError):
        return None


def load_graph(state: Path, fingerprint: str) -> Graph | None:
    """The cached graph when its fingerprint matches, else ``None``."""
    try:
        data = graph_path(state).read_bytes()
    except OSError:
        return None
    graph = graph_from_json(data)
    if graph is None or graph.fingerprint != fingerprint:
        return None
    return graph


def save_graph(state: Path, graph: Graph) -> bool:
    """Write the cache atomically (0600); ``False`` when the state directory is not writable.

    A file that already holds this fingerprint is left alone: the same stores, caps and code
    build the same graph, so rewriting it (60 MB at 100,000 notes) would change nothing.  Not
    when it was written within ``RACY_NS`` of a store's change, though: an edit in the same
    timestamp tick may keep a store's size and mtime, hence the fingerprint, and only a
    rewrite repairs that.
    """
    if graph.fingerprint and _holds(graph_path(state), graph.fingerprint, state):
        return True
    return _replace(graph_path(state), graph_to_json(graph))


def _holds(path: Path, fingerprint: str, state: Path) -> bool:
    """Whether ``path`` holds this fingerprint, written well after the stores last changed."""
    head = f'{{"schema":{GRAPH_SCHEMA},"fingerprint":"{fingerprint}",'.encode()
    try:
        with path.open("rb") as handle:
            if handle.read(len(head)) != head:
                return False
            written = os.fstat(handle.fileno()).st_mtime_ns
    except OSError:
        return False
    return not is_racy(_last_change(state), written)


def _last_change(state: Path) -> int:
    """The newest mtime (ns) among the stores that exist."""
    newest = 0
    for store in source_files(state):
        with contextlib.suppress(OSError):
            newest = max(newest, store.stat().st_mtime_ns)
    return newest


def documents_path(state: Path) -> Path:
    """Where parsed document texts are kept: ``<state>/memory/graph-documents.json``."""
    return state / "memory" / "graph-documents.json"


def load_parsed_texts(state: Path) -> dict[str, ParsedText]:
    """Texts parsed by the last build (``text_digest`` → result); empty when unusable.

    The file is ``{"schema": 1, "code": "…", "texts": {digest: [title, summary, [link
    destinations], [wikilink targets]]}}``, discarded whole when vaultsync's code changed.
    """
    try:
        document = json.loads(documents_path(state).read_bytes())
        if (
            not isinstance(document, dict)
            or document.get("schema") != DOCUMENTS_SCHEMA
            or document.get("code") != code_fingerprint()
        ):
            return {}
        return {
            str(digest): ParsedText(
                title=str(title),
                summary=str(summary),
                link_dests=tuple(str(d) for d in dests),
                link_targets=tuple(str(t) for t in targets),
            )
            for digest, (title, summary, dests, targets) in document["texts"].items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def save_parsed_texts(
    state: Path, documents: Iterable[DocumentNote], known: Mapping[str, ParsedText]
) -> bool:
    """Keep the parsed texts of this build's documents, and only those.

    The file never outgrows the stores; nothing is written when the texts are the ``known`` ones.
    """
    texts = {doc.digest: doc.parsed for doc in documents if doc.digest}
    if texts.keys() == known.keys():
        return True
    document = {
        "schema": DOCUMENTS_SCHEMA,
        "code": code_fingerprint(),
        "texts": {
            digest: [p.title, p.summary, list(p.link_dests), list(p.link_targets)]
            for digest, p in sorted(texts.items())
        },
    }
    data = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    return _replace(documents_path(state), data)


def _replace(target: Path, data: bytes) -> bool:
    """Write ``data`` to ``target`` atomically (0600); ``False`` when that is not possible."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, data, mode=0o600)
    except OSError:
        return False
    return True


# Enum lookups by value through a dict: ``Kind(value)`` costs several times more, ~100,000
# times per load.
_KINDS = {kind.value: kind for kind in Kind}
_ORIGINS = {origin.value: origin for origin in Origin}


def _node(raw: dict[str, Any]) -> Node:
    return Node(
        id=str(raw["id"]),
        kind=_KINDS[raw["kind"]],
        title=str(raw["title"]),
        aliases=tuple(str(a) for a in raw["aliases"]),
    )


def _link(raw: dict[str, Any]) -> Link:
    return Link(
        source=str(raw["from"]),
        target=str(raw["to"]),
        rel=str(raw["rel"]),
        origin=_ORIGINS[raw["origin"]],
        weight=float(raw["weight"]),
    )
