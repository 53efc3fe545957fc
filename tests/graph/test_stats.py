"""The index card's hubs: read from the graph's link tables, equal to their definition."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from vaultsync.core.model import Graph, Kind, Link, Node, Origin
from vaultsync.graph.stats import NEVER_HUBS, Hub, hubs

IDS = [f"n{i}" for i in range(8)]
KINDS = [Kind.TOPIC, Kind.PROJECT, Kind.DOC, Kind.TAG, Kind.FACT]


def defined_hubs(graph: Graph, limit: int) -> tuple[Hub, ...]:
    """The definition: every link counts for both its ends; documents and tags never rank."""
    near: dict[str, set[str]] = {}
    weight: dict[str, float] = {}
    for link in graph.links:
        for one, other in ((link.source, link.target), (link.target, link.source)):
            near.setdefault(one, set()).add(other)
            weight[one] = weight.get(one, 0.0) + link.weight
    ranked = sorted(
        (
            Hub(node=graph.by_id[node_id], degree=len(found), weight=weight[node_id])
            for node_id, found in near.items()
            if node_id in graph.by_id and graph.by_id[node_id].kind not in NEVER_HUBS
        ),
        key=lambda hub: (-hub.degree, -hub.weight, hub.node.id),
    )
    return tuple(ranked[:limit])


@st.composite
def graphs(draw: st.DrawFn) -> Graph:
    """Small graphs of every kind of note, links to missing notes included."""
    present = draw(st.lists(st.sampled_from(IDS), unique=True))
    nodes = tuple(
        Node(id=node_id, kind=draw(st.sampled_from(KINDS)), title=node_id.upper())
        for node_id in sorted(present)
    )
    ends = st.sampled_from(IDS)
    links = {
        (source, target, rel): Link(
            source=source,
            target=target,
            rel=rel,
            origin=Origin.STRUCTURAL,
            weight=draw(st.sampled_from([0.5, 1.0, 1.5, 2.0])),
        )
        for source, target, rel in draw(
            st.lists(st.tuples(ends, ends, st.sampled_from(["about", "tagged"])), max_size=20)
        )
        if source != target
    }
    return Graph(nodes=nodes, links=tuple(links[key] for key in sorted(links)))


@settings(max_examples=200, deadline=None)
@given(graph=graphs(), limit=st.integers(min_value=0, max_value=9))
def test_hubs_are_their_definition(graph: Graph, limit: int) -> None:
    """Each note's distinct neighbours and link weight, both ways, ranked: as defined."""
    assert hubs(graph, limit) == defined_hubs(graph, limit)


def test_the_answer_kept_is_for_its_own_graph_only() -> None:
    """An equal-looking question about another graph is answered from that graph."""
    topic = Node(id="a", kind=Kind.TOPIC, title="A")
    other = Node(id="b", kind=Kind.PROJECT, title="B")
    link = Link(source="a", target="b", rel="about", origin=Origin.STRUCTURAL, weight=2.0)
    linked = Graph(nodes=(topic, other), links=(link,))
    alone = Graph(nodes=(topic, other), links=())
    assert [hub.node.id for hub in hubs(linked)] == ["a", "b"]
    assert hubs(alone) == ()
    assert [hub.node.id for hub in hubs(linked)] == ["a", "b"]
