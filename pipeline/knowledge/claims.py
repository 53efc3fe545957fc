"""Claims and their sources: what a note declares, and the claims that follow; pure.

Contract (claims and sources, with per-claim binding):

* Keys, case-insensitive, in front matter or inline: ``claim``/``claims`` and
  ``source``/``sources``.  ``declared_claims`` collects the claim texts and the source values
  in order (front matter first); ``derive_claims`` applies the rules once links are resolved:

  1. explicit claims: each carries the **note-level** sources, plus those bound to it;
  2. only sources: one claim named after the note (its file name without ``.md``) carrying
     them; when none of them resolves, no claim;
  3. neither: no claims (index and map notes stay out of the claims accounting).

* **Binding.** A source written on the same line as a claim (``- [claim:: X] [source:: [[S]]]``)
  belongs to that claim only; every other source is note-level.  The issue leaves per-claim
  sources open (ZettelFlow defers them); without binding a note could never hold both a sourced
  and a sourceless claim, which ZettelFlow's own fixture expects (``n1`` with ``c1`` sourced and
  ``c2`` not).
* **A source** is a link when its value holds links (``[[S1]]``, ``[S1](S1.md)``): each link
  that resolves becomes ``link:<path>``; links that do not resolve are dropped (they are listed
  by the unresolved-link query).  A value without links is text (a URL, a DOI, a citation).
  Duplicates collapse: links by path, text by its case-folded, trimmed form.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from vaultsync.knowledge.fields import InlineField
from vaultsync.knowledge.properties import property_strings

__all__ = [
    "CLAIM_KEYS",
    "SOURCE_KEYS",
    "Claim",
    "Source",
    "SourceRef",
    "declared_claims",
    "derive_claims",
    "source_key",
]

CLAIM_KEYS = frozenset({"claim", "claims"})
SOURCE_KEYS = frozenset({"source", "sources"})
NOTE_LEVEL = -1
"""``SourceRef.claim`` of a source that every claim of the note carries."""


@dataclass(frozen=True, slots=True)
class SourceRef:
    """One declared source, before link resolution."""

    claim: int
    """Index of the claim it is bound to, or ``-1`` (note-level)."""
    link: str | None
    """A link target as written (resolved later), or None for a text source."""
    text: str = ""
    """The text of a text source."""


@dataclass(frozen=True, slots=True)
class Source:
    """Evidence for a claim: a note (``link``, its vault path) or free text (``text``)."""

    kind: str
    ref: str


@dataclass(frozen=True, slots=True)
class Claim:
    """A claim a note makes and the sources it rests on."""

    text: str
    sources: tuple[Source, ...]


def source_key(source: Source) -> str:
    """The identity of a source: ``link:<path>`` or ``text:<case-folded text>``."""
    if source.kind == "link":
        return f"link:{source.ref}"
    return f"text:{source.ref.strip().casefold()}"


def _refs(claim: int, value: str, links: Sequence[str]) -> Iterable[SourceRef]:
    if links:
        return [SourceRef(claim, target) for target in links]
    text = value.strip()
    return [SourceRef(claim, None, text)] if text else []


def _property_declarations(
    properties: Mapping[str, object], links_in: Callable[[str], Sequence[str]]
) -> tuple[list[str], list[SourceRef]]:
    """The claim texts and note-level sources of the front matter."""
    claims: list[str] = []
    sources: list[SourceRef] = []
    for key, value in properties.items():
        if key in CLAIM_KEYS:
            claims.extend(t.strip() for t in property_strings(value) if t.strip())
    for key, value in properties.items():
        if key in SOURCE_KEYS:
            for text in property_strings(value):
                sources.extend(_refs(NOTE_LEVEL, text, links_in(text)))
    return claims, sources


def _field_declarations(
    fields: Sequence[InlineField],
    field_links: Callable[[InlineField], Sequence[str]],
    claims: list[str],
    sources: list[SourceRef],
) -> None:
    """Append the inline fields' claims and sources, binding a source to its line's claim."""
    line_claim: dict[int, int] = {}
    pending: list[InlineField] = []
    for field in fields:
        if field.key in CLAIM_KEYS:
            claims.append(field.value)
            line_claim.setdefault(field.line, len(claims) - 1)
        elif field.key in SOURCE_KEYS:
            pending.append(field)
    for field in pending:
        bound = line_claim.get(field.line, NOTE_LEVEL) if field.bracketed else NOTE_LEVEL
        sources.extend(_refs(bound, field.value, field_links(field)))


def declared_claims(
    properties: Mapping[str, object],
    fields: Sequence[InlineField],
    links_in: Callable[[str], Sequence[str]],
    field_links: Callable[[InlineField], Sequence[str]],
) -> tuple[tuple[str, ...], tuple[SourceRef, ...]]:
    """The claim texts and source declarations of one note, front matter first.

    Args:
        properties: the note's front matter (pass an empty mapping to ignore it).
        fields: the note's inline fields, in text order.
        links_in: the link targets written in a property string.
        field_links: the link targets inside an inline field's value.

    Returns:
        ``(claims, sources)``: distinct claim texts and every source declaration.
    """
    claims, sources = _property_declarations(properties, links_in)
    _field_declarations(fields, field_links, claims, sources)
    distinct = tuple(dict.fromkeys(claims))
    if len(distinct) != len(claims):  # a repeated claim: its sources go to the first one
        position = {text: index for index, text in enumerate(distinct)}
        sources = [
            SourceRef(position[claims[s.claim]], s.link, s.text) if s.claim >= 0 else s
            for s in sources
        ]
    return distinct, tuple(sources)


def _dedupe(sources: Iterable[Source]) -> tuple[Source, ...]:
    kept: dict[str, Source] = {}
    for source in sources:
        kept.setdefault(source_key(source), source)
    return tuple(kept.values())


def derive_claims(
    claims: Sequence[str],
    sources: Sequence[SourceRef],
    note_name: str,
    resolve: Callable[[str], str | None],
) -> tuple[Claim, ...]:
    """The claims of one note with resolved sources (rules 1-3 of the module docstring).

    Args:
        claims: the declared claim texts.
        sources: the declared sources.
        note_name: the note's file name without ``.md`` (the synthesized claim's text).
        resolve: the vault path a link target reaches, or None.

    Returns:
        The claims, in declaration order.
    """
    if not claims and not sources:
        return ()
    resolved: list[tuple[int, Source]] = []
    for ref in sources:
        if ref.link is None:
            resolved.append((ref.claim, Source("text", ref.text)))
        else:
            path = resolve(ref.link)
            if path is not None:
                resolved.append((ref.claim, Source("link", path)))
    note_level = [source for claim, source in resolved if claim == NOTE_LEVEL]
    if not claims:
        return (Claim(note_name, _dedupe(note_level)),) if note_level else ()
    return tuple(
        Claim(
            text,
            _dedupe([*(s for c, s in resolved if c == index), *note_level]),
        )
        for index, text in enumerate(claims)
    )
