"""Relation types: the semantic vocabulary, the engine's rendered relations, edge rules; pure.

Contract:

* :data:`VOCABULARY` is a fixed set (``supports``, ``contradicts``, ``expands``,
  ``inspired-by``, ``question``, ``example``, ``implements``); :data:`LINK` (``link``) is the
  type of a plain, untyped link.
* ``semantic_type(key)`` says which vocabulary type a front-matter or inline-field key names
  (case, ``_``, ``-`` and spaces ignored: ``Inspired_By`` is ``inspired-by``), or None.
* ``relation_type(words)`` turns a relation as the engine renders it (``in project``, see
  ``renderers.base.relation_words``) back into its graph slug (``in_project``); a name of the
  vocabulary comes back as the vocabulary's spelling, so a link drawn by hand with
  ``vaultsync link A -> B --rel contradicts`` is a ``contradicts`` edge like an inline field.
* ``section_relations(body)`` reads the engine's ``## Links`` section with
  :func:`vaultsync.core.notes.links_section` (a ``- in project → [[…]]`` line, or a list item
  under a ``### in project`` heading) and maps the offset of each typed link to its
  :func:`relation_type`; a link later on the line (in the line's note) is a plain link.
* ``typed_edges(source, pairs)`` applies the edge rules: self-links dropped; ``(type, from,
  to)`` duplicates collapse; a target that gets any typed edge from a note is not also a plain
  ``link`` of it; a target may carry several types.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from vaultsync.core.notes import links_section
from vaultsync.links.codespans import fenced_blocks

__all__ = [
    "LINK",
    "VOCABULARY",
    "Edge",
    "relation_type",
    "section_relations",
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
"""The semantic relation types, in their documented order."""

_SEPARATORS = re.compile(r"[\s_\-]+")
_BY_KEY = {_SEPARATORS.sub("-", name): name for name in VOCABULARY}


@dataclass(frozen=True, slots=True)
class Edge:
    """A directed, typed edge between two notes (vault paths)."""

    type: str
    source: str
    target: str


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


def section_relations(body: str) -> Mapping[int, str]:
    """Offset of each typed link of the engine's ``## Links`` section → its relation type."""
    if "## Links" not in body:
        return {}
    return {
        link.start: relation_type(link.words)
        for link in links_section(body, fences=fenced_blocks(body))
    }


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
