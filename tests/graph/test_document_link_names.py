"""A wikilink in a document resolves as Obsidian does: by path or file name, never by a heading."""

from __future__ import annotations

from helpers import corpus
from vaultsync.core.model import Context, Document, Records
from vaultsync.core.settings import Caps
from vaultsync.graph.build import build_graph
from vaultsync.graph.documents import context_documents
from vaultsync.graph.resolve import build_resolver


def context(*docs: tuple[str, str]) -> Context:
    """One knowledge context holding ``docs`` as (source, text)."""
    documents = tuple(Document(source=s, content=c) for s, c in docs)
    return Context(id="k", name="help", mode="knowledge", documents=documents)


def wikilinks(*docs: tuple[str, str]) -> set[tuple[str, str]]:
    """(source, target) of every wikilink drawn between the documents of one context."""
    built = build_graph(Records(contexts=(context(*docs),)), Caps())
    return {
        (link.source, link.target)
        for link in built.graph.links
        if link.rel == "links_to" and link.origin.value == "wikilink"
    }


def test_lower_heading_does_not_resolve_a_link() -> None:
    """[[Example]] with no Example.md stays unresolved though a first heading is ## Example."""
    found = wikilinks(
        ("en/Home.md", "See [[Example]]."),
        ("en/Bases/Bases syntax.md", "## Example\n\nA base.\n"),
    )
    assert found == set()


def test_h1_title_does_not_resolve_a_link() -> None:
    """An H1 is the document's title, yet Obsidian never resolves [[Title]] by it."""
    found = wikilinks(
        ("en/Home.md", "See [[Getting started]]."),
        ("en/setup.md", "# Getting started\n\nInstall it.\n"),
    )
    assert found == set()


def test_file_name_resolves_a_link() -> None:
    """[[Bases syntax]] reaches Bases/Bases syntax.md by its file name."""
    found = wikilinks(
        ("en/Home.md", "See [[Bases syntax]]."),
        ("en/Bases/Bases syntax.md", "## Example\n\nA base.\n"),
    )
    assert found == {("doc:k:en/Home.md", "doc:k:en/Bases/Bases syntax.md")}


def test_front_matter_title_resolves_a_link() -> None:
    """A front-matter title is a name the document was given, so [[Title]] reaches it."""
    found = wikilinks(
        ("en/Home.md", "See [[Setup guide]]."),
        ("en/setup.md", "---\ntitle: Setup guide\n---\n# Getting started\n"),
    )
    assert found == {("doc:k:en/Home.md", "doc:k:en/setup.md")}


def test_obsidian_help_vault_example_is_unresolved() -> None:
    """In Obsidian's help vault, [[Example]] names no note (not Bases/Bases syntax.md)."""
    root = corpus("obsidian-help")
    docs = tuple(
        (path.relative_to(root).as_posix(), path.read_text(encoding="utf-8"))
        for path in sorted(root.rglob("*.md"))
    )
    notes = context_documents(context(*docs), len(docs))
    resolver = build_resolver((), notes)
    assert any(note.path.endswith("Bases/Bases syntax.md") for note in notes)
    assert resolver.resolve_wikilink("Example", notes[0].node_id) is None
