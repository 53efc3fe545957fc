"""State directory → ``Records`` → ``Graph``, through the graph cache; edge (stores, cache).

The CLI, search and the API call these; they print nothing.
"""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

from vaultsync.core.errors import UsageError
from vaultsync.core.model import Graph, Origin, Records
from vaultsync.core.settings import Caps
from vaultsync.drawn.store import read_links
from vaultsync.extract import read_state
from vaultsync.graph.build import Build, build_graph
from vaultsync.graph.cache import (
    graph_fingerprint,
    load_graph,
    load_parsed_texts,
    save_graph,
    save_parsed_texts,
)
from vaultsync.graph.documents import context_documents
from vaultsync.graph.nodes import build_nodes


def read_records(state: Path) -> Records:
    """Every store of a state directory, explicit links included.

    A missing store is empty; a missing state directory is refused, since it is far more often
    a mistyped ``--state`` than an empty memory (and syncing it would empty the vault).
    """
    if not state.is_dir():
        what = "not a directory" if state.exists() else "no such directory"
        raise UsageError(
            f"{state}: {what} (expected a ChatCLI state directory)",
            hint="pass --state DIR or set VAULTSYNC_STATE_DIR",
        )
    return replace(read_state(state), links=read_links(state))


def build(state: Path, caps: Caps) -> tuple[Records, Build]:
    """Read the stores and build the graph, refreshing the ``graph.json`` cache."""
    fingerprint = graph_fingerprint(state, caps)
    records = read_records(state)
    known = load_parsed_texts(state)
    built = build_graph(records, caps, fingerprint=fingerprint, known=known)
    save_graph(state, built.graph)
    save_parsed_texts(state, built.documents, known)
    return records, built


def current_graph(state: Path, caps: Caps) -> Graph:
    """The graph, from ``graph.json`` while the stores are unchanged, else rebuilt."""
    cached = load_graph(state, graph_fingerprint(state, caps))
    if cached is None:
        return build(state, caps)[1].graph
    # graph.json keeps exactly its documented shape, which has no room for the notes people
    # write on links they draw; those come back from links.json (a small file).
    drawn = read_links(state)
    notes = {(link.source, link.target, link.rel): link.note for link in drawn if link.note}
    if not notes:
        return cached
    links = tuple(
        replace(link, note=notes.get(link.key, "")) if link.origin is Origin.USER else link
        for link in cached.links
    )
    return Graph(nodes=cached.nodes, links=links, fingerprint=cached.fingerprint)


def every_node_id(records: Records) -> frozenset[str]:
    """Every note the stores hold, including those outside the graph's caps.

    Link compaction collects only links whose note is gone from the *stores*; a note that
    merely fell outside a cap (an old session, an old episode) keeps its links.
    """
    unlimited = Caps(**{f.name: 2**62 for f in fields(Caps)})
    documents = tuple(doc for c in records.contexts for doc in context_documents(c, 2**62))
    return frozenset(node.id for node in build_nodes(records, unlimited, documents).nodes)
