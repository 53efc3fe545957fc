"""Autolinked mentions: whole words, lengths, generic words, longest name wins, only in prose."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st
from vaultsync.graph.mentions import MentionFinder, is_linkable_name, not_prose


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


AUTH = MentionFinder([("auth", "topic:auth"), ("orbital", "project:orbital")])


class TestOnlyProse:
    def test_not_in_inline_code(self) -> None:
        """A name inside inline code is an identifier, not a mention."""
        assert targets(AUTH, "call `auth` first") == []

    def test_not_in_a_fenced_block(self) -> None:
        """A name inside a fenced block is not a mention."""
        assert targets(AUTH, "Setup:\n```sh\nauth login\n```\n") == []

    def test_not_in_a_fence_inside_a_list(self) -> None:
        """A fence indented under a list item is still code."""
        assert targets(AUTH, "- step\n    ~~~\n    auth login\n    ~~~\n") == []

    def test_not_in_a_wikilink(self) -> None:
        """[[topic:auth]] links its note; it mentions nothing."""
        assert targets(AUTH, "see [[topic:auth]] and [[Orbital|the orbital project]]") == []

    def test_not_in_an_embed(self) -> None:
        """An embed's target is link syntax too."""
        assert targets(AUTH, "![[auth.png]]") == []

    def test_not_in_a_markdown_link(self) -> None:
        """Neither the text nor the destination of a Markdown link is prose to autolink."""
        assert targets(AUTH, "read [the auth guide](docs/orbital.md)") == []

    def test_not_in_a_reference_definition(self) -> None:
        """A reference definition's destination is link syntax."""
        assert targets(AUTH, "[guide]: https://example.com/auth\n") == []

    def test_not_in_a_url(self) -> None:
        """A bare URL's path segments are not words of the text."""
        assert targets(AUTH, "clone https://github.com/acme/orbital.git today") == []

    def test_prose_around_code_still_counts(self) -> None:
        """Outside the code span the same name is a mention."""
        assert targets(AUTH, "`auth` is how auth works") == ["topic:auth"]

    def test_name_running_into_code_is_not_found(self) -> None:
        """A name that ends inside a code span is cut by it, so it is no mention."""
        finder = MentionFinder([("orbital gateway", "project:og")])
        assert targets(finder, "the orbital `gateway` binary") == []

    @given(
        st.text(alphabet=st.sampled_from("ab `~[]()!|#:/.\n"), max_size=60).map(
            lambda noise: f"{noise} auth {noise}"
        )
    )
    def test_mentions_lie_outside_link_and_code_spans(self, text: str) -> None:
        """Every mention found is outside every span not_prose reports."""
        silent = not_prose(text)
        for mention in AUTH.find(text):
            assert all(end <= mention.start or mention.end <= start for start, end in silent)

    @given(st.text(alphabet=st.sampled_from("ab `~[]()!|#:/.\n"), max_size=80))
    def test_not_prose_spans_are_sorted_and_disjoint(self, text: str) -> None:
        """The silent spans are sorted, disjoint and inside the text."""
        previous = 0
        for start, end in not_prose(text):
            assert previous <= start < end <= len(text)
            previous = end


def test_a_name_past_the_length_limit_is_never_a_mention() -> None:
    """A title of a million characters links nothing, and the process exits cleanly with it."""
    script = (
        "from vaultsync.graph.mentions import MentionFinder\n"
        "name = 'Orbital ' + 'A' * 1_000_000\n"
        "finder = MentionFinder([(name, 'project:big'), ('Orbital', 'project:orbital')])\n"
        "print([m.target for m in finder.find('see ' + name + ' and Orbital')])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr  # freeing a trie that deep crashed the process
    assert done.stdout == "['project:orbital', 'project:orbital']\n"
