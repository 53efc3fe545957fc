"""Wikilinks: parsing every Obsidian form, rewriting, formatting."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from vaultsync.links.wikilinks import WikiLink, format_wikilink, parse_wikilinks, rewrite_wikilinks


def one(text: str) -> WikiLink:
    links = parse_wikilinks(text)
    assert len(links) == 1
    return links[0]


def targets(text: str) -> list[str]:
    return [link.target for link in parse_wikilinks(text)]


class TestForms:
    def test_plain(self) -> None:
        """[[t]] has a target and nothing else."""
        link = one("see [[Note]] here")
        assert (link.target, link.heading, link.block, link.label, link.embed) == (
            "Note",
            None,
            None,
            None,
            False,
        )

    def test_span_covers_brackets(self) -> None:
        """start and end delimit the link in the original text."""
        text = "see [[Note]] here"
        link = one(text)
        assert text[link.start : link.end] == "[[Note]]"

    def test_label(self) -> None:
        """[[t|label]] carries display text."""
        link = one("[[Note|Shown text]]")
        assert (link.target, link.label) == ("Note", "Shown text")

    def test_label_split_at_first_pipe(self) -> None:
        """Only the first pipe separates; later ones belong to the label."""
        assert one("[[a|b|c]]").label == "b|c"

    def test_heading(self) -> None:
        """[[t#heading]] names a heading."""
        link = one("[[Note#Some heading]]")
        assert (link.target, link.heading, link.block) == ("Note", "Some heading", None)

    def test_heading_chain(self) -> None:
        """[[t#A#B]] keeps the chain of subheadings."""
        assert one("[[t#A#B]]").heading == "A#B"

    def test_heading_then_label(self) -> None:
        """Fragment and alias combine in the order target, fragment, alias."""
        link = one("[[Note#H|shown]]")
        assert (link.target, link.heading, link.label) == ("Note", "H", "shown")

    def test_block_with_hash(self) -> None:
        """[[t#^b]] names a block."""
        link = one("[[Note#^abc-1]]")
        assert (link.target, link.heading, link.block) == ("Note", None, "abc-1")

    def test_block_without_hash(self) -> None:
        """[[t^b]] names a block too."""
        link = one("[[Note^abc]]")
        assert (link.target, link.block) == ("Note", "abc")

    def test_caret_in_name_is_not_a_block(self) -> None:
        """A ^ followed by something that is not a block id stays in the target."""
        link = one("[[x^2 notes]]")
        assert (link.target, link.block) == ("x^2 notes", None)

    def test_same_note_heading(self) -> None:
        """[[#Heading]] has an empty target."""
        link = one("[[#Heading]]")
        assert (link.target, link.heading) == ("", "Heading")

    def test_same_note_block(self) -> None:
        """[[#^block]] has an empty target and a block."""
        link = one("[[#^b1]]")
        assert (link.target, link.block) == ("", "b1")

    def test_folder_path(self) -> None:
        """A target may contain folders."""
        assert one("[[Folder/Sub/Note]]").target == "Folder/Sub/Note"

    def test_embed(self) -> None:
        """![[x]] is an embed whose span covers the !."""
        text = "a ![[image.png]] b"
        link = one(text)
        assert link.embed
        assert text[link.start : link.end] == "![[image.png]]"

    def test_embed_size(self) -> None:
        """The label of an image embed is its size."""
        link = one("![[img.png|100x145]]")
        assert (link.target, link.label, link.embed) == ("img.png", "100x145", True)

    def test_escaped_pipe_in_table(self) -> None:
        r"""[[t\|label]] splits at the escaped pipe and remembers it."""
        link = one(r"| [[Note\|Shown]] | x |")
        assert (link.target, link.label, link.escaped_pipe) == ("Note", "Shown", True)

    def test_plain_pipe_is_not_escaped(self) -> None:
        """An ordinary pipe leaves escaped_pipe false."""
        assert not one("[[a|b]]").escaped_pipe

    def test_whitespace_is_trimmed(self) -> None:
        """Spaces around target, fragment and label do not count (obsidian-export #188)."""
        link = one("[[  foo#^abc |  Foo  ]]")
        assert (link.target, link.block, link.label) == ("foo", "abc", "Foo")

    def test_single_bracket_stays_in_target(self) -> None:
        """A single ] does not end the target (obsidian-links.md, #1384)."""
        assert targets("[[Sq]uare]]") == ["Sq]uare"]

    def test_extra_closing_bracket_is_text(self) -> None:
        """The link ends at the first ]]."""
        text = "[[a]]]"
        link = one(text)
        assert (link.target, link.end) == ("a", 5)

    def test_inner_opening_wins(self) -> None:
        """[[ cannot appear inside a link: [[a [[b]] is the link [[b]]."""
        assert targets("[[a [[b]]") == ["b"]

    def test_triple_bracket(self) -> None:
        """[[[x]]] holds the link [[x]]."""
        assert targets("[[[x]]]") == ["x"]

    def test_percent_encoding_is_kept(self) -> None:
        """The target is kept as written, percent-escapes and all (resolvers decode it)."""
        assert one("[[My%20Note]]").target == "My%20Note"

    def test_url_target_is_a_note_target(self) -> None:
        """[[https://…]] is an (unresolved) note target, not a URL."""
        assert targets("[[https://example.com]]") == ["https://example.com"]

    def test_inline_code_in_the_label(self) -> None:
        """[[Functions#hasTag|`hasTag`]] is a link whose label is code, as Obsidian shows it."""
        link = one("see [[Functions#hasTag|`hasTag`]] here")
        assert (link.target, link.heading, link.label) == ("Functions", "hasTag", "`hasTag`")

    def test_several_links_in_order(self) -> None:
        """Links are returned in text order."""
        assert targets("[[b]] x ![[a]] y [[c|z]]") == ["b", "a", "c"]


class TestNotLinks:
    def test_empty(self) -> None:
        """[[]] and [[ ]] are not links."""
        assert parse_wikilinks("[[]] [[ ]] [[|x]]") == ()

    def test_newline_inside(self) -> None:
        """A link never spans lines."""
        assert parse_wikilinks("[[a\nb]]") == ()

    def test_unclosed(self) -> None:
        """[[unclosed and ![[x] are not links."""
        assert parse_wikilinks("[[unclosed link\n![[Not a valid embed.]\n") == ()

    def test_inline_code(self) -> None:
        """Links in inline code are examples, not links."""
        assert parse_wikilinks("`[[a]]` and ``![[b]]``") == ()

    def test_fenced_code(self) -> None:
        """Links in fenced blocks are examples, not links."""
        assert targets("```\n[[a]]\n```\n[[b]]") == ["b"]

    def test_link_touching_code(self) -> None:
        """A link that a code span cuts through is not a link."""
        assert parse_wikilinks("[[a `b]]` c") == ()

    def test_code_from_the_label_past_the_brackets(self) -> None:
        """A code span that opens in the label and closes after ]] cuts the link."""
        assert parse_wikilinks("[[a|`b]] c`") == ()

    def test_target_in_code_with_a_label(self) -> None:
        """Code in the target part is no link, even with a plain label."""
        assert parse_wikilinks("[[`a`|b]]") == ()

    def test_escaped_brackets(self) -> None:
        r"""\[[x]] is literal text."""
        assert parse_wikilinks(r"\[[x]]") == ()

    def test_escaped_bang_is_plain_link(self) -> None:
        r"""\![[x]] is a link, not an embed."""
        text = r"\![[x]]"
        link = one(text)
        assert (link.embed, text[link.start : link.end]) == (False, "[[x]]")

    def test_double_backslash_does_not_escape(self) -> None:
        r"""\\[[x]] is an escaped backslash followed by a link."""
        assert targets(r"\\[[x]]") == ["x"]

    def test_markdown_link_with_bracketed_text(self) -> None:
        """[[1]](x.md) is a Markdown link whose text is [1] (MkDocs release notes)."""
        assert parse_wikilinks("See [[1]](../about/contributing.md#x).") == ()

    def test_vault_search_syntax(self) -> None:
        """[[##heading]] and [[^^block]] are editor searches, not links."""
        assert parse_wikilinks("[[##heading]] [[^^block]]") == ()

    def test_hash_alone(self) -> None:
        """[[#]] names nothing."""
        assert parse_wikilinks("[[#]]") == ()

    def test_precomputed_mask(self) -> None:
        """A mask passed in is used instead of computing one."""
        links = parse_wikilinks("[[a]] [[b]]", mask=((0, 5),))
        assert [link.target for link in links] == ["b"]

    def test_quick_reject(self) -> None:
        """Text without [[ has no links."""
        assert parse_wikilinks("[a](b) ![c](d)") == ()


class TestRewrite:
    def test_replaces_links(self) -> None:
        """Each link becomes what the callback returns."""
        text = "a [[x]] b [[y|Y]] c"
        assert rewrite_wikilinks(text, lambda link: f"<{link.target}>") == "a <x> b <y> c"

    def test_none_keeps_link(self) -> None:
        """None keeps a link as written."""
        text = "[[x]] [[y]]"
        result = rewrite_wikilinks(text, lambda link: "Z" if link.target == "y" else None)
        assert result == "[[x]] Z"

    def test_code_is_untouched(self) -> None:
        """Links inside code are never passed to the callback."""
        text = "`[[x]]`\n```\n[[y]]\n```\n[[z]]"
        assert rewrite_wikilinks(text, lambda link: "Z") == "`[[x]]`\n```\n[[y]]\n```\nZ"

    def test_embed_replaced_with_bang(self) -> None:
        """An embed's span includes its !."""
        assert rewrite_wikilinks("![[a]]", lambda link: "E") == "E"


class TestFormat:
    def test_plain(self) -> None:
        """A path alone."""
        assert format_wikilink("Folder/Note") == "[[Folder/Note]]"

    def test_heading_and_label(self) -> None:
        """Heading before label."""
        assert format_wikilink("N", heading="H", label="L") == "[[N#H|L]]"

    def test_block(self) -> None:
        """A block is written #^id."""
        assert format_wikilink("N", block="b1") == "[[N#^b1]]"

    def test_embed(self) -> None:
        """An embed starts with !."""
        assert format_wikilink("img.png", label="100", embed=True) == "![[img.png|100]]"

    def test_escaped_pipe(self) -> None:
        r"""Inside tables the alias separator is \|."""
        assert format_wikilink("N", label="L", escaped_pipe=True) == r"[[N\|L]]"

    def test_same_note_heading(self) -> None:
        """An empty path links within the note."""
        assert format_wikilink("", heading="H") == "[[#H]]"

    def test_heading_and_block_refused(self) -> None:
        """A link names a heading or a block, not both."""
        with pytest.raises(ValueError, match="not both"):
            format_wikilink("N", heading="H", block="b")

    @pytest.mark.parametrize("path", ["a|b", "a#b", "a]]b", "a\nb", " a", "", "a^b1"])
    def test_unwritable_path_refused(self, path: str) -> None:
        """A path that would read back differently raises ValueError."""
        with pytest.raises(ValueError, match="read back"):
            format_wikilink(path)

    def test_label_with_brackets_refused(self) -> None:
        """A label containing ]] cannot be written."""
        with pytest.raises(ValueError, match="read back"):
            format_wikilink("N", label="a]]b")

    def test_pipe_in_table_label_refused(self) -> None:
        """A | in a label would split a table cell."""
        with pytest.raises(ValueError, match="table"):
            format_wikilink("N", label="a|b", escaped_pipe=True)


_NAME_CHARS = st.characters(
    blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="|#^[]`\\%"
)
_names = st.text(_NAME_CHARS, min_size=1, max_size=30).map(str.strip).filter(bool)
_labels = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="[]`\\|"),
    min_size=1,
    max_size=30,
).map(str.strip)


