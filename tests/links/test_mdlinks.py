"""Markdown links between documents: parsing, classification, resolution."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from vaultsync.links.mdlinks import (
    DestKind,
    DocPathIndex,
    MdLink,
    MdLinkKind,
    classify_destination,
    common_root,
    parse_markdown_links,
    resolve_document_link,
)


def one(text: str) -> MdLink:
    links = parse_markdown_links(text)
    assert len(links) == 1
    return links[0]


def dests(text: str) -> list[str]:
    return [link.dest for link in parse_markdown_links(text)]


class TestParseInline:
    def test_inline_link(self) -> None:
        """[text](dest) gives text and destination."""
        link = one("see [the guide](guide/setup.md) now")
        assert (link.kind, link.text, link.dest, link.title) == (
            MdLinkKind.INLINE,
            "the guide",
            "guide/setup.md",
            None,
        )

    def test_span(self) -> None:
        """start and end delimit the whole link."""
        text = "see [a](b.md) now"
        link = one(text)
        assert text[link.start : link.end] == "[a](b.md)"

    def test_title_double_quotes(self) -> None:
        """A quoted title is separated from the destination."""
        link = one('[a](b.md "The B")')
        assert (link.dest, link.title) == ("b.md", "The B")

    def test_title_single_quotes_and_parentheses(self) -> None:
        """Titles may use single quotes or parentheses."""
        assert [link.title for link in parse_markdown_links("[a](b 'T1') [c](d (T2))")] == [
            "T1",
            "T2",
        ]

    def test_angle_destination(self) -> None:
        """<dest> may hold spaces."""
        assert dests("[a](<My Note.md>)") == ["My Note.md"]

    def test_balanced_parentheses_in_destination(self) -> None:
        """Parentheses in a destination must balance."""
        assert dests("[a](x_(y).md)") == ["x_(y).md"]

    def test_bracketed_text(self) -> None:
        """[[1]](x) is a link whose text is [1]."""
        link = one("See [[1]](../about/contributing.md#x).")
        assert (link.text, link.dest) == ("[1]", "../about/contributing.md#x")

    def test_image_inside_link_text(self) -> None:
        """A badge image inside link text still leaves the outer link."""
        assert dests("[![badge](b.svg)](docs/index.md)") == ["docs/index.md"]

    def test_code_inside_link_text(self) -> None:
        """Inline code within the link text does not hide the link."""
        assert dests("[`mkdocs.yml`](configuration.md#x)") == ["configuration.md#x"]

    def test_text_across_a_line_break(self) -> None:
        """Link text may wrap onto the next line of its paragraph."""
        assert dests("[user\nguide](../user-guide/x.md)") == ["../user-guide/x.md"]

    def test_text_not_across_blank_line(self) -> None:
        """A paragraph break ends link text."""
        assert dests("[user\n\nguide](x.md)") == []

    def test_images_are_skipped(self) -> None:
        """![alt](src) embeds an asset, it is not a document link."""
        assert dests("![diagram](img/graph.png) ![doc](other.md)") == []

    def test_escaped_bang_is_a_link(self) -> None:
        r"""\![a](b.md) is a ! followed by a link."""
        assert dests(r"\![a](b.md)") == ["b.md"]

    def test_escaped_bracket_is_text(self) -> None:
        r"""\[a](b.md) is not a link."""
        assert dests(r"\[a](b.md)") == []

    def test_not_in_inline_code(self) -> None:
        """Links in code spans are examples."""
        assert dests("`[a](b.md)` and ``[c](d.md)``") == []

    def test_not_in_fenced_code(self) -> None:
        """Links in fenced blocks are examples."""
        assert dests("```md\n[a](b.md)\n```\n[c](d.md)") == ["d.md"]

    def test_code_span_cutting_the_link(self) -> None:
        """A code span that contains the ]( breaks the link."""
        assert dests("[a`](b.md)`") == []

    def test_reference_use_is_not_returned(self) -> None:
        """[text][label] and [label] uses are not links; their definitions are."""
        assert dests("[text][lbl] and [lbl]") == []

    def test_precomputed_mask(self) -> None:
        """A mask passed in is used instead of computing one."""
        links = parse_markdown_links("[a](a.md) [b](b.md)", mask=((0, 9),))
        assert [link.dest for link in links] == ["b.md"]

    def test_quick_reject(self) -> None:
        """Text without ]( or ]: has no links."""
        assert parse_markdown_links("[[wiki]] plain") == ()


class TestParseDefinitions:
    def test_definition(self) -> None:
        """[label]: dest is a reference definition."""
        link = one("[graph-view]: user/features/graph-view.md 'Graph View'\n")
        assert (link.kind, link.text, link.dest, link.title) == (
            MdLinkKind.DEFINITION,
            "graph-view",
            "user/features/graph-view.md",
            "Graph View",
        )

    def test_definition_counted_once(self) -> None:
        """A definition used twice is one link."""
        text = "[a][x] and [b][x]\n\n[x]: target.md\n"
        assert dests(text) == ["target.md"]

    def test_definition_angle_destination(self) -> None:
        """A definition destination may be in angle brackets."""
        assert dests("[x]: <My Note.md>\n") == ["My Note.md"]

    def test_definition_title_on_next_line(self) -> None:
        """The title of a definition may be on the following line."""
        link = one('[x]: a.md\n  "Title"\n')
        assert (link.dest, link.title) == ("a.md", "Title")

    def test_footnote_is_not_a_definition(self) -> None:
        """[^1]: text is a footnote."""
        assert dests("[^1]: a footnote text\n") == []

    def test_trailing_junk_is_not_a_definition(self) -> None:
        """A definition line with text after the destination is a paragraph."""
        assert dests("[x]: a.md and more words\n") == []

    def test_deeply_indented_is_not_a_definition(self) -> None:
        """Four spaces of indentation is too many."""
        assert dests("    [x]: a.md\n") == []

    def test_definition_in_code_skipped(self) -> None:
        """Definitions inside fenced code are examples."""
        assert dests("```\n[x]: a.md\n```\n") == []

    def test_order_mixes_kinds(self) -> None:
        """Inline links and definitions come in text order."""
        text = "[x]: first.md\n\n[a](second.md)\n\n[y]: third.md\n"
        assert dests(text) == ["first.md", "second.md", "third.md"]


class TestClassify:
    def test_paths(self) -> None:
        """Relative, site-absolute and bare names are paths."""
        for dest in ("a.md", "../b/", "/guide/x", "x.md#frag", "C:/notes/x.md"):
            assert classify_destination(dest) is DestKind.PATH

    def test_urls(self) -> None:
        """Any scheme, and //host, is a URL."""
        for dest in ("https://x.org", "ftp://h/f", "vscode://file", "//cdn.org/x", "obsidian://o"):
            assert classify_destination(dest) is DestKind.URL

    def test_mailto_and_data(self) -> None:
        """mailto: and data: have their own kinds."""
        assert classify_destination("mailto:a@b.c") is DestKind.MAILTO
        assert classify_destination("DATA:image/png;base64,xx") is DestKind.DATA

    def test_anchor_and_empty(self) -> None:
        """#anchor and ?query are the same page; an empty destination is nothing."""
        assert classify_destination("#section") is DestKind.ANCHOR
        assert classify_destination("?tab=1") is DestKind.ANCHOR
        assert classify_destination("  ") is DestKind.EMPTY


