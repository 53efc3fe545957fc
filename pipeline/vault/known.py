"""``status`` and ``check`` answered from the last sync's record, when nothing changed since.

When ``vault.quick`` proves a sync would find nothing to do (the same inputs, every file as the
last conflict-free sync left it), a full plan would find exactly what that sync recorded
(``manifest.LastSync``): its edited notes, its deleted notes, its skipped store files, and
nothing pending.  Only two things are read again, because they are cheap and can change
without any stat data of ours showing it: the edited notes' bytes (git's conflict markers make
one a conflict) and the deleted notes' paths (a file there is no longer a deletion).

The same holds when, the inputs unchanged, the only files changed since are a few notes the
user edited in place (:func:`since_last_sync`): with the stores as they were, a full plan keeps
each as edited, or finds it unedited again when its bytes are the ones vaultsync wrote.  So the
record answers with those notes' edits brought up to date, read against the blobs the manifest
records for them.  Anything else changed (a note deleted or replaced by a folder, a file the
manifest does not list, a vault with notes the user moved, whose edits may be links Obsidian
rewrote: those a sync updates) is left to the full plan.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from vaultsync.vault.lazyrepo import LazyRepo
from vaultsync.vault.manifest import (
    MANIFEST,
    ROWS_AT_MOST,
    LastSync,
    StatCache,
    blob_id,
    recorded_blobs,
)
from vaultsync.vault.markers import MARKERS_REASON, has_conflict_markers
from vaultsync.vault.quick import last_sync_and_changes, read_regular
from vaultsync.vault.report import Conflict, EditOrigin, StatusReport


@dataclass(frozen=True, slots=True, kw_only=True)
class Known:
    """The last sync's record as a full plan would find it now (:func:`since_last_sync`)."""

    last: LastSync
    edited: Mapping[str, str]
    """Each edited note's blob on disk, by path."""


def since_last_sync(vault: Path, inputs: str) -> Known | None:
    """The last sync's record as a full plan would find it now, if it can tell.

    ``inputs``: ``vault.quick.sync_inputs``.  ``None``: plan (see the module docstring).
    """
    found = last_sync_and_changes(vault, inputs, at_most=ROWS_AT_MOST)
    if found is None:
        return None
    cache, changed = found
    last = still_known(vault, cache)
    if last is None:
        return None
    now = user_edits(vault, changed) if changed else {}
    if now is None:
        return None
    edited = {path: cache.entries[path][1] for path in last.edited if path not in now}
    edited.update((path, blob) for path, blob in now.items() if blob)
    return Known(last=replace(last, edited=tuple(sorted(edited))), edited=edited)


def user_edits(vault: Path, changed: Iterable[str]) -> dict[str, str] | None:
    """Each changed note's blob on disk when the user edited it, ``""`` when unedited again.

    Unedited: it holds what vaultsync wrote there.  ``None`` when one is not a note the
    manifest lists, holding a file (see the module doc).
    """
    manifest = read_regular(vault / MANIFEST)  # the bytes the stat cache vouched for
    changed = sorted(changed)
    recorded = recorded_blobs(manifest, changed) if manifest is not None else None
    if manifest is None or recorded is None or b'"chosen": true' in manifest:
        return None
    found = {}
    for path in changed:
        data = read_regular(vault / path)
        if data is None:
            return None
        blob = blob_id(data)
        found[path] = "" if blob == recorded[path] else blob
    return found


def still_known(vault: Path, cache: StatCache) -> LastSync | None:
    """The last sync's record when it still holds (no file at a deleted note's path)."""
    root = os.fspath(vault)
    if any(os.path.lexists(f"{root}/{path}") for path in cache.last.deleted):
        return None
    return cache.last


def marked_conflicts(
    paths: Iterable[str], read: Callable[[str], bytes | None]
) -> tuple[Conflict, ...]:
    """The notes of ``paths`` holding git's conflict markers, as ``status`` lists them.

    ``read``: a note's bytes by vault path (``None`` when it cannot be read).
    """
    return tuple(
        Conflict(path=path, reason=MARKERS_REASON.replace("PATH", path))
        for path in paths
        if has_conflict_markers(read(path) or b"")
    )


def kept_edits(repo: LazyRepo, edited: Mapping[str, str]) -> tuple[EditOrigin, ...]:
    """Each edited note (path → blob on disk) with the commit that carried its edit, by path."""
    found = repo.get() if edited else None
    origins = found.edit_origins(edited) if found is not None else {}
    return tuple(origins.get(p, EditOrigin(path=p, uncommitted=True)) for p in sorted(edited))


def known_status(vault: Path, known: Known) -> StatusReport:
    """``status`` from the record: kept edits (with the commit that carried each), deletions."""
    return StatusReport(
        edited=kept_edits(LazyRepo(vault), known.edited),
        deleted=known.last.deleted,
        conflicts=known_conflicts(vault, known.last),
    )


def known_conflicts(vault: Path, last: LastSync) -> tuple[Conflict, ...]:
    """The recorded edited notes that hold git's conflict markers now."""
    # a note that cannot be read as a file: the next full plan says why
    return marked_conflicts(last.edited, lambda path: read_regular(vault / path))
