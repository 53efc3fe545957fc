"""Vault folder → knowledge model, with a content-hash cache; the package's only I/O.

Contract: ``load_model(vault)`` walks the vault, parses each Markdown note that the cache does
not already know, builds :class:`~vaultsync.knowledge.model.KnowledgeModel` and returns it with
counts of what was read and parsed.  **It never writes to a note**: the one file it writes is
``<vault>/.vaultsync/knowledge-cache.json`` (atomically; skipped with ``cache=False`` and when
the folder is read-only).

* **Walk.** Every file and folder whose name starts with ``.`` is skipped (``.obsidian``,
  ``.git``, ``.vaultsync``, ``.trash``).  A symlink is followed only when its target lies inside
  the vault, and a folder is entered once (no cycles).  Notes are the files ending ``.md`` (any
  case); every other file is an attachment that links may reach.
* **Cache.** Per note path: size, ``mtime_ns`` and the SHA-256 of the bytes; per hash: the
  parse.  A note whose size and mtime match is not even read; one whose stat changed is read
  and hashed, and parsed only if the hash is new — so a rename or a touch re-parses nothing.
  A file modified less than :data:`RACY_NS` before the cache was written is re-hashed (its
  mtime cannot prove it unchanged).  The cache carries a digest of the parser's source code;
  any change of code, a corrupt file or a different layout is ignored and rebuilt.
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
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vaultsync.core.errors import UsageError
from vaultsync.knowledge import codec
from vaultsync.knowledge.idea import NoteParse, parse_note
from vaultsync.knowledge.model import KnowledgeModel

__all__ = ["CACHE_NAME", "RACY_NS", "LoadedVault", "ScanStats", "load_model", "walk_vault"]

CACHE_NAME = ".vaultsync/knowledge-cache.json"
_LAYOUT = 2
RACY_NS = 2_000_000_000
"""Files modified this close (2 s) to the cache's scan are re-hashed on the next run."""


@dataclass(frozen=True, slots=True)
class _Stat:
    path: str
    size: int
    mtime_ns: int


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


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root + os.sep)


def walk_vault(vault: Path) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Every file of the vault as ``(vault-relative POSIX path, entry)``; see the module docs."""
    root = os.path.realpath(vault)
    seen = {root}
    stack: list[tuple[str, str]] = [(str(vault), "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                if entry.is_symlink():
                    real = os.path.realpath(entry.path)
                    if not _inside(real, root):
                        continue
                is_dir = entry.is_dir()
                if is_dir:
                    real = os.path.realpath(entry.path)
                    if real in seen:
                        continue
                    seen.add(real)
                    stack.append((entry.path, f"{prefix}{entry.name}/"))
                elif entry.is_file():
                    yield f"{prefix}{entry.name}", entry
            except OSError:
                continue


def _parser_digest() -> str:
    """Digest of the parsing and resolving code: a change of any rule invalidates the cache."""
    from vaultsync.knowledge import claims, fields, idea, model, properties, relations  # noqa: PLC0415
    from vaultsync.links import codespans, mdlinks, pathresolve, wikilinks  # noqa: PLC0415

    digest = hashlib.sha256(str(codec.VERSION).encode())
    shared = (codespans, mdlinks, pathresolve, wikilinks)
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
        with tempfile.NamedTemporaryFile(
            dir=path.parent, prefix=f".{path.name}.", delete=False
        ) as tmp:
            tmp.write(data)
            tmp.flush()
            os.fsync(tmp.fileno())
        try:
            Path(tmp.name).replace(path)
        except OSError:
            Path(tmp.name).unlink(missing_ok=True)
            raise
    except OSError:
        return False
    return True


def _walk(vault: Path) -> tuple[list[str], list[_Stat]]:
    """Every file of the vault (sorted) and the stat of every note."""
    files: list[str] = []
    stats: list[_Stat] = []
    for rel, entry in walk_vault(vault):
        files.append(rel)
        if rel[-3:].lower() == ".md":
            try:
                st = entry.stat()
            except OSError:
                continue
            stats.append(_Stat(rel, st.st_size, st.st_mtime_ns))
    files.sort()
    return files, stats


def _cached_sha(entry: object, stat: _Stat, scanned_ns: int) -> str | None:
    """The cached hash of a note whose size and mtime prove it unchanged, else None."""
    if (
        isinstance(entry, list)
        and len(entry) == 4
        and entry[0] == stat.size
        and entry[1] == stat.mtime_ns
        and stat.mtime_ns < scanned_ns - RACY_NS
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
    files, stats = _walk(vault)
    root = str(vault)
    cache_path = vault / CACHE_NAME
    digest = _parser_digest() if cache else ""
    old = _load_cache(cache_path, digest) if cache else _Cache()
    same_files = old.paths == files
    notes: dict[str, NoteParse] = {}
    hashes: dict[str, str] = {}
    known: dict[str, tuple[str | None, ...]] = {}
    read = parsed = 0
    for stat in stats:
        entry = old.notes.get(stat.path)
        sha = _cached_sha(entry, stat, old.scanned_ns)
        note = codec.decode(old.parses.get(sha)) if sha is not None else None
        if note is None or sha is None:
            try:
                # a plain open(): pathlib's joins cost a tenth of a cold load here
                with open(f"{root}/{stat.path}", "rb") as file:  # noqa: PTH123
                    data = file.read()
            except OSError:
                continue
            read += 1
            sha = hashlib.sha256(data).hexdigest()
            note = codec.decode(old.parses.get(sha))
            if note is None:
                note = parse_note(data)
                parsed += 1
        notes[stat.path] = note
        hashes[stat.path] = sha
        if same_files:
            resolution = _known(entry, sha, old.paths)
            if resolution is not None:
                known[stat.path] = resolution
    modified = {s.path: s.mtime_ns for s in stats if s.path in notes}
    model = KnowledgeModel.build(notes, files, modified, known)
    written = False
    if cache and (read or not same_files or len(known) != len(notes)):
        written = _write_cache(
            cache_path,
            _payload(
                digest=digest,
                started=started,
                files=files,
                stats=stats,
                model=model,
                hashes=hashes,
                old=old,
            ),
        )
    return LoadedVault(
        model=model,
        stats=ScanStats(
            notes=len(notes), files=len(files), read=read, parsed=parsed, cache_written=written
        ),
    )


def _payload(
    *,
    digest: str,
    started: int,
    files: list[str],
    stats: list[_Stat],
    model: KnowledgeModel,
    hashes: dict[str, str],
    old: _Cache,
) -> dict[str, Any]:
    """The cache file's content after a load."""
    position = {path: index for index, path in enumerate(files)}
    notes: dict[str, Any] = {}
    parses: dict[str, Any] = {}
    for stat in stats:
        sha = hashes.get(stat.path)
        if sha is None:
            continue
        resolved = model.resolved[stat.path]
        notes[stat.path] = [
            stat.size,
            stat.mtime_ns,
            sha,
            [position[found] if found is not None else -1 for found in resolved],
        ]
        if sha not in parses:
            parses[sha] = old.parses.get(sha) or codec.encode(model.notes[stat.path])
    return {
        "layout": _LAYOUT,
        "parser": digest,
        "scanned_ns": started,
        "paths": files,
        "notes": notes,
        "parses": parses,
    }
