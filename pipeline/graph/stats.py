"""Graph → counts by kind and hubs (the index card); pure.

One definition serves ``vaultsync graph map``, the vault's ``Home.md`` and the knowledge queries,
so every view names the same hubs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from vaultsync.core.model import Graph, Kind, Node

# The order kinds are listed in on the index card (as ChatCLI's IndexCard lists them).
CARD_ORDER: tuple[Kind, ...] = (
    Kind.PROFILE,
    Kind.PROJECT,
    Kind.TOPIC,
    Kind.SKILL,
    Kind.EPISODE,
    Kind.NOTE,
    Kind.SESSION,
    Kind.KBCONTEXT,
    Kind.CONTEXT,
    Kind.DOC,
    Kind.CARD,
    Kind.FACT,
    Kind.TAG,
)

# Documents are counted but never hubs, so a densely linked corpus does not crowd out the
# person's own projects and topics; tags are glue, never listed as related notes.
NEVER_HUBS = frozenset({Kind.DOC, Kind.TAG})


@dataclass(frozen=True, slots=True, kw_only=True)
class Hub:
    """A well-connected note: distinct neighbours, then summed link weight."""

    node: Node
    degree: int
    weight: float


def counts_by_kind(graph: Graph) -> tuple[tuple[Kind, int], ...]:
    """Node counts in card order; kinds with no notes are left out."""
    counts = Counter(node.kind for node in graph.nodes)
    return tuple((kind, counts[kind]) for kind in CARD_ORDER if counts[kind])


def hubs(graph: Graph, limit: int = 8) -> tuple[Hub, ...]:
    """The best-connected notes: degree, then weighted degree, then id; isolated notes excluded."""
    neighbours: dict[str, set[str]] = {}
    weights: dict[str, float] = {}
    for link in graph.links:
        neighbours.setdefault(link.source, set()).add(link.target)
        neighbours.setdefault(link.target, set()).add(link.source)
        weights[link.source] = weights.get(link.source, 0.0) + link.weight
        weights[link.target] = weights.get(link.target, 0.0) + link.weight
    ranked = sorted(
        (
            Hub(node=graph.by_id[node_id], degree=len(near), weight=weights[node_id])
            for node_id, near in neighbours.items()
            if node_id in graph.by_id and graph.by_id[node_id].kind not in NEVER_HUBS
        ),
        key=lambda hub: (-hub.degree, -hub.weight, hub.node.id),
    )
    return tuple(ranked[:limit])


def index_card(graph: Graph, limit: int = 8) -> str:
    """One line: ``Knowledge graph: N notes, E links (…). Hubs: a, b.``; empty graph → ``""``."""
    if not graph.nodes:
        return ""
    counts = ", ".join(f"{kind.value} {count}" for kind, count in counts_by_kind(graph))
    card = f"Knowledge graph: {len(graph.nodes)} notes, {len(graph.links)} links ({counts})."
    top = hubs(graph, limit)
    if top:
        card += " Hubs: " + ", ".join(hub.node.title or hub.node.id for hub in top) + "."
    return card
