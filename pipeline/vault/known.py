"""``status``, ``check`` and ``sync`` answered from the last sync's record, when little changed.

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
manifest does not list, an edit that is only links Obsidian rewrote where the user moved notes:
those a sync updates) is left to the full plan.

A ``sync`` then writes no note either (:func:`sync_from_record`): it reports what the full plan
reports and leaves the record brought up to date, so the sync after it is the quick answer.
A sync records nothing to answer from when it left work undone (a merge for later, a write
refused because the note changed while it ran).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from vaultsync.core.digest import code_fingerprint
from vaultsync.core.fsio import RACY_NS, read_regular
from vaultsync.vault.lazyrepo import LazyRepo
from vaultsync.vault.manifest import (
    CACHE,
    MANIFEST,
    ROWS_AT_MOST,
    LastSync,
    StatCache,
    StatKey,
    blob_id,
    dump_stat_cache,
    parsed_manifest,
    proven,
    recorded_blobs,
)
from vaultsync.vault.markers import MARKERS_REASON, has_conflict_markers
from vaultsync.vault.quick import last_sync_and_changes, stat_of
from vaultsync.vault.report import (
    Conflict,
    EditHistory,
    EditOrigin,
    StatusReport,
    SyncReport,
)
from vaultsync.vault.write import LOCK_TIMEOUT, VaultFS

if TYPE_CHECKING:
    from vaultsync.vault.gitfacts import GitFacts


@dataclass(frozen=True, slots=True, kw_only=True)
class Known:
    """The last sync's record as a full plan would find it now (:func:`since_last_sync`)."""

    last: LastSync
    edited: Mapping[str, str]
    """Each edited note's blob on disk, by path."""
    cache: StatCache
    """The stat cache the record is from."""
    seen: Mapping[str, tuple[StatKey, str]]
    """The notes changed since that cache: stat data taken before they were read, and blob."""


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
    root = os.fspath(vault)
    stats = {path: stat_of(f"{root}/{path}") for path in changed}  # before the bytes are read
    now = user_edits(vault, changed) if changed else {}
    if now is None:
        return None
    seen = {path: (stat, now[path][0]) for path, stat in stats.items() if stat is not None}
    if len(seen) != len(stats):
        return None  # a note gone between its stat and its read
    edited = {path: cache.entries[path][1] for path in last.edited if path not in now}
    edited.update((path, blob) for path, (blob, mine) in now.items() if mine)
    return Known(
        last=replace(last, edited=tuple(sorted(edited))),
        edited=edited,
        cache=cache,
        seen=seen,
    )


def user_edits(vault: Path, changed: Iterable[str]) -> dict[str, tuple[str, bool]] | None:
    """Each changed note's blob on disk, and whether the user edited it (else unedited again).

    Unedited: it holds what vaultsync wrote there.  ``None`` when one is not a note the
    manifest lists, holding a file (see the module doc).
    """
    manifest = read_regular(vault / MANIFEST)  # the bytes the stat cache vouched for
    changed = sorted(changed)
    recorded = recorded_blobs(manifest, changed) if manifest is not None else None
    if manifest is None or recorded is None:
        return None
    found, read = {}, {}
    for path in changed:
        data = read_regular(vault / path)
        if data is None:
            return None
        blob = blob_id(data)
        found[path] = (blob, blob != recorded[path])
        read[path] = data
    if b'"chosen": true' in manifest:
        mine = {path: read[path] for path, (_, edited) in found.items() if edited}
        if mine and _links_rewritten(vault, manifest, mine, recorded):
            return None
    return found


def _links_rewritten(
    vault: Path, manifest: bytes, mine: Mapping[str, bytes], recorded: Mapping[str, str]
) -> bool:
    """Whether an edit may be only links Obsidian rewrote, which a full plan updates.

    Where the user moved notes, a plan takes an edit that differs from what vaultsync wrote only
    by wikilinks opening the same notes for Obsidian's rewrite, and writes the note again
    (``decide._links_rewritten``); so does this, with the moves the manifest records (a move
    since the last sync is a deletion, which the record never answers).  What vaultsync wrote
    is read from git; not found there, it may be.
    """
    from vaultsync.vault.moves import LinkTargets, same_but_links  # noqa: PLC0415 - with moves

    repo = LazyRepo(vault).get()
    if repo is None:
        return True
    targets = LinkTargets.of(parsed_manifest(manifest), {})
    for path, data in mine.items():
        base = repo.read_blob(recorded[path])
        if base is None or same_but_links(data, base, path, targets):
            return True
    return False


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


def kept_edits(
    repo: LazyRepo, edited: Mapping[str, str], facts: GitFacts | None = None
) -> tuple[EditOrigin, ...]:
    """Each edited note (path → blob on disk) with the commit that carried its edit, by path.

    ``facts``: where the answer is kept for the commit at ``HEAD`` and these very edits, so a
    ``status`` reads the history once per edit (two 25 MB manifests from git at 100,000 notes,
    0.45 s), not on every run.  A new commit that changed none of the edited notes (a sync of
    other notes) carries the last answer over (``VaultRepo.still_tells``).
    """
    if not edited:
        return ()
    if facts is None:
        return _each_edit(_read_history(repo, edited), edited)
    # the answer is this code's reading of the history: another version reads it again
    question = json.dumps([code_fingerprint(), sorted(edited.items())])

    def ask() -> str:
        kept = _history_of(facts.kept(EDIT_ORIGINS), question, edited)
        carried = _carried(repo, kept, edited) if kept is not None else None
        return _history_json(question, carried or _read_history(repo, edited), edited)

    history = _history_of(facts.history(EDIT_ORIGINS, question, ask), question, edited)
    if history is None:  # kept in another shape (damaged, foreign): asked again, kept instead
        facts.forget(EDIT_ORIGINS)
        history = _history_of(facts.history(EDIT_ORIGINS, question, ask), question, edited)
    return _each_edit(history or _read_history(repo, edited), edited)


