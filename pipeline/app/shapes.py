"""The JSON shapes every adapter shares (CLI ``--json``, MCP tools, HTTP answers): one each.

A note of the search index (:func:`document_json`), a search result (:func:`result_json`) and
the local graph around a note (:func:`local_graph_json`) have one shape wherever they are
served; an adapter may add its own fields, never rename these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vaultsync.core.model import Node
    from vaultsync.graph.query import LocalGraph
    from vaultsync.search.model import Document, SearchResult


def document_json(doc: Document) -> dict[str, Any]:
    """A registry entry as plain data."""
    return {
        "id": doc.id,
        "path": doc.path,
        "title": doc.title,
        "kind": doc.kind,
        "aliases": list(doc.aliases),
        "tags": list(doc.tags),
        "content_hash": doc.content_hash,
        "size": doc.size,
        "engine": doc.engine,
    }


def result_json(text: str, result: SearchResult) -> dict[str, Any]:
    """A search result as plain data: hits, then linked notes with why."""
    return {
        "query": text,
        "mode": result.mode,
        "notice": result.notice,
        "hits": [
            {**document_json(h.document), "score": h.score, "snippet": h.snippet}
            for h in result.hits
        ],
        "linked": [
            {
                **document_json(n.document),
                "why": n.why,
                "direction": n.direction,
                "via": n.via,
                "link_type": n.link_type,
            }
            for n in result.linked
        ],
    }


def node_json(node: Node) -> dict[str, Any]:
    """A graph note as plain data: id, kind, title."""
    return {"id": node.id, "kind": node.kind.value, "title": node.title}


def local_graph_json(view: LocalGraph) -> dict[str, Any]:
    """The local graph as plain data."""
    return {
        "note": node_json(view.subject),
        "neighbors": [
            {
                **node_json(n.node),
                "relations": [
                    {
                        "rel": r.rel,
                        "direction": "out" if r.direction == "→" else "in",
                        "origin": r.origin,
                        "weight": r.weight,
                        **({"note": r.note} if r.note else {}),
                    }
                    for r in n.relations
                ],
            }
            for n in view.neighbours
        ],
        "second_hop": [{**node_json(node), "via": list(via)} for node, via in view.second_hop],
        "second_hop_total": view.second_hop_total,
    }