class TestProperties:
    @given(st.text())
    def test_parse_never_crashes(self, text: str) -> None:
        """Any text parses."""
        parse_wikilinks(text)

    @given(st.text(alphabet=st.sampled_from("[]!|#^\\` \nab%"), max_size=120))
    def test_identity_rewrite_round_trips(self, text: str) -> None:
        """Replacing every link by its own source gives the text back."""
        assert rewrite_wikilinks(text, lambda link: text[link.start : link.end]) == text

    @given(st.text(alphabet=st.sampled_from("[]!|#^\\` \nab%"), max_size=120))
    def test_links_are_in_order_and_disjoint(self, text: str) -> None:
        """Spans are sorted, disjoint and start with [[ or ![[."""
        previous = 0
        for link in parse_wikilinks(text):
            assert previous <= link.start < link.end <= len(text)
            assert text.startswith("![[" if link.embed else "[[", link.start)
            previous = link.end

    @given(
        path=_names,
        heading=st.none() | _names,
        block=st.none() | st.from_regex(r"[A-Za-z0-9-]{1,8}", fullmatch=True),
        label=st.none() | _labels.filter(bool),
        embed=st.booleans(),
        escaped_pipe=st.booleans(),
    )
    def test_format_then_parse(
        self,
        *,
        path: str,
        heading: str | None,
        block: str | None,
        label: str | None,
        embed: bool,
        escaped_pipe: bool,
    ) -> None:
        """A formatted link parses back to the same fields."""
        assume(heading is None or block is None)
        source = format_wikilink(
            path, heading=heading, block=block, label=label, embed=embed, escaped_pipe=escaped_pipe
        )
        link = one(source)
        assert (link.target, link.heading, link.block, link.label, link.embed) == (
            path,
            heading,
            block,
            label,
            embed,
        )
        assert (link.start, link.end) == (0, len(source))

    @given(path=_names, code=st.text(st.characters(blacklist_characters="`[]|\\\n"), min_size=1))
    def test_code_label_round_trips(self, path: str, code: str) -> None:
        """A label that is one inline code span formats and parses back unchanged."""
        label = f"`{code}`"
        assume(label == label.strip())
        link = one(format_wikilink(path, label=label))
        assert (link.target, link.label) == (path, label)

    @given(path=st.text(max_size=20), label=st.none() | st.text(max_size=20))
    def test_format_raises_or_round_trips(self, path: str, label: str | None) -> None:
        """For any input, format either refuses or writes a link that reads back the same."""
        try:
            source = format_wikilink(path, label=label)
        except ValueError:
            return
        link = one(source)
        assert (link.target, link.label) == (path, label)
