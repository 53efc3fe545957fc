"""Vault + inputs digest → whether a sync would change nothing; reads stat data (and racy files).

A sync with nothing to do is the common case (cron, pre-commit, CI).  When the inputs — the
stores' stat data, vaultsync's own code, the templates, the caps — are those of the last
conflict-free sync, and every file that sync saw or wrote still has the stat data it recorded,
the sync's answer is already known: nothing to write.  This module decides that from a few
thousand ``lstat`` calls, without importing git, Jinja or the graph, so a no-op sync costs
little more than the interpreter's start.  Anything unusual (no cache, a journal of an
interrupted sync, a file touched, a note deleted) says "changed" and the full sync runs.  In
a big vault git's index answers for the files it is proven to hold as recorded, and only the
files it lists and those it cannot vouch for are stat'ed here (``vault.indexproof``).

A file modified within the racy window of the cache's write (``fsio.RACY_NS``: right after a
sync, every file it wrote) may have changed without its stat data showing it, so its bytes are
read and their blob id compared with the recorded one, as git does for racy index entries: only
the racy files are read, and a match proves them unchanged. Once the racy files are out of their
window, the cache's mtime is set to the moment the check began (under a non-blocking exclusive
vault lock, only if no sync replaced the cache meanwhile; skipped otherwise): what it records
was just verified, so later no-op syncs need no reading at all. That touch is this module's only
write.

The quick answer holds only for the manifest it was taken against: the cache records the blob
id of the manifest the last sync left and the entry paths that had no file then
(``StatCache.manifest`` and ``absent``), and those paths must still be absent.  A manifest with
other bytes — truncated, emptied, deleted, restored from history, copied from elsewhere,
rewritten by a merge — says "changed", even when it names the same paths: what it records is
not what the cache vouched for, and only a full sync (or ``check``) may judge it.  The cache
also records the manifest file's stat data as the sync left it, and the racy rule applies to
it as to a note: out of its window, equal stat data vouch for its bytes without reading them.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from vaultsync.core.cachefile import holds
from vaultsync.core.digest import code_fingerprint, inputs_digest
from vaultsync.core.fsio import RACY_NS, open_regular, read_regular
from vaultsync.extract.sources import store_fingerprint
from vaultsync.vault.manifest import (
    CACHE,
    CONTROL_DIR,
    JOURNAL,
    LOCK,
    MANIFEST,
    StatCache,
    StatKey,
    blob_id,
    cache_head,
    load_cache,
    recorded_blob,
    some_entries,
    stat_rows,
)

if TYPE_CHECKING:
    from vaultsync.vault.indexproof import DiffFiles


def templates_digest(folder: Path | None) -> str:
    """Stat data of a ``--templates`` folder (its files may change between syncs)."""
    if folder is None:
        return "builtin"
    lines = []
    for path in sorted(folder.rglob("*")):
        try:
            st = path.stat()
        except FileNotFoundError:  # a dangling symlink: the render names it in one line
            st = path.lstat()
        lines.append(f"{path.relative_to(folder).as_posix()}|{st.st_size}|{st.st_mtime_ns}")
    return inputs_digest(lines)


def sync_inputs(state: Path, settings_key: str, templates: Path | None) -> str:
    """Everything a vault's bytes depend on besides the vault, from stat data and source.

    ``settings_key`` is every chosen setting as text (``Settings.as_key``): the caps, the time
    zone, the templates folder and whatever else the saved config holds.
    """
    return inputs_digest(
        (
            code_fingerprint(),
            templates_digest(templates),
            settings_key,
            str(state.resolve()),
            store_fingerprint(state),
        )
    )


def unchanged_since_last_sync(vault: Path, inputs: str) -> bool:
    """``True`` only when a sync with these inputs would certainly find nothing to do."""
    return last_sync_if_unchanged(vault, inputs) is not None


def last_sync_if_unchanged(vault: Path, inputs: str) -> StatCache | None:
    """The stat cache of the last sync when it still tells the whole vault; ``None`` otherwise.

    It does when a sync with these inputs would certainly find nothing to do: every file it
    records is as it was, so its ``last`` record is what a full plan would find.
    """
    found = last_sync_and_changes(vault, inputs)
    return found[0] if found is not None else None


def last_sync_and_changes(
    vault: Path, inputs: str, *, at_most: int = 0
) -> tuple[StatCache, tuple[str, ...]] | None:
    """The last sync's stat cache and the files it records that changed since, up to ``at_most``.

    ``None`` when the cache cannot tell: no cache, other inputs, another manifest, a journal,
    a path the manifest had absent now present, or more than ``at_most`` files changed.  A
    changed file is one whose stat data (or, racy, its bytes) are not those recorded:
    ``vault.known`` reads those few again.
    """
    if (vault / JOURNAL).exists() or not holds(vault / CACHE, cache_head(inputs)):
        return None
    if not _git_worth_asking(vault):
        return _since_cache(vault, inputs, at_most, None)
    from vaultsync.vault.indexproof import DiffFiles  # noqa: PLC0415 - runs git: only then

    with DiffFiles(vault) as git:  # on the other core while the cache is read
        return _since_cache(vault, inputs, at_most, git)


ASK_GIT_FROM_BYTES = 512 * 1024
"""The stat cache's size from which git's index is asked (about 4,000 files): below it, our
own ``lstat`` of each file ends as soon as git does (whole no-op syncs, medians of 6: 2,784
files 115 ms without git, 117 with; 8,279 files 141 and 134 ms)."""


def _git_worth_asking(vault: Path) -> bool:
    try:
        return (vault / CACHE).stat().st_size >= ASK_GIT_FROM_BYTES
    except OSError:
        return False


def _since_cache(
    vault: Path, inputs: str, at_most: int, git: DiffFiles | None
) -> tuple[StatCache, tuple[str, ...]] | None:
    """:func:`last_sync_and_changes`, ``git`` started (``None``: not asked)."""
    try:
        data, seen = _read(vault / CACHE)
        cache = load_cache(data, written_ns=seen.st_mtime_ns)
    except OSError:
        return None
    if not cache.inputs or cache.inputs != inputs or not cache.manifest:
        return None
    started = time.time_ns()
    manifest = _racy_manifest(os.fspath(vault / MANIFEST), cache)
    if manifest is None:
        return None  # not the manifest the cache vouches for
    found = _changed_by_git(vault, cache, at_most, git) if git is not None else None
    if found is None:
        found = _verified(os.fspath(vault), cache, cache.absent, at_most)
    if found is None:
        return None
    racy, changed = found
    racy += manifest
    if not changed and racy and max(recorded[1] for recorded in racy) < started - RACY_NS:
        _touch_cache(vault, seen, started)
    return cache, tuple(changed)


def _racy_manifest(path: str, cache: StatCache) -> list[StatKey] | None:
    """Its recorded stat data when the manifest was racy, ``[]`` when not; ``None``: not it.

    Out of the racy window its stat data vouch for its bytes, as a note's do; else its bytes
    are read (25 MB at 100,000 notes) and their blob id compared with the recorded one.
    """
    recorded = cache.manifest_stat
    if recorded is None:  # a cache from before the manifest's stat data were kept
        return [] if _blob_of(path) == cache.manifest else None
    if recorded[1] < cache.written_ns - RACY_NS:
        return [] if stat_of(path) == recorded else None
    return [recorded] if _same_bytes(path, recorded, cache.manifest) else None


def _changed_by_git(
    vault: Path, cache: StatCache, at_most: int, git: DiffFiles
) -> tuple[list[StatKey], list[str]] | None:
    """:func:`_verified`'s answer, with git's index vouching for the files it does not list.

    The files git lists are checked by their stat data, as without git: git also lists a file
    whose entry lost its stat data (an index written in the file's own tick, "smudged"), whose
    bytes may be the same.  So are the files git cannot vouch for (``odd``, which holds every
    file of the cache's racy window: ``indexproof.prove_index``).  ``None``: no proof, or it
    does not hold now.
    """
    proof = cache.index
    if proof is None:
        return None
    listed = git.changed(proof, cache.entries)
    if listed is None:
        return None
    rows = dict(sorted(some_entries(cache.entries, [*listed, *proof.odd]).items()))
    return _verified(os.fspath(vault), replace(cache, entries=rows), cache.absent, at_most)


def _verified(
    root: str, cache: StatCache, absent: Iterable[str], at_most: int = 0
) -> tuple[list[StatKey], list[str]] | None:
    """The stat data of the unchanged racy files and the changed files' paths (``at_most``).

    ``None``: more changed files than that, or a file at an absent path.  Paths are joined as
    text and the racy rule inlined: this loop runs per note on every no-op.
    """
    if not _real_folders(root, cache.entries):
        return None
    racy_from = cache.written_ns - RACY_NS
    racy: list[tuple[str, StatKey, str]] = []
    changed: list[str] = []
    for index, (path, recorded) in enumerate(stat_rows(cache.entries)):
        if recorded[1] >= racy_from:
            racy.append((path, recorded, recorded_blob(cache.entries, index, path)))
        elif stat_of(f"{root}/{path}") != recorded:
            changed.append(path)
            if len(changed) > at_most:
                return None
    same = []
    for path, recorded, blob in racy:
        if _same_bytes(f"{root}/{path}", recorded, blob):
            same.append(recorded)
        else:
            changed.append(path)
    if len(changed) > at_most or any(os.path.lexists(f"{root}/{path}") for path in absent):
        return None
    return same, changed


def _real_folders(root: str, entries: Iterable[str]) -> bool:
    """Whether every folder holding one of ``entries`` is a folder, not a symlink to one.

    A file's own stat data are taken without following it, but not its folders': a folder
    replaced by a symlink would let the files outside the vault answer for the notes (10 ms
    at 100,000 notes in 1,185 folders).  ``False``: the full sync's scan, which never follows
    one, tells what is there.
    """
    folders: set[str] = set()
    for holder in {path.rpartition("/")[0] for path in entries}:
        folder = holder
        while folder and folder not in folders:
            folders.add(folder)
            folder = folder.rpartition("/")[0]
    try:
        return all(stat.S_ISDIR(os.lstat(f"{root}/{folder}").st_mode) for folder in folders)
    except OSError:
        return False


def _read(path: Path) -> tuple[bytes, os.stat_result]:
    """A file's bytes and the stat data of the very file read (no race with a rename).

    Raises:
        OSError: it is not a regular file (never read through a symlink; a FIFO never waited on).
    """
    handle, seen = open_regular(path)
    with handle:
        return handle.read(), seen


def stat_of(path: str) -> StatKey | None:
    """The stat data of the file at ``path`` (a symlink not followed), ``None`` when none."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def _blob_of(path: str) -> str | None:
    """The blob id of the regular file at ``path`` (not followed), or ``None``."""
    data = read_regular(path)
    return None if data is None else blob_id(data)


def _same_bytes(path: str, recorded: StatKey, blob: str) -> bool:
    """Whether the regular file at ``path`` still has the stat data and the blob recorded."""
    try:
        handle, st = open_regular(path)
    except OSError:
        return False
    with handle:
        same_stat = (st.st_size, st.st_mtime_ns, st.st_ino) == recorded
        return same_stat and blob_id(handle.read()) == blob


def _touch_cache(vault: Path, seen: os.stat_result, verified_ns: int) -> None:
    """Set the cache's mtime to ``verified_ns``, when all its entries were known true.

    Its racy files were read then, already out of their window (the racy rule measures from
    the cache's mtime).

    Only under an exclusive vault lock taken without waiting (a sync or a reader holds it:
    skip), and only if the cache is still the file read (no sync replaced it meanwhile).  The
    cache is a hint: any failure leaves it as it was.
    """
    with contextlib.suppress(OSError, NotImplementedError):  # no utime through a dir_fd here
        folder = os.open(vault / CONTROL_DIR, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            lock = os.open(LOCK.rsplit("/", 1)[1], os.O_RDWR | os.O_NOFOLLOW, dir_fd=folder)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                name = CACHE.rsplit("/", 1)[1]
                now = os.stat(name, dir_fd=folder, follow_symlinks=False)
                if (now.st_ino, now.st_size, now.st_mtime_ns) == (
                    seen.st_ino,
                    seen.st_size,
                    seen.st_mtime_ns,
                ):
                    times = (verified_ns, verified_ns)
                    os.utime(name, ns=times, dir_fd=folder, follow_symlinks=False)
            finally:
                os.close(lock)  # closing the descriptor releases the flock
        finally:
            os.close(folder)
