"""ZettelFlow's expected answers, reproduced from the hand-written fixtures/vaults/knowledge."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path

from vaultsync.knowledge import queries as q
from vaultsync.knowledge.lifecycle import State
from vaultsync.knowledge.model import Idea, KnowledgeModel
from vaultsync.knowledge.scan import load_model

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "vaults" / "knowledge"


@functools.cache
def vault(name: str) -> KnowledgeModel:
    """The model of one fixture vault (no cache: the fixture tree is never written)."""
    return load_model(FIXTURES / name, cache=False).model


def paths(ideas: Iterable[Idea]) -> list[str]:
    return [idea.path for idea in ideas]


class TestQueriesFixture:
    NAME = "queries"

    def test_by_state(self) -> None:
        """byState partitions exactly: permanent a, c; fleeting b, d."""
        model = vault(self.NAME)
        assert paths(q.by_state(model, State.PERMANENT)) == ["a.md", "c.md"]
        assert paths(q.by_state(model, State.FLEETING)) == ["b.md", "d.md"]

    def test_edges_by_type(self) -> None:
        """link a→b, b→c; supports a→c."""
        model = vault(self.NAME)
        assert [(e.source, e.target) for e in q.edges_of_type(model, "link")] == [
            ("a.md", "b.md"),
            ("b.md", "c.md"),
        ]
        assert [(e.source, e.target) for e in q.edges_of_type(model, "supports")] == [
            ("a.md", "c.md")
        ]

    def test_orphans_and_leaves(self) -> None:
        """Orphans (no incoming) a, d; leaves (no outgoing) c, d."""
        model = vault(self.NAME)
        assert paths(q.orphans(model)) == ["a.md", "d.md"]
        assert paths(q.leaves(model)) == ["c.md", "d.md"]

    def test_hubs(self) -> None:
        """With threshold 2 the hubs are a, b, c; with 3 there are none."""
        model = vault(self.NAME)
        assert paths(q.hubs(model, 2)) == ["a.md", "b.md", "c.md"]
        assert q.hubs(model, 3) == ()

    def test_maturity(self) -> None:
        """d is isolated; a, b, c are sparse."""
        model = vault(self.NAME)
        bands = q.by_maturity(model)
        assert paths(bands["isolated"]) == ["d.md"]
        assert paths(bands["sparse"]) == ["a.md", "b.md", "c.md"]
        assert bands["connected"] == ()


class TestRelationsFixture:
    NAME = "relations"

    def test_unanswered_questions(self) -> None:
        """q1 is unanswered; q2 has a supports edge into it."""
        model = vault(self.NAME)
        assert q.unanswered_questions(model) == (q.Question("q1.md", ("note.md",)),)

    def test_contradictions_both_directions(self) -> None:
        """claim-a contradicts claim-b and is contradicted by answer."""
        model = vault(self.NAME)
        found = {(e.source, e.target) for e in q.contradictions(model, "claim-a.md")}
        assert found == {("claim-a.md", "claim-b.md"), ("answer.md", "claim-a.md")}

    def test_unresolved(self) -> None:
        """plain's link to x resolves nowhere and is listed."""
        model = vault(self.NAME)
        assert [(link.source, link.target) for link in q.unresolved_links(model)] == [
            ("plain.md", "x")
        ]


class TestClaimsFixture:
    NAME = "claims"

    def test_unsourced(self) -> None:
        """unsourced = [n4]: n3 has no claims, n1 has a sourced claim."""
        model = vault(self.NAME)
        assert paths(q.unsourced(model)) == ["n4.md"]

    def test_claims_without_sources(self) -> None:
        """claimsWithoutSources = [n1:c2, n4:c4]."""
        model = vault(self.NAME)
        found = [f"{idea.path}:{claim.text}" for idea, claim in q.claims_without_sources(model)]
        assert found == ["n1.md:c2", "n4.md:c4"]

    def test_sources_by_reference_count(self) -> None:
        """sources = [S1.md:2, doi:x:1]."""
        model = vault(self.NAME)
        found = [f"{c.source.ref}:{c.count}" for c in q.sources_by_reference_count(model)]
        assert found == ["S1.md:2", "doi:x:1"]


class TestGardenFixture:
    NAME = "garden"

    def test_dot_folders_skipped(self) -> None:
        """Nothing under .obsidian or .trash is a note, and their links do not count."""
        model = vault(self.NAME)
        assert not any(path.startswith(".") for path in model.ideas)
        assert model.ideas["Projects/orbital.md"].maturity.in_degree == 4

    def test_engine_and_user_notes_form_one_model(self) -> None:
        """A fact's Links section and a user's inline fields meet on the same notes."""
        model = vault(self.NAME)
        fact = "Facts/gotcha/Kafka retries reorder batches (70c25356).md"
        ordering = "Notes/Kafka ordering.md"
        assert {(e.type, e.target) for e in model.edges_from(fact)} == {
            ("in_project", "Projects/orbital.md"),
            ("contradicts", ordering),
        }
        assert {(e.type, e.target) for e in model.edges_from(ordering)} >= {
            ("expands", "Projects/orbital.md"),
            ("inspired-by", fact),
        }
        assert [e.source for e in q.contradictions(model, ordering)] == [fact]

    def test_heading_per_relation(self) -> None:
        """skiff's ``### part of`` and ``### inspired by`` headings type its links."""
        model = vault(self.NAME)
        assert {(e.type, e.target) for e in model.edges_from("Projects/skiff.md")} == {
            ("part_of", "Projects/orbital.md"),
            ("inspired-by", "Notes/Kafka ordering.md"),
        }

    def test_states(self) -> None:
        """An emoji state is read; engine notes and notes without a state are fleeting."""
        model = vault(self.NAME)
        assert model.ideas["Notes/Kafka ordering.md"].state is State.EVERGREEN
        assert model.ideas["Inbox/idea.md"].state is State.FLEETING
        assert model.ideas["Projects/orbital.md"].state is State.FLEETING

    def test_title_property(self) -> None:
        """The ``title`` property names the idea."""
        model = vault(self.NAME)
        assert model.ideas["Notes/Kafka ordering.md"].title == "Kafka ordering guarantees"

    def test_sources(self) -> None:
        """A URL and a resolved note are sources; the engine's ``source`` is not."""
        model = vault(self.NAME)
        found = {(c.source.kind, c.source.ref) for c in q.sources_by_reference_count(model)}
        assert found == {
            ("link", "Notes/Kafka paper.md"),
            ("text", "https://kafka.apache.org/documentation/#producerconfigs"),
        }

    def test_unresolved_and_code(self) -> None:
        """Only the two missing notes are unresolved; links in code are no links."""
        model = vault(self.NAME)
        found = [(link.source, link.target, link.line) for link in q.unresolved_links(model)]
        assert found == [
            ("Inbox/idea.md", "Missing note", 4),
            ("Inbox/idea.md", "Why partitions", 5),
        ]

    def test_attachment_and_markdown_link(self) -> None:
        """The embed reaches the image; the Markdown link reaches the paper note."""
        model = vault(self.NAME)
        reached = {link.path for link in model.links("Notes/Diagram.md")}
        assert reached == {"attachments/diagram.png", "Notes/Kafka paper.md"}

    def test_broken_front_matter_reported(self) -> None:
        """The broken block is a problem; the note's body links still count."""
        model = vault(self.NAME)
        assert [path for path, _ in model.problems()] == ["Notes/Broken front matter.md"]
        assert [e.target for e in model.edges_from("Notes/Broken front matter.md")] == [
            "Projects/orbital.md"
        ]
