"""The shell that runs the stages in order: stores → records → graph (cached) → vault.

The CLI calls these functions and prints what they return; they print nothing themselves.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pipeline.cache import graph_fingerprint, load_graph, save_graph
from pipeline.errors import UsageError
from pipeline.extract import read_state
from pipeline.graph import Build, build_graph
from pipeline.linkstore import read_links
from pipeline.model import Graph, Origin, Records
from pipeline.settings import Caps


def read_records(state: Path) -> Records:
    """Every store of a state directory, explicit links included."""
    if state.exists() and not state.is_dir():
        raise UsageError(f"{state}: not a directory (expected a ChatCLI state directory)")
    return replace(read_state(state), links=read_links(state))


def build(state: Path, caps: Caps) -> tuple[Records, Build]:
    """Read the stores and build the graph, refreshing the ``graph.json`` cache."""
    fingerprint = graph_fingerprint(state, caps)
    records = read_records(state)
    built = build_graph(records, caps, fingerprint=fingerprint)
    save_graph(state, built.graph)
    return records, built


def current_graph(state: Path, caps: Caps) -> Graph:
    """The graph, from ``graph.json`` while the stores are unchanged, else rebuilt."""
    cached = load_graph(state, graph_fingerprint(state, caps))
    if cached is None:
        return build(state, caps)[1].graph
    # graph.json keeps exactly its documented shape, which has no room for the notes people
    # write on links they draw; those come back from links.json (a small file).
    notes = {(l.source, l.target, l.rel): l.note for l in read_links(state) if l.note}
    if not notes:
        return cached
    links = tuple(
        replace(link, note=notes.get(link.key, "")) if link.origin is Origin.USER else link
        for link in cached.links
    )
    return Graph(nodes=cached.nodes, links=links, fingerprint=cached.fingerprint)


def document_summary(state: Path, caps: Caps, node_id: str) -> str:
    """A document's summary line (not kept in graph.json, so re-derived from its context)."""
    _, built = build(state, caps)
    for doc in built.documents:
        if doc.node_id == node_id:
            return doc.summary
    return ""

