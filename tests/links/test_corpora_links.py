"""Link parsing and resolution against real documentation trees (../shared/corpora).

The expected figures are those of ``corpora/README.md``.  Where this parser finds more than the
README's regex scan (links whose text wraps a line, ``[[1]](…)``), the test asserts both: the
full figure, and the README's figure for the subset its regex can see.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

from helpers import corpus
from vaultsync.links.mdlinks import (
    DestKind,
    DocPathIndex,
    MdLink,
    MdLinkKind,
    classify_destination,
    parse_markdown_links,
    resolve_document_link,
)
from vaultsync.links.pathresolve import ObsidianIndex
from vaultsync.links.wikilinks import WikiLink, parse_wikilinks

DOC_SHAPES = ("md", "extensionless", "html", "folder")


def markdown_files(root: Path) -> list[str]:
    """Every .md file under ``root``, as sorted POSIX paths relative to it."""
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*.md"))


def skipped_files(corpus_root: Path, under: str) -> list[str]:
    """The non-Markdown files listed in SKIPPED-FILES.txt, relative to ``under``."""
    listing = corpus_root / "SKIPPED-FILES.txt"
    paths = []
    for line in listing.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            path = line.split("\t", 1)[1]
            if path.startswith(f"{under}/"):
                paths.append(path.removeprefix(f"{under}/"))
    return paths


def shape(dest: str) -> str:
    """md, extensionless, html, folder, or asset (any other extension)."""
    path = re.split(r"[#?]", dest, maxsplit=1)[0]
    if path == "" or path.endswith("/"):
        return "folder"
    name = path.rsplit("/", 1)[-1]
    extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return {"md": "md", "html": "html", "": "extensionless"}.get(extension, "asset")


def reader_target(site: Path, source: Path, dest: str) -> Path | None:
    """The file a reader reaches, found on disk independently of the code under test."""
    raw = unquote(re.split(r"[#?]", dest, maxsplit=1)[0])
    base = site if raw.startswith("/") else source.parent
    target = Path(os.path.normpath(base / raw.lstrip("/")))
    kind = shape(dest)
    if kind == "md":
        candidates = [target]
    elif kind == "html":
        candidates = [target.with_suffix(".md")]
    elif kind == "folder":
        # normpath drops the slash of ``x.md/`` as MkDocs does, so the file itself also counts.
        candidates = [target / "index.md", target / "README.md", target]
    else:
        candidates = [target.with_name(f"{target.name}.md"), target / "index.md"]
    return next((path for path in candidates if path.is_file()), None)


def document_links(site: Path) -> list[tuple[str, MdLink, str | None, str | None]]:
    """(source, link, resolved, expected by the reader) for every path link under ``site``."""
    root = site.parent
    paths = [f"{site.name}/{path}" for path in markdown_files(site)]
    index = DocPathIndex.build(paths)
    found = []
    for source in paths:
        text = (root / source).read_text(encoding="utf-8")
        for link in parse_markdown_links(text):
            if classify_destination(link.dest) is not DestKind.PATH:
                continue
            expected = reader_target(site, root / source, link.dest)
            found.append(
                (
                    source,
                    link,
                    resolve_document_link(link.dest, source, index),
                    None if expected is None else expected.relative_to(root).as_posix(),
                )
            )
    return found


def wikilinks_of(root: Path, paths: list[str]) -> list[tuple[str, WikiLink]]:
    return [
        (path, link)
        for path in paths
        for link in parse_wikilinks((root / path).read_text(encoding="utf-8"))
    ]


Reached = tuple[MdLink, str | None, str | None]


def path_links(site: Path, kind: MdLinkKind | None = None) -> list[Reached]:
    """(link, resolved, expected) for the links of ``site`` to documents (of ``kind``, if given)."""
    return [
        (link, resolved, expected)
        for _, link, resolved, expected in document_links(site)
        if (kind is None or link.kind is kind) and shape(link.dest) in DOC_SHAPES
    ]


def unreached(links: list[Reached]) -> list[tuple[str, str | None, str | None]]:
    """(destination, resolved, expected) of the links that miss the file a reader reaches."""
    return [
        (link.dest, resolved, expected)
        for link, resolved, expected in links
        if resolved is None or resolved != expected
    ]


class TestMkdocsDocs:
    def test_inline_links_to_markdown_all_resolve(self) -> None:
        """89 relative inline links to .md: 81 the README's regex sees, 6 wrapped, 2 [[n]](…)."""
        links = path_links(corpus("mkdocs-docs") / "docs", MdLinkKind.INLINE)
        assert [link.dest for link, _, _ in links if link.dest.startswith("/")] == []
        assert len(links) == 89
        assert unreached(links) == []
        wrapped = [link for link, _, _ in links if "\n" in link.text]
        bracketed = [link for link, _, _ in links if link.text.startswith("[")]
        assert (len(wrapped), len(bracketed)) == (6, 2)
        readme_view = [
            link for link, _, _ in links if link not in wrapped and link not in bracketed
        ]
        assert len(readme_view) == 81
        assert sum("#" in link.dest for link in readme_view) == 67

    def test_reference_definitions_all_resolve(self) -> None:
        """101 reference definitions to .md files, all reaching the file a reader reaches."""
        links = path_links(corpus("mkdocs-docs") / "docs", MdLinkKind.DEFINITION)
        assert len(links) == 101
        assert unreached(links) == []

    def test_bracketed_link_text_is_not_a_wikilink(self) -> None:
        """The README's two wikilinks are [[1]](…) and [[2]](…): Markdown links, not wikilinks."""
        site = corpus("mkdocs-docs") / "docs"
        assert wikilinks_of(site, markdown_files(site)) == []

    def test_folder_index_is_readme(self) -> None:
        """A link to a folder of the MkDocs docs lands on its README.md."""
        site = corpus("mkdocs-docs") / "docs"
        index = DocPathIndex.build(markdown_files(site))
        assert resolve_document_link("../user-guide/", "about/license.md", index) == (
            "user-guide/README.md"
        )


