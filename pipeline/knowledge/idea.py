"""One note's bytes → what it declares (``NoteParse``), before any link is resolved; pure.

Contract: ``parse_note(data)`` never raises.  Its result depends on the note's bytes only —
not on its path or on other notes — so it can be cached by content hash and reused after a
rename; :mod:`vaultsync.knowledge.model` resolves the links against the whole vault.

What is read:

* **Front matter** (:mod:`vaultsync.knowledge.properties`, read by
  :func:`vaultsync.core.notes.read_front_matter`): ``title``, ``state``, ``created``
  (else ``date``); semantic relation keys (``supports: ["[[X]]"]``); ``claim``/``source``; and
  every wikilink in any property (Obsidian counts property links as links).  A note with
  ``vaultsync_id`` is the engine's: its ``kind`` is kept, and its ``source`` property (where a
  document or skill came from, not evidence) is not read as a claim source.
* **Body** (everything after the front matter): wikilinks and embeds
  (:func:`vaultsync.links.wikilinks.parse_wikilinks`), Markdown links whose destination is a path
  (:mod:`vaultsync.links.mdlinks`; URLs, ``mailto:`` and anchors are not note links), inline fields
  (:mod:`vaultsync.knowledge.fields`), and in an engine note the ``## Links`` section
  (:func:`vaultsync.knowledge.relations.section_relations`).  Code is skipped by each parser.
* **Link types.** A link inside a field whose key is in the vocabulary gets that type; the link
  of a line of the engine's ``## Links`` section gets the rendered relation; every other link
  is ``link``.
* The lifecycle ``state`` comes from front matter, else from the first ``state::`` field.
* Text is decoded as UTF-8 (bad bytes replaced and reported); CRLF and CR become LF.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from urllib.parse import unquote

from vaultsync.knowledge.claims import SOURCE_KEYS, SourceRef, declared_claims
from vaultsync.knowledge.fields import InlineField, parse_inline_fields
from vaultsync.knowledge.properties import property_strings, property_text, read_properties
from vaultsync.knowledge.relations import LINK, section_relations, semantic_type
from vaultsync.links.mdlinks import DestKind, classify_destination, parse_markdown_links
from vaultsync.links.wikilinks import parse_wikilinks

__all__ = ["LinkForm", "LinkRef", "NoteParse", "parse_note", "parse_text"]

_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_FRAGMENT = re.compile(r"[#?]")
_NEWLINES = re.compile(r"\r\n?")


class LinkForm(StrEnum):
    """How a link is written."""

    WIKILINK = "wikilink"
    EMBED = "embed"
    MARKDOWN = "markdown"
    PROPERTY = "property"
    """A wikilink in a front-matter value."""


@dataclass(frozen=True, slots=True)
class LinkRef:
    """One link as written in a note, not yet resolved."""

    target: str
    """The target without heading, block and label; Markdown destinations percent-decoded."""
    rel: str
    """``link``, a vocabulary type, or an engine relation slug."""
    line: int
    """1-based line of the link in the note; 1 (the front matter block) for a property."""
    form: LinkForm


@dataclass(frozen=True, slots=True, kw_only=True)
class NoteParse:
    """Everything a note declares, independent of its path and of the rest of the vault."""

    title: str | None = None
    """The ``title`` property, if any (else the file name is the title)."""
    kind: str | None = None
    """The engine's ``kind`` for a note written by vaultsync (``vaultsync_id`` present)."""
    state: str | None = None
    """The lifecycle state as declared, or None."""
    created: str | None = None
    links: tuple[LinkRef, ...] = ()
    claims: tuple[str, ...] = ()
    sources: tuple[SourceRef, ...] = ()
    problems: tuple[str, ...] = ()
    """Why parts of the note could not be read (bad front matter, bad UTF-8)."""


def _wikilink_targets(text: str) -> list[str]:
    return [link.target for link in parse_wikilinks(text)] if "[[" in text else []


