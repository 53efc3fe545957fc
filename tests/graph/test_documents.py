"""Context documents: title, summary, path relative to the shared folder, links found."""

from __future__ import annotations

from vaultsync.core.model import Context, Document
from vaultsync.graph.documents import context_documents, document_node_id


def ctx(*docs: tuple[str, str]) -> Context:
    return Context(
        id="c1",
        name="handbook",
        mode="knowledge",
        documents=tuple(Document(source=s, content=c) for s, c in docs),
    )


class TestTitles:
    def test_front_matter_title_first(self) -> None:
        """The front-matter title wins over the first heading."""
        (doc,) = context_documents(
            ctx(("d/a.md", "---\ntitle: 'Setup guide'\n---\n# Heading\n")), 10
        )
        assert doc.title == "Setup guide"

    def test_first_heading_next(self) -> None:
        """Without front matter the first ATX H1 is the title."""
        (doc,) = context_documents(ctx(("d/a.md", "intro\n\n# Getting set up #\n")), 10)
        assert doc.title == "Getting set up"

    def test_lower_heading_is_not_a_title(self) -> None:
        """A ``## Example`` section never names the document: the file name does."""
        (doc,) = context_documents(ctx(("d/Bases syntax.md", "## Example\n\ntext\n")), 10)
        assert doc.title == "Bases syntax.md"

    def test_h1_after_a_lower_heading_is_the_title(self) -> None:
        """The first H1 is the title even when a lower heading comes before it."""
        (doc,) = context_documents(ctx(("d/a.md", "## Intro\n\n# Guide\n")), 10)
        assert doc.title == "Guide"

    def test_setext_heading(self) -> None:
        """A setext heading counts as the first heading."""
        (doc,) = context_documents(ctx(("d/a.md", "Gateway\n=======\n\ntext\n")), 10)
        assert doc.title == "Gateway"

    def test_heading_inside_code_is_ignored(self) -> None:
        """A # line inside fenced code is not a heading."""
        (doc,) = context_documents(ctx(("d/a.md", "```\n# not a title\n```\n")), 10)
        assert doc.title == "a.md"

    def test_front_matter_title_is_yaml(self) -> None:
        """The title property is read as YAML: escapes, ``...`` closers, any key case."""
        text = '---\nTitle: "Tab\\tand \\"quotes\\""\n...\n# Heading\n'
        (doc,) = context_documents(ctx(("d/a.md", text)), 10)
        assert doc.title == 'Tab\tand "quotes"'

    def test_heading_keeps_a_trailing_hash(self) -> None:
        """Closing ``#``s go only after a space: ``# C#`` is titled ``C#``."""
        (doc,) = context_documents(ctx(("d/a.md", "# C#\n")), 10)
        assert doc.title == "C#"

    def test_file_name_last(self) -> None:
        """Without front matter or heading the file name is the title."""
        (doc,) = context_documents(ctx(("d/notes.txt", "plain")), 10)
        assert doc.title == "notes.txt"
        assert doc.stem == "notes"


class TestLinkNames:
    def test_heading_title_is_not_a_link_name(self) -> None:
        """An H1 title is shown but links resolve by the file name only."""
        (doc,) = context_documents(ctx(("d/setup.md", "# Getting set up\n")), 10)
        assert doc.link_names == ("setup",)

    def test_front_matter_title_is_a_link_name(self) -> None:
        """A front-matter title is a name links may use, after the file name."""
        (doc,) = context_documents(ctx(("d/a.md", "---\ntitle: Setup guide\n---\n")), 10)
        assert doc.link_names == ("a", "Setup guide")


class TestSummary:
    def test_first_prose_line(self) -> None:
        """The summary skips headings, lists and code, and takes the first prose line."""
        text = "# T\n\n- item\n```\ncode\n```\nTerminates mTLS.\nMore.\n"
        (doc,) = context_documents(ctx(("d/a.md", text)), 10)
        assert doc.summary == "Terminates mTLS."

    def test_summary_is_bounded(self) -> None:
        """The summary keeps at most 200 characters."""
        (doc,) = context_documents(ctx(("d/a.md", "word " * 100)), 10)
        assert len(doc.summary) <= 200
        assert doc.summary.endswith("…")


class TestPaths:
    def test_paths_relative_to_shared_folder(self) -> None:
        """The folder every document shares is cut from the path."""
        docs = context_documents(ctx(("docs/a.md", ""), ("docs/guide/b.md", "")), 10)
        assert [d.path for d in docs] == ["a.md", "guide/b.md"]

    def test_windows_paths(self) -> None:
        """Backslash paths of scanned contexts become POSIX paths; the id keeps the source."""
        docs = context_documents(ctx(("src\\main.go", ""), ("src\\lib\\x.go", "")), 10)
        assert [d.path for d in docs] == ["main.go", "lib/x.go"]
        assert docs[0].node_id == document_node_id("c1", "src\\main.go")

    def test_cap(self) -> None:
        """Only the first documents up to the limit are kept."""
        docs = context_documents(ctx(*((f"d/{i}.md", "") for i in range(5))), 3)
        assert len(docs) == 3


class TestLinks:
    def test_markdown_only(self) -> None:
        """Links are parsed only in Markdown documents."""
        docs = context_documents(
            ctx(("d/a.md", "see [[b]] and [x](b.md)"), ("d/b.sh", "echo [[a]] [x](a.md)")), 10
        )
        assert docs[0].parsed.link_targets == ("b",) and docs[0].parsed.link_dests == ("b.md",)
        assert docs[1].parsed.link_targets == () and docs[1].parsed.link_dests == ()
