"""User input → safe FTS5 queries; folder filters; the choice of linked notes."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vaultsync.core.errors import UsageError
from vaultsync.search.model import SearchQuery
from vaultsync.search.query import (
    Edge,
    loose_sql,
    match_expression,
    normalize_folder,
    rank_linked,
)


@pytest.fixture(scope="module")
def fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE f USING fts5(body, tokenize='unicode61 remove_diacritics 2')"
    )
    conn.executemany(
        "INSERT INTO f (rowid, body) VALUES (?, ?)",
        [
            (1, "crème brûlée recipe"),
            (2, "c++ templates"),
            (3, "commit messages"),
            (4, "recipe book"),
        ],
    )
    return conn


def matches(conn: sqlite3.Connection, text: str) -> list[int]:
    rows = conn.execute(
        "SELECT rowid FROM f WHERE f MATCH ? ORDER BY rowid", (match_expression(text),)
    )
    return [row[0] for row in rows]


class TestMatchExpression:
    def test_words_are_quoted_and_anded(self) -> None:
        """Each word is quoted; all must match."""
        assert match_expression('recipe "book') == '("recipe" AND "book")'

    def test_operators_are_words(self, fts: sqlite3.Connection) -> None:
        """``c++``, ``AND``, ``NEAR(`` and ``col:`` are searched as words, never parsed."""
        assert matches(fts, "c++") == [2]
        for text in ("AND", "NEAR(a b)", "body:x", '"', "*", "^x", "(a"):
            matches(fts, text + " recipe")

    def test_accents_fold(self, fts: sqlite3.Connection) -> None:
        """``creme brulee`` finds ``crème brûlée``."""
        assert matches(fts, "creme brulee") == [1]

    def test_prefix(self, fts: sqlite3.Connection) -> None:
        """``word*`` is a prefix query."""
        assert matches(fts, "comm*") == [3]

    def test_phrase(self, fts: sqlite3.Connection) -> None:
        """Quoted words must come in order."""
        assert matches(fts, '"recipe book"') == [4]
        assert matches(fts, '"book recipe"') == []

    def test_exclusion(self, fts: sqlite3.Connection) -> None:
        """``-word`` removes notes holding it."""
        assert matches(fts, "recipe -book") == [1]

    def test_or(self, fts: sqlite3.Connection) -> None:
        """``OR`` between terms is an alternative; AND binds tighter."""
        assert matches(fts, "templates OR commit") == [2, 3]
        assert matches(fts, "recipe book OR templates") == [2, 4]

    def test_nothing_to_search(self) -> None:
        """Punctuation only, or only exclusions, is a usage error."""
        for text in ("", "  ", "!!! ---", "-recipe", "OR"):
            with pytest.raises(UsageError):
                match_expression(text)

    def test_control_characters(self, fts: sqlite3.Connection) -> None:
        """A NUL (which ends an FTS5 string) is a space."""
        assert matches(fts, "recipe\x00book") == [4]

    @given(st.text(max_size=60))
    def test_never_a_syntax_error(self, text: str) -> None:
        """Any input is either refused as a usage error or a valid FTS5 query."""
        conn = sqlite3.connect(":memory:")
        conn.execute("CREATE VIRTUAL TABLE f USING fts5(body)")
        try:
            expression = match_expression(text)
        except UsageError:
            return
        conn.execute("SELECT * FROM f WHERE f MATCH ?", (expression,)).fetchall()


class TestLooseSql:
    def test_any_word_without_stop_words(self) -> None:
        """The any-word expression ORs the query's words, stop words left out."""
        found = loose_sql(SearchQuery(text="what is the Recipe for a book", mode="hybrid"))
        assert found is not None
        assert found[1][0] == '("book" OR "recipe")'

    def test_exclusions_stay(self) -> None:
        """An excluded word still excludes."""
        found = loose_sql(SearchQuery(text="recipe book -creme", mode="hybrid"))
        assert found is not None
        assert found[1][0] == '("book" OR "recipe") NOT "creme"'

    def test_only_stop_words(self) -> None:
        """A query of stop words only has no any-word ranking."""
        assert loose_sql(SearchQuery(text="what is the", mode="hybrid")) is None

    def test_matches_notes_with_some_words(self, fts: sqlite3.Connection) -> None:
        """The expression finds notes holding any one of the words."""
        found = loose_sql(SearchQuery(text="recipe templates", mode="hybrid"))
        assert found is not None
        rows = fts.execute("SELECT rowid FROM f WHERE f MATCH ? ORDER BY rowid", (found[1][0],))
        assert [row[0] for row in rows] == [1, 2, 4]


class TestNormalizeFolder:
    def test_slashes(self) -> None:
        """Leading, trailing and doubled slashes and ``.`` parts go."""
        assert normalize_folder("/Facts//gotcha/./") == "Facts/gotcha"
        assert normalize_folder("") == ""

    def test_climbing_out(self) -> None:
        """``..`` is refused."""
        with pytest.raises(UsageError):
            normalize_folder("a/../..")


class TestRankLinked:
    def test_results_are_never_picked(self) -> None:
        """A note among the results is not a linked note."""
        edges = [Edge(rank=0, other=2, direction="linked_from", link_type="wikilink")]
        assert rank_linked(edges, [1, 2], {}, {}) == ()

    def test_better_ranked_results_weigh_more(self) -> None:
        """A note linked from the first result beats one linked from the third."""
        edges = [
            Edge(rank=2, other=10, direction="linked_from", link_type="wikilink"),
            Edge(rank=0, other=11, direction="linked_from", link_type="wikilink"),
        ]
        picks = rank_linked(edges, [1, 2, 3], {}, {10: "a.md", 11: "b.md"})
        assert [p.nid for p in picks] == [11, 10]

    def test_list_notes_are_discounted(self) -> None:
        """A backlink from a note with many links (Home, a list) counts less than a plain one."""
        edges = [
            Edge(rank=0, other=10, direction="links_to", link_type="wikilink"),
            Edge(rank=0, other=11, direction="links_to", link_type="wikilink"),
        ]
        picks = rank_linked(edges, [1], {10: 200, 11: 3}, {10: "Home.md", 11: "z.md"})
        assert [p.nid for p in picks] == [11, 10]

    def test_ties_by_path_and_limit(self) -> None:
        """Equal scores go by path; at most six are picked."""
        edges = [
            Edge(rank=0, other=n, direction="linked_from", link_type="w") for n in range(10, 20)
        ]
        paths = {n: f"{29 - n}.md" for n in range(10, 20)}
        picks = rank_linked(edges, [1], {}, paths)
        assert [p.nid for p in picks] == [19, 18, 17, 16, 15, 14]

    def test_why_is_the_best_connection(self) -> None:
        """The reason shown is the best-ranked result's link, outgoing first on a tie."""
        edges = [
            Edge(rank=1, other=10, direction="links_to", link_type="a"),
            Edge(rank=0, other=10, direction="links_to", link_type="b"),
            Edge(rank=0, other=10, direction="linked_from", link_type="c"),
        ]
        (pick,) = rank_linked(edges, [1, 2], {}, {})
        assert (pick.rank, pick.direction, pick.link_type) == (0, "linked_from", "c")