class TestViteDocs:
    def test_every_document_link_resolves(self) -> None:
        """Site-absolute and relative links of every shape reach the file a reader reaches."""
        links = path_links(corpus("vite-docs") / "docs")
        assert all(link.kind is MdLinkKind.INLINE for link, _, _ in links)
        assert unreached(links) == []

    def test_counts_by_shape(self) -> None:
        """The README's table: 49/147/37/36 site-absolute, 54/60/3 relative, 254 fragments."""
        links = [
            link
            for _, link, _, _ in document_links(corpus("vite-docs") / "docs")
            if shape(link.dest) in DOC_SHAPES
        ]
        counts = Counter(
            ("absolute" if link.dest.startswith("/") else "relative", shape(link.dest))
            for link in links
        )
        assert counts == {
            ("absolute", "md"): 49,
            ("absolute", "extensionless"): 147,
            ("absolute", "html"): 37,
            ("absolute", "folder"): 36,
            ("relative", "md"): 54,
            ("relative", "extensionless"): 60,
            ("relative", "folder"): 3,
        }
        assert sum("#" in link.dest for link in links) == 254

    def test_no_wikilinks_outside_code(self) -> None:
        """The one [[…]] in the Vite docs is inside code."""
        site = corpus("vite-docs") / "docs"
        assert wikilinks_of(site, markdown_files(site)) == []


class TestFoamDocs:
    def test_wikilinks_outside_code(self) -> None:
        """199 wikilinks outside code: 8 with a label, 1 with a heading."""
        site = corpus("foam-docs") / "docs"
        links = [link for _, link in wikilinks_of(site, markdown_files(site))]
        assert len(links) == 199
        assert sum(link.label is not None for link in links) == 8
        assert sum(link.heading is not None for link in links) == 1
        assert not any(link.embed or link.block for link in links)

    def test_all_but_two_known_broken_resolve(self) -> None:
        """197 resolve by Obsidian's rules; [[publishing]] and [[cli-grep]] are broken."""
        site = corpus("foam-docs") / "docs"
        notes = markdown_files(site)
        index = ObsidianIndex.build([*notes, *skipped_files(corpus("foam-docs"), "docs")])
        results = [
            (source, link.target, index.resolve(link.target, source))
            for source, link in wikilinks_of(site, notes)
        ]
        assert sum(found is not None for _, _, found in results) == 197
        assert [(source, target) for source, target, found in results if found is None] == [
            ("user/index.md", "publishing"),
            ("user/tools/cli/search.md", "cli-grep"),
        ]

    def test_resolved_wikilinks_match_a_basename(self) -> None:
        """Every resolved link lands on a file whose name is the target's last segment."""
        site = corpus("foam-docs") / "docs"
        notes = markdown_files(site)
        index = ObsidianIndex.build(notes)
        for source, link in wikilinks_of(site, notes):
            found = index.resolve(link.target, source)
            if found is not None:
                name = found.rsplit("/", 1)[-1].removesuffix(".md").lower()
                assert name == link.target.rsplit("/", 1)[-1].removesuffix(".md").lower()

    def test_markdown_links(self) -> None:
        """180 definitions to .md all resolve; of 16 inline .md links, the 2 known ones don't."""
        found = [
            (source, link, resolved, expected)
            for source, link, resolved, expected in document_links(corpus("foam-docs") / "docs")
            if shape(link.dest) == "md"
        ]
        definitions = [row for row in found if row[1].kind is MdLinkKind.DEFINITION]
        inline = [row for row in found if row[1].kind is MdLinkKind.INLINE]
        assert len(definitions) == 180
        assert all(resolved is not None for _, _, resolved, _ in definitions)
        assert len(inline) == 16
        assert all(resolved == expected for _, _, resolved, expected in found)
        assert [(source, link.dest) for source, link, resolved, _ in inline if not resolved] == [
            ("docs/dev/contribution-guide.md", "../../CONTRIBUTING.md"),
            (
                "docs/dev/design/static-site-publishing-research.md",
                "../../user/publishing/publishing.md",
            ),
        ]


