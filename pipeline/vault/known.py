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
from pathlib import Path

from vaultsync.vault.decide import LazyRepo
from vaultsync.vault.manifest import LastSync, StatCache
from vaultsync.vault.merge import MARKERS_REASON, has_conflict_markers
from vaultsync.vault.report import Conflict, StatusReport
from vaultsync.vault.vcs import EditOrigin

_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


def still_known(vault: Path, cache: StatCache) -> LastSync | None:
    """The last sync's record when it still holds (no file at a deleted note's path)."""
    root = os.fspath(vault)
    if any(os.path.lexists(f"{root}/{path}") for path in cache.last.deleted):
        return None
    return cache.last


def marked_conflicts(vault: Path, last: LastSync) -> tuple[Conflict, ...]:
    """The edited notes holding git's conflict markers, as ``status`` lists them."""
    return tuple(
        Conflict(path=path, reason=MARKERS_REASON.replace("PATH", path))
        for path in last.edited
        if has_conflict_markers(_read(vault / path))
    )


def known_status(vault: Path, cache: StatCache, last: LastSync) -> StatusReport:
    """``status`` from the record: kept edits (with the commit that carried each), deletions."""
    edited = {path: cache.entries[path][1] for path in last.edited}
    found = LazyRepo(vault).get() if edited else None
    origins = found.edit_origins(edited) if found is not None else {}
    return StatusReport(
        edited=tuple(origins.get(p, EditOrigin(path=p, uncommitted=True)) for p in sorted(edited)),
        deleted=last.deleted,
        conflicts=marked_conflicts(vault, last),
    )


def _read(path: Path) -> bytes:
    """A note's bytes (empty when it cannot be read: the next full plan says why)."""
    try:
        fd = os.open(path, _READ)
    except OSError:
        return b""
    with os.fdopen(fd, "rb") as handle:
        return handle.read()
