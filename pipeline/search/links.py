r"""A note's body → its outgoing links with a context snippet and a link type; pure, no I/O.

Contract: ``extract_links(body, engine=…)`` returns every link of the body in text order, each
with the target as written (what ``ObsidianIndex.resolve`` takes), its ``link_type`` and a
``context`` of about 50 characters around it.  Resolution happens in the index
(:mod:`vaultsync.search.index`), which re-resolves a link whenever a note with its target's
name appears or goes, so a link written before its target exists is found once it does
(goclaw never stores unresolved links and keeps them lost).

Link types (the issue names the first three):

* the **relation** of a line ``- in project → [[Projects/orbital|orbital]]`` in the ``## Links``
  section that closes every engine note, as the graph's slug: ``in_project``, ``links_to``,
  ``part_of`` (the section is read by :func:`vaultsync.core.notes.links_section`: the link
  right after the arrow gets the relation, a link in the line's note does not);
* ``wikilink`` for every other ``[[link]]`` outside code (``vaultsync.links.wikilinks``);
* ``markdown`` for ``[text](path.md)`` and ``[label]: path.md`` to a path (URLs, ``mailto:``,
  anchors and images are not links between notes; :mod:`vaultsync.links.mdlinks`);
* ``embed`` for ``![[note]]``, which Obsidian also counts as a link.

Context: 25 characters on each side of the link (the link itself in full), never past its
paragraph (a typed link: its line), whitespace runs as one space, ``…`` where text was cut.
Cuts fall on character boundaries **and** never split a base letter from its combining
accents, a ZWJ emoji sequence or a variation selector (goclaw cuts bytes and breaks UTF-8).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import unquote

from vaultsync.core.notes import links_section
from vaultsync.links.codespans import fenced_blocks
from vaultsync.links.mdlinks import DestKind, classify_destination, parse_markdown_links
from vaultsync.links.wikilinks import parse_wikilinks

__all__ = [
    "CONTEXT_SIDE",
    "EMBED",
    "MARKDOWN",
    "WIKILINK",
    "RawLink",
    "extract_links",
    "link_context",
]

WIKILINK = "wikilink"
MARKDOWN = "markdown"
EMBED = "embed"
CONTEXT_SIDE = 25
"""Characters of context kept on each side of a link (about 50 in all)."""

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_WHITESPACE = re.compile(r"\s+")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_ZWJ = "\u200d"


@dataclass(frozen=True, slots=True, kw_only=True)
class RawLink:
    """One outgoing link of a note, before resolution."""

    seq: int
    """Position among the note's links (text order)."""
    link_type: str
    target: str
    """What ``ObsidianIndex.resolve`` takes: a wikilink target, or a decoded Markdown path."""
    context: str


def _joins(char: str) -> bool:
    """Whether ``char`` belongs to the character before it (accent, ZWJ, selector, skin tone)."""
    code = ord(char)
    return (
        char == _ZWJ
        or 0xFE00 <= code <= 0xFE0F
        or 0xE0100 <= code <= 0xE01EF
        or 0x1F3FB <= code <= 0x1F3FF
        or unicodedata.category(char) in ("Mn", "Mc", "Me")
    )


def link_context(
    text: str, start: int, end: int, *, lo: int = 0, hi: int | None = None, side: int = CONTEXT_SIDE
) -> str:
    """``side`` characters of ``text`` on each side of ``[start, end)``, within ``[lo, hi)``.

    Cuts move outward so a character sequence is never split (see the module docstring);
    whitespace runs become one space and ``…`` marks a cut.
    """
    hi = len(text) if hi is None else hi
    left = max(lo, start - side)
    while left > lo and (_joins(text[left]) or text[left - 1] == _ZWJ):
        left -= 1
    right = min(hi, end + side)
    while right < hi and (_joins(text[right]) or text[right - 1] == _ZWJ):
        right += 1
    snippet = _WHITESPACE.sub(" ", text[left:right]).strip()
    return ("…" if left > lo else "") + snippet + ("…" if right < hi else "")


def _paragraph(text: str, start: int, end: int) -> tuple[int, int]:
    """The bounds of the paragraph (text between blank lines) holding ``[start, end)``."""
    lo = 0
    for match in _PARAGRAPH_BREAK.finditer(text, max(0, start - 4 * CONTEXT_SIDE), start):
        lo = match.end()
    after = _PARAGRAPH_BREAK.search(text, end, end + 4 * CONTEXT_SIDE)
    return lo, (after.start() if after else len(text))


def _markdown_path(dest: str) -> str:
    """A Markdown destination as a vault path: escapes removed, ``#``/``?`` cut, decoded."""
    dest = dest.strip()
    if "\\" in dest:
        dest = _ESCAPE.sub(r"\1", dest)
    dest = re.split(r"[#?]", dest, maxsplit=1)[0]
    return unquote(dest) if "%" in dest else dest


def _typed(body: str) -> dict[int, tuple[str, int, int]]:
    """Link start → (relation slug, line start, line end) for the ``## Links`` section."""
    return {
        line.start: (line.rel, line.line_start, line.line_end)
        for line in links_section(body, fences=fenced_blocks(body))
        if line.link
    }


def extract_links(body: str, *, engine: bool) -> tuple[RawLink, ...]:
    """The outgoing links of a note body, in text order (see the module docstring).

    Args:
        body: the note's text after its front matter.
        engine: the note was written by vaultsync, so its last ``## Links`` section holds
            typed links.
    """
    found: list[tuple[int, str, str, str]] = []
    typed = _typed(body) if engine else {}
    for wiki in parse_wikilinks(body):
        if not wiki.target:
            continue  # [[#Heading]]: the note itself
        if wiki.start in typed:
            rel, lo, hi = typed[wiki.start]
            context = link_context(body, wiki.start, wiki.end, lo=lo, hi=hi)
            found.append((wiki.start, rel, wiki.target, context))
            continue
        lo, hi = _paragraph(body, wiki.start, wiki.end)
        context = link_context(body, wiki.start, wiki.end, lo=lo, hi=hi)
        found.append((wiki.start, EMBED if wiki.embed else WIKILINK, wiki.target, context))
    if "](" in body or "]:" in body:
        for md in parse_markdown_links(body):
            if classify_destination(md.dest) is not DestKind.PATH:
                continue
            target = _markdown_path(md.dest)
            if target.strip():
                lo, hi = _paragraph(body, md.start, md.end)
                context = link_context(body, md.start, md.end, lo=lo, hi=hi)
                found.append((md.start, MARKDOWN, target, context))
    found.sort(key=lambda item: item[0])
    return tuple(
        RawLink(seq=seq, link_type=kind, target=target, context=context)
        for seq, (_, kind, target, context) in enumerate(found)
    )