class TestCommonRoot:
    def test_shared_folder(self) -> None:
        """The deepest folder every path is in."""
        assert common_root(["docs/guide/a.md", "docs/config/b.md"]) == "docs"

    def test_windows_separators(self) -> None:
        r"""Backslash paths share folders like slash paths."""
        assert common_root(["docs\\guide\\a.md", "docs/guide/b.md"]) == "docs/guide"

    def test_single_path(self) -> None:
        """One document's folder is the root."""
        assert common_root(["docs/a.md"]) == "docs"

    def test_no_shared_folder(self) -> None:
        """Paths at the top share nothing."""
        assert common_root(["a.md", "docs/b.md"]) == ""

    def test_empty(self) -> None:
        """No paths, no root."""
        assert common_root([]) == ""


VITE = DocPathIndex.build(
    [
        "docs/index.md",
        "docs/blog.md",
        "docs/blog/announcing-vite5.md",
        "docs/guide/index.md",
        "docs/guide/features.md",
        "docs/guide/api-plugin.md",
        "docs/config/index.md",
        "docs/config/shared-options.md",
        "docs/user-guide/README.md",
        "docs/reference/readme.md",
        "docs/reference/Index.mdx",
        "docs/notes/My Note.md",
        "docs/Ünïcode.md",
        "docs/mdx/page.mdx",
    ]
)


