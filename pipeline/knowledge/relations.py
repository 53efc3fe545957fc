"""Relation types: the semantic vocabulary, the engine's rendered relations, edge rules; pure.

Contract:

* :data:`VOCABULARY` is seed 004's fixed set (``supports``, ``contradicts``, ``expands``,
  ``inspired-by``, ``question``, ``example``, ``implements``); :data:`LINK` (``link``) is the
  type of a plain, untyped link.
* ``semantic_type(key)`` says which vocabulary type a front-matter or inline-field key names
  (case, ``_``, ``-`` and spaces ignored: ``Inspired_By`` is ``inspired-by``), or None.
* ``relation_type(words)`` turns a relation as the engine renders it (``in project``, see
  ``renderers.base.relation_words``) back into its graph slug (``in_project``); a name of the
  vocabulary comes back as the vocabulary's spelling, so a link drawn by hand with
  ``vaultsync link A -> B --rel contradicts`` is a ``contradicts`` edge like an inline field.
* ``links_section(body)`` finds the engine's ``## Links`` section (the last one outside code)
  and returns, for each of its lines, the relation it gives the links on it: a
  ``- in project → [[…]]`` line, or a list item under a ``### in project`` heading.
* ``typed_edges(source, pairs)`` applies the edge rules: self-links dropped; ``(type, from,
  to)`` duplicates collapse; a target that gets any typed edge from a note is not also a plain
  ``link`` of it; a target may carry several types.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from vaultsync.links.codespans import code_mask, is_in_code

__all__ = [
    "LINK",
    "VOCABULARY",
    "Edge",
    "SectionLine",
    "links_section",
    "relation_type",
    "semantic_type",
    "typed_edges",
]

LINK = "link"
"""The type of a plain ``[[link]]`` that no relation names."""

VOCABULARY = (
    "supports",
    "contradicts",
    "expands",
    "inspired-by",
    "question",
    "example",
    "implements",
)
"""Seed 004's semantic relation types, in the seed's order."""

_SEPARATORS = re.compile(r"[\s_\-]+")
_BY_KEY = {_SEPARATORS.sub("-", name): name for name in VOCABULARY}
_SECTION = re.compile(r"^##[ \t]+Links[ \t]*#*[ \t]*$", re.MULTILINE)
_NEXT_SECTION = re.compile(r"^#{1,2}[ \t]", re.MULTILINE)
_ARROW_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?P<rel>[^\n→\[]*?)[ \t]*→")
_ARROW_LINE = re.compile(
    r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?P<rel>[^\n→\[]*?)[ \t]*→(?P<rest>[^\n]*)$", re.MULTILINE
)
_SUB_HEADING = re.compile(r"###[ \t]+(?P<rel>[^\n]*?)[ \t]*#*[ \t]*$")
_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+")


@dataclass(frozen=True, slots=True)
class Edge:
    """A directed, typed edge between two notes (vault paths)."""

    type: str
    source: str
    target: str


@dataclass(frozen=True, slots=True)
class SectionLine:
    """A line of the engine's ``## Links`` section and the relation of the links on it."""

    start: int
    end: int
    rel: str


def _key(name: str) -> str:
    return _SEPARATORS.sub("-", name.strip().casefold()).strip("-")


@lru_cache(maxsize=4096)
def semantic_type(key: str) -> str | None:
    """The vocabulary type that a property or inline-field key names, or None."""
    return _BY_KEY.get(_key(key))


@lru_cache(maxsize=4096)
def relation_type(words: str) -> str:
    """The edge type of a relation rendered in words (``in project`` → ``in_project``)."""
    key = _key(words)
    found = _BY_KEY.get(key)
    if found is not None:
        return found
    return "_".join(part for part in key.split("-") if part) or LINK


def links_section(body: str) -> tuple[SectionLine, ...]:
    """The lines of the last ``## Links`` section outside code that give links a relation."""
    if "## Links" not in body:
        return ()
    mask = code_mask(body)
    heading = None
    for match in _SECTION.finditer(body):
        if not is_in_code(mask, match.start()):
            heading = match
    if heading is None:
        return ()
    following = _NEXT_SECTION.search(body, heading.end())
    end = following.start() if following is not None else len(body)
    if "###" not in body[heading.end() : end]:
        return tuple(
            SectionLine(match.start("rest"), match.end("rest"), relation_type(match["rel"]))
            for match in _ARROW_LINE.finditer(body, heading.end(), end)
            if match["rel"].strip()
        )
    lines: list[SectionLine] = []
    current: str | None = None
    position = heading.end() + 1
    while position < end:
        line_end = body.find("\n", position, end)
        if line_end < 0:
            line_end = end
        arrow = _ARROW_ITEM.match(body, position, line_end)
        if arrow is not None and arrow["rel"].strip():
            lines.append(SectionLine(arrow.end(), line_end, relation_type(arrow["rel"])))
        else:
            sub = _SUB_HEADING.match(body, position, line_end)
            if sub is not None:
                current = relation_type(sub["rel"]) if sub["rel"].strip() else None
            elif current is not None and _ITEM.match(body, position, line_end):
                lines.append(SectionLine(position, line_end, current))
        position = line_end + 1
    return tuple(lines)


def typed_edges(source: str, pairs: Iterable[tuple[str, str]]) -> tuple[Edge, ...]:
    """The edges of one note from its ``(type, target path)`` pairs, in first-seen order.

    Args:
        source: the note's vault path.
        pairs: every resolved link of the note with its type (``link`` when untyped).

    Returns:
        Typed edges, then plain ``link`` edges to targets without a typed edge; no self-links,
        no duplicates.
    """
    typed: dict[tuple[str, str], None] = {}
    plain: dict[str, None] = {}
    for kind, target in pairs:
        if target == source:
            continue
        if kind == LINK:
            plain[target] = None
        else:
            typed[kind, target] = None
    if not typed:
        return tuple([Edge(LINK, source, target) for target in plain])
    has_type = {target for _, target in typed}
    edges = [Edge(kind, source, target) for kind, target in typed]
    edges.extend([Edge(LINK, source, target) for target in plain if target not in has_type])
    return tuple(edges)
