"""Snippets: the body around the hits, marked, cut between words."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from vaults import engine_note, write_vault
from vaultsync.search.index import update_index
from vaultsync.search.model import SearchQuery, SearchResult
from vaultsync.search.query import parse_query
from vaultsync.search.reader import IndexReader
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


# ---------------------------------------------------------------------------------------------
# What the index finds a note by and cuts its snippet from: the text as a person reads it

FACT = engine_note(
    "fact:ab12",
    "fact",
    "Rotation",
    "We renew the [[Projects/orbital|orbital]] certs with [[cert-manager]].",
    "- in project → [[Projects/orbital|orbital]]\n- links to → [[Topics/postgres|postgres]]",
)
HOME = engine_note("home", "home", "Home", "Hubs: [[Projects/orbital|orbital]], postgres.")
READABLE = {
    "Facts/rotation.md": FACT,
    "Home.md": HOME,
    "Projects/orbital.md": engine_note("project:orbital", "project", "orbital"),
    "mine.md": "# Mine\n\nNotes on [[Projects/orbital|the gateway]].\n\n## Links\n\npostgres\n",
}


def search(tmp_path: Path, text: str) -> SearchResult:
    """The text-mode answer for ``text`` over ``READABLE``, indexed as the engine wrote it."""
    vault = write_vault(
        tmp_path / "vault",
        READABLE,
        engine={"Facts/rotation.md": "fact:ab12", "Home.md": "home",
                "Projects/orbital.md": "project:orbital"},
    )  # fmt: skip
    update_index(vault)
    reader = IndexReader(vault)
    try:
        return reader.search(SearchQuery(text=text, mode="text"), None)
    finally:
        reader.close()


def hit_snippets(result: SearchResult) -> dict[str, str]:
    return {hit.document.path: hit.snippet for hit in result.hits}


class TestReadableBody:
    def test_snippet_shows_link_words_not_syntax(self, tmp_path: Path) -> None:
        """A wikilink shows as its label or note name: no ``[[…|…]]`` in a snippet."""
        found = hit_snippets(search(tmp_path, "renew"))
        assert found["Facts/rotation.md"] == ("We **renew** the orbital certs with cert-manager.")

    def test_engine_links_section_is_not_searched(self, tmp_path: Path) -> None:
        """A word only in the engine's ``## Links`` section finds nothing there."""
        assert "Facts/rotation.md" not in hit_snippets(search(tmp_path, "postgres"))

    def test_user_links_section_is_text(self, tmp_path: Path) -> None:
        """A user's own ``## Links`` heading is part of their text and is searched."""
        assert "mine.md" in hit_snippets(search(tmp_path, "postgres"))

    def test_home_is_not_a_hit_for_what_it_lists(self, tmp_path: Path) -> None:
        """Home lists every note: it is found by its title only, not by what it links."""
        assert "Home.md" not in hit_snippets(search(tmp_path, "orbital"))
        assert "Home.md" in hit_snippets(search(tmp_path, "home"))
