"""Note references, the local graph and the document links view."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vaultsync.core.errors import NoteReferenceError
from vaultsync.core.model import Graph, Kind, Link, Node, Origin
from vaultsync.graph.query import document_links, find_note, local_graph
from vaultsync.graph.resolve import build_resolver


def node(nid: str, kind: Kind, title: str, *aliases: str) -> Node:
    return Node(id=nid, kind=kind, title=title, aliases=aliases)


def link(a: str, b: str, rel: str, origin: Origin = Origin.STRUCTURAL, w: float = 1.0) -> Link:
    return Link(source=a, target=b, rel=rel, origin=origin, weight=w)


FACT = "fact:3f9a1c02aabbccddeeff0011"
GRAPH = Graph(
    nodes=tuple(
        sorted(
            (
                node("project:orbital", Kind.PROJECT, "orbital", "orbital-gw"),
                node("topic:orbital", Kind.TOPIC, "orbital"),
                node("topic:telemetry security", Kind.TOPIC, "telemetry security"),
                node(FACT, Kind.FACT, "Orbital streams telemetry over gRPC"),
                node("tag:go", Kind.TAG, "go"),
                node("kb:k", Kind.KBCONTEXT, "handbook"),
                node("doc:k:docs/guide/gateway.md", Kind.DOC, "Ingest gateway", "gateway"),
                node("doc:k:docs/guide/setup.md", Kind.DOC, "Getting set up", "setup"),
            ),
            key=lambda n: n.id,
        )
    ),
    links=tuple(
        sorted(
            (
                link(FACT, "project:orbital", "in_project", w=2),
                link(FACT, "tag:go", "tagged"),
                link("project:orbital", "tag:go", "uses"),
                link("topic:telemetry security", "project:orbital", "about", Origin.USER, 2),
                link(
                    "doc:k:docs/guide/gateway.md",
                    "doc:k:docs/guide/setup.md",
                    "links_to",
                    Origin.MARKDOWN,
                    1.5,
                ),
                link(
                    "doc:k:docs/guide/setup.md",
                    "doc:k:docs/guide/gateway.md",
                    "links_to",
                    Origin.WIKILINK,
                    1.5,
                ),
                link(
                    "doc:k:docs/guide/gateway.md",
                    "project:orbital",
                    "links_to",
                    Origin.WIKILINK,
                    1.5,
                ),
                link("doc:k:docs/guide/gateway.md", "kb:k", "part_of"),
                link("doc:k:docs/guide/setup.md", "kb:k", "part_of"),
            ),
            key=lambda l: l.key,
        )
    ),
)


class TestFindNote:
    def test_node_id(self) -> None:
        """An exact node id names its note."""
        assert find_note(GRAPH, "topic:telemetry security").id == "topic:telemetry security"

    def test_fact_id_prefix(self) -> None:
        """A fact id prefix names the fact."""
        assert find_note(GRAPH, "3f9a1c02").id == FACT

    def test_alias_and_wikilink(self) -> None:
        """An alias, and a [[wikilink]] with a label, name their note."""
        assert find_note(GRAPH, "orbital-gw").id == "project:orbital"
        assert find_note(GRAPH, "[[Telemetry Security|x]]").id == "topic:telemetry security"

    def test_chunk_id(self) -> None:
        """A cited chunk id names the document it came from."""
        assert find_note(GRAPH, "guide/gateway.md#0002").id == "doc:k:docs/guide/gateway.md"

    def test_shared_name_prefers_specific_kind(self) -> None:
        """Outside strict mode a shared name goes to the more specific kind."""
        assert find_note(GRAPH, "orbital").id == "project:orbital"

    def test_strict_refuses_ambiguity_with_candidates(self) -> None:
        """Strict lookups refuse a name two notes share, listing both ids."""
        with pytest.raises(NoteReferenceError) as info:
            find_note(GRAPH, "orbital", strict=True)
        assert "project:orbital" in str(info.value) and "topic:orbital" in str(info.value)

    def test_keyword_fallback(self) -> None:
        """Free text falls back to the note whose title holds every word."""
        assert find_note(GRAPH, "streams grpc").id == FACT

    def test_tags_are_not_notes_to_find(self) -> None:
        """A tag name alone names nothing."""
        with pytest.raises(NoteReferenceError):
            find_note(GRAPH, "go")

    def test_nothing_matches(self) -> None:
        """An unknown reference is an error naming it."""
        with pytest.raises(NoteReferenceError, match="no note matches 'zzz'"):
            find_note(GRAPH, "zzz")


class TestWikilinkReference:
    def test_kind_priority_decides_a_shared_name(self) -> None:
        """[[orbital]] names the project, as the same link at the vault root does, even strict."""
        assert find_note(GRAPH, "[[orbital]]", strict=True).id == "project:orbital"

    def test_label_and_heading_are_not_the_target(self) -> None:
        """[[Telemetry Security#Keys|x]] names the topic."""
        found = find_note(GRAPH, "[[Telemetry Security#Keys|x]]", strict=True)
        assert found.id == "topic:telemetry security"

    def test_exact_id_wins(self) -> None:
        """[[topic:orbital]] is that topic, though the project shares its title."""
        assert find_note(GRAPH, "[[topic:orbital]]", strict=True).id == "topic:orbital"

    def test_alias_of_a_document(self) -> None:
        """[[gateway]] names the one note whose alias it is."""
        assert find_note(GRAPH, "[[gateway]]", strict=True).id == "doc:k:docs/guide/gateway.md"

    def test_percent_encoded_target(self) -> None:
        """[[Telemetry%20Security]] is tried decoded when the literal names nothing."""
        found = find_note(GRAPH, "[[Telemetry%20Security]]", strict=True)
        assert found.id == "topic:telemetry security"

    def test_a_tie_within_one_kind_is_refused_with_candidates(self) -> None:
        """Two topics titled alike still tie: strict refuses, listing both."""
        graph = Graph(
            nodes=(
                node("topic:gateway", Kind.TOPIC, "gateway"),
                node("topic:gateway-v2", Kind.TOPIC, "v2", "Gateway"),
            ),
            links=(),
        )
        with pytest.raises(NoteReferenceError) as info:
            find_note(graph, "[[gateway]]", strict=True)
        assert info.value.candidates == ("topic:gateway", "topic:gateway-v2")

    def test_no_keyword_guess(self) -> None:
        """A wikilink that names no note is refused, never matched by its words."""
        with pytest.raises(NoteReferenceError, match="no note matches"):
            find_note(GRAPH, "[[streams grpc]]")

    def test_a_tag_is_no_note(self) -> None:
        """[[go]] resolves to a tag only, which is no note to link."""
        with pytest.raises(NoteReferenceError):
            find_note(GRAPH, "[[go]]")

    @given(
        titles=st.lists(
            st.tuples(
                st.sampled_from((Kind.PROJECT, Kind.TOPIC, Kind.SKILL, Kind.FACT, Kind.TAG)),
                st.sampled_from(("gateway", "Gateway", "gate way", "gate-way", "other")),
            ),
            max_size=6,
        ),
        written=st.sampled_from(("gateway", "GATE_WAY", "gate%20way", "other.md", "nothing")),
    )
    def test_agrees_with_the_graph_resolver(
        self, titles: list[tuple[Kind, str]], written: str
    ) -> None:
        """A wikilink reference names the note the graph's resolver links from a memory note."""
        nodes = tuple(
            sorted(
                (node(f"{kind.value}:{i}", kind, title) for i, (kind, title) in enumerate(titles)),
                key=lambda n: n.id,
            )
        )
        graph = Graph(nodes=nodes, links=())
        expected = build_resolver(nodes, ()).resolve_wikilink(written, "fact:source")
        if expected is None or graph.by_id[expected].kind is Kind.TAG:
            with pytest.raises(NoteReferenceError):
                find_note(graph, f"[[{written}]]")
        else:
            assert find_note(graph, f"[[{written}]]").id == expected


class TestLocalGraph:
    def test_directions_and_relations(self) -> None:
        """Neighbours carry → for links written and ← for backlinks, tags excluded."""
        view = local_graph(GRAPH, "project:orbital")
        shown = {n.node.id: [(r.direction, r.rel) for r in n.relations] for n in view.neighbours}
        assert shown[FACT] == [("←", "in_project")]
        assert shown["topic:telemetry security"] == [("←", "about")]
        assert "tag:go" not in shown

    def test_second_hop_through_tags(self) -> None:
        """Notes sharing a tag are two hops away, glued by the tag."""
        view = local_graph(GRAPH, FACT)
        second = {n.id for n, _ in view.second_hop}
        assert "doc:k:docs/guide/gateway.md" in second


class TestDocumentLinks:
    def test_in_and_out_and_outside(self) -> None:
        """A document shows its context's links both ways and its links outside the context."""
        view = document_links(GRAPH, "doc:k:docs/guide/gateway.md")
        assert [n.id for n in view.outgoing] == ["doc:k:docs/guide/setup.md"]
        assert [n.id for n in view.incoming] == ["doc:k:docs/guide/setup.md"]
        assert [n.id for n in view.outside] == ["project:orbital"]
        assert view.context is not None and view.context.title == "handbook"
