"""``vaultsync graph``: build the knowledge graph from the stores, query it, draw it."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click
from vaultsync.cli.options import (
    emit,
    json_option,
    state_option,
    vault_option,
    workspace,
)
from vaultsync.core.errors import UsageError

if TYPE_CHECKING:
    pass


@click.group()
def graph() -> None:
    """Build the knowledge graph from the stores and query it."""


@graph.command()
@click.argument("note")
@state_option
@vault_option
@json_option
def neighbors(note: str, state: str | None, vault: str | None, as_json: bool) -> None:
    """Show NOTE and what is around it, two hops deep (→ links it writes, ← backlinks).

    NOTE is a node id, a title, an alias, a [[wikilink]], a chunk id, else the best keyword match.
    """
    from vaultsync.app.shapes import local_graph_json
    from vaultsync.cli.views import local_graph_text
    from vaultsync.graph import load
    from vaultsync.graph.query import find_note, local_graph

    ws = workspace(state, vault)
    current = load.current_graph(ws.state, ws.caps)
    view = local_graph(current, find_note(current, note).id)
    emit(as_json, lambda: local_graph_json(view), lambda: local_graph_text(view))


@graph.command(name="map")
@state_option
@vault_option
@json_option
def map_command(state: str | None, vault: str | None, as_json: bool) -> None:
    """Node counts by kind and the hub notes (documents are never hubs)."""
    from vaultsync.cli.views import map_json, map_text
    from vaultsync.graph import load

    ws = workspace(state, vault)
    current = load.current_graph(ws.state, ws.caps)
    emit(as_json, lambda: map_json(current), lambda: map_text(current))


@graph.command(name="links")
@click.argument("doc")
@state_option
@vault_option
@json_option
def links_command(doc: str, state: str | None, vault: str | None, as_json: bool) -> None:
    """A document's links to and from its context's documents, and its links outside it."""
    from vaultsync.cli.views import document_links_json, document_links_text
    from vaultsync.core.model import Kind
    from vaultsync.graph import load
    from vaultsync.graph.query import document_links, find_note

    ws = workspace(state, vault)
    # graph.json keeps no summaries, so this view builds the graph once and reads both from it.
    _, built = load.build(ws.state, ws.caps)
    node = find_note(built.graph, doc)
    if node.kind is not Kind.DOC:
        raise UsageError(f"{doc!r} names a {node.kind.value} ({node.id}), not a document")
    view = document_links(built.graph, node.id)
    summary = next((d.summary for d in built.documents if d.node_id == node.id), "")
    emit(
        as_json,
        lambda: document_links_json(view, summary),
        lambda: document_links_text(view, summary),
    )


@graph.command()
@state_option
@vault_option
def export(state: str | None, vault: str | None) -> None:
    """Print the graph as graph.json (schema 2) on stdout."""
    from vaultsync.graph import load
    from vaultsync.graph.cache import graph_to_json

    ws = workspace(state, vault)
    sys.stdout.buffer.write(graph_to_json(load.current_graph(ws.state, ws.caps)))


@graph.command()
@click.option(
    "--out",
    "out",
    default="graph.html",
    show_default=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="The HTML file to write; - for stdout.",
)
@state_option
@vault_option
def view(out: str, state: str | None, vault: str | None) -> None:
    """Write the whole graph as one self-contained HTML page to open in a browser (offline).

    Notes coloured by kind and sized by their links, tags hidden at first; filter by kind and
    relation, search by title, click a note for its local graph and its Obsidian link, a link
    for its relations.
    """
    from pathlib import Path

    from vaultsync.core.errors import VaultWriteError
    from vaultsync.core.fsio import atomic_write
    from vaultsync.graphview.page import graph_page

    ws = workspace(state, vault)
    page, data = graph_page(ws.state, ws.vault, ws.caps)
    if out == "-":
        sys.stdout.buffer.write(page)
        return
    target = Path(out)
    try:
        atomic_write(target, page, mode=0o600)  # titles of private notes: the owner's only
    except OSError as err:
        raise VaultWriteError(f"cannot write {target}: {err.strerror or err}") from err
    click.echo(
        f"wrote {target}: {len(data.nodes)} notes, {data.links} links"
        f" ({len(data.edges)} connections drawn); open it in a browser"
    )
