"""Graph + vault paths → the data the graph view draws; pure.

Contract:

* **Nodes** are the graph's notes in id order, each ``[id, kind index, title, vault path or
  "", degree]``; the degree is the number of distinct notes it is linked with (either
  direction, every relation), which sizes it on screen.
* **Edges** join two notes once, whatever the number of links between them: each is ``[a, b,
  [[relation index, origin index, direction], …]]`` with ``a < b`` (node indexes) and
  ``direction`` 1 for a link ``a → b``, -1 for ``b → a``; relations sorted by (relation,
  direction, origin).  Selecting an edge shows them (``about · mentions``).
* **Kinds** are listed in the order of :class:`~vaultsync.core.model.Kind`, each with its
  colour and whether it is shown at first: tags are glue and start hidden.
* Nothing but the graph's titles, kinds, ids and relations and the vault's paths goes in: the
  graph is built after the store boundary masked every secret, so the page holds none.
* Deterministic: the same graph and paths give the same data, byte for byte once serialised.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from vaultsync.core.model import Graph, Kind, Origin

__all__ = ["KIND_COLORS", "ViewData", "view_data"]

# One colour per kind, far apart on the colour wheel for the kinds seen most (facts, episodes,
# documents, projects, topics); tags are grey, as glue.
KIND_COLORS: Mapping[Kind, str] = MappingProxyType(
    {
        Kind.FACT: "#4e79a7",
        Kind.TOPIC: "#f28e2b",
        Kind.PROJECT: "#e15759",
        Kind.PROFILE: "#b07aa1",
        Kind.EPISODE: "#59a14f",
        Kind.NOTE: "#edc948",
        Kind.SESSION: "#76b7b2",
        Kind.SKILL: "#ff9da7",
        Kind.CARD: "#9c755f",
        Kind.KBCONTEXT: "#8cd17d",
        Kind.CONTEXT: "#499894",
        Kind.DOC: "#a0cbe8",
        Kind.TAG: "#bab0ac",
    }
)
HIDDEN_AT_FIRST = frozenset({Kind.TAG})
ORIGINS: tuple[str, ...] = tuple(origin.value for origin in Origin)


@dataclass(frozen=True, slots=True, kw_only=True)
class ViewData:
    """What the page draws; ``to_json`` is the exact bytes embedded in it."""

    vault: str
    """The vault's folder name, Obsidian's vault name (``""``: no vault, no Obsidian links)."""
    kinds: tuple[tuple[str, str, bool], ...]
    """``(kind, colour, shown at first)`` in :class:`Kind` order."""
    rels: tuple[str, ...]
    origins: tuple[str, ...]
    nodes: tuple[tuple[str, int, str, str, int], ...]
    edges: tuple[tuple[int, int, tuple[tuple[int, int, int], ...]], ...]

    @property
    def links(self) -> int:
        """How many links of the graph the edges carry (every one: an edge has one or more)."""
        return sum(len(relations) for _, _, relations in self.edges)

    def to_json(self) -> str:
        """Compact JSON, safe inside a ``<script>`` element (no ``<``, ``>`` or ``&``)."""
        text = json.dumps(
            {
                "vault": self.vault,
                "kinds": self.kinds,
                "rels": self.rels,
                "origins": self.origins,
                "nodes": self.nodes,
                "edges": self.edges,
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )
        # JSON allows these escapes in strings, and outside strings these characters never occur
        return (
            text.replace("<", "\\u003c")
            .replace(">", "\\u003e")
            .replace("&", "\\u0026")
            .replace("\u2028", "\\u2028")
            .replace("\u2029", "\\u2029")
        )


def view_data(graph: Graph, paths: Mapping[str, str], vault: str = "") -> ViewData:
    """The view of ``graph``; ``paths`` maps node ids to vault paths (notes without one: none).

    Args:
        graph: the knowledge graph (``graph.json``), masked at the store boundary.
        paths: node id → vault-relative path of its note, for the Obsidian link.
        vault: the vault's name in Obsidian (its folder name); ``""`` for no Obsidian links.
    """
    index = {node.id: i for i, node in enumerate(graph.nodes)}
    rels = tuple(sorted({link.rel for link in graph.links}))
    rel_index = {rel: i for i, rel in enumerate(rels)}
    origin_index = {origin: i for i, origin in enumerate(ORIGINS)}
    pairs: dict[tuple[int, int], set[tuple[int, int, int]]] = {}
    for link in graph.links:
        source, target = index.get(link.source), index.get(link.target)
        if source is None or target is None or source == target:
            continue
        a, b, direction = (source, target, 1) if source < target else (target, source, -1)
        pairs.setdefault((a, b), set()).add(
            (rel_index[link.rel], origin_index[link.origin.value], direction)
        )
    degree = [0] * len(graph.nodes)
    for a, b in pairs:
        degree[a] += 1
        degree[b] += 1
    nodes = tuple(
        (node.id, _KIND_INDEX[node.kind], node.title, paths.get(node.id, ""), degree[i])
        for i, node in enumerate(graph.nodes)
    )
    edges = tuple(
        (a, b, tuple(sorted(relations, key=lambda r: (rels[r[0]], -r[2], ORIGINS[r[1]]))))
        for (a, b), relations in sorted(pairs.items())
    )
    kinds = tuple((kind.value, KIND_COLORS[kind], kind not in HIDDEN_AT_FIRST) for kind in Kind)
    return ViewData(vault=vault, kinds=kinds, rels=rels, origins=ORIGINS, nodes=nodes, edges=edges)


_KIND_INDEX: Mapping[Kind, int] = MappingProxyType({kind: i for i, kind in enumerate(Kind)})
