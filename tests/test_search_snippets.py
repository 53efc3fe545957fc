"""Snippets: the body around the hits, marked, cut between words."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from vaultsync.search.query import parse_query
from vaultsync.search.snippets import WINDOW, cut_snippet, fold


def snippet(body: str, query: str) -> str:
    return cut_snippet(body, parse_query(query).words())


class TestCutSnippet:
    def test_marks_hits_without_case_or_accents(self) -> None:
        """``creme`` marks ``Crème`` as typed in the note."""
        assert snippet("Une Crème brûlée.", "creme brulee") == "Une **Crème** **brûlée**."

    def test_whole_words_only(self) -> None:
        """``cat`` does not mark ``concatenate``; a prefix ``cat*`` marks the whole word."""
        assert snippet("concatenate the cat", "cat") == "concatenate the **cat**"
        assert snippet("catalog", "cat*") == "**catalog**"

    def test_window_with_most_distinct_words(self) -> None:
        """The window holding both words wins over one holding a single word many times."""
        body = "alpha " * 30 + "filler " * 40 + "alpha beta here " + "tail " * 40
        cut = snippet(body, "alpha beta")
        assert "**alpha** **beta**" in cut
        assert cut.startswith("…")
        assert cut.endswith("…")

    def test_beginning_when_no_body_hit(self) -> None:
        """A note matched by title only shows the start of its body."""
        body = "First words here. " + "more " * 60
        cut = snippet(body, "zebra")
        assert cut.startswith("First words here.")
        assert cut.endswith("…")
        assert len(cut) <= WINDOW + 1

    def test_never_cuts_a_word(self) -> None:
        """The snippet starts and ends between words."""
        body = "word" + " longword" * 50 + " needle" + " longword" * 50
        cut = snippet(body, "needle").strip("…")
        assert cut.startswith("longword")
        assert cut.endswith("longword")

    def test_one_line(self) -> None:
        """Newlines and runs of spaces become single spaces."""
        assert snippet("a\n\n  b   needle\nc", "needle") == "a b **needle** c"


class TestFold:
    @given(st.text(max_size=50))
    def test_keeps_length(self, text: str) -> None:
        """Folding never changes the length, so offsets carry over to the original text."""
        assert len(fold(text)) == len(text)

    def test_folds(self) -> None:
        """Accents and case go."""
        assert fold("Ḗcole İ ß") == "ecole i ß"