EDIT_ORIGINS = "edit-origins"
"""The name :func:`kept_edits` keeps its answer under (``vault.gitfacts``)."""


def _read_history(repo: LazyRepo, edited: Mapping[str, str]) -> EditHistory:
    found = repo.get()
    if found is None:
        return EditHistory(origins={}, head="", walked=None)
    return found.edit_origins(edited)


def _carried(repo: LazyRepo, kept: EditHistory, edited: Mapping[str, str]) -> EditHistory | None:
    """``kept`` carried over to the commit at ``HEAD`` (``VaultRepo.still_tells``), if it can be."""
    found = repo.get()
    return found.still_tells(kept, edited.keys()) if found is not None else None


def _each_edit(history: EditHistory, edited: Mapping[str, str]) -> tuple[EditOrigin, ...]:
    """An origin per edited note, by path (one the history does not know: uncommitted)."""
    origins = history.origins
    return tuple(origins.get(p, EditOrigin(path=p, uncommitted=True)) for p in sorted(edited))


def _history_json(question: str, history: EditHistory, edited: Mapping[str, str]) -> str:
    rows = [
        [o.path, o.commit, o.when.isoformat() if o.when else "", o.uncommitted, o.merged]
        for o in _each_edit(history, edited)
    ]
    kept = {"question": question, "head": history.head, "walked": history.walked, "rows": rows}
    return json.dumps(kept)


def _history_of(answer: str | None, question: str, edited: Mapping[str, str]) -> EditHistory | None:
    """The history :func:`_history_json` kept for ``question``; ``None`` if not one.

    One row per edited path, in order, each an origin :func:`_origin` reads back.
    """
    try:
        kept = json.loads(answer) if answer is not None else None
        if not isinstance(kept, dict) or kept.get("question") != question:
            return None
        head, walked = kept["head"], kept["walked"]
        if not isinstance(head, str) or not (walked is None or type(walked) is int):
            return None
        origins = tuple(map(_origin, kept["rows"]))
    except (ValueError, TypeError, KeyError, RecursionError):
        return None
    if [o.path for o in origins] != sorted(edited):
        return None
    return EditHistory(origins={o.path: o for o in origins}, head=head, walked=walked)


def _origin(row: object) -> EditOrigin:
    """One kept row as an origin; ``TypeError`` when it is not one :func:`_history_json` wrote."""
    if not isinstance(row, list) or len(row) != 5:
        raise TypeError(row)
    path, commit, when, uncommitted, merged = row
    if not all(isinstance(text, str) for text in (path, commit, when, merged)):
        raise TypeError(row)
    if not isinstance(uncommitted, bool):
        raise TypeError(row)
    moment = datetime.fromisoformat(when) if when else None
    return EditOrigin(path=path, commit=commit, when=moment, uncommitted=uncommitted, merged=merged)


def known_status(vault: Path, known: Known, facts: GitFacts | None = None) -> StatusReport:
    """``status`` from the record: kept edits (with the commit that carried each), deletions.

    ``facts``: where the edits' origins are kept (:func:`kept_edits`).
    """
    return StatusReport(
        edited=kept_edits(LazyRepo(vault), known.edited, facts),
        deleted=known.last.deleted,
        conflicts=known_conflicts(vault, known.last),
    )


def known_conflicts(vault: Path, last: LastSync) -> tuple[Conflict, ...]:
    """The recorded edited notes that hold git's conflict markers now."""
    # a note that cannot be read as a file: the next full plan says why
    return marked_conflicts(last.edited, lambda path: read_regular(vault / path))


def sync_from_record(vault: Path, inputs: str) -> tuple[SyncReport, LastSync] | None:
    """A sync answered from the last sync's record: its report, and the record it leaves.

    When :func:`since_last_sync` tells the whole vault and a few notes were edited since, a
    full sync would write no note: with the stores' inputs unchanged, each changed note is kept
    as the user's edit (git's conflict markers too: ``check`` names them), or is vaultsync's
    own again.  Its report is then the full plan's (the unchanged count moves with the edits),
    and so is the stat cache it leaves: the changed notes' stat data and blobs, so the next
    sync is the quick answer.  Under the vault lock, as a sync.  ``None``: sync in full.
    """
    with VaultFS(vault) as fs, fs.lock(timeout=LOCK_TIMEOUT):
        started = time.time_ns()
        known = since_last_sync(vault, inputs)
        if known is None or not known.seen:
            return None  # nothing changed since: the quick answer's
        before = known.cache.last
        if before.unchanged is None:
            return None  # a record from before its count was kept
        # an edit moves a note out of the unchanged ones, an unedit back in
        unchanged = before.unchanged + len(before.edited) - len(known.last.edited)
        last = replace(known.last, unchanged=unchanged)
        _record(fs, known, last, doubtful=range(started - RACY_NS, time.time_ns() - RACY_NS))
    report = SyncReport(unchanged=unchanged, kept_edited=last.edited, kept_deleted=last.deleted)
    return report, last


def _record(fs: VaultFS, known: Known, last: LastSync, *, doubtful: range) -> None:
    """The stat cache brought up to date with the notes read since it was written."""
    cache = known.cache
    entries = dict(cache.entries)
    entries.update((p, (proven(key, doubtful), blob)) for p, (key, blob) in known.seen.items())
    # git's index holds what it held, which the notes read since may no longer be
    index = cache.index.with_odd(known.seen) if cache.index is not None else None
    data = dump_stat_cache(replace(cache, entries=entries, last=last, index=index))
    fs.write_control(CACHE, data, durable=False)
