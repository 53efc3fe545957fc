"""Graph → counts by kind and hubs (the index card); pure.

One definition serves ``vaultsync graph map``, the vault's ``Home.md`` and the knowledge queries,
so every view names the same hubs.
"""

from __future__ import annotations

import weakref
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
    """The best-connected notes: degree, then weighted degree, then id; isolated notes excluded.

    Read from the graph's own link tables, for the notes that may be hubs only: documents are
    three quarters of a big vault's notes and are never ranked.  The last answer is kept for
    its very graph (``Home.md`` and the map ask for the same one).
    """
    global _last  # noqa: PLW0603 - one answer per process, for one graph object
    if _last is not None and _last[0]() is graph and _last[1] == limit:
        return _last[2]
    ranked = sorted(
        (hub for node in graph.nodes if node.kind not in NEVER_HUBS and (hub := _hub(graph, node))),
        key=lambda hub: (-hub.degree, -hub.weight, hub.node.id),
    )
    found = tuple(ranked[:limit])
    _last = (weakref.ref(graph), limit, found)  # weak: a resident process lets old graphs go
    return found


_last: tuple[weakref.ref[Graph], int, tuple[Hub, ...]] | None = None


def _hub(graph: Graph, node: Node) -> Hub | None:
    """A note's distinct neighbours and summed link weight, either way; ``None``: no link."""
    out, back = graph.outgoing.get(node.id, ()), graph.incoming.get(node.id, ())
    if not out and not back:
        return None
    near = {link.target for link in out}
    near.update(link.source for link in back)
    # Every weight is a multiple of 0.5 (structure's table, wikilinks, mentions, drawn links):
    # sums of them are exact, so any order of summing gives the same one.
    weight = sum(link.weight for link in out) + sum(link.weight for link in back)
    return Hub(node=node, degree=len(near), weight=weight)


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