def resolve(dest: str, source: str = "docs/guide/features.md") -> str | None:
    return resolve_document_link(dest, source, VITE)


class TestResolveRelative:
    def test_same_folder(self) -> None:
        """./x.md resolves beside the source."""
        assert resolve("./api-plugin.md") == "docs/guide/api-plugin.md"

    def test_bare_name(self) -> None:
        """x.md without ./ is relative too."""
        assert resolve("api-plugin.md") == "docs/guide/api-plugin.md"

    def test_parent_folder(self) -> None:
        """../ climbs one folder."""
        assert resolve("../config/shared-options.md") == "docs/config/shared-options.md"

    def test_fragment_and_query_ignored(self) -> None:
        """#anchor and ?query do not change the target."""
        assert resolve("api-plugin.md?x=1#configureserver") == "docs/guide/api-plugin.md"

    def test_extension_optional(self) -> None:
        """An extensionless link finds the .md file."""
        assert resolve("./api-plugin#hooks") == "docs/guide/api-plugin.md"

    def test_mdx_extension(self) -> None:
        """.mdx documents are found without their extension."""
        assert resolve("../mdx/page") == "docs/mdx/page.mdx"

    def test_html_maps_to_markdown(self) -> None:
        """x.html reaches x.md."""
        assert resolve("api-plugin.html#x") == "docs/guide/api-plugin.md"

    def test_folder_with_index(self) -> None:
        """../config/ lands on its index.md."""
        assert resolve("../config/") == "docs/config/index.md"

    def test_folder_with_readme(self) -> None:
        """A folder without index.md lands on README.md."""
        assert resolve("../user-guide/") == "docs/user-guide/README.md"

    def test_extensionless_folder(self) -> None:
        """A folder named without its slash still lands on its index."""
        assert resolve("../user-guide") == "docs/user-guide/README.md"

    def test_index_preferred_over_readme(self) -> None:
        """index.* wins over README.*, whatever the case of either."""
        assert resolve("../reference/") == "docs/reference/Index.mdx"

    def test_file_preferred_over_folder(self) -> None:
        """/blog is blog.md even though a blog/ folder exists."""
        assert resolve("../blog") == "docs/blog.md"

    def test_trailing_slash_on_file(self) -> None:
        """x.md/ still reaches x.md, as MkDocs and GitHub read it."""
        assert resolve("api-plugin.md/#x") == "docs/guide/api-plugin.md"

    def test_trailing_slash_on_folder_without_index(self) -> None:
        """blog/ has no index page: unresolved even though blog.md exists."""
        assert resolve("../blog/") is None

    def test_percent_decoding(self) -> None:
        """%20 is a space."""
        assert resolve("../notes/My%20Note.md") == "docs/notes/My Note.md"

    def test_case_insensitive(self) -> None:
        """Case does not matter."""
        assert resolve("API-Plugin.MD") == "docs/guide/api-plugin.md"

    def test_nfd_matches_nfc(self) -> None:
        """A decomposed name matches the composed file name."""
        assert resolve("../U\u0308ni\u0308code.md") == "docs/Ünïcode.md"

    def test_escaping_above_root(self) -> None:
        """Climbing above the top is unresolved."""
        assert resolve("../../../x.md") is None

    def test_missing(self) -> None:
        """A path to nothing is unresolved."""
        assert resolve("nothing.md") is None

    def test_urls_are_not_documents(self) -> None:
        """URLs, mailto, data and anchors never resolve."""
        for dest in ("https://vite.dev/guide/", "mailto:a@b.c", "data:x", "#top", ""):
            assert resolve(dest) is None

    def test_escape_sequences(self) -> None:
        r"""Backslash escapes in the destination are removed."""
        assert resolve(r"api\-plugin.md") == "docs/guide/api-plugin.md"

    def test_relative_link_does_not_search_elsewhere(self) -> None:
        """A relative link to a name in another folder stays unresolved."""
        assert resolve("shared-options.md") is None


