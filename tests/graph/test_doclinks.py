"""Markdown links between documents open the right note in Obsidian once in the vault."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

from samples import render_vault
from vaultsync.core.settings import Caps
from vaultsync.graph.build import build_graph
from vaultsync.graph.load import read_records
from vaultsync.links.mdlinks import (
    DestKind,
    MdLink,
    MdLinkKind,
    classify_destination,
    parse_markdown_links,
)
from vaultsync.links.pathresolve import ObsidianIndex
from vaultsync.renderers.doclinks import rewritten_link
from vaultsync.synthetic import generate_store


def click(index: ObsidianIndex, dest: str, source: str) -> str | None:
    """The file Obsidian opens for a Markdown link: decoded, fragment cut, looked up vault-wide."""
    return index.resolve(unquote(dest.partition("#")[0]), source)


def test_every_resolved_link_is_clicked_through(tmp_path: Path) -> None:
    """Each site-absolute ``[next](/section…)`` opens the document it named; code is untouched."""
    generate_store(tmp_path / "state", notes=400)
    records = read_records(tmp_path / "state")
    built = build_graph(records, Caps())
    files = render_vault(records, built.graph, built.resolver)
    index = ObsidianIndex.build(files)
    clicked = 0
    for path, data in files.items():
        if not path.startswith("Contexts/") or "\n> Source: " not in data.decode():
            continue
        text = data.decode()
        listed = set(re.findall(r"→ \[\[([^|\]]+)", text.partition("\n## Links\n")[2]))
        for link in parse_markdown_links(text):
            if link.text != "next" or classify_destination(link.dest) is not DestKind.PATH:
                continue
            opened = click(index, link.dest, path)
            assert opened is not None and opened[:-3] in listed, (path, link.dest)
            clicked += 1
        assert "[x](nowhere.md)" in text  # in code: as written
    assert clicked > 10


def test_label_anchor_and_title_kept() -> None:
    """The rewritten link keeps its label, ``#anchor`` and title; unresolved ones stay."""

    link = MdLink(
        kind=MdLinkKind.INLINE, text="the [TLS] part", dest="/guide/set%20up.md#tls",
        title="Setup", start=0, end=0,
    )  # fmt: skip
    assert rewritten_link(link, "Contexts/h/guide/set up.md") == (
        '[the [TLS] part](Contexts/h/guide/set%20up.md#tls "Setup")'
    )
    definition = MdLink(
        kind=MdLinkKind.DEFINITION, text="ref", dest="x.md", title=None, start=0, end=0
    )
    assert rewritten_link(definition, "Contexts/h/x.md") == "[ref]: Contexts/h/x.md"
