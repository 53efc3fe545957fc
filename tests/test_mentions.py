"""Autolinked mentions: whole words, minimum lengths, generic words, longest name wins."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from vaultsync.graph.mentions import MentionFinder, is_linkable_name


def targets(finder: MentionFinder, text: str) -> list[str]:
    return [m.target for m in finder.find(text)]


class TestIsLinkableName:
    def test_short_names_are_not_linked(self) -> None:
        """Names shorter than 3 characters never autolink."""
        assert not is_linkable_name("go")

    def test_numeric_names_are_not_linked(self) -> None:
        """Purely numeric names never autolink."""
        assert not is_linkable_name("2026")

    def test_short_single_words_are_not_linked(self) -> None:
        """A single word shorter than 4 characters is too ambiguous."""
        assert not is_linkable_name("api")

    def test_generic_words_are_not_linked(self) -> None:
        """Generic words such as project or dados are never autolinked."""
        assert not is_linkable_name("project")
        assert not is_linkable_name("Dados")

    def test_short_multi_word_names_are_linked(self) -> None:
        """Several short words together are specific enough."""
        assert is_linkable_name("go cli")


class TestMentionFinder:
    def test_whole_words_only(self) -> None:
        """Orbital does not match inside Orbitals."""
        finder = MentionFinder([("Orbital", "project:orbital")])
        assert targets(finder, "The Orbitals team") == []
        assert targets(finder, "Deploy Orbital today.") == ["project:orbital"]

    def test_case_insensitive(self) -> None:
        """Names match regardless of case."""
        finder = MentionFinder([("orbital", "project:orbital")])
        assert targets(finder, "ORBITAL is up") == ["project:orbital"]

    def test_longest_name_wins_at_a_position(self) -> None:
        """Kubernetes operator beats Kubernetes where both start."""
        finder = MentionFinder(
            [
                ("Kubernetes", "topic:Kubernetes"),
                ("Kubernetes operator", "topic:Kubernetes operator"),
            ]
        )
        assert targets(finder, "the Kubernetes operator reconciles") == [
            "topic:Kubernetes operator"
        ]

    def test_shorter_name_found_elsewhere(self) -> None:
        """A shorter name still matches where the longer one does not."""
        finder = MentionFinder([("Kubernetes", "topic:k"), ("Kubernetes operator", "topic:ko")])
        assert targets(finder, "Kubernetes operator on Kubernetes") == ["topic:ko", "topic:k"]

    def test_first_name_registered_wins_a_shared_name(self) -> None:
        """When two notes share a name the first registered (higher priority) keeps it."""
        finder = MentionFinder(
            [("telemetry", "project:telemetry"), ("telemetry", "topic:telemetry")]
        )
        assert targets(finder, "telemetry pipeline") == ["project:telemetry"]

    def test_offsets_point_into_the_original_text(self) -> None:
        """Start and end slice the original text even after case folding."""
        text = "Ünïcode İstanbul and Orbital"
        finder = MentionFinder([("orbital", "project:orbital")])
        (mention,) = finder.find(text)
        assert text[mention.start : mention.end] == "Orbital"

    def test_empty_finder_finds_nothing(self) -> None:
        """No names: no mentions and no automaton errors."""
        assert MentionFinder([]).find("anything at all") == ()

    @given(st.text(max_size=200))
    def test_never_crashes_and_spans_are_ordered(self, text: str) -> None:
        """Mentions are in text order and never overlap."""
        finder = MentionFinder([("orbital", "a"), ("orbital gateway", "b"), ("gateway", "c")])
        found = finder.find(text)
        ends = [0]
        for mention in found:
            assert mention.start >= ends[-1]
            ends.append(mention.end)
