"""Links drawn by hand: draw one, remove them, and the note each end names.

Every adapter draws through here (``vaultsync link``, the MCP ``link`` tool, ``POST
/v1/vault/links``), so each end is found the same way and the same refusals apply: a
reference must name exactly one note of the graph (``graph.query.find_note``, strict); a
note the user wrote is not a note of the graph, and is refused with a hint.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from vaultsync.app.workspace import Workspace
from vaultsync.core.errors import LinkStoreError

if TYPE_CHECKING:
    from vaultsync.app.search import VaultIndex
    from vaultsync.core.model import Graph, Node
    from vaultsync.drawn.store import AddResult, RemoveResult


@dataclass(frozen=True, slots=True, kw_only=True)
class Drawn:
    """A link drawn (or found already drawn), between the two notes its ends named."""

    result: AddResult
    source: Node
    target: Node


@dataclass(frozen=True, slots=True, kw_only=True)
class Removed:
    """The links removed between the two notes the ends named."""

    result: RemoveResult
    source: Node
    target: Node


def current_graph(ws: Workspace) -> Graph:
    """The graph as the last build left it (rebuilt when the stores changed)."""
    from vaultsync.graph import load

    return load.current_graph(ws.state, ws.caps)


def graph_note(graph: Graph, reference: str, index: VaultIndex | None = None) -> Node:
    """The one graph note ``reference`` names (id, path, title, alias, [[wikilink]], text).

    With the vault's ``index``, an engine note's id or vault path is looked up there first, and
    a note the user wrote is refused (it is not a note of the graph).

    Raises:
        NoteReferenceError: no note, or several, match.
        UsageError: the reference names a note the user wrote.
    """
    from vaultsync.graph.query import find_note

    if index is not None and (known := _indexed(graph, reference, index)) is not None:
        return known
    return find_note(graph, reference, strict=True)


def _indexed(graph: Graph, reference: str, index: VaultIndex) -> Node | None:
    from vaultsync.core.errors import UsageError
    from vaultsync.search.reader import NoteNotFound

    try:
        doc = index.document(reference)[0]
    except NoteNotFound:
        return None
    if doc.id in graph.by_id:
        return graph.by_id[doc.id]
    if not doc.engine:
        raise UsageError(
            f"{doc.path} is a note you wrote, not a note of the graph",
            hint="link it with a [[wikilink]] in its text",
        )
    return None


def draw_link(
    ws: Workspace,
    source: str,
    target: str,
    rel: str = "related",
    note: str = "",
    *,
    index: VaultIndex | None = None,
) -> Drawn:
    """Draw the link ``source → target`` (a relation slug and a one-line note) in links.json.

    Raises:
        NoteReferenceError: an end names no note, or several.
        LinkStoreError: the store refuses it (a note linked to itself, a note too long…).
    """
    from vaultsync.drawn.store import LinkStore

    graph = current_graph(ws)
    start, end = graph_note(graph, source, index), graph_note(graph, target, index)
    result = LinkStore(ws.state).add(start.id, end.id, rel, note, now=datetime.now(UTC))
    return Drawn(result=result, source=start, target=end)


def remove_links(ws: Workspace, source: str, target: str, rel: str | None = None) -> Removed:
    """Remove the links drawn by hand between two notes (one relation, or every one).

    Raises:
        NoteReferenceError: an end names no note, or several.
        LinkStoreError: nothing drawn by hand joins them (the data's links are named).
    """
    from vaultsync.drawn.store import LinkStore

    graph = current_graph(ws)
    start, end = graph_note(graph, source), graph_note(graph, target)
    result = LinkStore(ws.state).remove(start.id, end.id, rel, now=datetime.now(UTC))
    if not result.removed:
        _refuse_nothing_drawn(graph, start, end)
    return Removed(result=result, source=start, target=end)


def _refuse_nothing_drawn(graph: Graph, source: Node, target: Node) -> None:
    """Nothing was removed, so the graph read before the removal still holds every link."""
    from_data = [
        link
        for link in (*graph.links_from(source.id), *graph.links_to(source.id))
        if {link.source, link.target} == {source.id, target.id} and link.origin.value != "user"
    ]
    if from_data:
        kinds = "; ".join(
            f"{link.rel} ({link.origin.value}, {link.source} → {link.target})" for link in from_data
        )
        raise LinkStoreError(
            f"no link you drew joins {source.id} and {target.id}; they are linked by the data: "
            f"{kinds}",
            hint="change the data (the tag, the fact's project, the wikilink, the text)",
        )
    raise LinkStoreError(f"no link joins {source.id} and {target.id}")
