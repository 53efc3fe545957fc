"""Outgoing links of a note: types, targets, ~50-character contexts cut on character boundaries."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from vaultsync.search.links import extract_links, link_context


def kinds(body: str, *, engine: bool = False) -> list[tuple[str, str]]:
    return [(link.link_type, link.target) for link in extract_links(body, engine=engine)]


class TestExtractLinks:
    def test_wikilinks_markdown_and_embeds(self) -> None:
        """Wikilinks, Markdown links to paths and embeds come in text order with their type."""
        body = "See [[Alpha|a]], [b](dir/Beta%20B.md#x) and ![[Gamma]]."
        assert kinds(body) == [
            ("wikilink", "Alpha"),
            ("markdown", "dir/Beta B.md"),
            ("embed", "Gamma"),
        ]

    def test_skips_urls_anchors_and_images(self) -> None:
        """URLs, mailto, same-page anchors and images are not links between notes."""
        body = "[u](https://x.org) [m](mailto:a@b) [h](#top) ![i](pic.png) [[#Heading]]"
        assert kinds(body) == []

    def test_skips_code(self) -> None:
        """Links in inline code and fenced blocks do not count."""
        assert kinds("`[[A]]`\n\n```\n[[B]] [c](c.md)\n```\n[[D]]") == [("wikilink", "D")]

    def test_typed_links_of_engine_notes(self) -> None:
        """Lines of the engine's ``## Links`` section give the relation as the link type."""
        body = (
            "Text [[Projects/orbital|orbital]].\n\n## Links\n\n"
            "- in project → [[Projects/orbital|orbital]]\n"
            "- links to → [[Docs/x|X]] · linked by you — a note\n"
        )
        assert kinds(body, engine=True) == [
            ("wikilink", "Projects/orbital"),
            ("in_project", "Projects/orbital"),
            ("links_to", "Docs/x"),
        ]

    def test_link_in_a_note_is_plain(self) -> None:
        """Only the link after the arrow is typed; one in the line's note stays a wikilink."""
        body = "## Links\n\n- part of → [[A]] · linked by you — see [[B]]\n"
        assert kinds(body, engine=True) == [("part_of", "A"), ("wikilink", "B")]

    def test_links_section_ends_at_the_next_section(self) -> None:
        """A ``## heading`` after the ``## Links`` section ends it: its list is plain links."""
        body = "## Links\n\n- part of → [[A]]\n\n## Later\n\n- in → [[B]]\n"
        assert kinds(body, engine=True) == [("part_of", "A"), ("wikilink", "B")]

    def test_links_section_of_user_notes_is_plain(self) -> None:
        """In a note the engine did not write, a ``## Links`` section holds plain wikilinks."""
        body = "## Links\n\n- in project → [[P]]\n"
        assert kinds(body) == [("wikilink", "P")]

    def test_only_the_last_links_section_is_typed(self) -> None:
        """A ``## Links`` heading inside a document's own text is not the engine's section."""
        body = "## Links\n\n- see also → [[A]]\n\nmore\n\n## Links\n\n- part of → [[B]]\n"
        assert kinds(body, engine=True) == [("wikilink", "A"), ("part_of", "B")]

    def test_duplicates_are_kept_in_order(self) -> None:
        """Every occurrence is returned; the index keeps one per (target note, type)."""
        assert [link.seq for link in extract_links("[[A]] [[A]]", engine=False)] == [0, 1]


class TestContext:
    def test_about_fifty_characters(self) -> None:
        """Context is 25 characters on each side of the link, with ``…`` where it is cut."""
        text = "x" * 40 + "[[T]]" + "y" * 40
        (link,) = extract_links(text, engine=False)
        assert link.context == "…" + "x" * 25 + "[[T]]" + "y" * 25 + "…"

    def test_stays_in_its_paragraph(self) -> None:
        """Context never reaches into the next paragraph; whitespace runs become one space."""
        (link,) = extract_links("first para\n\nsee\n[[T]] here\n\nnext para", engine=False)
        assert link.context == "see [[T]] here"

    def test_typed_link_context_is_its_line(self) -> None:
        """A typed link's context is its own line, without the list marker."""
        body = "## Links\n\n- part of → [[B]]\n- links to → [[C]]\n"
        first = extract_links(body, engine=True)[0]
        assert first.context == "part of → [[B]]"

    def test_never_splits_combining_accents(self) -> None:
        """A cut never separates a letter from its combining accent."""
        text = "e\u0301" * 30 + "[[T]]"
        (link,) = extract_links(text, engine=False)
        assert not link.context.lstrip("…").startswith("\u0301")

    def test_never_splits_an_emoji_sequence(self) -> None:
        """A cut never lands inside a ZWJ emoji sequence."""
        family = "\U0001f469\u200d\U0001f469\u200d\U0001f467"
        text = family * 12 + "[[T]]"
        (link,) = extract_links(text, engine=False)
        inner = link.context.removeprefix("…")
        assert inner.startswith("\U0001f469")
        assert not inner.startswith("\u200d")

    @given(st.text(max_size=80), st.text(max_size=80))
    def test_always_valid_utf8(self, before: str, after: str) -> None:
        """Whatever surrounds a link, the context encodes as UTF-8 (goclaw's byte cut did not)."""
        text = before.replace("[", "") + "[[T]]" + after.replace("[", "")
        for link in extract_links(text, engine=False):
            link.context.encode("utf-8")

    def test_link_context_bounds(self) -> None:
        """``link_context`` never goes outside the given bounds."""
        assert link_context("abc[[x]]def", 3, 8, lo=2, hi=9, side=25) == "c[[x]]d"