def _markdown_target(dest: str) -> str | None:
    if classify_destination(dest) is not DestKind.PATH:
        return None
    path = dest.strip()
    if "\\" in path:
        path = _ESCAPE.sub(r"\1", path)
    cut = _FRAGMENT.search(path)
    if cut is not None:
        path = path[: cut.start()]
    if "%" in path:
        path = unquote(path)
    return path or None


def _property_links(values: Mapping[str, object], line: int) -> list[LinkRef]:
    links: list[LinkRef] = []
    for key, value in values.items():
        if isinstance(value, str):
            if "[[" not in value:
                continue
            texts: Iterable[str] = (value,)
        elif isinstance(value, list | tuple):
            texts = [text for text in property_strings(value) if "[[" in text]
        else:
            continue
        for text in texts:
            rel = semantic_type(key) or LINK
            links.extend(
                LinkRef(target, rel, line, LinkForm.PROPERTY) for target in _wikilink_targets(text)
            )
    return links


def _body_links(
    body: str, first_line: int, fields: Sequence[InlineField], *, engine: bool
) -> tuple[list[LinkRef], dict[int, list[str]]]:
    """The body's links with their types, and the link targets inside each field."""
    found: list[tuple[int, str, LinkForm]] = [
        (link.start, link.target, LinkForm.EMBED if link.embed else LinkForm.WIKILINK)
        for link in parse_wikilinks(body)
    ]
    for md in parse_markdown_links(body):
        target = _markdown_target(md.dest)
        if target is not None:
            found.append((md.start, target, LinkForm.MARKDOWN))
    found.sort(key=lambda item: item[0])
    field_starts = [field.start for field in fields]
    section = section_relations(body) if engine else {}
    links: list[LinkRef] = []
    in_field: dict[int, list[str]] = {}
    line, counted = first_line, 0
    for start, target, form in found:
        line += body.count("\n", counted, start)
        counted = start
        rel = section.get(start, LINK)
        index = bisect_right(field_starts, start) - 1
        if index >= 0 and start < fields[index].end:
            in_field.setdefault(index, []).append(target)
            rel = semantic_type(fields[index].key) or LINK
        links.append(LinkRef(target, rel, line, form))
    return links, in_field


def _first_text(values: Mapping[str, object], *keys: str) -> str | None:
    """The first of ``keys`` present in the properties, as one text."""
    for key in keys:
        if key in values:
            return property_text(values[key])
    return None


def parse_text(text: str) -> NoteParse:
    """Parse a note's decoded text (LF line endings); see the module docstring."""
    props = read_properties(text)
    values = props.front.values
    engine = "vaultsync_id" in values
    body = text[props.front.body_start :]
    fields = parse_inline_fields(body)
    links = _property_links(values, 1) if values else []
    body_links, in_field = _body_links(body, props.front.body_line, fields, engine=engine)
    links.extend(body_links)
    field_index = {id(field): index for index, field in enumerate(fields)}
    claims, sources = declared_claims(
        # The engine's ``source`` says where a document or skill came from: no evidence.
        {k: v for k, v in values.items() if k not in SOURCE_KEYS} if engine else values,
        fields,
        _wikilink_targets,
        lambda field: in_field.get(field_index[id(field)], []),
    )
    state = _first_text(values, "state")
    if state is None:
        state = next((f.value for f in fields if f.key == "state"), None)
    return NoteParse(
        title=_first_text(values, "title"),
        kind=(_first_text(values, "kind") or "note") if engine else None,
        state=state,
        created=_first_text(values, "created", "date"),
        links=tuple(links),
        claims=claims,
        sources=sources,
        problems=(props.problem,) if props.problem else (),
    )


def parse_note(data: bytes) -> NoteParse:
    """Parse a note's bytes; never raises (bad UTF-8 is replaced and reported)."""
    problems: tuple[str, ...] = ()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        text = data.decode("utf-8", errors="replace")
        problems = (f"not valid UTF-8 at byte {err.start}; bad bytes replaced",)
    if "\r" in text:
        text = _NEWLINES.sub("\n", text)
    parsed = parse_text(text)
    return replace(parsed, problems=problems + parsed.problems) if problems else parsed
