"""``core.model.Graph``: its lookups by source and by target hold every link, in order."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from vaultsync.core.model import Graph, Link, Origin

_IDS = st.sampled_from(["a", "b", "c", "d"])
_LINKS = st.lists(
    st.builds(
        Link,
        source=_IDS,
        target=_IDS,
        rel=st.sampled_from(["r", "s"]),
        origin=st.just(Origin.STRUCTURAL),
        weight=st.just(1.0),
    ),
    max_size=12,
)


@given(_LINKS, st.booleans())
def test_lookups_are_the_links_grouped_in_order(links: list[Link], ordered: bool) -> None:
    """Sorted as a build gives them or in any order: each note's links, in the graph's order."""
    if ordered:
        links = sorted(set(links), key=lambda link: link.key)
    graph = Graph(nodes=(), links=tuple(links))
    for node in "abcd":
        assert graph.links_from(node) == tuple(link for link in links if link.source == node)
        assert graph.links_to(node) == tuple(link for link in links if link.target == node)
    assert list(graph.outgoing) == list(dict.fromkeys(link.source for link in links))
