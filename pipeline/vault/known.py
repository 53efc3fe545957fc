"""``status`` and ``check`` answered from the last sync's record, when nothing changed since.

When ``vault.quick`` proves a sync would find nothing to do (the same inputs, every file as the
last conflict-free sync left it), a full plan would find exactly what that sync recorded
(``manifest.LastSync``): its edited notes, its deleted notes, its skipped store files, and
nothing pending.  Only two things are read again, because they are cheap and can change
without any stat data of ours showing it: the edited notes' bytes (git's conflict markers make
one a conflict) and the deleted notes' paths (a file there is no longer a deletion).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from vaultsync.vault.lazyrepo import LazyRepo
from vaultsync.vault.manifest import LastSync, StatCache
from vaultsync.vault.markers import MARKERS_REASON, has_conflict_markers
from vaultsync.vault.quick import read_regular
from vaultsync.vault.report import Conflict, EditOrigin, StatusReport


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


def known_status(vault: Path, cache: StatCache, last: LastSync) -> StatusReport:
    """``status`` from the record: kept edits (with the commit that carried each), deletions."""
    edited = {path: cache.entries[path][1] for path in last.edited}
    return StatusReport(
        edited=kept_edits(LazyRepo(vault), edited),
        deleted=last.deleted,
        conflicts=known_conflicts(vault, last),
    )


def known_conflicts(vault: Path, last: LastSync) -> tuple[Conflict, ...]:
    """The recorded edited notes that hold git's conflict markers now."""
    # a note that cannot be read as a file: the next full plan says why
    return marked_conflicts(last.edited, lambda path: read_regular(vault / path))
