"""Vault folder → knowledge model, with a content-hash cache; the package's only I/O.

Contract: ``load_model(vault)`` walks the vault, parses each Markdown note that the cache does
not already know, builds :class:`~vaultsync.knowledge.model.KnowledgeModel` and returns it with
counts of what was read and parsed.  **It never writes to a note**: the one file it writes is
``<vault>/.vaultsync/knowledge-cache.json`` (atomically; skipped with ``cache=False`` and when
the folder is read-only; written with ``core.fsio.atomic_write``).

* **Walk.** :func:`vaultsync.core.notes.walk_vault`: names starting with ``.`` are skipped
  (``.obsidian``, ``.git``, ``.vaultsync``, ``.trash``) and **no symlink is followed**, so the
  model reads the files search indexes and the engine writes.  Notes are the files ending
  ``.md`` (any case); every other file is an attachment that links may reach.  Notes are read
  with :class:`vaultsync.core.notes.NoteReader` (no symlink there either).
* **Cache.** Per note path: size, ``mtime_ns`` and the SHA-256 of the bytes; per hash: the
  parse.  A note whose size and mtime match is not even read; one whose stat changed is read
  and hashed, and parsed only if the hash is new — so a rename or a touch re-parses nothing.
  A file modified within ``core.fsio.RACY_NS`` of the cache's scan is re-hashed (its mtime
  cannot prove it unchanged: ``core.fsio.is_racy``).  The cache carries a digest of the
  parser's source code; any change of code, a corrupt file or a different layout is ignored
  and rebuilt.
* **Resolutions** are cached too: while the vault's file list is the one cached, an unchanged
  note's links reach the files they reached (Obsidian's resolution depends on the note, its
  folder and the file list only), so a warm load resolves nothing and builds no index.  Any
  file added, removed or renamed re-resolves every link.
* The cyclic garbage collector is paused during a load (hundreds of thousands of small
  objects, no cycles; its passes cost a fifth of a warm load).
"""

from __future__ import annotations

import gc
import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vaultsync.core.errors import UsageError
from vaultsync.core.fsio import atomic_write, is_racy
from vaultsync.core.notes import NoteFile, NoteReader, VaultListing, walk_vault
from vaultsync.knowledge import codec
from vaultsync.knowledge.idea import NoteParse, parse_note
from vaultsync.knowledge.model import KnowledgeModel

__all__ = ["CACHE_NAME", "LoadedVault", "ScanStats", "load_model"]

CACHE_NAME = ".vaultsync/knowledge-cache.json"
_LAYOUT = 2


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanStats:
    """What one load did."""

    notes: int
    files: int
    """Every file of the vault (notes and attachments)."""
    read: int
    """Notes whose bytes were read (stat changed, racy, or not cached)."""
    parsed: int
    """Notes parsed (content not in the cache)."""
    cache_written: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedVault:
    """The model of a vault and how it was obtained."""

    model: KnowledgeModel
    stats: ScanStats


def _parser_digest() -> str:
    """Digest of the parsing and resolving code: a change of any rule invalidates the cache."""
    from vaultsync.core import notes  # noqa: PLC0415
    from vaultsync.knowledge import claims, fields, idea, model, properties, relations  # noqa: PLC0415
    from vaultsync.links import codespans, mdlinks, pathresolve, wikilinks  # noqa: PLC0415

    digest = hashlib.sha256(str(codec.VERSION).encode())
    shared = (notes, codespans, mdlinks, pathresolve, wikilinks)
    for module in (*shared, claims, fields, idea, model, properties, relations):
        digest.update(Path(str(module.__file__)).read_bytes())
    return digest.hexdigest()


@dataclass(slots=True)
class _Cache:
    """What a cache file holds; empty when there is none or it is unusable."""

    scanned_ns: int = 0
    paths: list[str] = field(default_factory=list)
    """Every file of the vault when the cache was written, sorted."""
    notes: dict[str, Any] = field(default_factory=dict)
    """Note path → ``[size, mtime_ns, sha256, [index into paths or -1 per link]]``."""
    parses: dict[str, Any] = field(default_factory=dict)
    """SHA-256 → encoded parse."""


def _load_cache(path: Path, digest: str) -> _Cache:
    try:
        data = json.loads(path.read_bytes())
        paths, notes, parses = data["paths"], data["notes"], data["parses"]
        if (
            data["parser"] == digest
            and data["layout"] == _LAYOUT
            and isinstance(paths, list)
            and isinstance(notes, dict)
            and isinstance(parses, dict)
        ):
            return _Cache(int(data["scanned_ns"]), paths, notes, parses)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        pass
    return _Cache()


def _write_cache(path: Path, payload: dict[str, Any]) -> bool:
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    try:
        path.parent.mkdir(exist_ok=True)
        atomic_write(path, data)
    except OSError:
        return False
    return True


