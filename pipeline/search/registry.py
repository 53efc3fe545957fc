r"""The vault's notes: walk the folder (edge), read a note's fields (pure), give every note an id.

Contract:

* ``scan_vault(vault)`` lists every Markdown note (``*.md``, any case) with its stat data,
  sorted by path.  Dot folders and dotfiles (``.obsidian``, ``.git``, ``.trash``,
  ``.vaultsync``) are skipped, and **symlinks are never followed**, to a file or a folder, in
  the vault or out of it; paths that no vault write could name (a ``\`` in a file name) are
  skipped too.  The vault root itself may be a symlink: the user chose it.
* ``read_note(path, data)`` is pure: the note's title, kind, aliases, tags, SHA-256, size, body
  and the id its front matter claims.
* ``assign_ids(claims)`` gives every note its id (see below); ids are unique.

Ids (the issue left the form of user-note ids open):

* an **engine note** (listed in ``.vaultsync/manifest.json``) has the graph node id the manifest
  records for it, else its front matter's ``vaultsync_id`` (``Home.md`` is ``home``);
* any other note whose front matter carries a ``vaultsync_id`` no engine note holds keeps it
  (the first such note by path, when several copy one);
* every other note is ``vault:<vault path>`` (``vault:Inbox/idea.md``).  ``vault:`` is not a
  graph kind (``note:`` is: journal notes), so a user note can never shadow a graph note, and
  the id stays readable and stable for as long as the note keeps its path.

Title: front matter ``title``, else the first ``# heading`` outside code, else the file name
without ``.md``.  Kind: front matter ``kind``, else ``user``.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from vaultsync.links.codespans import code_mask, is_in_code
from vaultsync.search.frontmatter import split_front_matter, string_list, string_value
from vaultsync.vault.manifest import is_safe

__all__ = [
    "USER_KIND",
    "USER_PREFIX",
    "FileStat",
    "IdClaim",
    "NoteText",
    "assign_ids",
    "read_note",
    "scan_vault",
]

USER_KIND = "user"
USER_PREFIX = "vault:"
_HEADING = re.compile(r"^#[ \t]+(?P<title>.+?)[ \t#]*$", re.MULTILINE)


@dataclass(frozen=True, slots=True, kw_only=True)
class FileStat:
    """A note file as the walk saw it."""

    path: str
    """Vault-relative, ``/``-separated, exactly as on disk."""
    size: int
    mtime_ns: int
    inode: int


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


def scan_vault(vault: Path) -> tuple[FileStat, ...]:
    """Every note of the vault with its stat data, sorted by path (see the module docstring)."""
    found: list[FileStat] = []
    pending: list[tuple[Path, str]] = [(vault, "")]
    while pending:
        folder, prefix = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:  # vanished or unreadable: its notes are simply not there
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            rel = prefix + entry.name
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                pending.append((Path(entry.path), rel + "/"))
            elif stat.S_ISREG(info.st_mode) and entry.name.lower().endswith(".md") and is_safe(rel):
                found.append(
                    FileStat(
                        path=rel, size=info.st_size, mtime_ns=info.st_mtime_ns, inode=info.st_ino
                    )
                )
    found.sort(key=lambda f: f.path)
    return tuple(found)


def _first_heading(body: str) -> str:
    mask: tuple[tuple[int, int], ...] | None = None
    for match in _HEADING.finditer(body):
        if mask is None:
            mask = code_mask(body)
        if not is_in_code(mask, match.start()):
            return match["title"].strip()
    return ""


def read_note(path: str, data: bytes) -> NoteText:
    """One note's fields from its bytes (UTF-8; invalid bytes become U+FFFD, a BOM is dropped)."""
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    fields, body = split_front_matter(text)
    name = path.rpartition("/")[2]
    stem = name[:-3] if name.lower().endswith(".md") else name
    return NoteText(
        path=path,
        claimed_id=string_value(fields, "vaultsync_id"),
        title=string_value(fields, "title") or _first_heading(body) or stem,
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
