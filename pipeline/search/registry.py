"""The vault's notes: list them (edge), read a note's fields (pure), give every note an id.

Contract:

* ``scan_vault(vault)`` lists every Markdown note with its stat data, sorted by path: the notes
  of :func:`vaultsync.core.notes.walk_vault` (dot folders skipped, **no symlink followed**).
* ``read_note(path, data)`` is pure: the note's title, kind, aliases, tags, SHA-256, size, body
  and the id its front matter claims.  Front matter is read by
  :func:`vaultsync.core.notes.read_front_matter` (YAML 1.2, keys case folded); a block that
  cannot be read gives no fields, so a broken property block never keeps a note out of the
  index.  The coercion is search's own: ``title``, ``kind`` and ``vaultsync_id`` count when
  they are non-blank strings; ``aliases`` and ``tags`` take a list's string and number items
  or one string (a ``tags`` string splits at commas and spaces, as Obsidian reads it).
* ``assign_ids(claims)`` gives every note its id (see below); ids are unique.

Ids (the issue left the form of user-note ids open):

* an **engine note** (listed in ``.vaultsync/manifest.json``) has the graph node id the manifest
  records for it, else its front matter's ``vaultsync_id`` (``Home.md`` is ``home``);
* any other note whose front matter carries a ``vaultsync_id`` no engine note holds keeps it
  (the first such note by path, when several copy one);
* every other note is ``vault:<vault path>`` (``vault:Inbox/idea.md``).  ``vault:`` is not a
  graph kind (``note:`` is: journal notes), so a user note can never shadow a graph note, and
  the id stays readable and stable for as long as the note keeps its path.

Title: front matter ``title``, else the first level-1 heading (``# Title`` or a ``===``
underline) outside fenced code, else the file name without ``.md``.  Kind: front matter
``kind``, else ``user``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from vaultsync.core.notes import NoteFile, first_heading, read_front_matter, walk_vault
from vaultsync.links.codespans import fenced_blocks

__all__ = [
    "USER_KIND",
    "USER_PREFIX",
    "IdClaim",
    "NoteText",
    "assign_ids",
    "read_note",
    "scan_vault",
    "string_list",
    "string_value",
]

USER_KIND = "user"
USER_PREFIX = "vault:"


@dataclass(frozen=True, slots=True, kw_only=True)
class NoteText:
    """What the index keeps of one note."""

    path: str
    claimed_id: str
    """The front matter's ``vaultsync_id``, or ``""``."""
    title: str
    kind: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    body: str
    """The text after the front matter."""
    sha256: str
    size: int


@dataclass(frozen=True, slots=True, kw_only=True)
class IdClaim:
    """The inputs of one note's id."""

    path: str
    claimed_id: str
    manifest_node: str | None
    """The node the manifest records for this path; None when the engine did not write it."""


def scan_vault(vault: Path) -> tuple[NoteFile, ...]:
    """Every note of the vault with its stat data, sorted by path (see the module docstring)."""
    return walk_vault(vault).notes


def string_value(fields: Mapping[str, object], key: str) -> str:
    """``fields[key]`` when it is a non-blank string (trimmed), else ``""``."""
    value = fields.get(key)
    return value.strip() if isinstance(value, str) else ""


def string_list(fields: Mapping[str, object], key: str, *, split: bool = False) -> tuple[str, ...]:
    """``fields[key]`` as strings: a list's string and number items, or one string.

    Args:
        fields: the front matter.
        key: ``aliases`` or ``tags``.
        split: also split a single string at commas and spaces (Obsidian reads ``tags: a, b``
            as two tags); a leading ``#`` is dropped.

    Returns:
        The non-empty values, trimmed, first occurrence kept, in order.
    """
    value = fields.get(key)
    raw: list[str] = []
    if isinstance(value, str):
        raw = re.split(r"[,\s]+", value) if split else [value]
    elif isinstance(value, list | tuple):
        raw = [
            str(v) for v in value if isinstance(v, str | int | float) and not isinstance(v, bool)
        ]
    cleaned = (v.strip().lstrip("#").strip() if split else v.strip() for v in raw)
    return tuple(dict.fromkeys(v for v in cleaned if v))


def _title(body: str) -> str:
    heading = first_heading(body, fences=fenced_blocks(body), max_level=1)
    return "" if heading is None else heading.text


def read_note(path: str, data: bytes) -> NoteText:
    """One note's fields from its bytes (UTF-8; invalid bytes become U+FFFD, a BOM is dropped)."""
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    front = read_front_matter(text)
    fields = front.values
    body = text[front.body_start :]
    name = path.rpartition("/")[2]
    stem = name[:-3] if name.lower().endswith(".md") else name
    return NoteText(
        path=path,
        claimed_id=string_value(fields, "vaultsync_id"),
        title=string_value(fields, "title") or _title(body) or stem,
        kind=string_value(fields, "kind") or USER_KIND,
        aliases=string_list(fields, "aliases"),
        tags=string_list(fields, "tags", split=True),
        body=body,
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
    )


def assign_ids(claims: Iterable[IdClaim]) -> Mapping[str, str]:
    """Path → id for every claim, unique; the rules are in the module docstring."""
    ordered = sorted(claims, key=lambda c: c.path)
    ids: dict[str, str] = {}
    taken: set[str] = set()
    for claim in ordered:  # engine notes first: their ids come from the graph
        if claim.manifest_node is None:
            continue
        wanted = claim.manifest_node or claim.claimed_id
        if wanted and wanted not in taken:
            ids[claim.path] = wanted
            taken.add(wanted)
    for claim in ordered:
        if claim.path in ids:
            continue
        wanted = claim.claimed_id
        if wanted and not wanted.startswith(USER_PREFIX) and wanted not in taken:
            ids[claim.path] = wanted
        else:
            ids[claim.path] = USER_PREFIX + claim.path
        taken.add(ids[claim.path])
    return ids
