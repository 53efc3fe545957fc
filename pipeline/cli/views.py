"""Query results → the text and JSON the CLI prints; pure.

Text follows ChatCLI's own commands (``@memory neighbors``, ``@memory map``, ``@knowledge links``);
JSON carries the same facts with ids, for scripts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vaultsync.app.shapes import node_json
from vaultsync.core.model import Graph, Node
from vaultsync.core.text import plural
from vaultsync.graph.stats import counts_by_kind, hubs

if TYPE_CHECKING:  # annotations only: a query loads its own code
    from vaultsync.graph.query import DocumentLinks, LocalGraph, Neighbour


def _label(node: Node) -> str:
    return f"[{node.kind.value}] {node.title}"


def _relations(neighbour: Neighbour) -> str:
    parts = []
    for relation in neighbour.relations:
        text = f"{relation.direction} {relation.rel}"
        if relation.origin == "user":
            text += " · linked by you" + (f": {relation.note}" if relation.note else "")
        parts.append(text)
    return ", ".join(parts)


def local_graph_text(view: LocalGraph) -> str:
    """``Local graph of "<title>" (<id>):`` then neighbors and the second hop."""
    lines = [f'Local graph of "{view.subject.title}" ({view.subject.id}):']
    if not view.neighbours:
        lines.append("  (no connected notes yet)")
        return "\n".join(lines)
    lines.append("Connected (→ links it writes, ← backlinks):")
    lines.extend(f"  - {_label(n.node)}  ({_relations(n)})" for n in view.neighbours)
    if view.second_hop:
        titles = {n.node.id: n.node.title for n in view.neighbours}
        lines.append("Two hops away:")
        for node, via in view.second_hop:
            through = ", ".join(titles.get(hop, hop) for hop in via[:3])
            lines.append(f"  - {_label(node)}  (via {through})")
        hidden = view.second_hop_total - len(view.second_hop)
        if hidden > 0:
            lines.append(f"  … and {hidden} more")
    return "\n".join(lines)


def map_text(graph: Graph) -> str:
    """Node counts by kind and up to 8 hubs."""
    if not graph.nodes:
        return "The knowledge graph is empty so far."
    counts = " · ".join(f"{kind.value} {count}" for kind, count in counts_by_kind(graph))
    sizes = f"{plural(len(graph.nodes), 'note')}, {plural(len(graph.links), 'link')}"
    lines = [f"Knowledge graph: {sizes}", f"  {counts}"]
    top = hubs(graph)
    if top:
        lines.append("Hubs:")
        lines.extend(f"  - {_label(h.node)}  ({h.degree} neighbors)" for h in top)
    return "\n".join(lines)


def map_json(graph: Graph) -> dict[str, Any]:
    """Counts and hubs as plain data."""
    return {
        "notes": len(graph.nodes),
        "links": len(graph.links),
        "counts": {kind.value: count for kind, count in counts_by_kind(graph)},
        "hubs": [
            {**node_json(h.node), "degree": h.degree, "weight": h.weight} for h in hubs(graph)
        ],
    }


def _doc_path(node: Node) -> str:
    return node.id.split(":", 2)[2]


def document_links_text(view: DocumentLinks, summary: str) -> str:
    """``<context> :: <path> — "<title>"`` then links to, linked from, and outside wikilinks."""
    context = view.context.title if view.context else "?"
    lines = [f'{context} :: {_doc_path(view.document)} — "{view.document.title}"']
    if summary:
        lines.append(f"  · {summary}")
    for arrow, label, nodes in (
        ("→", "links to", view.outgoing),
        ("←", "linked from", view.incoming),
    ):
        lines.append(f"{arrow} {label} ({len(nodes)}):")
        lines.extend(f'  - {_doc_path(n)} — "{n.title}"' for n in nodes)
    if view.outside:
        names = ", ".join(n.title for n in view.outside)
        lines.append(
            f"[[wikilinks]] to notes outside this base (see vaultsync graph neighbors): {names}"
        )
    return "\n".join(lines)


def document_links_json(view: DocumentLinks, summary: str) -> dict[str, Any]:
    """The document links view as plain data."""
    return {
        "document": {**node_json(view.document), "summary": summary},
        "context": node_json(view.context) if view.context else None,
        "links_to": [node_json(n) for n in view.outgoing],
        "linked_from": [node_json(n) for n in view.incoming],
        "outside": [node_json(n) for n in view.outside],
    }