def export_vaults() -> list[Path]:
    base = corpus("obsidian-export-testdata") / "tests" / "testdata" / "input"
    return sorted(path for path in base.iterdir() if path.is_dir())


def export_links() -> list[tuple[str, str, WikiLink, str | None]]:
    """(vault, source, link, resolved) for every wikilink of the eight input vaults."""
    rows = []
    for vault in export_vaults():
        files = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*") if p.is_file())
        index = ObsidianIndex.build(files)
        notes = [path for path in files if path.endswith(".md")]
        for source, link in wikilinks_of(vault, notes):
            resolved = index.resolve(link.target, source) if link.target else None
            rows.append((vault.name, source, link, resolved))
    return rows


class TestObsidianExportVaults:
    def test_counts(self) -> None:
        """48 links outside code: 11 labels, 5 headings, 6 blocks, 15 embeds, 2 same-note."""
        links = [link for _, _, link, _ in export_links()]
        assert len(links) == 48
        assert sum(link.label is not None for link in links) == 11
        assert sum(link.heading is not None for link in links) == 5
        assert sum(link.block is not None for link in links) == 6
        assert sum(link.embed for link in links) == 15
        assert sum(not link.target for link in links) == 2

    def test_all_but_the_deliberate_one_resolve(self) -> None:
        """45 of 46 targets resolve; [[non-existing note]] does not."""
        rows = [row for row in export_links() if row[2].target]
        assert len(rows) == 46
        assert [link.target for _, _, link, found in rows if found is None] == ["non-existing note"]

    def test_expected_targets(self) -> None:
        """Case, trimming, folders and non-ASCII names resolve to the intended files."""
        resolved = {
            (vault, source, link.target): found for vault, source, link, found in export_links()
        }
        assert resolved["main-samples", "obsidian-wikilinks.md", "uppercased-note"] == (
            "Uppercased-note.md"
        )
        assert resolved["main-samples", "obsidian-wikilinks.md", "Pure-Markdown-Examples"] == (
            "pure-markdown-examples.md"
        )
        assert resolved["main-samples", "embeds-note-in-subdir.md", "note-in-subdir"] == (
            "subdir/note-in-subdir.md"
        )
        assert resolved["same-filename-different-directories", "Note.md", "dir1/Note"] == (
            "dir1/Note.md"
        )
        assert resolved["same-filename-different-directories", "Note.md", "dir2/Note"] == (
            "dir2/Note.md"
        )
        assert resolved["start-at", "subdir/Note B.md", "Note A"] == "Note A.md"
        assert resolved["start-at", "subdir/Note B.md", "Note C"] == "subdir/Note C.md"
        assert resolved["non-ascii", "Link.md", "Nöte with 'quotes'"] == "Nöte with 'quotes'.md"

    def test_trimmed_variants_are_one_target(self) -> None:
        """Every spacing variant in issue-188 resolves to foo.md."""
        rows = [row for row in export_links() if row[1] == "issue-188-wikilinks-need-trimming.md"]
        assert len(rows) == 12
        assert {found for _, _, _, found in rows} == {"foo.md"}

    def test_embeds_of_attachments_and_notes(self) -> None:
        """15 embeds: the image, the SVG and the PDF are found; 12 embed notes."""
        embeds = [(link.target, found) for _, _, link, found in export_links() if link.embed]
        attachments = sorted((t, f) for t, f in embeds if f is not None and not f.endswith(".md"))
        assert attachments == [
            ("bulb.svg", "bulb.svg"),
            ("note.pdf", "note.pdf"),
            ("white.png", "white.png"),
        ]
        assert len(embeds) - len(attachments) == 12

    def test_expected_tree_markdown_links(self) -> None:
        """The rendered expected/ tree has 35 relative .md links, of which 16 resolve there."""
        site = corpus("obsidian-export-testdata") / "tests" / "testdata" / "expected"
        rows = [row for row in document_links(site) if shape(row[1].dest) == "md"]
        assert len(rows) == 35
        assert sum(resolved is not None for _, _, resolved, _ in rows) == 16
        assert all(resolved == expected for _, _, resolved, expected in rows)