def _cached_sha(entry: object, note: NoteFile, scanned_ns: int) -> str | None:
    """The cached hash of a note whose size and mtime prove it unchanged, else None."""
    if (
        isinstance(entry, list)
        and len(entry) == 4
        and entry[0] == note.size
        and entry[1] == note.mtime_ns
        and not is_racy(note.mtime_ns, scanned_ns)
        and isinstance(entry[2], str)
    ):
        return entry[2]
    return None


def _known(entry: object, sha: str, paths: list[str]) -> tuple[str | None, ...] | None:
    """The cached resolution of a note's links, when its content is the cached one."""
    if not (isinstance(entry, list) and len(entry) == 4 and entry[2] == sha):
        return None
    indexes = entry[3]
    try:
        if indexes and min(indexes) < -1:
            return None
        return tuple([paths[i] if i >= 0 else None for i in indexes])
    except (TypeError, IndexError):
        return None


def load_model(vault: Path, *, cache: bool = True) -> LoadedVault:
    """Read the vault into the knowledge model; see :func:`_load_model`.

    The cyclic garbage collector is paused meanwhile: the load allocates hundreds of thousands
    of small objects and no cycle, and its passes cost a fifth of a warm load.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _load_model(vault, cache=cache)
    finally:
        if enabled:
            gc.enable()


@dataclass(slots=True)
class _Parsed:
    """The notes of one load, and what reading them took."""

    notes: dict[str, NoteParse] = field(default_factory=dict)
    hashes: dict[str, str] = field(default_factory=dict)
    known: dict[str, tuple[str | None, ...]] = field(default_factory=dict)
    """Note path → its links' resolution from the cache (same file list, same content)."""
    read: int = 0
    parsed: int = 0


def _parse_notes(vault: Path, listing: VaultListing, old: _Cache) -> _Parsed:
    """Every note's parse: from the cache when its stat or its hash is known, else parsed."""
    done = _Parsed()
    same_files = old.paths == list(listing.files)
    with NoteReader(vault) as reader:
        for note in listing.notes:
            entry = old.notes.get(note.path)
            sha = _cached_sha(entry, note, old.scanned_ns)
            parse = codec.decode(old.parses.get(sha)) if sha is not None else None
            if parse is None or sha is None:
                data = reader.read(note.path)
                if data is None:  # gone, or no longer a regular file
                    continue
                done.read += 1
                sha = hashlib.sha256(data).hexdigest()
                parse = codec.decode(old.parses.get(sha))
                if parse is None:
                    parse = parse_note(data)
                    done.parsed += 1
            done.notes[note.path] = parse
            done.hashes[note.path] = sha
            resolution = _known(entry, sha, old.paths) if same_files else None
            if resolution is not None:
                done.known[note.path] = resolution
    return done


def _load_model(vault: Path, *, cache: bool) -> LoadedVault:
    """Read the vault into the knowledge model; see the module docstring.

    Args:
        vault: the vault folder.
        cache: use and refresh ``.vaultsync/knowledge-cache.json``.

    Returns:
        The model and the counts of what was read.

    Raises:
        UsageError: ``vault`` is not a folder.
    """
    if not vault.is_dir():
        raise UsageError(f"{vault}: not a vault folder", hint="pass --vault DIR")
    started = time.time_ns()
    listing = walk_vault(vault)
    cache_path = vault / CACHE_NAME
    digest = _parser_digest() if cache else ""
    old = _load_cache(cache_path, digest) if cache else _Cache()
    done = _parse_notes(vault, listing, old)
    notes = done.notes
    modified = {n.path: n.mtime_ns for n in listing.notes if n.path in notes}
    model = KnowledgeModel.build(notes, listing.files, modified, done.known)
    written = False
    if cache and (done.read or old.paths != list(listing.files) or len(done.known) != len(notes)):
        payload = _payload(
            digest=digest,
            started=started,
            listing=listing,
            model=model,
            hashes=done.hashes,
            old=old,
        )
        written = _write_cache(cache_path, payload)
    return LoadedVault(
        model=model,
        stats=ScanStats(
            notes=len(notes),
            files=len(listing.files),
            read=done.read,
            parsed=done.parsed,
            cache_written=written,
        ),
    )


def _payload(
    *,
    digest: str,
    started: int,
    listing: VaultListing,
    model: KnowledgeModel,
    hashes: dict[str, str],
    old: _Cache,
) -> dict[str, Any]:
    """The cache file's content after a load."""
    position = {path: index for index, path in enumerate(listing.files)}
    notes: dict[str, Any] = {}
    parses: dict[str, Any] = {}
    for note in listing.notes:
        sha = hashes.get(note.path)
        if sha is None:
            continue
        resolved = model.resolved[note.path]
        notes[note.path] = [
            note.size,
            note.mtime_ns,
            sha,
            [position[found] if found is not None else -1 for found in resolved],
        ]
        if sha not in parses:
            parses[sha] = old.parses.get(sha) or codec.encode(model.notes[note.path])
    return {
        "layout": _LAYOUT,
        "parser": digest,
        "scanned_ns": started,
        "paths": list(listing.files),
        "notes": notes,
        "parses": parses,
    }