class TestResolveSiteAbsolute:
    def test_from_corpus_root(self) -> None:
        """/guide/features starts at the documents' common root."""
        assert resolve("/guide/features", "docs/blog.md") == "docs/guide/features.md"

    def test_site_root(self) -> None:
        """/ is the root index page."""
        assert resolve("/", "docs/guide/features.md") == "docs/index.md"

    def test_folder(self) -> None:
        """/guide/ is the guide's index."""
        assert resolve("/guide/#section") == "docs/guide/index.md"

    def test_html(self) -> None:
        """/guide/api-plugin.html is the Markdown source."""
        assert resolve("/guide/api-plugin.html#configureserver") == "docs/guide/api-plugin.md"

    def test_unique_suffix(self) -> None:
        """A path not under the root is found by its unique tail."""
        index = DocPathIndex.build(["handbook/guide/setup.md", "handbook/other.md", "x/y.md"])
        assert resolve_document_link("/guide/setup", "x/y.md", index) == ("handbook/guide/setup.md")

    def test_ambiguous_suffix(self) -> None:
        """Two documents with the same tail leave the link unresolved."""
        index = DocPathIndex.build(["a/guide/setup.md", "b/guide/setup.md", "c.md"])
        assert resolve_document_link("/guide/setup", "c.md", index) is None

    def test_folder_suffix(self) -> None:
        """A folder found by its tail lands on its index."""
        index = DocPathIndex.build(["site/docs/guide/index.md", "other/x.md"])
        assert resolve_document_link("/guide/", "other/x.md", index) == "site/docs/guide/index.md"


class TestWindowsPaths:
    def test_backslash_documents(self) -> None:
        r"""Documents scanned on Windows keep \ and are still reached by / links."""
        index = DocPathIndex.build(["docs\\guide\\a.md", "docs\\guide\\b.md", "docs\\index.md"])
        assert resolve_document_link("../index.md", "docs\\guide\\a.md", index) == (
            "docs\\index.md"
        )
        assert resolve_document_link("b", "docs\\guide\\a.md", index) == "docs\\guide\\b.md"

    def test_case_variants_prefer_exact_case(self) -> None:
        """When two documents differ only by case, the exact case wins."""
        index = DocPathIndex.build(["Note.md", "note.md"])
        assert resolve_document_link("note.md", "x.md", index) == "note.md"
        assert resolve_document_link("Note.md", "x.md", index) == "Note.md"
        assert resolve_document_link("NOTE.md", "x.md", index) is None


class TestProperties:
    @given(st.text())
    def test_parse_never_crashes(self, text: str) -> None:
        """Any text parses."""
        parse_markdown_links(text)

    @given(st.text(alphabet=st.sampled_from("[]()!<>\"' \n`\\a.#:/"), max_size=100))
    def test_spans_in_bounds_and_start_with_bracket(self, text: str) -> None:
        """Every link starts at a [ inside the text."""
        for link in parse_markdown_links(text):
            assert 0 <= link.start < link.end <= len(text)
            assert text[link.start] == "["

    @given(st.text(max_size=40), st.sampled_from(["a.md", "docs\\b.md", "c/d/e.md"]))
    def test_resolve_never_crashes(self, dest: str, source: str) -> None:
        """Any destination resolves to an indexed path or None."""
        index = DocPathIndex.build(["a.md", "docs\\b.md", "c/d/e.md", "c/index.md"])
        found = resolve_document_link(dest, source, index)
        assert found is None or found in {"a.md", "docs\\b.md", "c/d/e.md", "c/index.md"}
